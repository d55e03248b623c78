"""``fabconf drift``: does every device still hold intent? The nightly job's command.

A dry run of every selected device (``fabconf.deploy.drift``: exactly what ``fabconf diff`` computes), each
device in sync, drifted (with its drifted sections and diff), unreachable or failed; optionally backups of
the running configurations (``--backup-dir``, committed with ``--git``) with the unmanaged changes since the
previous backup, and remediation of the drifted devices through the push job, as ``fabconf push`` (``--remediate``).
The run itself is ``fabconf.jobs.drift``; this module turns arguments into its options and writes the reports.
Reports: text, JSON, JUnit XML, Prometheus text exposition; on stdout or atomically into ``-o FILE``.
Exit status: 0 all in sync, 2 any drifted, 1 any device not checked (or a remediation that did not succeed).
"""

from __future__ import annotations

import argparse
import io
import sys
from dataclasses import dataclass
from pathlib import Path

from fabconf.cli import drift_junit, drift_metrics
from fabconf.cli.devices import (
    Output,
    approver,
    device_options_of,
    progress_for,
    push_options_of,
    target_of,
)
from fabconf.cli.drift_parser import FORMATS
from fabconf.cli.drift_report import DriftRun, as_json, print_text
from fabconf.deploy.backup import atomic_write
from fabconf.deploy.options import DeviceOptions
from fabconf.errors import UsageError
from fabconf.jobs import drift as jobs_drift
from fabconf.jobs.target import Hooks, Result, Target


@dataclass(frozen=True)
class DriftOptions(jobs_drift.DriftOptions):
    """The drift job's options and where its report goes."""

    fmt: str = "text"
    output: Path | None = None  # the report's file (atomically replaced); None: stdout

    def __post_init__(self) -> None:
        if self.fmt not in FORMATS:
            raise UsageError(f"--format {self.fmt}: expected one of {', '.join(FORMATS)}")
        super().__post_init__()


def hooks_of(drift: DriftOptions) -> Hooks:
    """The terminal's part in a drift run: progress for a text report, and with ``--remediate`` the push's
    approval (unless ``--yes``) and its text report when the drift report is text on stdout."""
    shown = drift.fmt == "text" and drift.output is None
    out = Output("text") if shown else Output("json", documents=[])
    approve = None
    if drift.remediate and not drift.yes:
        if not sys.stdin.isatty():
            raise UsageError("--remediate needs --yes when not run interactively (it asks as fabconf push does)")
        approve = approver(out, yes=False)

    def pushed(result: Result) -> None:
        if shown:  # each diff is shown once: in the plan, when there was one
            Output("text", diffs=not result.previewed).emit(result.outcomes, "push", result.exit_code, "fabconf push")

    return Hooks(progress_for(drift.fmt), approve, pushed)


def check(target: Target, options: DeviceOptions, drift: DriftOptions) -> DriftRun:
    """The drift run without its report (``fabconf.jobs.drift.check``), with the terminal's hooks."""
    return jobs_drift.check(target, options, drift, hooks_of(drift))


def run_drift(target: Target, options: DeviceOptions, drift: DriftOptions) -> int:
    run = check(target, options, drift)
    emit(run, drift)
    return run.exit_code


def emit(run: DriftRun, drift: DriftOptions) -> None:
    """The report in its format, on stdout or atomically into ``-o FILE``; with ``-o``, why each device that was not
    checked was not, on stderr (a scheduled run's journal or mail: the metrics say how many, not why)."""
    if drift.output is not None:
        for d in run.devices:
            if not d.state.checked:
                why = d.outcome.message or "no reason given"
                print(f"fabconf drift: {d.device}: {d.state}: {why}", file=sys.stderr)
    if drift.fmt == "prometheus" and drift.output is not None:
        drift_metrics.write(run, drift.output)
        return
    if drift.fmt == "text":
        if drift.output is None:
            print_text(run, sys.stdout)
            return
        buffer = io.StringIO()
        print_text(run, buffer, color=False)
        text = buffer.getvalue()
    elif drift.fmt == "json":
        text = as_json(run)
    elif drift.fmt == "junit":
        text = drift_junit.as_junit(run)
    else:
        text = drift_metrics.as_text(run)
    if drift.output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        atomic_write(drift.output, text)


# -- the handler (its parser: fabconf.cli.drift_parser) ------------------------------------------------------------
def cmd_drift(args: argparse.Namespace) -> int:
    push = push_options_of(args)
    drift = DriftOptions(
        fmt=args.format,
        output=Path(args.output) if args.output else None,
        backup_dir=Path(args.backup_dir) if args.backup_dir else None,
        git=args.git,
        remediate=args.remediate,
        yes=args.yes,
        push=push,
    )
    return run_drift(target_of(args), device_options_of(args), drift)
