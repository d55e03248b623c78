"""Run steps over many devices with Nornir: concurrently, one connection per device, in staged waves.

push = plan -> canary device(s) -> batches; each device commits with a revert timer (or checkpoint),
verifies and confirms, or is rolled back. A failing canary, or failures beyond ``max_fail``, stop the
rollout: devices not reached stay untouched. Every device ends in exactly one reported State.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from nornir.core import Nornir
from nornir.core.configuration import Config
from nornir.core.inventory import Defaults, Groups, Host, Hosts, Inventory
from nornir.core.task import Result, Task
from nornir.plugins.runners import ThreadedRunner

from fabconf import audit
from fabconf.connection import driver_for
from fabconf.credentials import REDACTOR, CredentialsError, resolve
from fabconf.steps import Job, Outcome, State, VerifyContext, diff_device, push_device, verify_device

ROLE_ORDER = {"spine": 0, "leaf": 1, "gpu_host": 2}
Progress = Callable[[Outcome], None]


def nornir_for(jobs: Iterable[Job], workers: int) -> Nornir:
    hosts = Hosts(
        {j.name: Host(name=j.name, hostname=j.device.hostname, platform=j.platform, data={"job": j}) for j in jobs}
    )
    config = Config(logging={"enabled": False})
    return Nornir(
        inventory=Inventory(hosts=hosts, groups=Groups(), defaults=Defaults()),
        config=config,
        runner=ThreadedRunner(num_workers=max(1, workers)),
    )


HOST_OPTIONS: dict[str, Any] = {}  # set by the CLI: {"allow_fw_reset": True} with --allow-fw-reset


def _driver(job: Job, timeout: int) -> Any:
    """The device's driver with its credentials, not yet connected."""
    return driver_for(job.device, resolve(job.device), timeout=timeout, host_options=HOST_OPTIONS)


def _connect(job: Job, timeout: int) -> Any:
    driver = _driver(job, timeout)
    driver.open()
    return driver


def _run(
    jobs: list[Job],
    step: Callable[[Job, Any], Outcome],
    workers: int,
    timeout: int,
    progress: Progress | None,
    host_workers: int | None = None,
) -> list[Outcome]:
    if not jobs:
        return []

    def task(task: Task) -> Result:
        job: Job = task.host.data["job"]
        driver: Any = None
        try:
            driver = _driver(job, timeout)
        except (CredentialsError, ImportError, ValueError) as exc:  # ours to fix, not the device's
            outcome = Outcome(job.name, job.platform, State.FAILED, message=REDACTOR(str(exc)))
        else:
            try:
                driver.open()
            except Exception as exc:
                text = REDACTOR(str(exc).strip() or type(exc).__name__)
                outcome = Outcome(job.name, job.platform, State.UNREACHABLE, message=f"cannot connect: {text}")
                driver = None
        if driver is not None:
            try:
                outcome = step(job, driver)
            except Exception as exc:
                text = REDACTOR(f"{type(exc).__name__}: {exc}")
                outcome = Outcome(job.name, job.platform, State.FAILED, message=text)
            finally:
                with contextlib.suppress(Exception):  # a close error never changes the outcome
                    driver.close()
        if progress is not None:
            progress(outcome)
        return Result(host=task.host, result=outcome, failed=not outcome.state.ok)

    switches = [j for j in jobs if j.platform != "linux"]
    hosts = [j for j in jobs if j.platform == "linux"]
    groups = [(g, w) for g, w in ((switches, workers), (hosts, host_workers or workers)) if g]
    # switches and GPU hosts each get their own worker pool, and run side by side
    with ThreadPoolExecutor(max_workers=len(groups)) as pool:
        parts = list(pool.map(lambda gw: nornir_for(gw[0], gw[1]).run(task=task, on_failed=True), groups))
    results = {name: multi for part in parts for name, multi in part.items()}
    out = []
    for job in jobs:
        multi = results[job.name]
        res = multi[0].result if multi and isinstance(multi[0].result, Outcome) else None
        out.append(res or Outcome(job.name, job.platform, State.FAILED, message=REDACTOR(str(multi.exception))))
    return out


