"""Reports of a run: per-device diffs, a summary table, JSON, and the exit status they imply.

One list of Outcomes feeds every reporter; a device that failed is never shown as green.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table

from fabconf.deploy.job import Outcome, State

STYLE = {
    State.UNCHANGED: "green",
    State.VERIFIED: "green",
    State.APPLIED: "green",
    State.CHANGES: "yellow",
    State.UNTOUCHED: "yellow",
    State.ROLLED_BACK: "red",
    State.UNREACHABLE: "red",
    State.FAILED: "bold red",
}


def diff_exit_code(outcomes: list[Outcome]) -> int:
    """Like ``terraform plan -detailed-exitcode``: 1 any device failed, 2 changes pending, 0 in sync."""
    if any(o.state in (State.FAILED, State.UNREACHABLE) for o in outcomes):
        return 1
    return 2 if any(o.state is State.CHANGES for o in outcomes) else 0


def push_exit_code(outcomes: list[Outcome]) -> int:
    return 0 if all(o.state in (State.APPLIED, State.UNCHANGED) for o in outcomes) else 1


def summary(outcomes: list[Outcome]) -> dict[str, int]:
    return dict(sorted(Counter(str(o.state) for o in outcomes).items()))


def as_dict(outcomes: list[Outcome], command: str, exit_code: int) -> dict[str, Any]:
    return {
        "command": command,
        "exit_code": exit_code,
        "summary": summary(outcomes),
        "devices": [o.as_dict() for o in outcomes],
    }


def as_json(outcomes: list[Outcome], command: str, exit_code: int) -> str:
    return json.dumps(as_dict(outcomes, command, exit_code), indent=2)


def print_text(outcomes: list[Outcome], title: str, stream: TextIO | None = None) -> None:
    console = Console(file=stream or sys.stdout, highlight=False, soft_wrap=True)
    for o in outcomes:
        if o.diff:
            console.rule(f"{o.device} ({o.platform})", style="cyan")
            console.print(o.diff.rstrip("\n"), markup=False)
    table = Table(title=title, show_lines=False)
    for col in ("device", "platform", "state", "detail"):
        table.add_column(col, overflow="fold")
    for o in outcomes:
        detail = o.message
        if o.checks:
            detail = (detail + ": " if detail else "") + "; ".join(c.splitlines()[0] for c in o.checks)
        if o.state is State.CHANGES:
            detail = detail or f"{sum(1 for ln in o.diff.splitlines() if ln.strip())} line(s) would change"
        table.add_row(o.device, o.platform, f"[{STYLE[o.state]}]{o.state}[/]", detail)
    console.print(table)
    counts = ", ".join(f"{n} {state}" for state, n in summary(outcomes).items())
    console.print(f"{len(outcomes)} device(s): {counts}")
