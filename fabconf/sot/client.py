"""The connection to Nautobot: pynautobot with the token from ``FABCONF_NAUTOBOT_TOKEN``, every failure one line.

The token is read from the environment only; it is never written to a file or printed: error lines name the URL,
and every message (an error body that echoes the token included) has the token redacted (``boundary``). Every
request goes through ``fabconf.sot.http.GuardedSession``: the server's own origin only, timeouts, size and page
limits.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from fabconf.compile.problems import brief
from fabconf.sot.http import GuardedSession, SotError

TOKEN_ENV = "FABCONF_NAUTOBOT_TOKEN"
T = TypeVar("T")
REDACTED = "<redacted>"
# What a malformed answer raises in code that reads it (a list where a mapping belongs, a missing key, ...).
MALFORMED = (KeyError, TypeError, AttributeError, ValueError, IndexError)

__all__ = ["SotError", "api_errors", "boundary", "call", "connect", "ref"]


def token() -> str:
    return os.environ.get(TOKEN_ENV, "").strip()


def redact(text: str, secret: str | None = None) -> str:
    """``text`` without the token (``secret``, else the environment's)."""
    secret = token() if secret is None else secret
    return text.replace(secret, REDACTED) if secret else text


@contextmanager
def boundary(url: str) -> Iterator[None]:
    """Around a whole import or export: every error is one ``SotError`` line without the token, a malformed answer
    included (never a traceback)."""
    try:
        yield
    except SotError as exc:
        raise SotError(redact(str(exc))) from None
    except MALFORMED as exc:
        what = f"{type(exc).__name__}: {brief(str(exc))}"
        raise SotError(redact(f"{url}: an answer is not what Nautobot's API gives ({what})")) from None


def connect(url: str) -> Any:
    """A pynautobot API object for ``url``, checked: the server answers and accepts the token."""
    try:
        import pynautobot  # the `sot` extra
    except ImportError:
        raise SotError("pynautobot is not installed: pip install 'fabconf[sot]'") from None
    secret = token()
    if not secret:
        raise SotError(f"{TOKEN_ENV} is not set: the Nautobot API token is read from the environment only")
    if not url.startswith(("http://", "https://")):
        raise SotError(f"{url}: not an http:// or https:// URL")
    nb = pynautobot.api(url.rstrip("/"), token=secret)
    nb.http_session = GuardedSession(url.rstrip("/"))
    nb.http_session.headers["Accept"] = "application/json"
    status = call(url, lambda: nb.status())
    if not isinstance(status, dict):
        raise SotError(f"{url}: the answer is not Nautobot's API (is this a Nautobot URL?)")
    return nb


def _status(exc: BaseException) -> int | None:
    req = getattr(exc, "req", None)
    return getattr(req, "status_code", None)


def _detail(exc: BaseException) -> str:
    error = getattr(exc, "error", None)
    text = redact(str(error if error else exc))
    return " ".join(text.split())[:300]


def call(url: str, fn: Callable[[], T]) -> T:
    """Run one API call; a connection failure, a refused token or an API error becomes one SotError line."""
    import pynautobot
    import requests

    try:
        return fn()
    except requests.exceptions.ConnectionError:
        raise SotError(f"{url}: cannot reach Nautobot (connection refused or no route)") from None
    except requests.exceptions.Timeout:
        raise SotError(f"{url}: Nautobot did not answer in time") from None
    except requests.exceptions.RequestException as exc:
        raise SotError(f"{url}: {type(exc).__name__}: {_detail(exc)}") from None
    except pynautobot.RequestError as exc:
        status = _status(exc)
        if status in (401, 403):
            raise SotError(f"{url}: Nautobot refused the token in {TOKEN_ENV} (HTTP {status})") from None
        raise SotError(f"{url}: Nautobot answered HTTP {status}: {_detail(exc)}") from None
    except pynautobot.ContentError:
        raise SotError(f"{url}: the answer is not Nautobot's API (is this a Nautobot URL?)") from None


@contextmanager
def api_errors(url: str) -> Iterator[None]:
    """The same translation as ``call`` around a block of calls."""
    import pynautobot
    import requests

    try:
        yield
    except (requests.exceptions.RequestException, pynautobot.RequestError, pynautobot.ContentError) as exc:
        error = exc

        def again() -> None:
            raise error

        call(url, again)


def ref(value: Any) -> Any:
    """A related object's id from a serialized record (a nested dict), the value itself otherwise."""
    if isinstance(value, dict):
        return value.get("id")
    return value
