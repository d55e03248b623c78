"""The HTTP session every Nautobot call goes through, made for a server that may be hostile or broken:

- the token goes to the server's own origin only (scheme, host and port of the URL the operator gave): a request
  anywhere else -- a ``next`` link naming another host or port, say -- is refused before it is sent; redirects
  are not followed (a 3xx is an error like any other);
- every request has a connect and read timeout, and every answer a deadline for the whole of its body;
- every answer is read up to ``MAX_BODY`` bytes: an endless body is an error, not unbounded memory;
- a listing follows at most ``MAX_PAGES`` ``next`` links, and a ``next`` link it has already followed in the same
  listing (a loop) is an error.

Every refusal is a ``SotError`` (one line; the caller redacts the token from it as from every message).
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlsplit

import requests

from fabconf.errors import FabconfError

CONNECT_TIMEOUT = 10.0  # [U] seconds: fabconf's choice; a Nautobot on a LAN answers a connect at once
READ_TIMEOUT = 60.0  # [U] seconds per read: fabconf's choice; a large page of devices at depth 1 takes seconds
ANSWER_DEADLINE = 120.0  # [U] seconds for a whole answer, however slowly it drips
MAX_BODY = 32 * 1024 * 1024  # [U] bytes per answer: a page of 1,000 devices at depth 1 is a few MB
MAX_PAGES = 1000  # [U] next links one listing follows (Nautobot's MAX_PAGE_SIZE 1,000: a million objects)
_CHUNK = 64 * 1024


class SotError(FabconfError):
    """The source of truth cannot be read or written as asked; nothing was written."""


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port made explicit."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = -1  # an invalid port never equals a real origin
    if port is None:
        port = {"http": 80, "https": 443}.get(parts.scheme.lower())
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def _shown(url: str) -> str:
    """An origin to name in a message (never a path or query, which a hostile server chose)."""
    scheme, host, port = origin(url)
    return f"{scheme}://{host}:{port}" if scheme and host else "a URL that is not http(s)"


class GuardedSession(requests.Session):
    """A ``requests.Session`` bound to one origin, with the limits above (pynautobot's ``http_session``)."""

    def __init__(self, base: str) -> None:
        super().__init__()
        self.base = base
        self.origin = origin(base)
        self._chain: set[str] = set()  # the next links the listing under way has followed
        self._pending: str | None = None  # the next link the last answer gave

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        target = url.decode() if isinstance(url, bytes) else str(url)
        if origin(target) != self.origin:
            raise SotError(
                f"{self.base}: an answer points to {_shown(target)}, another server: refused (the token goes to "
                f"{_shown(self.base)} only)"
            )
        following = target == self._pending
        if not following:
            self._chain = set()
        self._pending = None
        kwargs.update(timeout=(CONNECT_TIMEOUT, READ_TIMEOUT), allow_redirects=False, stream=True)
        verb = method.decode() if isinstance(method, bytes) else method
        response = super().request(verb, target, *args, **kwargs)
        try:
            if response.is_redirect:
                where = _shown(response.headers.get("Location", ""))
                raise SotError(f"{self.base}: Nautobot answered HTTP {response.status_code} (to {where}): not followed")
            self._read(response)
        finally:
            response.close()
        self._follow(response)
        return response

    def _read(self, response: requests.Response) -> None:
        """The whole body, within MAX_BODY bytes and ANSWER_DEADLINE seconds, kept as the response's content."""
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > MAX_BODY:
            raise SotError(f"{self.base}: an answer of {int(declared)} bytes is over the limit of {MAX_BODY}")
        started = time.monotonic()
        body = bytearray()
        for chunk in response.raw.stream(_CHUNK, decode_content=True):
            body += chunk
            if len(body) > MAX_BODY:
                raise SotError(f"{self.base}: an answer is longer than the limit of {MAX_BODY} bytes")
            if time.monotonic() - started > ANSWER_DEADLINE:
                raise SotError(f"{self.base}: an answer took longer than {ANSWER_DEADLINE:g} s")
        response._content = bytes(body)  # what .json() and .text read (requests' own attribute)

    def _follow(self, response: requests.Response) -> None:
        """Note the answer's ``next`` link: one already followed in this listing is a loop."""
        try:
            answer = json.loads(response.content) if response.content else None
        except ValueError:
            return  # not JSON: pynautobot says so (ContentError)
        link = answer.get("next") if isinstance(answer, dict) else None
        if not isinstance(link, str) or not link:
            return
        if link in self._chain:
            raise SotError(f"{self.base}: Nautobot's next links loop (a page names one already read)")
        if len(self._chain) >= MAX_PAGES:
            raise SotError(f"{self.base}: a listing of more than {MAX_PAGES} pages; refused")
        self._chain.add(link)
        self._pending = link
