"""``fabconf drift``: does every device still hold intent? The nightly job's command.

A dry run of every selected device (``fabconf.deploy.drift``: exactly what ``fabconf diff`` computes), each
device in sync, drifted (with its drifted sections and diff), unreachable or failed; optionally backups of
the running configurations (``--backup-dir``, committed with ``--git``) with the unmanaged changes since the
previous backup, and remediation of the drifted devices through ``fabconf push``'s own path (``--remediate``).
Reports: text, JSON, JUnit XML, Prometheus text exposition; on stdout or atomically into ``-o FILE``.
Exit status: 0 all in sync, 2 any drifted, 1 any device not checked (or a remediation that did not succeed).
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabconf.cli import drift_junit, drift_metrics, report
from fabconf.cli.devices import (
    EXIT_INTERRUPTED,
    Output,
    Target,
    add_device_args,
    add_report_args,
    device_options_of,
    interruptible,
    prepare,
    progress,
    push_options_of,
    run_push,
    target_of,
)
from fabconf.cli.drift_report import DriftRun, as_json, print_text
from fabconf.deploy import gitstore, rollout
from fabconf.deploy.backup import atomic_write, canonical, read_previous, write_backup
from fabconf.deploy.drift import (
    EXIT_NOT_CHECKED,
    DeviceDrift,
    DriftState,
    Snapshots,
    device_drift,
    drift_task,
    exit_code,
    summary,
)
from fabconf.deploy.interrupt import Interrupt
from fabconf.deploy.job import Job, Outcome
from fabconf.deploy.options import DeviceOptions, PushOptions
from fabconf.deploy.unmanaged import unmanaged_changes
from fabconf.errors import UsageError

FORMATS = ("text", "json", "junit", "prometheus")


@dataclass(frozen=True)
class DriftOptions:
    fmt: str = "text"
    output: Path | None = None  # the report's file (atomically replaced); None: stdout
    backup_dir: Path | None = None
    git: bool = False  # commit backup_dir after writing the backups
    remediate: bool = False  # push the drifted devices (fabconf push's path: waves, canary, verify, rollback)
    yes: bool = False  # remediation does not ask
    push: PushOptions = field(default_factory=PushOptions)

    def __post_init__(self) -> None:
        if self.fmt not in FORMATS:
            raise UsageError(f"--format {self.fmt}: expected one of {', '.join(FORMATS)}")
        if self.git and self.backup_dir is None:
            raise UsageError("--git commits the backups: give --backup-dir DIR too")


def _check(
    jobs: list[Job], options: DeviceOptions, fmt: str, snapshots: Snapshots | None, interrupt: Interrupt
) -> list[DeviceDrift]:
    with progress("drift", jobs, fmt) as shown:
        outcomes = rollout.run(jobs, drift_task, options, shown, interrupt=interrupt, snapshots=snapshots)
    return [device_drift(job, outcome) for job, outcome in zip(jobs, outcomes, strict=True)]


@dataclass
class _Captured(Output):
    """push's own Output (its text report on a text run; collected, not printed, otherwise), keeping the
    Outcomes it reports."""

    outcomes: list[Outcome] = field(default_factory=list)

    def emit(self, outcomes: list[Outcome], command: str, code: int, title: str) -> int:
        self.outcomes = list(outcomes)
        return super().emit(outcomes, command, code, title)


def _remediate(
    target: Target, options: DeviceOptions, drift: DriftOptions, devices: list[DeviceDrift]
) -> tuple[dict[str, Any] | None, int]:
    """Push the drifted devices exactly as ``fabconf push --limit THEM`` would (plan, prompt unless ``--yes``,
    waves, canary, commit-confirm, verify, rollback, locks, audit); the push's JSON report and exit status."""
    names = [d.device for d in devices if d.state is DriftState.DRIFTED]
    shown = drift.fmt == "text" and drift.output is None
    out = _Captured("text") if shown else _Captured("json", documents=[])
    code = run_push(dataclasses.replace(target, limit=",".join(names)), options, drift.push, out, drift.yes)
    by_name = {o.device: o for o in out.outcomes}
    for d in devices:
        d.remediation = by_name.get(d.device, d.remediation)
    return (report.as_dict(out.outcomes, "push", code) if out.outcomes else None), code


def _backups(
    jobs: list[Job], devices: list[DeviceDrift], snapshots: Snapshots, directory: Path, notes: list[str]
) -> dict[str, str]:
    """The canonical backup text of every device read (device -> text), and its unmanaged changes since the
    previous backup file."""
    texts: dict[str, str] = {}
    for job, d in zip(jobs, devices, strict=True):
        raw = snapshots.get(job.name)
        if raw is None:
            if d.state.checked:
                notes.append(f"{job.name}: no backup written: {snapshots.problem_of(job.name) or 'not read'}")
            continue
        texts[job.name] = canonical(raw, job.spec.candidate)
        previous = read_previous(directory / f"{job.name}{job.spec.suffix}")
        d.unmanaged = unmanaged_changes(job, previous, texts[job.name], d.outcome.commands)
    return texts


