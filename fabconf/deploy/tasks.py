"""fabconf's steps as Nornir tasks: the documented Python API of the deploy layer.

Each task is a plain Nornir task function. It opens ONE connection to ``task.host``, runs the step and
returns a ``Result`` whose ``result`` is the device's ``Outcome``, ``diff`` the device's diff, ``changed``
whether the device changed (push) or would change (diff), and ``failed`` whether the device did not end
well. A device problem never raises: it is a failed Result with the end state in its Outcome.

Used from fabconf's own rollout, or from a plain Nornir script::

    from nornir import InitNornir
    from fabconf.deploy.tasks import diff_task

    nr = InitNornir(inventory={"plugin": "SimpleInventory", "options": {
        "host_file": "inventory/hosts.yaml", "group_file": "inventory/groups.yaml",
        "defaults_file": "inventory/defaults.yaml"}})
    for name, multi in nr.run(task=diff_task).items():
        print(name, multi[0].result.state, multi[0].diff)

The intent of a host comes from ``task.host.data["fabconf_job"]`` when fabconf's rollout prepared it, else
from compiling the inventory directory the Nornir SimpleInventory was loaded from (``host_file``'s folder,
or ``inventory=DIR``); an inventory with errors makes every host fail with the problems as its message.
Credentials: ``task.host.username``/``password`` when Nornir has them, else fabconf's (environment, group
variables or credentials command: ``fabconf.deploy.credentials``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from nornir.core.inventory import Host
from nornir.core.task import Result, Task

from fabconf.compile.pipeline import Compiled, compile_inventory
from fabconf.compile.problems import InputError
from fabconf.compile.render import render
from fabconf.deploy import audit, overlay
from fabconf.deploy.credentials import REDACTOR, Credentials, CredentialsError, resolve
from fabconf.deploy.errortext import explain
from fabconf.deploy.interrupt import INTERRUPTED, Interrupt
from fabconf.deploy.job import Job, Outcome, State
from fabconf.deploy.leftovers import Cleaner
from fabconf.deploy.lock import lock_address
from fabconf.deploy.options import DeviceOptions
from fabconf.deploy.steps import VerifyContext, diff_device, push_device, verify_device
from fabconf.deploy.transient import transient
from fabconf.drivers.contract import Driver
from fabconf.drivers.factory import driver_for
from fabconf.drivers.trust import Trust
from fabconf.errors import FabconfError

JOB_KEY = "fabconf_job"
RETRY_PAUSE = 0.5  # seconds before the first retry of a transient error; doubled for each further one
# A step that changes nothing gives each attempt an equal share of what is left of the device's budget, never
# less than this many seconds: one reply stalled past its share is then tried again on a new connection instead
# of using the whole budget. [U] 10 s is an assumption: ample for a show command or a REST read on a loaded switch.
READ_ATTEMPT_FLOOR = 10.0
Step = Callable[[Job, Driver], Outcome]

__all__ = ["JOB_KEY", "diff_task", "job_for", "open_driver", "push_task", "run_step", "verify_task"]


def open_driver(job: Job, options: DeviceOptions, credentials: Credentials | None = None) -> Driver:
    """The device's driver with its credentials, connected."""
    driver = build_driver(job, options, credentials)
    driver.open()
    return driver


def build_driver(
    job: Job, options: DeviceOptions, credentials: Credentials | None = None, timeout: int | None = None
) -> Driver:
    """The device's driver, not yet opened; ``timeout`` (seconds per connect or reply) defaults to the budget."""
    creds = credentials or resolve(job.device)
    REDACTOR.add(creds.password)
    return driver_for(
        job.platform,
        job.device.hostname,
        creds.username,
        creds.password,
        port=job.device.port,
        connection_options=job.device.connection_options,
        timeout=options.timeout if timeout is None else timeout,
        extra_args={"allow_fw_reset": True} if options.allow_fw_reset and job.spec.is_host else None,
        trust=Trust.from_env(options.insecure, options.allow_inventory_transport),
    )


def bgp_configured(job: Job, options: DeviceOptions) -> frozenset[str]:
    """Read only: the addresses of the BGP neighbours configured on the device (up or not)."""
    driver = open_driver(job, options)
    try:
        return frozenset(driver.get_bgp_neighbors().get("global", {}).get("peers", {}))
    finally:
        driver.close()


# -- the intent of a host -------------------------------------------------------------------------------------
_COMPILED: dict[Path, Compiled] = {}
_COMPILED_LOCK = threading.Lock()


def _compiled(directory: Path) -> Compiled:
    key = directory.resolve()
    with _COMPILED_LOCK:
        if key not in _COMPILED:
            _COMPILED[key] = compile_inventory(key)
        return _COMPILED[key]


