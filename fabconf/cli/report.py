"""Reports of a run: per-device diffs, a summary table, JSON, and the exit status they imply.

One list of Outcomes feeds every reporter; a device that failed is never shown as green.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from fabconf.deploy.job import Outcome, State
from fabconf.drivers.textdiff import counts

STYLE = {
    State.UNCHANGED: "green",
    State.VERIFIED: "green",
    State.APPLIED: "green",
    State.CHANGES: "yellow",
    State.UNTOUCHED: "yellow",
    State.CONFLICT: "red",
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


# The JSON reports' shape and its version: diff, verify, push and drift share the top level (schema, command,
# exit_code, summary, devices) and each device's fields (Outcome.as_dict); a command adds fields, never renames.
SCHEMA = "fabconf.report/1"


def as_dict(
    outcomes: list[Outcome],
    command: str,
    exit_code: int,
    device_fields: Callable[[Outcome], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The JSON report; ``device_fields`` adds a command's own fields to each device's entry."""
    return {
        "schema": SCHEMA,
        "command": command,
        "exit_code": exit_code,
        "summary": summary(outcomes),
        "devices": [{**o.as_dict(), **(device_fields(o) if device_fields else {})} for o in outcomes],
    }


def as_json(outcomes: list[Outcome], command: str, exit_code: int) -> str:
    return json.dumps(as_dict(outcomes, command, exit_code), indent=2)


def line_style(line: str) -> str | None:
    if line.startswith(("+++ ", "--- ")):
        return "bold"
    if line.startswith("@@"):
        return "cyan"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    return None


def changed_lines(o: Outcome) -> str:
    """``+A -R``: lines the diff adds and removes."""
    added, removed = counts(o.diff)
    return f"+{added} -{removed} line(s)"


def print_text(outcomes: list[Outcome], title: str, stream: TextIO | None = None, commands: bool = False) -> None:
    """Per device its diff (``commands``: what is sent instead), -/+ coloured on a terminal, then a table."""
    console = Console(file=stream or sys.stdout, highlight=False, soft_wrap=True)
    for o in outcomes:
        text = o.commands if commands else o.diff
        if text:
            console.rule(f"{o.device} ({o.platform})" + (": commands" if commands else ""), style="cyan")
            for line in text.rstrip("\n").splitlines():
                console.print(line, markup=False, style=None if commands else line_style(line))
    table = Table(title=title, show_lines=False)
    for col in ("device", "platform", "state", "detail"):
        table.add_column(col, overflow="fold")
    for o in outcomes:
        detail = o.message
        if o.checks:
            detail = (detail + ": " if detail else "") + "; ".join(c.splitlines()[0] for c in o.checks)
        if o.state is State.CHANGES:
            detail = detail or f"{changed_lines(o)} would change"
        elif o.state is State.APPLIED and o.diff:
            detail = (detail + "; " if detail else "") + f"{changed_lines(o)} changed"
        # a message is text, never markup: "[gid] ..." or "[U]" must print as written
        table.add_row(escape(o.device), o.platform, f"[{STYLE[o.state]}]{o.state}[/]", escape(detail))
    console.print(table)
    counts = ", ".join(f"{n} {state}" for state, n in summary(outcomes).items())
    console.print(f"{len(outcomes)} device(s): {counts}")
