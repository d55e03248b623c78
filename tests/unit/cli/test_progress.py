"""The progress display on stderr: plain lines when not a terminal (a line per device and one for a slow
device), a live line on a terminal once a run takes longer than a second."""

from __future__ import annotations

import io
import time

from fabconf.cli.progress import RunProgress
from fabconf.deploy.job import Outcome, State


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_when_not_a_terminal_and_a_line_for_a_slow_device() -> None:
    stream = io.StringIO()
    with RunProgress("push", 2, stream, slow_after=0.3) as progress:
        progress.started("leaf1")
        progress.started("leaf3")
        progress.done(Outcome("leaf1", "cumulus", State.APPLIED, seconds=1.25))
        time.sleep(0.8)
        progress.done(Outcome("leaf3", "eos", State.ROLLED_BACK, seconds=9.0))
    lines = stream.getvalue().splitlines()
    assert lines == [
        "fabconf push: leaf1: applied (1.2 s)",
        "fabconf push: leaf3: still working after 0.3 s",
        "fabconf push: leaf3: rolled back (9.0 s)",
    ]


def test_a_terminal_gets_a_live_line_only_for_runs_longer_than_the_threshold() -> None:
    quick = Terminal()
    with RunProgress("diff", 1, quick, live_after=5.0) as progress:
        progress.started("spine1")
        progress.done(Outcome("spine1", "eos", State.UNCHANGED))
    assert quick.getvalue() == ""  # a quick run shows nothing but its report

    slow = Terminal()
    with RunProgress("diff", 2, slow, live_after=0.1) as progress:
        progress.started("spine1")
        time.sleep(0.6)
        progress.done(Outcome("spine1", "eos", State.CHANGES, seconds=0.6))
    shown = slow.getvalue()
    assert "fabconf diff" in shown and "spine1: changes (0.6 s)" in shown
