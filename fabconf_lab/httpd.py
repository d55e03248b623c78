"""One HTTPS server per lab device, shared by the eAPI, NX-API and NVUE simulators.

The device supplies ``handle_http(request) -> HttpReply``; this module does TLS, HTTP Basic auth
(and Bearer tokens a device accepts), fault injection (delay, hang, auth-refuse, drop) and threading: the listening
socket is waited on by the process's one acceptor (``fabconf_lab.acceptor``), and each connection is served, its TLS
handshake included, on a thread of its own.
"""

from __future__ import annotations

import base64
import contextlib
import email.utils
import http.client
import json
import re
import socket
import ssl
import sys
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fabconf_lab.acceptor import acceptor, serve_apart
from fabconf_lab.faults import DropConnection, Faults, garble_bytes


@dataclass
class HttpRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    user: str

    def json(self) -> Any:
        return json.loads(self.body or b"null")


@dataclass
class HttpReply:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, obj: Any, status: int = 200) -> HttpReply:
        return cls(status, json.dumps(obj).encode())


class HttpDevice:
    """What a simulator provides to be served over HTTPS."""

    name: str
    username: str
    password: str
    faults: Faults

    def handle_http(self, request: HttpRequest) -> HttpReply:  # pragma: no cover - interface
        raise NotImplementedError

    def accept_token(self, token: str) -> str | None:
        """Return the user for a Bearer token, or None. Devices with tokens override this."""
        return None

    def moment_of(self, request: HttpRequest) -> str | None:
        """The moment of a push this request belongs to (``fabconf_lab.faults.MOMENTS``), for step faults."""
        return None

    def reject_reply(self, request: HttpRequest) -> HttpReply:
        """The platform's own refusal of this request (a step fault ``reject``); nothing is carried out."""
        return HttpReply(400, b'{"error": "Invalid input"}')


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-reply (a dropped commit, a killed fabconf, a TLS close without notify)
        is routine for a lab: no traceback on stderr. Anything else is still printed, as socketserver does."""
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, ssl.SSLError, TimeoutError)):
            return
        super().handle_error(request, client_address)


# A header line the lab reads itself: a token name, a colon, printable ASCII (tabs too), CRLF. http.client hands the
# block to the email package's FeedParser, a fifth of a Cumulus switch's CPU in a push; for such lines its compat32
# policy makes the same (name, value) pairs: the name before the first colon, the value without leading blanks.
_PLAIN_HEADER = re.compile(rb"([!-9;-~]+):([\t -~]*)\r\n")
_PLAIN_VERSIONS = ("HTTP/1.0", "HTTP/1.1")


def read_head(rfile: Any) -> list[bytes]:
    """The header lines of a request, the blank line included, read as ``http.client`` reads them: the same line
    length and count limits, where it would raise this stops, so that it reads the same lines again (``Replay``)."""
    lines: list[bytes] = []
    while True:
        line = rfile.readline(http.client._MAXLINE + 1)
        lines.append(line)
        if len(line) > http.client._MAXLINE or len(lines) > http.client._MAXHEADERS:
            return lines
        if line in (b"\r\n", b"\n", b""):
            return lines


def plain_headers(lines: list[bytes]) -> http.client.HTTPMessage | None:
    """The headers ``http.client.parse_headers`` would make of ``lines``, or None unless every line is plain
    (``_PLAIN_HEADER``) and the block ends with a CRLF line: anything else is left to it."""
    if not lines or lines[-1] != b"\r\n":
        return None
    message = http.client.HTTPMessage()
    for line in lines[:-1]:
        match = _PLAIN_HEADER.fullmatch(line)
        if match is None:
            return None
        name, value = match.groups()
        message.set_raw(name.decode("ascii"), value.decode("ascii").lstrip(" \t"))
    message.set_payload("")
    return message


_DATE: list[tuple[int, str]] = [(-1, "")]  # (second, its Date header), shared by every device's handler


class Replay:
    """A request's rfile that gives back header lines already read before the rest of the stream."""

    def __init__(self, lines: list[bytes], rest: Any) -> None:
        self._lines = list(reversed(lines))
        self._rest = rest

    def readline(self, limit: int = -1) -> bytes:
        if self._lines:
            return self._lines.pop()
        return bytes(self._rest.readline(limit))


