"""The drift run's report for people (text) and for machines (JSON); JUnit and Prometheus are their own modules.

JSON shape (``schema: fabconf.report/1``, the top level and device fields ``diff``/``push``/``verify`` use too,
plus drift's own)::

    {"schema": "fabconf.report/1", "command": "drift", "exit_code": 0|1|2,
     "summary": {"in_sync": N, "drifted": N, "unreachable": N, "failed": N},  # the text report's names
     "drift": {...},                                          # the same as "summary" (earlier reports' key)
     "started": "2026-12-03T02:00:00Z", "duration_seconds": 4.2,
     "backup": {"dir": "...", "commit": "<sha>" | null} | null,
     "remediation": <the push report, same schema> | null,
     "notes": ["run-level messages, e.g. a backup that could not be written"],
     "devices": [{"device", "platform", "state": "in_sync|drifted|unreachable|failed", "diff", "commands",
                  "message", "failed_checks", "seconds", "dry_run_state": "changes|unchanged|…", "role",
                  "drift": "<the same as state>", "sections": ["qos", ...],
                  "unmanaged_changes": ["+ setting", "- setting"], "backup": "<file>" | null,
                  "remediation": "<push state>" | null}]}

For a remediated device ``state``/``drift``/``diff`` are those of the check after the push; ``remediation`` says
how the push ended.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table

from fabconf.cli import report
from fabconf.deploy.drift import DeviceDrift, DriftState, summary
from fabconf.deploy.job import Outcome
from fabconf.jobs.drift import DriftRun
from fabconf.jobs.target import Result

__all__ = ["DriftRun", "as_dict", "as_json", "print_text"]

STYLE = {
    DriftState.IN_SYNC: "green",
    DriftState.DRIFTED: "yellow",
    DriftState.UNREACHABLE: "red",
    DriftState.FAILED: "bold red",
}


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def device_fields(run: DriftRun) -> Callable[[Outcome], dict[str, Any]]:
    """Drift's own fields of each device's entry in the shared JSON report."""
    by_name = {d.device: d for d in run.devices}

    def fields(outcome: Outcome) -> dict[str, Any]:
        d = by_name[outcome.device]
        return {
            "state": str(d.state),  # the text report's names: in_sync, drifted, unreachable, failed
            "dry_run_state": str(outcome.state),  # what the dry run itself said (changes, unchanged, …)
            "role": d.role,
            "drift": str(d.state),  # the same as "state" (kept for readers of earlier reports)
            "sections": d.sections,
            "unmanaged_changes": d.unmanaged,
            "backup": str(d.backup) if d.backup else None,
            "remediation": str(d.remediation.state) if d.remediation else None,
        }

    return fields


def as_dict(run: DriftRun) -> dict[str, Any]:
    doc = report.as_dict([d.outcome for d in run.devices], "drift", run.exit_code, device_fields(run))
    doc.update(
        summary=summary(run.devices),
        drift=summary(run.devices),
        started=_iso(run.started),
        duration_seconds=round(run.duration, 3),
        backup={"dir": str(run.backup_dir), "commit": run.backup_commit} if run.backup_dir else None,
        remediation=_pushed(run.remediation),
        notes=run.notes,
    )
    return doc


def _pushed(result: Result | None) -> dict[str, Any] | None:
    """The remediation push's JSON report (the push command's own shape)."""
    return report.as_dict(result.outcomes, "push", result.exit_code) if result is not None else None


def as_json(run: DriftRun) -> str:
    return json.dumps(as_dict(run), indent=2) + "\n"


def _detail(d: DeviceDrift) -> str:
    parts = []
    if d.state is DriftState.DRIFTED:
        parts.append(f"{report.changed_lines(d.outcome)} drifted")
    if d.outcome.message:
        parts.append(d.outcome.message)
    if d.remediation is not None:
        note = f" ({d.remediation.message})" if d.remediation.message else ""
        parts.append(f"remediation: {d.remediation.state}{note}")
    if d.unmanaged:
        parts.append(f"{len(d.unmanaged)} unmanaged change(s)")
    return "; ".join(parts)


def print_text(run: DriftRun, stream: TextIO, color: bool | None = None) -> None:
    """Per drifted device its diff, per device its unmanaged changes, then the summary table."""
    console = Console(file=stream, highlight=False, soft_wrap=True, force_terminal=color, no_color=color is False)
    for d in run.devices:
        if d.state is DriftState.DRIFTED and d.outcome.diff:
            console.rule(f"{d.device} ({d.platform}): drifted: {', '.join(d.sections)}", style="yellow")
            for line in d.outcome.diff.rstrip("\n").splitlines():
                console.print(line, markup=False, style=report.line_style(line))
        if d.unmanaged:
            console.rule(f"{d.device} ({d.platform}): unmanaged changes since the last backup", style="cyan")
            for line in d.unmanaged:
                console.print(line, markup=False)
    table = Table(title="fabconf drift (read only" + (", then remediation)" if run.remediation else ")"))
    for col in ("device", "platform", "role", "drift", "sections", "detail"):
        table.add_column(col, overflow="fold")
    for d in run.devices:
        table.add_row(
            d.device, d.platform, d.role, f"[{STYLE[d.state]}]{d.state}[/]", ", ".join(d.sections), _detail(d)
        )
    console.print(table)
    counts = ", ".join(f"{n} {state}" for state, n in summary(run.devices).items() if n)
    console.print(f"{len(run.devices)} device(s): {counts}")
    if run.backup_dir:
        commit = f", committed {run.backup_commit[:12]}" if run.backup_commit else ""
        console.print(f"backups in {run.backup_dir}{commit}")
    for note in run.notes:
        console.print(f"note: {note}", markup=False)
