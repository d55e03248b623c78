"""The deploy layer's end states, unit-tested with scripted fake devices (tests/deploy/fakes.py).

One generic body runs a table of cases (ANTA style): each case scripts where devices fail, pushes with
fabconf's own rollout (tasks, steps, processors), then checks every device's reported State, what the
device itself ended with (its running configuration), whether it was ever connected, and the audit log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeDevice, FakeDriver, FakeHostDriver, FakeTimerDriver, Script

from fabconf.compile.pipeline import Compiled
from fabconf.deploy import rollout, tasks
from fabconf.deploy.interrupt import Interrupt
from fabconf.deploy.job import Job, Outcome, State
from fabconf.deploy.options import DeviceOptions, PushOptions
from fabconf.deploy.steps import RESTORE_WAIT

LEAVES = ("leaf1", "leaf2", "leaf3", "leaf4")
KINDS = {"timer": FakeTimerDriver, "checkpoint": FakeDriver, "host": FakeHostDriver}


@dataclass
class Case:
    name: str
    devices: tuple[str, ...] = LEAVES
    scripts: dict[str, Script] = field(default_factory=dict)
    kind: str = "timer"
    unchanged: tuple[str, ...] = ()  # devices already at intent
    push: PushOptions = field(default_factory=lambda: PushOptions(canary=1, batch="1", bgp_wait=0))
    outside: tuple[str, ...] = ()  # devices of the fabric outside the run (their sessions are required)
    states: dict[str, State] = field(default_factory=dict)
    at_intent: tuple[str, ...] = ()  # devices that must end with the intended configuration
    never_opened: tuple[str, ...] = ()
    message: dict[str, str] = field(default_factory=dict)  # device -> text its message must contain


def _everything_else(case: Case, state: State) -> dict[str, State]:
    return {n: case.states.get(n, state) for n in case.devices}


CASES = [
    Case("every device applied", states=dict.fromkeys(LEAVES, State.APPLIED), at_intent=LEAVES),
    Case(
        "another changer commits between diff and commit: conflict, nothing committed, the rollout stops",
        scripts={"leaf1": Script(changed_by_other="hostname leaf1\ndescription set by someone else")},
        states={"leaf1": State.CONFLICT, **dict.fromkeys(LEAVES[1:], State.UNTOUCHED)},
        never_opened=LEAVES[1:],
        message={"leaf1": "+description set by someone else"},
    ),
    Case(
        "a read timeout and a connect timeout are tried again on a new connection",
        scripts={"leaf1": Script(timeouts_on_read=1), "leaf2": Script(timeouts_on_open=2)},
        states=dict.fromkeys(LEAVES, State.APPLIED),
        at_intent=LEAVES,
        message={"leaf1": "tried again after: leaf1: Socket error during eAPI connection: timed out"},
    ),
    Case(
        "a device that keeps timing out fails once its retries are spent",
        scripts={"leaf1": Script(timeouts_on_read=3)},
        states={"leaf1": State.FAILED, **dict.fromkeys(LEAVES[1:], State.UNTOUCHED)},
        message={"leaf1": "timed out; tried again after"},
    ),
    Case(
        "a device on another release line is refused before anything is staged",
        scripts={"leaf1": Script(os_version="5.15.0")},  # leaf1 is designed for Cumulus 5.12
        states={"leaf1": State.FAILED, **dict.fromkeys(LEAVES[1:], State.UNTOUCHED)},
        never_opened=LEAVES[1:],
        message={"leaf1": "the device runs Cumulus 5.15.0 but the configuration is rendered for 5.12.0"},
    ),
    Case(
        "DLB asked of a switch that runs an older release than its inventory says is refused before staging",
        devices=("leaf4",),
        scripts={"leaf4": Script(os_version="10.3(4a)")},  # leaf4 says 10.5(2)F and is rendered with DLB
        states={"leaf4": State.FAILED},
        message={
            "leaf4": "the device runs NX-OS 10.3(4a) but the inventory says 10.5(2)F: it cannot run adaptive "
            "routing / dynamic load balancing: NX-OS 10.3(4a) does not have it (needs 10.5(1)F or later)"
        },
    ),
    Case(
        "a device that runs a release newer than fabconf knows names data.assume_release",
        devices=("leaf2",),
        scripts={"leaf2": Script(os_version="5.16.0")},  # leaf2 is designed for Cumulus 5.15
        states={"leaf2": State.FAILED},
        message={
            "leaf2": "the device reports 5.16.0: Cumulus 5.16.0 is newer than the releases fabconf renders for (known: "
            '5.9-5.14, 5.15); if its syntax is unchanged, set data.assume_release: "5.15"'
        },
    ),
    Case(
        "a device of another hardware family is refused",
        devices=("leaf3",),
        scripts={"leaf3": Script(model="DCS-7280CR3-32P4")},  # leaf3 is a Strata 7060X5 in the inventory
        states={"leaf3": State.FAILED},
        message={"leaf3": "the device is a DCS-7280CR3-32P4 (sand) but the configuration is rendered for"},
    ),
    Case(
        "already at intent: unchanged, nothing committed",
        unchanged=LEAVES,
        states=dict.fromkeys(LEAVES, State.UNCHANGED),
        at_intent=LEAVES,
    ),
    Case(
        "unreachable canary stops the rollout; the others are never connected",
        scripts={"leaf1": Script(unreachable=True)},
        states={"leaf1": State.UNREACHABLE, **dict.fromkeys(LEAVES[1:], State.UNTOUCHED)},
        never_opened=LEAVES[1:],
        message={"leaf2": "canary failed"},
    ),
    Case(
        "failed verify rolls the canary back; the rollout stops",
        scripts={"leaf1": Script(wrong_mtu=True)},
        states={"leaf1": State.ROLLED_BACK, **dict.fromkeys(LEAVES[1:], State.UNTOUCHED)},
        never_opened=LEAVES[1:],
        message={"leaf1": "verification failed; rolled back"},
    ),
    Case(
        "a refused commit leaves the device as it was",
        scripts={"leaf2": Script(commit_fails=True)},
        push=PushOptions(canary=0, batch="100%", bgp_wait=0),
        states={"leaf2": State.ROLLED_BACK, "leaf1": State.APPLIED, "leaf3": State.APPLIED, "leaf4": State.APPLIED},
        at_intent=("leaf1", "leaf3", "leaf4"),
        message={"leaf2": "commit failed"},
    ),
    Case(
        "a commit dropped mid-way is found and undone after reconnecting",
        scripts={"leaf2": Script(commit_drops=True)},
        push=PushOptions(canary=0, batch="100%", bgp_wait=0),
        states={"leaf2": State.ROLLED_BACK, "leaf1": State.APPLIED, "leaf3": State.APPLIED, "leaf4": State.APPLIED},
        at_intent=("leaf1", "leaf3", "leaf4"),
        message={"leaf2": "back to its previous configuration"},
    ),
    Case(
        "dropped commit and no reconnect: failed, state unknown, the timer will restore it",
        scripts={"leaf2": Script(commit_drops=True, reconnect_fails=True)},
        push=PushOptions(canary=0, batch="100%", bgp_wait=0),
        states={"leaf2": State.FAILED, "leaf1": State.APPLIED, "leaf3": State.APPLIED, "leaf4": State.APPLIED},
        message={"leaf2": "device state unknown, its revert timer will restore it"},
    ),
    Case(
        "checkpoint platform, dropped commit and no reconnect: state unknown, no timer promised",
        kind="checkpoint",
        scripts={"leaf2": Script(commit_drops=True, reconnect_fails=True)},
        push=PushOptions(canary=0, batch="100%", bgp_wait=0),
        states={"leaf2": State.FAILED, "leaf1": State.APPLIED, "leaf3": State.APPLIED, "leaf4": State.APPLIED},
        message={"leaf2": "device state unknown"},
    ),
    Case(
        "confirm lost: reconnect, roll back, verified as before",
        scripts={"leaf3": Script(confirm_fails=True)},
        push=PushOptions(canary=0, batch="100%", bgp_wait=0),
        states={"leaf3": State.ROLLED_BACK, "leaf1": State.APPLIED, "leaf2": State.APPLIED, "leaf4": State.APPLIED},
        message={"leaf3": "confirm failed"},
    ),
    Case(
        "rollback refused after a failed verify: recovery reports it never green",
        scripts={"leaf1": Script(wrong_mtu=True, rollback_fails=True)},
        push=PushOptions(canary=0, batch="100%", bgp_wait=0),
        states={"leaf1": State.FAILED, "leaf2": State.APPLIED, "leaf3": State.APPLIED, "leaf4": State.APPLIED},
        message={"leaf1": "recovery failed"},
    ),
    Case(
        "a rollback that does not bring the device back is a failure, not 'rolled back'",
        kind="checkpoint",
        scripts={"leaf1": Script(wrong_mtu=True, rollback_noop=True)},
        push=PushOptions(canary=0, batch="100%", bgp_wait=0),
        states={"leaf1": State.FAILED, "leaf2": State.APPLIED, "leaf3": State.APPLIED, "leaf4": State.APPLIED},
        message={"leaf1": "did NOT return to its previous configuration"},
    ),
    Case(
        "the failure budget tolerates max_fail failures",
        scripts={"leaf2": Script(commit_fails=True)},
        push=PushOptions(canary=0, batch="1", max_fail=1, bgp_wait=0),
        states={"leaf2": State.ROLLED_BACK, "leaf1": State.APPLIED, "leaf3": State.APPLIED, "leaf4": State.APPLIED},
        at_intent=("leaf1", "leaf3", "leaf4"),
    ),
    Case(
        "one failure past the budget stops the rollout",
        scripts={"leaf2": Script(commit_fails=True), "leaf3": Script(commit_fails=True)},
        push=PushOptions(canary=0, batch="1", max_fail=1, bgp_wait=0),
        states={
            "leaf1": State.APPLIED,
            "leaf2": State.ROLLED_BACK,
            "leaf3": State.ROLLED_BACK,
            "leaf4": State.UNTOUCHED,
        },
        never_opened=("leaf4",),
        message={"leaf4": "2 failure(s) exceed the budget of 1"},
    ),
    Case(
        "budget 0: the first failure stops the next batch",
        scripts={"leaf1": Script(commit_fails=True)},
        push=PushOptions(canary=0, batch="2", max_fail=0, bgp_wait=0),
        states={"leaf1": State.ROLLED_BACK, "leaf2": State.APPLIED, "leaf3": State.UNTOUCHED, "leaf4": State.UNTOUCHED},
        never_opened=("leaf3", "leaf4"),
    ),
    Case(
        "sessions to devices outside the run must come up",
        scripts={"leaf1": Script(bgp_down=True)},
        outside=("spine1", "spine2"),
        push=PushOptions(canary=0, batch="100%", bgp_wait=0),
        states={"leaf1": State.ROLLED_BACK, "leaf2": State.APPLIED, "leaf3": State.APPLIED, "leaf4": State.APPLIED},
    ),
    Case(
        "a host refused by preflight is untouched, the others applied with pending firmware",
        devices=("gpu01", "gpu02"),
        kind="host",
        scripts={
            "gpu01": Script(preflight=["mlx5_0/1 (ens1f0np0): state DOWN"]),
            "gpu02": Script(pending_firmware={"mlx5_0": {"CNP_DSCP_P1": {"current": "48", "next_boot": "46"}}}),
        },
        push=PushOptions(canary=0, batch="100%", bgp_wait=0),
        states={"gpu01": State.UNTOUCHED, "gpu02": State.APPLIED},
        at_intent=("gpu02",),
        message={
            "gpu01": "preflight: mlx5_0/1",
            "gpu02": "pending until firmware reset or reboot: mlx5_0 CNP_DSCP_P1=46",
        },
    ),
]


@pytest.fixture
def fabric(example: Compiled, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    monkeypatch.setattr("fabconf.deploy.steps.RESTORE_WAIT", 0.5)  # a device that does not come back: fail fast
    monkeypatch.setattr("fabconf.deploy.steps.POLL", 0.01)
    monkeypatch.setattr("fabconf.deploy.tasks.RETRY_PAUSE", 0.01)
    return {"devices": {}, "audit": tmp_path / "audit.jsonl"}


def _run(
    case: Case,
    example: Compiled,
    fabric: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    interrupt: Interrupt | None = None,
) -> list[Outcome]:
    devices: dict[str, FakeDevice] = fabric["devices"]
    jobs = []
    for name in case.devices:
        data = example.data[name]
        job = Job(example.model.devices[name], data, f"intended config of {name}")
        mtus = {n["netdev"]: n["mtu"] for n in data.get("nics", [])} or {
            i["name"]: i["mtu"] for i in data["interfaces"]
        }
        running = job.rendered if name in case.unchanged else f"brownfield config of {name}"
        devices[name] = FakeDevice(name, running, case.scripts.get(name, Script()), mtus)
        jobs.append(job)
    driver = KINDS[case.kind]
    monkeypatch.setattr(
        tasks, "build_driver", lambda job, options, credentials=None, timeout=None: driver(devices[job.name])
    )
    the_plan = rollout.plan(jobs, canary=case.push.canary, batch=case.push.batch)
    everyone = set(case.devices) | set(case.outside)
    return rollout.push(the_plan, everyone, case.push, DeviceOptions(workers=4, host_workers=4), interrupt=interrupt)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_push_end_states(
    case: Case, example: Compiled, fabric: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    outcomes = _run(case, example, fabric, monkeypatch)
    devices: dict[str, FakeDevice] = fabric["devices"]
    got = {o.device: o.state for o in outcomes}
    assert got == case.states, {o.device: (o.state, o.message, o.checks) for o in outcomes}
    for o in outcomes:
        d = devices[o.device]
        intended = f"intended config of {o.device}"
        if o.state in (State.APPLIED, State.UNCHANGED):  # green means: at intent, nothing left pending
            assert d.running == intended and not d.pending, (o.device, d.log)
        elif o.state in (State.ROLLED_BACK, State.UNTOUCHED, State.UNREACHABLE):  # as it was
            assert d.running == f"brownfield config of {o.device}", (o.device, o.state, d.log)
            assert not d.pending
        if o.state is State.UNTOUCHED and "preflight" not in o.message:
            assert o.device in case.never_opened or d.opens == 0
        if o.state is State.FAILED:  # never green, and the message says what is known
            assert o.message and not o.state.ok
        if o.state is State.FAILED and d.pending:  # state unknown on a timer device: the timer restores it
            d.expire_timer()
            assert d.running == f"brownfield config of {o.device}"
    for name in case.at_intent:
        assert devices[name].running == f"intended config of {name}", name
    for name in case.never_opened:
        assert devices[name].opens == 0, (name, devices[name].log)
    messages = {o.device: o.message for o in outcomes}
    for name, text in case.message.items():
        assert text in messages[name], (name, messages[name])
    # the audit log: every device touched or tried, none of the untouched ones that were never opened
    audit = [json.loads(line) for line in fabric["audit"].read_text().splitlines()] if fabric["audit"].exists() else []
    audited = {a["device"]: a["result"] for a in audit}
    for o in outcomes:
        if devices[o.device].opens and o.state is not State.UNCHANGED:
            assert audited.get(o.device) == str(o.state), (o.device, audit)
        if devices[o.device].opens == 0:
            assert o.device not in audited


def test_an_interrupt_starts_no_new_device_and_ends_the_ones_in_flight(
    example: Compiled, fabric: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    interrupt = Interrupt()
    interrupt.request()  # as if Ctrl-C came before the first wave: nothing starts
    case = Case("interrupted", push=PushOptions(canary=1, batch="1", bgp_wait=0))
    outcomes = _run(case, example, fabric, monkeypatch, interrupt)
    assert {o.state for o in outcomes} == {State.UNTOUCHED}
    assert all("interrupted" in o.message for o in outcomes)
    assert all(d.opens == 0 for d in fabric["devices"].values())


def test_an_abort_rolls_back_instead_of_confirming(
    example: Compiled, fabric: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    interrupt = Interrupt()
    original = FakeTimerDriver.get_interfaces

    def abort_during_verify(self: FakeTimerDriver) -> dict[str, dict[str, Any]]:
        interrupt.request()
        interrupt.request()  # the second Ctrl-C arrives while this device verifies
        return original(self)

    monkeypatch.setattr(FakeTimerDriver, "get_interfaces", abort_during_verify)
    case = Case("aborted", devices=("leaf1", "leaf2"), push=PushOptions(canary=1, batch="1", bgp_wait=0))
    outcomes = _run(case, example, fabric, monkeypatch, interrupt)
    states = {o.device: o.state for o in outcomes}
    assert states == {"leaf1": State.ROLLED_BACK, "leaf2": State.UNTOUCHED}
    assert fabric["devices"]["leaf1"].running == "brownfield config of leaf1"
    assert "confirm" not in fabric["devices"]["leaf1"].log


def test_restore_wait_is_bounded() -> None:
    assert 0 < RESTORE_WAIT <= 60


@pytest.mark.parametrize(
    ("batch", "total", "size"), [("25%", 8, 2), ("30%", 8, 3), ("10%", 8, 1), ("7%", 100, 7), ("50%", 3, 2)]
)
def test_a_batch_percentage_is_rounded_up_over_the_whole_role(batch: str, total: int, size: int) -> None:
    assert rollout.batch_size(batch, total) == size
