"""Drift: the dry-run diff of every device, read as "does the device still hold intent?".

Drift means exactly what a dry-run push would change: the step is ``diff_device`` (stage, compare, discard),
and a device drifted when that leaves a change. With backups asked for, the same connection also reads the
device's running configuration (for hosts the NIC state the linux driver reads), secrets masked.

Every device ends in one ``DriftState``; a device that could not be checked (unreachable, failed, not started
because the run was interrupted) is never in sync. Exit status: 1 when any device was not checked, else 2 when
any drifted, else 0.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from nornir.core.task import Result, Task

from fabconf.deploy.credentials import REDACTOR
from fabconf.deploy.interrupt import Interrupt
from fabconf.deploy.job import Job, Outcome, State
from fabconf.deploy.options import DeviceOptions
from fabconf.deploy.sections import classify
from fabconf.deploy.steps import diff_device
from fabconf.deploy.tasks import run_step
from fabconf.drivers.contract import Driver

EXIT_IN_SYNC, EXIT_NOT_CHECKED, EXIT_DRIFTED = 0, 1, 2


class DriftState(StrEnum):
    IN_SYNC = "in_sync"  # the dry run would change nothing
    DRIFTED = "drifted"  # the dry run would change something: the drifted sections and the diff say what
    UNREACHABLE = "unreachable"  # could not connect or authenticate: not checked
    FAILED = "failed"  # anything else that kept the device from being checked

    @property
    def checked(self) -> bool:
        return self in (DriftState.IN_SYNC, DriftState.DRIFTED)


def state_of(outcome: Outcome) -> DriftState:
    if outcome.state is State.UNCHANGED:
        return DriftState.IN_SYNC
    if outcome.state is State.CHANGES:
        return DriftState.DRIFTED
    if outcome.state is State.UNREACHABLE:
        return DriftState.UNREACHABLE
    return DriftState.FAILED  # failed, or untouched by an interrupted run: never in sync


@dataclass
class DeviceDrift:
    """One device's drift: its dry-run Outcome and what it means."""

    outcome: Outcome
    role: str
    state: DriftState
    sections: list[str] = field(default_factory=list)
    unmanaged: list[str] = field(default_factory=list)  # changed since the last backup, outside what fabconf owns
    backup: Path | None = None  # the backup file written for this device in this run
    remediation: Outcome | None = None  # the push that remediated it (``--remediate``)

    @property
    def device(self) -> str:
        return self.outcome.device

    @property
    def platform(self) -> str:
        return self.outcome.platform


def device_drift(job: Job, outcome: Outcome) -> DeviceDrift:
    state = state_of(outcome)
    sections = classify(outcome.diff, outcome.commands, job.spec.candidate) if state is DriftState.DRIFTED else []
    if state is DriftState.DRIFTED and not sections:
        sections = ["other"]
    return DeviceDrift(outcome, job.device.role, state, sections)


def exit_code(devices: list[DeviceDrift]) -> int:
    if any(not d.state.checked for d in devices):
        return EXIT_NOT_CHECKED
    return EXIT_DRIFTED if any(d.state is DriftState.DRIFTED for d in devices) else EXIT_IN_SYNC


def summary(devices: list[DeviceDrift]) -> dict[str, int]:
    """Devices per drift state, every state listed (0 included), in ``DriftState`` order."""
    return {str(s): sum(1 for d in devices if d.state is s) for s in DriftState}


class Snapshots:
    """Running configurations read during a drift run (device -> text, secrets masked); thread-safe."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._problems: dict[str, str] = {}
        self._lock = threading.Lock()

    def put(self, device: str, text: str) -> None:
        with self._lock:
            self._texts[device] = text

    def problem(self, device: str, message: str) -> None:
        with self._lock:
            self._problems[device] = message

    def get(self, device: str) -> str | None:
        with self._lock:
            return self._texts.get(device)

    def problem_of(self, device: str) -> str:
        with self._lock:
            return self._problems.get(device, "")

    # a run over more than one process (fabconf.deploy.processes.Gathered): each worker fills an empty one, merged here
    def emptied(self) -> Snapshots:
        return Snapshots()

    def merge(self, other: Snapshots) -> None:
        with self._lock:
            self._texts.update(other._texts)
            self._problems.update(other._problems)

    def __getstate__(self) -> dict[str, dict[str, str]]:
        with self._lock:
            return {"texts": dict(self._texts), "problems": dict(self._problems)}

    def __setstate__(self, state: dict[str, dict[str, str]]) -> None:
        self._texts, self._problems, self._lock = dict(state["texts"]), dict(state["problems"]), threading.Lock()


def drift_device(job: Job, driver: Driver, snapshots: Snapshots | None = None) -> Outcome:
    """The dry run; with ``snapshots``, also read the running configuration for the backup (a read that fails
    leaves the dry run's result as it is and is noted for the backup)."""
    outcome = diff_device(job, driver)
    if snapshots is not None and outcome.state in (State.UNCHANGED, State.CHANGES):
        try:
            snapshots.put(job.name, REDACTOR(driver.get_config(retrieve="running")["running"]))
        except Exception as exc:
            snapshots.problem(job.name, REDACTOR(f"running configuration not read: {type(exc).__name__}: {exc}"))
    return outcome


def drift_task(
    task: Task,
    options: DeviceOptions | None = None,
    inventory: str | Path | None = None,
    interrupt: Interrupt | None = None,
    snapshots: Snapshots | None = None,
) -> Result:
    """The drift check of ``task.host`` as a Nornir task: a dry run (nothing is left on the device), plus the
    running configuration into ``snapshots`` when given."""
    return run_step(task, lambda job, driver: drift_device(job, driver, snapshots), options, inventory, interrupt)
