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
from fabconf.preflight.switch import check_counters, check_pfc, check_switch, lossless_priorities, pfc_rates


@dataclass
class PreflightContext:
    policy: Policy
    speeds: dict[str, dict[str, int]]  # device -> interface -> intended Gb/s
    firmware: dict[str, dict[str, str]] = field(default_factory=dict)  # host -> RDMA device -> version
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def note_firmware(self, device: str, found: dict[str, str]) -> None:
        with self._lock:
            self.firmware[device] = found


def _read(driver: Driver, name: str, *args: Any) -> Any:
    """A counter read where the driver has it (None where it has not: the check is skipped)."""
    read = getattr(driver, name, None)
    if read is None:
        return None
    try:
        return read(*args)
    except NotImplementedError:
        return None


def _switch_counters(job: Job, driver: Driver, policy: Policy, evidence: dict[str, Any]) -> list[str]:
    """Error and PFC counters read twice, ``policy.sample_seconds`` apart, where the driver has the reads."""
    ports = sorted(i["name"] for i in job.interfaces)
    errors, pfc = _read(driver, "get_interfaces_counters"), _read(driver, "pfc_counters", ports)
    if errors is None and pfc is None:
        return []
    started = time.monotonic()
    time.sleep(policy.sample_seconds)
    errors2 = _read(driver, "get_interfaces_counters") if errors is not None else None
    pfc2 = _read(driver, "pfc_counters", ports) if pfc is not None else None
    seconds = time.monotonic() - started
    failed: list[str] = []
    if errors is not None and errors2 is not None:
        evidence["counters"] = {
            "get_interfaces_counters": {k: v for k, v in errors.items() if k in ports},
            "get_interfaces_counters (second read)": {k: v for k, v in errors2.items() if k in ports},
        }
        failed += check_counters(job.interfaces, errors, errors2, policy.max_error_rate)
    if pfc is not None and pfc2 is not None:
        lossless = lossless_priorities(job.device.platform, job.data.get("qos") or {})
        evidence["pfc"] = {
            "pfc_counters": pfc,
            "pfc_counters (second read)": pfc2,
            "received per second": pfc_rates(lossless, pfc, pfc2, seconds),
        }
        failed += check_pfc(job.interfaces, lossless, pfc, pfc2, seconds)
    return failed


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
