"""A small HTTPS client for the NVUE REST API (``https://<switch>:8765/nvue_v1``): one kept-alive connection.

HTTP Basic auth on every request (reference §1.5); JSON in and out. Transport failures and refused
credentials become napalm's ``ConnectionException``; any other HTTP error becomes ``NvueApiError`` with
the device's ``detail`` text. The password (and the Basic credential made from it) is scrubbed from
every message this module produces.
"""

from __future__ import annotations

import base64
import http.client
import json
import logging
import socket
import ssl
from typing import Any
from urllib.parse import quote, urlencode

from napalm.base.exceptions import ConnectionException

from fabconf.drivers.trust import shared_context

BASE = "/nvue_v1"
log = logging.getLogger(__name__)


class NvueApiError(Exception):
    """The API answered with an HTTP error other than an authentication failure."""

    def __init__(self, status: int, detail: str, method: str, path: str) -> None:
        super().__init__(f"{method} {path}: HTTP {status}: {detail}")
        self.status = status
        self.detail = detail


class NvueConnectionLost(ConnectionException):
    """The connection broke after the request was sent: the outcome of the request is unknown."""


def path_of(*parts: str) -> str:
    """``("interface", "swp1")`` -> ``/interface/swp1`` with every segment URL-encoded."""
    return "".join("/" + quote(str(p), safe="") for p in parts) or "/"


def tls_context(ca_file: str | None, verify: bool) -> ssl.SSLContext:
    """The process's context for these settings, made once (``fabconf.drivers.trust.shared_context``)."""
    return shared_context("nvue", ca_file, verify, _new_context)


def _new_context(ca_file: str | None, verify: bool) -> ssl.SSLContext:
    if not verify:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    return ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()


class NvueRestClient:
    """One HTTPS connection to one switch, reopened only when the switch closed it."""

    def __init__(
        self,
        host: str,
        port: int,
        username: str,
        password: str,
        *,
        timeout: float,
        context: ssl.SSLContext,
    ) -> None:
        self.host = host
        self.port = port
        self.username = username
        self.timeout = timeout
        self._context = context
        self._secrets = [s for s in (password, base64.b64encode(f"{username}:{password}".encode()).decode()) if s]
        self._auth = "Basic " + self._secrets[-1]
        self._conn: http.client.HTTPSConnection | None = None
        self._reused = False  # True once a request has completed on the current connection

    @property
    def url(self) -> str:
        return f"https://{self.host}:{self.port}{BASE}"

    def scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "****")
        return text

    # -- connection --------------------------------------------------------------------------------
    def connect(self) -> None:
        self.close()
        conn = http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout, context=self._context)
        try:
            conn.connect()
        except (OSError, ssl.SSLError) as exc:
            conn.close()
            raise ConnectionException(self.scrub(f"cannot reach the NVUE API at {self.url}: {_reason(exc)}")) from None
        self._conn = conn
        self._reused = False

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- requests --------------------------------------------------------------------------------------
    def get(self, path: str, **query: str) -> Any:
        return self.request("GET", path, query=query)

    def request(self, method: str, path: str, *, query: dict[str, str] | None = None, body: Any = None) -> Any:
        """Send one request; return the decoded JSON reply (``None`` for an empty body).

        A GET or DELETE that finds the kept-alive connection closed by the switch is retried once on a
        new connection; any other broken request raises ``NvueConnectionLost`` (its outcome is unknown).
        """
        target = BASE + (path if path != "/" else "/") + (("?" + urlencode(query)) if query else "")
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": self._auth, "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        retry = method in ("GET", "DELETE")
        while True:
            if self._conn is None:
                self.connect()
            assert self._conn is not None
            reused = self._reused
            try:
                log.debug("%s %s", method, target)
                self._conn.request(method, target, body=data, headers=headers)
                resp = self._conn.getresponse()
                raw = resp.read()
            except TimeoutError:
                self.close()
                raise NvueConnectionLost(
                    f"{method} {self.url}{path}: no reply within {self.timeout:g}s (timed out)"
                ) from None
            except (http.client.HTTPException, OSError) as exc:
                self.close()
                if retry and reused:
                    retry = False
                    continue
                raise NvueConnectionLost(
                    self.scrub(f"{method} {self.url}{path}: the connection was closed ({_reason(exc)})")
                ) from None
            self._reused = True
            if resp.will_close:
                self.close()
            return self._reply(method, path, resp.status, raw)

    def _reply(self, method: str, path: str, status: int, raw: bytes) -> Any:
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            if status < 400:  # a garbled reply is never taken for a (possibly empty) configuration
                shown = raw[:60].decode(errors="replace")
                raise NvueApiError(status, f"the reply is not valid JSON: {shown!r}", method, path) from None
            payload = raw.decode(errors="replace")
        if status in (401, 403):
            hint = " (from Cumulus Linux 5.6 the default password must be changed first)" if status == 403 else ""
            raise ConnectionException(
                f"the NVUE API at {self.url} refused user {self.username!r}: HTTP {status}"
                f" {'Unauthorized' if status == 401 else 'Forbidden'}{hint}"
            )
        if status >= 400:
            raise NvueApiError(status, self.scrub(_detail(payload)), method, path)
        return payload


def _detail(payload: Any) -> str:
    """The readable part of an NVUE error body (``{"status", "title", "detail", "type"}`` [U])."""
    if isinstance(payload, dict):
        for key in ("detail", "message", "title", "error"):
            if payload.get(key):
                return str(payload[key])
        return json.dumps(payload, sort_keys=True)
    return str(payload or "no details")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate not trusted ({exc.verify_message}); set optional_args ca_file or verify"
    if isinstance(exc, socket.gaierror):
        return f"name resolution failed ({exc.strerror})"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__
