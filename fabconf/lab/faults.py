"""Per-device fault injection shared by every lab simulator.

Kinds (``fabconf lab fault DEVICE KIND [ARG]``):

- ``drop-on-commit``: the connection is closed without a reply when a commit/apply arrives; the
  commit itself is NOT carried out (a commit timer or checkpoint already armed keeps running).
- ``reject PATTERN``: any configuration line matching the regular expression is refused with the
  platform's own error for an invalid command.
- ``delay SECONDS``: every request is answered SECONDS late.
- ``auth-refuse``: authentication always fails (HTTP 401 / SSH auth failure).
- ``hang``: requests are accepted and never answered (until the fault is cleared).
- ``clear``: removes every fault.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field

KINDS = ("drop-on-commit", "reject", "delay", "auth-refuse", "hang")


class DropConnection(Exception):
    """Raised inside a request handler: close the socket without answering."""


@dataclass
class Faults:
    drop_on_commit: bool = False
    reject: re.Pattern[str] | None = None
    delay: float = 0.0
    auth_refuse: bool = False
    hang: bool = False
    _cleared: threading.Event = field(default_factory=threading.Event, repr=False)

    def set(self, kind: str, arg: str | None = None) -> None:
        """Inject ``kind``: it REPLACES whatever fault was active (no ``clear`` needed in between); a
        missing or malformed argument is an error and changes nothing."""
        if kind not in (*KINDS, "clear"):
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {', '.join(KINDS)} or clear")
        if kind == "delay":
            try:
                seconds = float(arg) if arg is not None else -1.0
            except ValueError:
                seconds = -1.0
            if not 0 < seconds <= 3600:
                raise ValueError(f"fault 'delay' needs SECONDS in (0, 3600], got {arg!r}")
        if kind == "reject":
            if not arg:
                raise ValueError("fault 'reject' needs a PATTERN")
            try:
                re.compile(arg)
            except re.error as exc:
                raise ValueError(f"fault 'reject': {arg!r} is not a regular expression: {exc}") from None
        elif arg is not None and kind not in ("delay",):
            raise ValueError(f"fault {kind!r} takes no argument, got {arg!r}")
        self.clear()
        if kind == "clear":
            return
        if kind == "drop-on-commit":
            self.drop_on_commit = True
        elif kind == "reject":
            if not arg:
                raise ValueError("fault 'reject' needs a PATTERN")
            self.reject = re.compile(arg)
        elif kind == "delay":
            self.delay = float(arg or "5")
        elif kind == "auth-refuse":
            self.auth_refuse = True
        elif kind == "hang":
            self.hang = True
            self._cleared.clear()
        else:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {', '.join(KINDS)} or clear")

    def clear(self) -> None:
        self.drop_on_commit = False
        self.reject = None
        self.delay = 0.0
        self.auth_refuse = False
        self.hang = False
        self._cleared.set()

    def active(self) -> list[str]:
        out = []
        if self.drop_on_commit:
            out.append("drop-on-commit")
        if self.reject is not None:
            out.append(f"reject {self.reject.pattern}")
        if self.delay:
            out.append(f"delay {self.delay:g}")
        if self.auth_refuse:
            out.append("auth-refuse")
        if self.hang:
            out.append("hang")
        return out

    def before_request(self, max_hang: float = 3600.0) -> None:
        """Call at the start of every request: applies delay and hang."""
        if self.hang:
            self._cleared.wait(max_hang)
        if self.delay:
            time.sleep(self.delay)

    def rejects(self, line: str) -> bool:
        return self.reject is not None and self.reject.search(line) is not None

    def on_commit(self) -> None:
        """Call where the device is about to commit/apply: raises DropConnection when armed."""
        if self.drop_on_commit:
            raise DropConnection()
