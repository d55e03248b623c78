"""Which device errors are worth another try: a read that timed out, a channel or socket the far end closed.

At a few hundred devices a loaded controller or device answers late now and then; such a device passes a
moment later, so counting it failed at once is noise (issue 19: 18-20 of 192 devices failed ``verify`` that
way). Authentication, refused connections and everything the device said on purpose (a rejected line, a failed
commit) are never transient: retrying them only delays the report.
"""

from __future__ import annotations

import http.client

from napalm.base.exceptions import CommandTimeoutException, ConnectionClosedException

TRANSIENT_TYPES: tuple[type[BaseException], ...] = (
    TimeoutError,  # socket.timeout is an alias
    ConnectionResetError,
    ConnectionAbortedError,
    BrokenPipeError,
    EOFError,
    http.client.RemoteDisconnected,
    CommandTimeoutException,
    ConnectionClosedException,
)
# what the libraries say when they wrap the above in their own exception types (pyeapi, requests, paramiko)
TRANSIENT_WORDS = (
    "timed out",
    "read timeout",
    "connection reset",
    "connection aborted",
    "broken pipe",
    "remote end closed",
    "connection lost",
    "socket is closed",
    "channel closed",
)
PERMANENT_WORDS = ("authentication", "unauthorized", "401", "permission denied", "connection refused")


def transient(exc: BaseException) -> bool:
    """True for a timeout or a dropped connection (also when a library wrapped one), never for a refusal."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in chain and len(chain) < 8:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    text = " ".join(f"{type(e).__name__}: {e}" for e in chain).lower()
    if any(word in text for word in PERMANENT_WORDS):
        return False
    return any(isinstance(e, TRANSIENT_TYPES) for e in chain) or any(word in text for word in TRANSIENT_WORDS)
