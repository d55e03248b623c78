"""One HTTPS server per lab device, shared by the eAPI, NX-API and NVUE simulators.

The device supplies ``handle_http(request) -> HttpReply``; this module does TLS, HTTP Basic auth
(and Bearer tokens a device accepts), fault injection (delay, hang, auth-refuse, drop) and threading: the listening
socket is waited on by the process's one acceptor (``fabconf_lab.acceptor``), and each connection is served, its TLS
handshake included, on a thread of its own.
"""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import ssl
import sys
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


def _handler_for(device: HttpDevice) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "fabconf-lab"
        disable_nagle_algorithm = True  # small JSON replies: without it each request waits ~40 ms for ACKs

        def log_message(self, format: str, *args: Any) -> None:
            return

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
