"""Hostile values pushed PAST validation (straight into the device data, then rendered) to the lab leave
every device as it was: no admin account on EOS or NX-OS, no NVUE object, no extra NCCL variable, no
command run on a GPU host. The push path is fabconf's own (rollout, steps, drivers), no mocks."""

from __future__ import annotations

import copy
import json
import shlex

import pytest
from labkit import push_all, running, sim

from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.render import UnsafeValueError, render
from fabconf.deploy import rollout
from fabconf.deploy.job import Job, State
from fabconf.deploy.options import DeviceOptions, PushOptions
from fabconf_lab.orchestrator import Lab

EVIL_MODEL = "DCS\nusername evil privilege 15 secret evilpass\n!\nvlan 666\n- set:\n    vlan666: {}"


def _jobs(lab: Lab, names: tuple[str, ...], mutate) -> list[Job]:
    compiled = compile_inventory(lab.state_dir / "inventory")
    jobs = []
    for name in names:
        data = copy.deepcopy(compiled.data[name])
        mutate(data)
        jobs.append(Job(compiled.model.devices[name], data, render(data)))
    return jobs


def test_hostile_values_past_validation_change_nothing(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = push_all(lab, capsys)
    assert code == 0, out
    switches = ("leaf1", "leaf3", "leaf4")  # cumulus, eos, nxos
    before = {n: running(lab, n) for n in switches}
    nics_before = repr(sim(lab, "gpu01").state.nics)
    nccl_before = sim(lab, "gpu01").state.files["/etc/nccl.conf"]

    # a model string that tries to add lines: rendered into one comment line, so nothing is left to change
    jobs = _jobs(lab, switches, lambda d: d.update(model=EVIL_MODEL))
    outcomes = rollout.push(
        rollout.plan(jobs, canary=0), {"leaf1", "leaf3", "leaf4"}, PushOptions(bgp_wait=0), DeviceOptions()
    )
    assert {o.device: o.state for o in outcomes} == dict.fromkeys(switches, State.UNCHANGED)
    for name in switches:
        assert running(lab, name) == before[name], name
    assert "username evil" not in running(lab, "leaf3") and "username evil" not in running(lab, "leaf4")
    assert "vlan666" not in json.dumps(sim(lab, "leaf1").store.tree("applied"))

    # an NCCL value that tries to add a variable: refused when rendering, nothing reaches the host
    with pytest.raises(UnsafeValueError):
        _jobs(lab, ("gpu01",), lambda d: d["nccl"].update(NCCL_DEBUG="INFO\n  NCCL_EVIL_INJECTED=1"))

    # an mlxconfig value that tries to run a command: one quoted argument, which mlxconfig refuses
    jobs = _jobs(lab, ("gpu01",), lambda d: d["mlxconfig"].update(ROCE_CC_PRIO_MASK_P1="255;touch${IFS}/tmp/pwned"))
    (outcome,) = rollout.push(rollout.plan(jobs, canary=0), {"gpu01"}, PushOptions(bgp_wait=0), DeviceOptions())
    assert outcome.state is not State.APPLIED
    host = sim(lab, "gpu01")
    assert not host.state.files.get("/tmp/pwned")
    sent = [cmd for _kind, cmd in host.ssh.commands if "pwned" in cmd]
    assert sent, "the value reached the host (as data)"
    for cmd in sent:  # ... always as ONE quoted argument of mlxconfig, never as a command of its own
        assert "ROCE_CC_PRIO_MASK_P1=255;touch${IFS}/tmp/pwned" in shlex.split(cmd), cmd
    assert repr(host.state.nics) == nics_before  # every NIC setting as it was (the failed commit was undone)
    assert host.state.files["/etc/nccl.conf"] == nccl_before
