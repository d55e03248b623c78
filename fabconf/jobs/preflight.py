"""The preflight jobs: read-only cluster checks before a training job (``fabconf.preflight``), the ib_send_bw
pair matrix over the GPU hosts, and nccl-tests' all_reduce_perf across them. Each returns its result; the CLI
writes the reports."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fabconf.compile.pipeline import Compiled
from fabconf.deploy import rollout
from fabconf.deploy.credentials import REDACTOR
from fabconf.deploy.job import Outcome, State
from fabconf.deploy.options import DeviceOptions
from fabconf.deploy.tasks import open_driver
from fabconf.errors import UsageError
from fabconf.jobs.target import EXIT_INTERRUPTED, QUIET, Hooks, Target, interruptible, prepare
from fabconf.platform.linux.parse import ParseError
from fabconf.preflight import bandwidth, nccl
from fabconf.preflight.fleet import uniform_firmware
from fabconf.preflight.policy import Policy
from fabconf.preflight.steps import PreflightContext, preflight_task


@dataclass
class ChecksResult:
    """The checks' outcomes, the exit status (0 every check passed, 2 a check failed, 1 a device could not be
    checked, 130 interrupted), when the run started (seconds since the epoch) and how long it took."""

    outcomes: list[Outcome]
    exit_code: int
    started: float
    seconds: float


@dataclass
class BandwidthResult:
    """The pair matrix and the hosts that could not be reached; exit 0 every pair at rate, 2 a pair below the
    threshold, 1 a host could not be reached."""

    matrix: bandwidth.Matrix
    unreachable: dict[str, str]
    exit_code: int


@dataclass
class NcclResult:
    """One all_reduce_perf run: launched from ``hosts[0]`` with ``command``, judged against ``threshold``
    (GB/s); exit 0 at or above it, 2 below it (or wrong results), 1 when it could not run."""

    hosts: list[str]
    command: str
    threshold: float
    run: nccl.NcclRun
    failed: list[str] = field(default_factory=list)
    exit_code: int = 0


def checked(outcome: Outcome) -> bool:
    """A device that could not be checked (unreachable, or failed without a single check run) never passes."""
    return outcome.state is State.VERIFIED or (outcome.state is State.FAILED and bool(outcome.checks))


def exit_code(outcomes: list[Outcome]) -> int:
    """0 every check passed, 2 a check failed, 1 a device could not be checked."""
    if not all(checked(o) for o in outcomes):
        return 1
    return 2 if any(o.state is State.FAILED for o in outcomes) else 0


def intended_speeds(compiled: Compiled) -> dict[str, dict[str, int]]:
    """Per switch, the Gb/s each cabled interface should run at (the link's speed)."""
    out: dict[str, dict[str, int]] = {}
    for name, data in compiled.data.items():
        for itf in data.get("interfaces", []) if isinstance(data, dict) else []:
            peer, _, peer_port = str(itf.get("peer", "")).partition(":")
            out.setdefault(name, {})[itf["name"]] = compiled.model.link_speed(name, itf["name"], peer, peer_port)
    return out


def check(target: Target, options: DeviceOptions, hooks: Hooks = QUIET) -> ChecksResult:
    compiled, jobs = prepare(target, options)
    policy = Policy.of(compiled.model.fabric)
    ctx = PreflightContext(policy, intended_speeds(compiled))
    started, clock = time.time(), time.monotonic()
    with interruptible() as interrupt, hooks.progress("preflight", jobs) as shown:
        outcomes = rollout.run(jobs, preflight_task, options, shown, interrupt=interrupt, ctx=ctx)
    if policy.firmware is None:
        uniform_firmware(outcomes, ctx.firmware)
    code = EXIT_INTERRUPTED if interrupt.stopping else exit_code(outcomes)
    return ChecksResult(outcomes, code, started, time.monotonic() - clock)


def run_bandwidth(
    target: Target, options: DeviceOptions, threshold: float, seconds: int, say: Callable[[str], None] | None = None
) -> BandwidthResult:
    """The ib_send_bw pair matrix over the selected GPU hosts (``say``: progress lines, if wanted)."""
    compiled, jobs = prepare(target, options)
    hosts = [j for j in jobs if j.spec.is_host]
    uplinks = {
        name: sum(1 for i in data.get("interfaces", []) if i.get("kind") == "uplink")
        for name, data in compiled.data.items()
        if isinstance(data, dict)
    }
    drivers: dict[str, Any] = {}
    unreachable: dict[str, str] = {}
    try:
        for job in hosts:
            try:
                drivers[job.name] = open_driver(job, options)
            except Exception as exc:
                unreachable[job.name] = REDACTOR(str(exc).strip() or type(exc).__name__)
        eps = bandwidth.endpoints({j.name: j.data for j in hosts if j.name in drivers})
        matrix = bandwidth.run_matrix(eps, drivers, uplinks, threshold, seconds, say)
    finally:
        for driver in drivers.values():
            with contextlib.suppress(Exception):
                driver.close()
    code = 1 if unreachable else (2 if matrix.bad() else 0)
    return BandwidthResult(matrix, unreachable, code)


def run_nccl(target: Target, options: DeviceOptions, minimum: float | None) -> NcclResult:
    """nccl-tests' all_reduce_perf across the selected GPU hosts, from the first; the threshold is ``minimum``
    GB/s, else 75 % of the slowest host's NIC capacity (``fabconf.preflight.nccl.threshold``)."""
    _compiled, jobs = prepare(target, options)
    hosts = [j for j in jobs if j.spec.is_host]
    if len(hosts) < 2:
        raise UsageError("--nccl needs two GPU hosts or more in the selection")
    data = {j.name: j.data for j in hosts}
    floor = minimum if minimum is not None else nccl.threshold(data)
    command = nccl.command([(str(j.device.hostname), nccl.gpus(j.data)) for j in hosts])
    run = nccl.NcclRun()
    try:
        driver: Any = open_driver(hosts[0], options)
        try:
            status, text = driver.read_tools([command])[command]
        finally:
            with contextlib.suppress(Exception):
                driver.close()
        if status != 0:
            run.error = (text.strip().splitlines() or [f"exit {status}"])[-1]
        else:
            run = nccl.parse(text)
    except ParseError as exc:
        run.error = f"unreadable output ({exc})"
    except Exception as exc:
        run.error = REDACTOR(str(exc).strip() or type(exc).__name__)
    failed = nccl.judge(run, floor)
    code = 1 if run.error else (2 if failed else 0)
    return NcclResult([j.name for j in hosts], command, floor, run, failed, code)