def _commit_message(devices: list[DeviceDrift]) -> str:
    counts = ", ".join(f"{n} {state}" for state, n in summary(devices).items())
    lines = [f"fabconf drift: {len(devices)} device(s): {counts}", ""]
    for d in devices:
        if d.state is DriftState.DRIFTED:
            lines.append(f"{d.device}: drifted ({', '.join(d.sections)})")
        elif not d.state.checked:
            lines.append(f"{d.device}: {d.state}")
        if d.unmanaged:
            lines.append(f"{d.device}: {len(d.unmanaged)} unmanaged change(s)")
    return "\n".join(lines).rstrip() + "\n"


def check(target: Target, options: DeviceOptions, drift: DriftOptions) -> DriftRun:
    """The drift run without its report: check, back up, remediate; what every reporter needs."""
    started, clock = time.time(), time.monotonic()
    if drift.git:
        gitstore.require_git()
    if drift.remediate and not drift.yes and not sys.stdin.isatty():
        raise UsageError("--remediate needs --yes when not run interactively (it asks as fabconf push does)")
    _, jobs = prepare(target, options)
    snapshots = Snapshots() if drift.backup_dir is not None else None
    notes: list[str] = []
    with interruptible() as interrupt:
        devices = _check(jobs, options, drift.fmt, snapshots, interrupt)
    stopped = interrupt.stopping
    texts = _backups(jobs, devices, snapshots, drift.backup_dir, notes) if snapshots and drift.backup_dir else {}
    remediation, push_code = None, 0
    drifted = [j for j, d in zip(jobs, devices, strict=True) if d.state is DriftState.DRIFTED]
    if drift.remediate and drifted and not stopped:
        remediation, push_code = _remediate(target, options, drift, devices)
        stopped = _recheck(drifted, options, drift.fmt, devices, snapshots, texts)
    commit = None
    if drift.backup_dir is not None:
        for job, d in zip(jobs, devices, strict=True):
            if job.name in texts:
                d.backup = drift.backup_dir / f"{job.name}{job.spec.suffix}"
                write_backup(d.backup, texts[job.name])
        if drift.git:
            commit = gitstore.commit(drift.backup_dir, _commit_message(devices))
    code = exit_code(devices)
    if push_code != 0:  # the remediation did not succeed (or was declined): someone must look
        code = EXIT_NOT_CHECKED
    if stopped:
        code = EXIT_INTERRUPTED
    return DriftRun(devices, code, started, time.monotonic() - clock, drift.backup_dir, commit, remediation, notes)


def _recheck(
    drifted: list[Job],
    options: DeviceOptions,
    fmt: str,
    devices: list[DeviceDrift],
    snapshots: Snapshots | None,
    texts: dict[str, str],
) -> bool:
    """Check the remediated devices again: what the report shows for them (and backs up) is their state after
    the push. True when interrupted."""
    with interruptible() as interrupt:
        again = {d.device: d for d in _check(drifted, options, fmt, snapshots, interrupt)}
    for i, d in enumerate(devices):
        if d.device not in again or d.remediation is None:
            continue
        again[d.device].remediation, again[d.device].unmanaged = d.remediation, d.unmanaged
        devices[i] = again[d.device]
        raw = snapshots.get(d.device) if snapshots else None
        if raw is not None:
            job = next(j for j in drifted if j.name == d.device)
            texts[d.device] = canonical(raw, job.spec.candidate)
    return interrupt.stopping


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


# -- the argparse layer -------------------------------------------------------------------------------------------
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


def add_parser(sub: Any, inventory_arg: Any) -> None:
    push_defaults = PushOptions()
    p = sub.add_parser(
        "drift",
        help="nightly drift check: in sync, drifted (sections, diff), unreachable; backups; reports; remediation",
        description=(
            "Drift check (read only unless --remediate): what a dry-run push would change on every selected "
            "device. Exit 0 all in sync, 2 any drifted, 1 any device not checked."
        ),
    )
    add_report_args(p, inventory_arg, FORMATS)
    p.add_argument(
        "--backup-dir",
        metavar="DIR",
        help="write each device's running configuration (hosts: NIC state), secrets masked, as DIR/<device>.<ext>",
    )
    p.add_argument("--git", action="store_true", help="commit --backup-dir (a git repository, created if needed)")
    p.add_argument(
        "--remediate", action="store_true", help="push the drifted devices (as fabconf push: waves, verify, rollback)"
    )
    p.add_argument("-y", "--yes", action="store_true", help="--remediate does not ask for confirmation")
    p.add_argument("--canary", type=int, default=push_defaults.canary, help="--remediate: devices pushed first, alone")
    p.add_argument("--batch", default=push_defaults.batch, help="--remediate: devices per batch: N or N%%")
    p.add_argument("--max-fail", type=int, default=push_defaults.max_fail, help="--remediate: failures tolerated")
    p.add_argument(
        "--confirm-timeout", type=int, default=push_defaults.confirm_timeout, help="--remediate: revert timer, seconds"
    )
    p.add_argument(
        "--bgp-wait", type=float, default=push_defaults.bgp_wait, help="--remediate: seconds verify waits for BGP"
    )
    add_device_args(p)
    p.set_defaults(func=cmd_drift)
