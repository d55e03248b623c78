"""Nornir processors of fabconf runs: progress reporting and the audit log, as observers of the tasks.

Nornir calls every hook of a processor; only ``task_instance_completed`` carries a device's Outcome.
"""

from __future__ import annotations

from typing import Protocol

from nornir.core.inventory import Host
from nornir.core.task import AggregatedResult, MultiResult, Task

from fabconf.deploy import audit
from fabconf.deploy.job import Outcome, State
from fabconf.deploy.tasks import outcome_of


class Progress(Protocol):
    """What a progress display is told: a device started, a device is done."""

    def started(self, device: str) -> None: ...
    def done(self, outcome: Outcome) -> None: ...


class Observer:
    """Every Nornir processor hook, doing nothing; subclasses override ``started`` and ``completed``."""

    def task_started(self, task: Task) -> None:
        return None

    def task_completed(self, task: Task, result: AggregatedResult) -> None:
        return None

    def task_instance_started(self, task: Task, host: Host) -> None:
        self.started(host.name)

    def task_instance_completed(self, task: Task, host: Host, result: MultiResult) -> None:
        outcome = outcome_of(result)
        if outcome is not None:
            self.completed(outcome)

    def subtask_instance_started(self, task: Task, host: Host) -> None:
        return None

    def subtask_instance_completed(self, task: Task, host: Host, result: MultiResult) -> None:
        return None

    def started(self, device: str) -> None:
        return None

    def completed(self, outcome: Outcome) -> None:
        return None


class ProgressProcessor(Observer):
    """Tells ``progress`` when each device starts and, with its Outcome, when it is done."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    def started(self, device: str) -> None:
        self.progress.started(device)

    def completed(self, outcome: Outcome) -> None:
        self.progress.done(outcome)


class AuditProcessor(Observer):
    """Appends one audit record per device a push touched or tried to touch (not the unchanged ones), with
    where the run pointed (``context``: inventory path, target) and the configuration hashes before/after."""

    def __init__(self, run_id: str, context: dict[str, str] | None = None) -> None:
        self.run_id = run_id
        self.context = dict(context or {})

    def task_instance_completed(self, task: Task, host: Host, result: MultiResult) -> None:
        outcome = outcome_of(result)
        if outcome is not None:
            self.recorded(outcome, str(host.hostname))

    def recorded(self, outcome: Outcome, address: str) -> None:
        if outcome.diff or outcome.state is not State.UNCHANGED:
            audit.record(
                self.run_id,
                outcome.device,
                outcome.diff,
                str(outcome.state),
                outcome.message,
                platform=outcome.platform,
                config_before_sha256=outcome.config_before or None,
                config_after_sha256=outcome.config_after or None,
                target=audit.target_of(self.context, address),
                address=address,
                seconds=round(outcome.seconds, 3),
                phases={k: round(v, 3) for k, v in outcome.phases.items()} or None,
                **self.context,
            )