def job_for(task: Task, inventory: str | Path | None = None) -> Job:
    """The prepared Job of ``task.host``, or one built from its inventory directory."""
    job = task.host.data.get(JOB_KEY) if inventory is None else None
    if isinstance(job, Job):
        return job
    if inventory is None:
        host_file = task.nornir.config.inventory.options.get("host_file")
        if not host_file:
            raise FabconfError(f"{task.host.name}: no fabconf job, and no SimpleInventory host_file to compile")
        inventory = Path(host_file).parent
    compiled = _compiled(Path(inventory))
    name = task.host.name
    if name not in compiled.data:
        raise FabconfError(f"{name}: not a device of the fabconf inventory {inventory}")
    device = compiled.model.devices[name]
    # where the device answers is Nornir's (a transform function, such as fabconf_lab, may point it elsewhere)
    device = dataclasses.replace(
        device,
        hostname=task.host.hostname or device.hostname,
        port=task.host.port if task.host.port is not None else device.port,
        connection_options=overlay.connection_options(task.host) or device.connection_options,
    )
    return Job(device, compiled.data[name], render(compiled.data[name]))


def _credentials(task: Task) -> Credentials | None:
    if task.host.username and task.host.password:
        return Credentials(task.host.username, task.host.password)
    return None


# -- running one step on one host -----------------------------------------------------------------------------
def run_step(
    task: Task,
    step: Step,
    options: DeviceOptions | None,
    inventory: str | Path | None,
    interrupt: Interrupt | None = None,
    may_retry: Callable[[], bool] | None = None,
) -> Result:
    """Prepare, connect, run ``step``, close: always a Result with an Outcome, never an exception. Once the
    run is interrupted, a device not yet started is left untouched. A timeout or dropped connection is tried
    again on a new connection while ``may_retry()`` and the device's budget allow. Without ``may_retry`` the
    step changes nothing (diff, verify, drift): it may always be tried again, and each attempt waits at most its
    share of the budget (``READ_ATTEMPT_FLOOR``)."""
    started = time.monotonic()
    options = options or DeviceOptions()
    if interrupt is not None and interrupt.stopping:
        outcome = Outcome(task.host.name, task.host.platform or "", State.UNTOUCHED, message=INTERRUPTED)
        return _result(task, outcome, started)
    try:
        job = job_for(task, inventory)
    except InputError as exc:
        text = "; ".join(str(p) for p in exc.problems.errors)
        outcome = Outcome(task.host.name, task.host.platform or "", State.FAILED, message=f"inventory: {text}")
        return _result(task, outcome, started)
    except FabconfError as exc:
        return _result(task, Outcome(task.host.name, task.host.platform or "", State.FAILED, message=str(exc)), started)
    outcome, retried = _attempts(job, step, options, _credentials(task), started, may_retry)
    if retried:
        outcome.message = "; ".join(m for m in (outcome.message, f"tried again after: {'; '.join(retried)}") if m)
    return _result(task, outcome, started)


def _attempts(
    job: Job,
    step: Step,
    options: DeviceOptions,
    creds: Credentials | None,
    started: float,
    may_retry: Callable[[], bool] | None,
) -> tuple[Outcome, list[str]]:
    """Connect and run ``step``; a transient error (``fabconf.deploy.transient``) is tried again on a new
    connection, up to ``options.retries`` times within the device's budget, while ``may_retry()`` (a push: until
    its commit started; None: always). Returns the outcome and the errors that were retried."""
    retried: list[str] = []
    while True:
        timeout = None if may_retry is not None else attempt_timeout(options, started, len(retried))
        try:
            driver = build_driver(job, options, creds, timeout)
        except (CredentialsError, ImportError, KeyError, ValueError) as exc:  # ours to fix, not the device's
            return Outcome(job.name, job.platform, State.FAILED, message=REDACTOR(str(exc))), retried
        try:
            driver.open()
        except Exception as exc:
            if _again(exc, options, started, retried, may_retry):
                continue
            text = REDACTOR(explain(exc))
            return Outcome(job.name, job.platform, State.UNREACHABLE, message=f"cannot connect: {text}"), retried
        try:
            return step(job, driver), retried
        except Exception as exc:
            with contextlib.suppress(Exception):  # leave nothing staged behind for the next attempt
                driver.discard_config()
            if _again(exc, options, started, retried, may_retry):
                continue
            text = REDACTOR(f"{type(exc).__name__}: {exc}")
            return Outcome(job.name, job.platform, State.FAILED, message=text), retried
        finally:
            with contextlib.suppress(Exception):  # a close error never changes the outcome
                driver.close()


def attempt_timeout(options: DeviceOptions, started: float, retried: int, now: float | None = None) -> int:
    """Seconds one attempt of a step that changes nothing may wait for a connect or a reply: an equal share of
    what is left of the budget among the attempts still allowed, at least ``READ_ATTEMPT_FLOOR``. A retry never
    outlasts the budget; the first attempt waits at least the floor (or the whole budget, when smaller) even when
    preparing the device used part of it. Never under 1 s."""
    left = options.timeout - ((time.monotonic() if now is None else now) - started)
    share = max(left / (options.retries - retried + 1), READ_ATTEMPT_FLOOR)
    ceiling = left if retried else max(left, min(READ_ATTEMPT_FLOOR, options.timeout))
    return max(1, math.ceil(min(share, ceiling)))


