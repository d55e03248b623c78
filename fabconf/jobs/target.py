"""What every device job starts from: the ``Target`` (which devices, and where), the ``Hooks`` a caller passes
(progress display, approval of a push), and ``prepare`` (compile, select, order, and with ``lab`` the lab's
addresses and credentials)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

from fabconf.compile.pipeline import Compiled, compile_inventory
from fabconf.compile.render import render
from fabconf.compile.selection import select
from fabconf.deploy import audit, overlay, peers, rollout
from fabconf.deploy.interrupt import Interrupt
from fabconf.deploy.job import Job, Outcome
from fabconf.deploy.options import DeviceOptions
from fabconf.deploy.processors import Progress
from fabconf.deploy.tasks import bgp_configured
from fabconf.drivers.trust import Trust
from fabconf.errors import UsageError
from fabconf.jobs.transport import gate

# the lab's defaults, the same as ``fabconf lab``'s (fabconf.cli.lab; a unit test holds them equal)
LAB_STATE = ".fabconf-lab"
LAB_NETWORK = "127.77.0.0/16"
EXIT_INTERRUPTED = 130

LabStarter = Callable[[Path, Path, str], int]
"""Starts the lab for (inventory, state, network) unless it runs; an exit status (the CLI's ``start_lab``)."""


@dataclass(frozen=True)
class Target:
    """Which devices a command works on, and where they are."""

    inventory: Path
    limit: str | None = None
    lab: bool = False  # run against the built-in lab (started if needed)
    state: Path = Path(LAB_STATE)  # the lab's state directory
    network: str = LAB_NETWORK  # the lab's loopback range
    # how a lab that is not running is started (the CLI passes fabconf.cli.lab's); None: it must be running
    start_lab: LabStarter | None = field(default=None, compare=False)


class Approver(Protocol):
    """Asks whoever runs a push: shown the dry run and the waves, then asked; ``ask`` False changes nothing."""

    def show(self, preview: list[Outcome], plan: rollout.Plan) -> None: ...
    def ask(self) -> bool: ...


ProgressFactory = Callable[[str, list[Job]], AbstractContextManager[Progress | None]]


@contextlib.contextmanager
def no_progress(command: str, jobs: list[Job]) -> Iterator[Progress | None]:
    yield None


@dataclass(frozen=True)
class Hooks:
    """How a job talks to the person running it. The defaults show nothing and ask nothing (a push without
    ``approve`` is a ``--yes`` push)."""

    progress: ProgressFactory = no_progress
    approve: Approver | None = None
    pushed: Callable[[Result], None] | None = None  # drift's remediation push ended (the CLI prints its report)


QUIET = Hooks()  # a job's default: shows nothing, asks nothing


@dataclass
class Result:
    """A device job's outcome: one ``Outcome`` per device and the exit status (0 ok, 1 failed, 2 changes or
    failed checks, 130 interrupted). ``previewed``: a push whose dry run was shown and approved; ``declined``:
    one that was not approved (nothing changed)."""

    outcomes: list[Outcome]
    exit_code: int
    previewed: bool = False
    declined: bool = False


def jobs_for(compiled: Compiled, pattern: str | None) -> list[Job]:
    names = select(compiled.model, pattern)
    return [Job(compiled.model.devices[n], compiled.data[n], render(compiled.data[n])) for n in names]


def _lab_endpoints(target: Target) -> dict[str, dict[str, Any]]:
    """Start the lab if needed (from ``-i``) and take its credentials; returns, per lab device, where it
    answers (hostname, port, connection options). The intent always comes from ``-i``."""
    if target.start_lab is not None and target.start_lab(target.inventory, target.state, target.network) != 0:
        raise UsageError("the lab could not be started")
    os.environ.update(overlay.lab_env(target.state))
    return overlay.lab_endpoints(target.state)


def _at_lab(jobs: list[Job], endpoints: dict[str, dict[str, Any]], target: Target) -> list[Job]:
    missing = sorted(j.name for j in jobs if j.name not in endpoints)
    if missing:
        raise UsageError(
            f"{', '.join(missing)}: in {target.inventory} but not in the running lab ({target.state}); "
            f"let it follow the inventory: fabconf lab sync -i {target.inventory} --state {target.state}"
        )
    out = []
    for job in jobs:
        entry = endpoints[job.name]
        device = dataclasses.replace(
            job.device,
            hostname=str(entry.get("hostname", job.device.hostname)),
            port=entry.get("port"),
            connection_options=dict(entry.get("connection_options") or {}),
            connection_origin=(str(target.state / "inventory" / "hosts.yaml"), [job.name, "connection_options"]),
        )
        out.append(Job(device, job.data, job.rendered))
    return out


def pending_peers(
    compiled: Compiled, jobs: list[Job], target: Target, options: DeviceOptions, ecmp: bool = False
) -> dict[str, set[str]]:
    """Per selected device, its peers outside the run that have not received fabconf's intent (read only;
    ``fabconf.deploy.peers``; ``ecmp``: ECMP targets too, for verify): a greenfield fabric pushed in parts
    verifies each part."""
    names = sorted(peers.outside_peers(jobs, ecmp))
    if not names:
        return {}
    outside = [Job(compiled.model.devices[n], compiled.data[n], "") for n in names]
    if target.lab:  # started, and its credentials taken, by ``prepare``: only where the peers answer is read here
        endpoints = overlay.lab_endpoints(target.state)
        outside = _at_lab([j for j in outside if j.name in endpoints], endpoints, target)
    seen = peers.configured(outside, lambda job: bgp_configured(job, options))
    return peers.pending(jobs, outside, seen)


def prepare(target: Target, options: DeviceOptions | None = None) -> tuple[Compiled, list[Job]]:
    """What every device command starts with: the compiled inventory of ``-i``, the selection, and with
    ``--lab`` the lab's addresses, ports and credentials for the selected devices; their connection settings
    checked (``fabconf.jobs.transport``: refused, or announced when the operator allowed them)."""
    options = options or DeviceOptions()
    if not target.inventory.is_dir():
        raise UsageError(f"{target.inventory}: no such inventory directory")
    compiled = compile_inventory(target.inventory)
    jobs = rollout.push_order(jobs_for(compiled, target.limit))
    for job in jobs:  # a release rendered as an assumed one: said on every run, naming both
        version, assume = job.device.data.get("os_version"), job.device.data.get("assume_release")
        if job.spec.assumed(version, assume):
            print(f"fabconf: warning: {job.name}: {job.spec.assumption(str(version), str(assume))}", file=sys.stderr)
    if target.lab:
        jobs = _at_lab(jobs, _lab_endpoints(target), target)
    gate((job.device for job in jobs), Trust.from_env(options.insecure, options.allow_inventory_transport))
    return compiled, jobs


@contextlib.contextmanager
def interruptible() -> Iterator[Interrupt]:
    """Ctrl-C during a run: acknowledged at once on stderr; the first stops new devices from starting,
    the second rolls back the devices in flight, a third gives up at once (KeyboardInterrupt)."""
    interrupt = Interrupt()
    if threading.current_thread() is not threading.main_thread():
        yield interrupt
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if interrupt.aborting:
            raise KeyboardInterrupt
        print(f"fabconf: {interrupt.request()}", file=sys.stderr, flush=True)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield interrupt
    finally:
        signal.signal(signal.SIGINT, previous)


def audit_context(target: Target) -> dict[str, str]:
    """Where a push points, for every audit record: lab rehearsals and real changes are told apart."""
    context = {"inventory": str(target.inventory.resolve()), "mode": "lab" if target.lab else "devices"}
    if target.lab:
        context["lab_state"] = str(target.state.resolve())
    return context


def warn_unfinished(jobs: Iterable[Job], context: dict[str, str]) -> None:
    """One warning per selected device with an unfinished commit at this run's target: its state is whatever
    the device did then (a revert timer restored it, or the change stayed); check it before trusting a diff. A
    commit a live run is making (its lock is held) is not reported."""
    wanted = {j.name: audit.target_of(context, j.device.hostname) for j in jobs}
    for e in audit.unfinished():
        device = str(e.get("device"))
        if e["in_progress"] or device not in wanted:
            continue
        if "target" in e and e["target"] != wanted[device]:
            continue  # another lab's (or another fabric's) device of that name
        print(
            f"fabconf: warning: {e['device']}: a commit of run {e.get('run')} at {e.get('time')} never recorded "
            "its outcome (fabconf was killed?); the next push cleans what it left on the device first, and a later "
            "push or verify resolves it, or `fabconf audit --ack`",
            file=sys.stderr,
        )
