"""Cooperative interruption of a run (Ctrl-C): first ``stop`` — no new device starts and every device in
flight reaches a defined end state; then ``abort`` — devices in flight roll back instead of confirming.

The CLI sets these from its SIGINT handler; the rollout and the steps only read them, so a run driven
from Python (a Nornir script, a test) can interrupt the same way.
"""

from __future__ import annotations

import threading

INTERRUPTED = "not started: the run was interrupted"


class Interrupt:
    def __init__(self) -> None:
        self.stop = threading.Event()  # no new device starts
        self.abort = threading.Event()  # devices in flight roll back instead of confirming

    @property
    def stopping(self) -> bool:
        return self.stop.is_set()

    @property
    def aborting(self) -> bool:
        return self.abort.is_set()

    def request(self) -> str:
        """One more interrupt: the first stops, the second aborts. Returns what the user is told."""
        if not self.stop.is_set():
            self.stop.set()
            return (
                "interrupted: no new device starts; devices in flight finish (confirmed after a passing verify, "
                "or rolled back). Press Ctrl-C again to roll them back now."
            )
        self.abort.set()
        return "interrupted again: rolling back the devices in flight, then exiting"