def _again(
    exc: Exception,
    options: DeviceOptions,
    started: float,
    retried: list[str],
    may_retry: Callable[[], bool] | None,
) -> bool:
    """Whether to try once more (and note why), after a short pause."""
    pause = RETRY_PAUSE * 2 ** len(retried)
    in_budget = time.monotonic() + pause < started + options.timeout
    allowed = may_retry is None or may_retry()
    if not (transient(exc) and len(retried) < options.retries and in_budget and allowed):
        return False
    retried.append(REDACTOR(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__))
    time.sleep(pause)
    return True


def _result(task: Task, outcome: Outcome, started: float) -> Result:
    outcome.seconds = time.monotonic() - started
    return nornir_result(task.host, outcome)


def nornir_result(host: Host, outcome: Outcome) -> Result:
    """The Nornir ``Result`` of a device's Outcome, as every fabconf task returns it."""
    changed = outcome.state in (State.APPLIED, State.CHANGES) or (outcome.state is State.FAILED and bool(outcome.diff))
    return Result(
        host=host,
        result=outcome,
        diff=outcome.diff,
        changed=changed,
        failed=not outcome.state.ok,
    )


# -- the tasks --------------------------------------------------------------------------------------------------
def diff_task(
    task: Task,
    options: DeviceOptions | None = None,
    inventory: str | Path | None = None,
    interrupt: Interrupt | None = None,
) -> Result:
    """Dry run: what a push would change on ``task.host``. Nothing is left on the device."""
    return run_step(task, diff_device, options, inventory, interrupt)


def verify_task(
    task: Task,
    required_peers: set[str] | None = None,
    bgp_wait: float = 10.0,
    options: DeviceOptions | None = None,
    inventory: str | Path | None = None,
    interrupt: Interrupt | None = None,
    cabling: bool = False,
    pending_peers: Mapping[str, set[str]] | None = None,
) -> Result:
    """Read only: the device holds intent, its MTUs, LLDP and BGP sessions (to ``required_peers``; default:
    every device of the Nornir inventory) are as designed; ``cabling``: every planned link by LLDP.
    ``pending_peers``: per device, peers outside the run that have not received intent (``fabconf.deploy.peers``)."""
    peers = set(task.nornir.inventory.hosts) if required_peers is None else required_peers
    ctx = VerifyContext(
        required_peers=peers,
        bgp_wait=bgp_wait,
        interrupt=interrupt,
        check_ecmp=True,
        check_cabling=cabling,
        pending=pending_peers or {},
    )
    return run_step(task, lambda job, driver: verify_device(job, driver, ctx), options, inventory, interrupt)


def push_task(
    task: Task,
    required_peers: set[str] | None = None,
    revert_in: int = 300,
    bgp_wait: float = 30.0,
    options: DeviceOptions | None = None,
    inventory: str | Path | None = None,
    interrupt: Interrupt | None = None,
    audit_run: str | None = None,
    pending_peers: Mapping[str, set[str]] | None = None,
    audit_context: dict[str, str] | None = None,
) -> Result:
    """Commit (with the device's revert timer where it has one), verify, confirm — or roll back.
    ``required_peers``: devices whose BGP sessions verify waits for (default none). ``audit_run``: the run id
    the audit's ``committing`` record carries, written (fsync'ed) just before each commit."""
    opts = options or DeviceOptions()
    ctx = VerifyContext(
        required_peers=set(required_peers or ()), bgp_wait=bgp_wait, interrupt=interrupt, pending=pending_peers or {}
    )
    if audit_run is not None:
        ctx.leftovers = Cleaner(audit_run, audit_context)

        def before_commit(job: Job, diff: str, config_hash: str) -> None:
            left = ctx.leftovers.names if ctx.leftovers is not None else {}
            audit.record(
                audit_run,
                job.name,
                diff,
                audit.COMMITTING,
                "about to commit",
                platform=job.platform,
                config_before_sha256=config_hash,
                target=audit.target_of(audit_context, job.device.hostname),
                address=lock_address(job.device.hostname, job.device.port),  # what its lock is keyed by
                **({"leftovers": left} if left else {}),  # what a kill from now on leaves, by name
                **(audit_context or {}),
            )

        ctx.before_commit = before_commit
    creds = _credentials(task)

    def step(job: Job, driver: Driver) -> Outcome:
        return push_device(job, driver, lambda: open_driver(job, opts, creds), ctx, revert_in)

    result = run_step(task, step, opts, inventory, interrupt, may_retry=lambda: not ctx.commit_started)
    outcome = result.result
    failed_early = isinstance(outcome, Outcome) and outcome.state is State.FAILED and not ctx.commit_started
    if failed_early and not outcome.message.startswith("nothing was committed"):  # before its commit: as it was
        outcome.message = f"nothing was committed: {outcome.message}"
    return result


def outcome_of(result: Any) -> Outcome | None:
    """The Outcome a fabconf task left in a Nornir ``Result`` or ``MultiResult`` (None if it has none)."""
    first = result[0] if isinstance(result, list) and result else result
    value = getattr(first, "result", None)
    return value if isinstance(value, Outcome) else None
