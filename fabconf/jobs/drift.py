"""The drift job: does every device still hold intent? A dry run of every selected device
(``fabconf.deploy.drift``: exactly what the diff job computes), each device in sync, drifted (with its drifted
sections and diff), unreachable or failed; optionally backups of the running configurations (committed to git)
with the unmanaged changes since the previous backup, and remediation of the drifted devices through the push
job (``remediate``). Its result, ``DriftRun``, is what every drift report is written from."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path

from fabconf.deploy import gitstore, processes, rollout
from fabconf.deploy.backup import canonical, read_previous, write_backup
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
from fabconf.deploy.job import Job
from fabconf.deploy.options import DeviceOptions, PushOptions
from fabconf.deploy.unmanaged import unmanaged_changes
from fabconf.errors import UsageError
from fabconf.jobs.push import push
from fabconf.jobs.target import EXIT_INTERRUPTED, QUIET, Hooks, ProgressFactory, Result, Target, interruptible, prepare


@dataclass(frozen=True)
class DriftOptions:
    backup_dir: Path | None = None
    git: bool = False  # commit backup_dir after writing the backups
    remediate: bool = False  # push the drifted devices (the push job: waves, canary, verify, rollback)
    yes: bool = False  # remediation does not ask (the caller passes no ``Hooks.approve``)
    push: PushOptions = field(default_factory=PushOptions)

    def __post_init__(self) -> None:
        if self.git and self.backup_dir is None:
            raise UsageError("--git commits the backups: give --backup-dir DIR too")


@dataclass
class DriftRun:
    """Everything a drift run found, for every reporter."""

    devices: list[DeviceDrift]
    exit_code: int
    started: float  # seconds since the epoch
    duration: float  # seconds
    backup_dir: Path | None = None
    backup_commit: str | None = None
    remediation: Result | None = None  # the remediation push's result
    notes: list[str] = field(default_factory=list)  # run-level messages (backup problems, …)


def _check(
    jobs: list[Job],
    options: DeviceOptions,
    progress: ProgressFactory,
    snapshots: Snapshots | None,
    interrupt: Interrupt,
) -> list[DeviceDrift]:
    with processes.forked(jobs, options) as split, progress("drift", jobs) as shown:  # forked before any thread
        outcomes = rollout.run(jobs, drift_task, options, shown, split=split, interrupt=interrupt, snapshots=snapshots)
    return [device_drift(job, outcome) for job, outcome in zip(jobs, outcomes, strict=True)]


def _remediate(
    target: Target, options: DeviceOptions, drift: DriftOptions, devices: list[DeviceDrift], hooks: Hooks
) -> tuple[Result | None, int]:
    """Push the drifted devices exactly as ``fabconf push --limit THEM`` would (plan, approval through
    ``hooks``, waves, canary, commit-confirm, verify, rollback, locks, audit); the push's result and exit status."""
    names = [d.device for d in devices if d.state is DriftState.DRIFTED]
    result = push(dataclasses.replace(target, limit=",".join(names)), options, drift.push, hooks)
    if hooks.pushed is not None and not result.declined:
        hooks.pushed(result)
    by_name = {o.device: o for o in result.outcomes}
    for d in devices:
        d.remediation = by_name.get(d.device, d.remediation)
    return (result if result.outcomes else None), result.exit_code


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


def check(target: Target, options: DeviceOptions, drift: DriftOptions, hooks: Hooks = QUIET) -> DriftRun:
    """The drift run without its report: check, back up, remediate; what every reporter needs."""
    started, clock = time.time(), time.monotonic()
    if drift.git:
        gitstore.require_git()
    _, jobs = prepare(target, options)
    snapshots = Snapshots() if drift.backup_dir is not None else None
    notes: list[str] = []
    with interruptible() as interrupt:
        devices = _check(jobs, options, hooks.progress, snapshots, interrupt)
    stopped = interrupt.stopping
    texts = _backups(jobs, devices, snapshots, drift.backup_dir, notes) if snapshots and drift.backup_dir else {}
    remediation: Result | None = None
    push_code = 0
    drifted = [j for j, d in zip(jobs, devices, strict=True) if d.state is DriftState.DRIFTED]
    if drift.remediate and drifted and not stopped:
        remediation, push_code = _remediate(target, options, drift, devices, hooks)
        stopped = _recheck(drifted, options, hooks.progress, devices, snapshots, texts)
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
    progress: ProgressFactory,
    devices: list[DeviceDrift],
    snapshots: Snapshots | None,
    texts: dict[str, str],
) -> bool:
    """Check the remediated devices again: what the report shows for them (and backs up) is their state after
    the push. True when interrupted."""
    with interruptible() as interrupt:
        again = {d.device: d for d in _check(drifted, options, progress, snapshots, interrupt)}
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
