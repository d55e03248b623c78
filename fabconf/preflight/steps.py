"""One device's preflight as a deploy step (read only): a GPU host through its tools, a switch through its
getters; the Outcome is ``verified`` when every check passes, else ``failed`` with one line per failed check."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nornir.core.task import Result, Task

from fabconf.deploy.interrupt import Interrupt
from fabconf.deploy.job import Job, Outcome, State
from fabconf.deploy.options import DeviceOptions
from fabconf.deploy.tasks import run_step
from fabconf.drivers.contract import Driver
from fabconf.preflight.host import ToolReader, check_host
from fabconf.preflight.policy import Policy
from fabconf.preflight.switch import check_counters, check_switch


@dataclass
class PreflightContext:
    policy: Policy
    speeds: dict[str, dict[str, int]]  # device -> interface -> intended Gb/s
    firmware: dict[str, dict[str, str]] = field(default_factory=dict)  # host -> RDMA device -> version
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def note_firmware(self, device: str, found: dict[str, str]) -> None:
        with self._lock:
            self.firmware[device] = found


def _switch_counters(job: Job, driver: Driver, policy: Policy, evidence: dict[str, Any]) -> list[str]:
    """Two counter reads ``policy.sample_seconds`` apart, where the driver has the getter."""
    read = getattr(driver, "get_interfaces_counters", None)
    if read is None:
        return []
    try:
        first = read()
    except NotImplementedError:
        return []
    time.sleep(policy.sample_seconds)
    second = read()
    ports = {i["name"] for i in job.interfaces}
    evidence["counters"] = {
        "get_interfaces_counters": {k: v for k, v in first.items() if k in ports},
        "get_interfaces_counters (second read)": {k: v for k, v in second.items() if k in ports},
    }
    return check_counters(job.interfaces, first, second, policy.max_error_rate)


def preflight_device(job: Job, driver: Driver, ctx: PreflightContext) -> Outcome:
    if job.spec.is_host:
        if not hasattr(driver, "read_tools"):
            return Outcome(job.name, job.platform, State.FAILED, message="this driver cannot read host tools")
        reader: ToolReader = driver  # type: ignore[assignment]
        facts = check_host(job.data, reader, ctx.policy)
        ctx.note_firmware(job.name, facts.firmware)
        failed, evidence = facts.failed, dict(facts.evidence)
    else:
        reported = driver.get_interfaces()
        ports = {i["name"] for i in job.interfaces}
        evidence = {"ports": {"get_interfaces": {k: v for k, v in reported.items() if k in ports}}}
        failed = check_switch(job.interfaces, ctx.speeds.get(job.name, {}), reported)
        failed += _switch_counters(job, driver, ctx.policy, evidence)
    state = State.FAILED if failed else State.VERIFIED
    message = "preflight failed" if failed else ""
    return Outcome(job.name, job.platform, state, checks=failed, message=message, evidence=evidence)


def preflight_task(
    task: Task,
    ctx: PreflightContext,
    options: DeviceOptions | None = None,
    inventory: str | Path | None = None,
    interrupt: Interrupt | None = None,
) -> Result:
    """The Nornir task: one connection, the device's preflight, an Outcome (never an exception)."""
    return run_step(task, lambda job, driver: preflight_device(job, driver, ctx), options, inventory, interrupt)