def diff(
    jobs: list[Job],
    workers: int = 20,
    timeout: int = 60,
    progress: Progress | None = None,
    host_workers: int | None = None,
) -> list[Outcome]:
    return _run(jobs, diff_device, workers, timeout, progress, host_workers)


def verify(
    jobs: list[Job],
    all_devices: set[str],
    workers: int = 20,
    timeout: int = 60,
    bgp_wait: float = 30.0,
    progress: Progress | None = None,
    host_workers: int | None = None,
) -> list[Outcome]:
    """Read-only checks of every selected device; every BGP session of the fabric must be up."""
    ctx = VerifyContext(required_peers=set(all_devices), bgp_wait=bgp_wait)
    return _run(jobs, lambda job, driver: verify_device(job, driver, ctx), workers, timeout, progress, host_workers)


@dataclass
class Plan:
    waves: list[list[Job]]

    @property
    def jobs(self) -> list[Job]:
        return [j for w in self.waves for j in w]


def plan(jobs: list[Job], canary: int = 1, batch: str = "25%") -> Plan:
    ordered = sorted(jobs, key=lambda j: (ROLE_ORDER.get(j.device.role, 9), j.name))
    canary = max(0, min(canary, len(ordered)))
    rest = ordered[canary:]
    size = _batch_size(batch, len(rest))
    waves = [ordered[:canary]] if canary else []
    waves += [rest[i : i + size] for i in range(0, len(rest), size)]
    return Plan([w for w in waves if w])


def _batch_size(batch: str, total: int) -> int:
    text = str(batch).strip()
    if text.endswith("%"):
        pct = float(text[:-1])
        if not 0 < pct <= 100:
            raise ValueError(f"--batch {batch}: percentage must be in (0, 100]")
        return max(1, int(total * pct / 100))
    size = int(text)
    if size < 1:
        raise ValueError(f"--batch {batch}: must be at least 1")
    return size


def push(
    the_plan: Plan,
    all_devices: set[str],
    *,
    canary: int,
    max_fail: int,
    revert_in: int,
    workers: int = 20,
    timeout: int = 60,
    bgp_wait: float = 30.0,
    progress: Progress | None = None,
    host_workers: int | None = None,
) -> list[Outcome]:
    run_id = uuid.uuid4().hex[:12]
    selected = {j.name for j in the_plan.jobs}
    good = set(all_devices) - selected  # outside this run: assumed to be configured
    failures = 0
    outcomes: dict[str, Outcome] = {}
    stopped = ""
    for index, wave in enumerate(the_plan.waves):
        if stopped:
            for job in wave:
                outcomes[job.name] = Outcome(job.name, job.platform, State.UNTOUCHED, message=stopped)
            continue
        ctx = VerifyContext(required_peers=set(good), bgp_wait=bgp_wait)

        def step(job: Job, driver: Any, ctx: VerifyContext = ctx) -> Outcome:
            return push_device(job, driver, lambda: _connect(job, timeout), ctx, revert_in)

        for outcome in _run(wave, step, workers, timeout, progress, host_workers):
            outcomes[outcome.device] = outcome
            if outcome.state in (State.APPLIED, State.UNCHANGED):
                good.add(outcome.device)
            else:
                failures += 1
            if outcome.diff or outcome.state not in (State.UNCHANGED,):
                audit.record(run_id, outcome.device, outcome.diff, str(outcome.state), outcome.message)
        is_canary = index == 0 and canary > 0
        if is_canary and failures:
            stopped = "not reached: the canary failed"
        elif failures > max_fail:
            stopped = f"not reached: {failures} failure(s) exceed the budget of {max_fail}"
    return [outcomes[j.name] for j in the_plan.jobs]
