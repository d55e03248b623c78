"""Run fabconf's Nornir tasks over many devices: concurrently, one connection per device, in staged waves.

push = plan -> canary device(s) -> batches; each device commits with a revert timer (or checkpoint),
verifies and confirms, or is rolled back. A failing canary, or failures beyond ``max_fail``, stop the
rollout: devices not reached stay untouched. Every device ends in exactly one reported State.
Switches and GPU hosts each get their own worker pool, and run side by side. The read-only runs (diff, verify,
drift) may run over more than one process (``split``: ``fabconf.deploy.processes``); a push runs in this one.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from nornir.core import Nornir
from nornir.core.configuration import Config, LoggingConfig
from nornir.core.inventory import Defaults, Groups, Host, Hosts, Inventory
from nornir.core.processor import Processor, Processors
from nornir.core.task import MultiResult, Task
from nornir.plugins.runners import ThreadedRunner

from fabconf.deploy.credentials import REDACTOR
from fabconf.deploy.interrupt import INTERRUPTED, Interrupt
from fabconf.deploy.job import Job, Outcome, State
from fabconf.deploy.options import DeviceOptions, PushOptions, VerifyOptions
from fabconf.deploy.processes import Split
from fabconf.deploy.processors import AuditProcessor, Progress, ProgressProcessor
from fabconf.deploy.tasks import JOB_KEY, diff_task, nornir_result, outcome_of, push_task, verify_task

ROLE_ORDER = {"super_spine": 0, "spine": 1, "leaf": 2, "gpu_host": 3}
TaskFn = Callable[..., Any]


def host_of(job: Job) -> Host:
    """The Nornir host of a prepared job (``host.data["fabconf_job"]``)."""
    device = job.device
    return Host(name=job.name, hostname=device.hostname, platform=job.platform, port=device.port, data={JOB_KEY: job})


def nornir_for(jobs: Iterable[Job], workers: int, processors: Sequence[Processor] = ()) -> Nornir:
    """A Nornir over prepared jobs (``host.data["fabconf_job"]``), with a threaded runner."""
    return Nornir(
        inventory=Inventory(hosts=Hosts({j.name: host_of(j) for j in jobs}), groups=Groups(), defaults=Defaults()),
        config=Config(logging=LoggingConfig(enabled=False)),
        runner=ThreadedRunner(num_workers=max(1, workers)),
        processors=Processors(processors),
    )


def run(
    jobs: list[Job],
    task: TaskFn,
    options: DeviceOptions,
    progress: Progress | None = None,
    processors: Sequence[Processor] = (),
    split: Split | None = None,
    **task_args: Any,
) -> list[Outcome]:
    """Run ``task`` on every job (switches and hosts in their own pools, side by side; with ``split``, over its
    processes: ``fabconf.deploy.processes``); Outcomes in job order."""
    if not jobs:
        return []
    procs: list[Processor] = list(processors) + ([ProgressProcessor(progress)] if progress else [])
    if split is None:
        results = _here(jobs, task, options, procs, task_args)
    else:
        results = split.run(jobs, _here, task, options, procs, task_args, _Relayed(procs, task))
    return [results[job.name] for job in jobs]


def _here(
    jobs: list[Job], task: TaskFn, options: DeviceOptions, processors: Sequence[Processor], task_args: dict[str, Any]
) -> dict[str, Outcome]:
    """``task`` on every job in this process: switches and hosts each in their own Nornir threads, side by side."""
    switches = [j for j in jobs if not j.spec.is_host]
    hosts = [j for j in jobs if j.spec.is_host]
    groups = [(g, w) for g, w in ((switches, options.workers), (hosts, options.host_workers)) if g]
    if not groups:
        return {}

    def one(group: tuple[list[Job], int]) -> dict[str, Any]:
        nr = nornir_for(group[0], group[1], processors)
        return dict(nr.run(task=task, on_failed=True, options=options, **task_args).items())

    with ThreadPoolExecutor(max_workers=len(groups)) as pool:
        parts = list(pool.map(one, groups))
    results = {name: multi for part in parts for name, multi in part.items()}
    out = {}
    for job in jobs:
        multi = results[job.name]
        outcome = outcome_of(multi)
        if outcome is None:  # the task itself raised: a fabconf bug, still never shown green
            outcome = Outcome(job.name, job.platform, State.FAILED, message=REDACTOR(str(multi.exception)))
        out[job.name] = outcome
    return out


class _Relayed:
    """A worker process's devices, told to this process's processors as Nornir tells them about its own."""

    def __init__(self, processors: Sequence[Processor], task: TaskFn) -> None:
        nr = nornir_for([], 1, processors)
        self.processors = nr.processors
        self.task = Task(task, nr, global_dry_run=False, processors=nr.processors)
        self._hosts: dict[str, Host] = {}
        self._lock = threading.Lock()

    def _host(self, job: Job) -> Host:
        with self._lock:
            if job.name not in self._hosts:
                self._hosts[job.name] = host_of(job)
            return self._hosts[job.name]

    def started(self, job: Job) -> None:
        self.processors.task_instance_started(self.task, self._host(job))

    def done(self, job: Job, outcome: Outcome) -> None:
        host = self._host(job)
        multi = MultiResult(self.task.name)
        multi.append(nornir_result(host, outcome))
        self.processors.task_instance_completed(self.task, host, multi)


def diff(
    jobs: list[Job],
    options: DeviceOptions,
    progress: Progress | None = None,
    interrupt: Interrupt | None = None,
    split: Split | None = None,
) -> list[Outcome]:
    return run(jobs, diff_task, options, progress, split=split, interrupt=interrupt)


def verify(
    jobs: list[Job],
    all_devices: set[str],
    options: DeviceOptions,
    verify_options: VerifyOptions | None = None,
    progress: Progress | None = None,
    interrupt: Interrupt | None = None,
    pending_peers: dict[str, set[str]] | None = None,
    split: Split | None = None,
) -> list[Outcome]:
    """Read-only checks of every selected device; every BGP session of the fabric must be up, except those to
    peers outside the run that have not received intent yet (``pending_peers``, from ``fabconf.deploy.peers``)."""
    vopts = verify_options or VerifyOptions()
    return run(
        jobs,
        verify_task,
        options,
        progress,
        split=split,
        interrupt=interrupt,
        required_peers=set(all_devices),
        bgp_wait=vopts.bgp_wait,
        cabling=vopts.cabling,
        pending_peers=pending_peers or {},
    )


@dataclass
class Wave:
    """Devices pushed together: all of one role; the canary wave of a role holds its first device(s)."""

    role: str
    jobs: list[Job]
    canary: bool
    label: str
    seconds: float | None = None  # how long the wave took, once pushed (None: not pushed, or not reached)


@dataclass
class Plan:
    stages: list[Wave]

    @property
    def waves(self) -> list[list[Job]]:
        return [w.jobs for w in self.stages]

    @property
    def jobs(self) -> list[Job]:
        return [j for w in self.stages for j in w.jobs]

    def labels(self) -> list[str]:
        return [w.label for w in self.stages]


def push_order(jobs: list[Job]) -> list[Job]:
    """Super-spines, spines, leaves, GPU hosts; by name within a role: the order of every report."""
    return sorted(jobs, key=lambda j: (ROLE_ORDER.get(j.device.role, 9), j.device.role, j.name))


def plan(jobs: list[Job], canary: int = 1, batch: str = "25%") -> Plan:
    """Waves by role (super-spines, spines, leaves, GPU hosts): a role's canary device(s) alone, then its
    batches; a wave never mixes roles, and every role finishes before the next starts. ``batch`` as N% is
    ceil(N % of the role's devices), canary included: 25% of 8 leaves is 2, 10% of 8 is 1, 30% of 8 is 3."""
    by_role: dict[str, list[Job]] = {}
    for job in push_order(jobs):
        by_role.setdefault(job.device.role, []).append(job)
    stages: list[Wave] = []
    for role, members in by_role.items():
        first = max(0, min(canary, len(members)))
        if first:
            stages.append(Wave(role, members[:first], True, f"{role} canary"))
        rest = members[first:]
        size = batch_size(batch, len(members))
        for number, i in enumerate(range(0, len(rest), size), start=1):
            stages.append(Wave(role, rest[i : i + size], False, f"{role} batch {number}"))
    return Plan(stages)


def batch_size(batch: str, total: int) -> int:
    text = str(batch).strip()
    try:
        if text.endswith("%"):
            pct = float(text[:-1])
            if not 0 < pct <= 100:
                raise ValueError
            return max(1, math.ceil(total * pct / 100 - 1e-9))  # ceil, without float noise (7% of 100 is 7)
        size = int(text)
    except ValueError:
        raise ValueError(f"--batch {batch}: expected N or N% with N% in (0, 100]") from None
    if size < 1:
        raise ValueError(f"--batch {batch}: must be at least 1")
    return size


def push(
    the_plan: Plan,
    all_devices: set[str],
    push_options: PushOptions,
    options: DeviceOptions,
    progress: Progress | None = None,
    interrupt: Interrupt | None = None,
    audit_context: dict[str, str] | None = None,
    pending_peers: dict[str, set[str]] | None = None,
) -> list[Outcome]:
    """Wave by wave; every device touched is in the audit log (with ``audit_context``: where the run
    pointed). Stops at a failed canary, past the budget, or when interrupted (devices in flight finish; no
    new device starts). ``pending_peers``: sessions to peers outside the run that have not received intent
    are not waited for (``fabconf.deploy.peers``)."""
    audit = AuditProcessor(uuid.uuid4().hex[:12], audit_context)
    selected = {j.name for j in the_plan.jobs}
    good = set(all_devices) - selected  # outside this run: assumed to be configured
    failures = 0
    outcomes: dict[str, Outcome] = {}
    stopped = ""
    for wave in the_plan.stages:
        if not stopped and interrupt is not None and interrupt.stopping:
            stopped = INTERRUPTED
        if stopped:
            for job in wave.jobs:
                outcomes[job.name] = Outcome(job.name, job.platform, State.UNTOUCHED, message=stopped)
            continue
        before, started = failures, time.monotonic()
        results = run(
            wave.jobs,
            push_task,
            options,
            progress,
            processors=[audit],
            interrupt=interrupt,
            required_peers=set(good),
            revert_in=push_options.confirm_timeout,
            bgp_wait=push_options.bgp_wait,
            audit_run=audit.run_id,
            pending_peers=pending_peers or {},
            audit_context=audit.context,
        )
        wave.seconds = time.monotonic() - started
        for outcome in results:
            outcomes[outcome.device] = outcome
            if outcome.state in (State.APPLIED, State.UNCHANGED):
                good.add(outcome.device)
            else:
                failures += 1
        if interrupt is not None and interrupt.stopping:
            stopped = INTERRUPTED
        elif wave.canary and failures > before:
            stopped = f"not reached: the {wave.role} canary failed"
        elif failures > push_options.max_fail:
            stopped = f"not reached: {failures} failure(s) exceed the budget of {push_options.max_fail}"
    return [outcomes[j.name] for j in the_plan.jobs]