def _handler_for(device: HttpDevice) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "fabconf-lab"
        disable_nagle_algorithm = True  # small JSON replies: without it each request waits ~40 ms for ACKs

        def log_message(self, format: str, *args: Any) -> None:
            return

        def parse_request(self) -> bool:
            """``BaseHTTPRequestHandler.parse_request``, with plain header blocks (``plain_headers``) read here. The
            request line, its errors, and every other header block are http.server's own: it reads the same lines
            again from a ``Replay``, or, for a plain block, only the blank line, and its reading of the Connection
            and Expect headers is done again below with the real ones."""
            words = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n").split()
            if len(words) != 3 or words[2] not in _PLAIN_VERSIONS:
                return bool(super().parse_request())
            real = self.rfile
            lines = read_head(real)
            headers = plain_headers(lines)
            self.rfile = Replay(lines if headers is None else [b"\r\n"], real)  # type: ignore[assignment]
            try:
                ok = bool(super().parse_request())
            finally:
                self.rfile = real
            if not ok or headers is None:
                return ok
            self.headers = headers
            conntype = headers.get("Connection", "")
            if conntype.lower() == "close":
                self.close_connection = True
            elif conntype.lower() == "keep-alive" and self.protocol_version >= "HTTP/1.1":
                self.close_connection = False
            expect = headers.get("Expect", "")
            if (
                expect.lower() == "100-continue"
                and self.protocol_version >= "HTTP/1.1"
                and self.request_version >= "HTTP/1.1"
            ):
                return bool(self.handle_expect_100())
            return True

        def date_time_string(self, timestamp: float | None = None) -> str:
            """The Date header, made once a second (``email.utils.formatdate`` drops the fraction)."""
            if timestamp is not None:
                return super().date_time_string(timestamp)
            now = int(time.time())
            cached = _DATE[0]
            if cached[0] != now:
                cached = (now, email.utils.formatdate(now, usegmt=True))
                _DATE[0] = cached
            return cached[1]

        def _user(self) -> str | None:
            auth = self.headers.get("Authorization", "")
            if device.faults.auth_refuse:
                return None
            if auth.startswith("Basic "):
                try:
                    user, _, pw = base64.b64decode(auth[6:]).decode().partition(":")
                except (ValueError, UnicodeDecodeError):
                    return None
                if user == device.username and pw == device.password:
                    return user
                return None
            if auth.startswith("Bearer "):
                return device.accept_token(auth[7:])
            return None

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            split = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
            try:
                device.faults.before_request()
                fault = None
                if device.faults.steps:
                    probe = HttpRequest(self.command, split.path, query, dict(self.headers), body, "")
                    try:
                        moment = device.moment_of(probe)
                    except Exception:  # a request the device cannot sort is of no moment
                        moment = None
                    fault = device.faults.step(moment)
                if fault is not None:
                    fault.before()
                user = self._user()
                if user is None or (fault is not None and fault.kind == "auth-refuse"):
                    reply = HttpReply(401, b'{"error": "Unauthorized"}')
                    reply.headers["WWW-Authenticate"] = 'Basic realm="fabconf-lab"'
                else:
                    request = HttpRequest(self.command, split.path, query, dict(self.headers), body, user)
                    if fault is not None and fault.kind == "reject":
                        reply = device.reject_reply(request)
                    else:
                        reply = device.handle_http(request)
                if fault is not None:
                    reply.body = fault.reply(reply.body, garble_bytes)
            except DropConnection:
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            finally:
                device.faults.after_request()  # the request may have changed the device's view (shards)
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(reply.body)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = _serve

    return Handler


class HttpsService:
    """Serve ``device`` on ``address:port`` with TLS (or plain HTTP when ``ssl_context`` is None)."""

    def __init__(
        self,
        device: HttpDevice,
        address: str,
        port: int,
        ssl_context: ssl.SSLContext | None,
    ) -> None:
        self.device = device
        self._server = _Server((address, port), _handler_for(device))
        self._ssl_context = ssl_context
        self.address, self.port = self._server.server_address[:2]
        self._listening = False

    def start(self) -> None:
        acceptor().add(self._server.socket, self._accepted)
        self._listening = True

    def stop(self) -> None:
        """Stop at once: no connection is accepted once this returns (the listening socket is closed); those being
        served finish on their own threads."""
        if self._listening:
            acceptor().remove(self._server.socket)
            self._listening = False
        self._server.server_close()

    def _accepted(self, conn: socket.socket, peer: tuple[str, int]) -> None:
        serve_apart(self._serve, conn, peer)  # never waits for the thread to run: see serve_apart

    def _serve(self, conn: socket.socket, peer: tuple[str, int]) -> None:
        """One connection: the TLS handshake (here, not on the acceptor's thread: a client that never finishes it
        holds only this thread), then HTTP requests until the client closes, as ``ThreadingHTTPServer`` did."""
        request: socket.socket = conn
        if self._ssl_context is not None:
            try:
                request = self._ssl_context.wrap_socket(conn, server_side=True)
            except (OSError, ValueError):  # a port probe, a client that gave up: nothing to serve
                with contextlib.suppress(OSError):
                    conn.close()
                return
        self._server.process_request_thread(request, peer)
