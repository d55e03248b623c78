"""Safe against other changers (two operators, two machines, no shared lock directory), against the lab.

The race is made deterministic with fabconf's own seam just before a commit (``VerifyContext.before_commit``,
where the audit writes its "committing" record): run A has staged its change and read the device; inside that
seam run B — another connection, another intent — pushes the same device to the end. A must then commit
nothing and report ``conflict``; the device holds B's intent, never a mix and never A's on top of B's.
Everything is fabconf's real push path (steps, drivers, the lab over sockets): nothing is mocked.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from labkit import running, sim

from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.render import render
from fabconf.deploy.job import Job, Outcome, State
from fabconf.deploy.options import DeviceOptions
from fabconf.deploy.steps import VerifyContext, diff_device, push_device
from fabconf.deploy.tasks import open_driver
from fabconf.drivers.contract import Driver
from fabconf.platform.linux.driver import LinuxDriver
from fabconf.platform.linux.lock import LEASE, OWNER_FILE
from fabconf_lab.orchestrator import Lab

SWITCHES = ("leaf1", "leaf2", "leaf3", "leaf4")  # cumulus 5.12 and 5.15, eos, nxos
HOST = "gpu01"


def _job(lab: Lab, name: str, other: bool = False) -> Job:
    """The device's intent, or (``other``) a second operator's different one."""
    compiled = compile_inventory(lab.state_dir / "inventory")
    data = copy.deepcopy(compiled.data[name])
    if other and "nccl" in data:
        data["nccl"]["NCCL_IB_TIMEOUT"] = 22
    elif other:
        data["interfaces"][0]["description"] = "changed by operator B"
    return Job(compiled.model.devices[name], data, render(data))


def _push(job: Job, ctx: VerifyContext | None = None) -> Outcome:
    driver = open_driver(job, DeviceOptions(timeout=20))
    try:
        ctx = ctx or VerifyContext(required_peers=set(), bgp_wait=0)
        return push_device(job, driver, lambda: open_driver(job, DeviceOptions(timeout=20)), ctx, 300)
    finally:
        with contextlib.suppress(Exception):  # as run_step does: a close error never changes the outcome
            driver.close()


def _in_sync(job: Job) -> bool:
    driver: Driver = open_driver(job, DeviceOptions(timeout=20))
    try:
        return diff_device(job, driver).state is State.UNCHANGED
    finally:
        driver.close()


@pytest.mark.parametrize("name", [*SWITCHES, HOST])
def test_a_change_made_between_diff_and_commit_is_a_conflict(lab: Lab, name: str) -> None:
    job_a, job_b = _job(lab, name), _job(lab, name, other=True)
    seen: list[Outcome] = []

    def operator_b_pushes(job: Job, diff: str, config_hash: str) -> None:
        if not seen:
            seen.append(_push(job_b))

    outcome_a = _push(job_a, VerifyContext(required_peers=set(), bgp_wait=0, before_commit=operator_b_pushes))
    (outcome_b,) = seen
    if name == "leaf3":
        # EOS: A's configuration session is pending, so napalm refuses B's (the device's own lock); A goes on
        winner, loser, winning_job = outcome_a, outcome_b, job_a
        assert "another configuration session is pending" in loser.message
    else:
        winner, loser, winning_job = outcome_b, outcome_a, job_b
        assert "nothing was committed" in loser.message and "changed since" in loser.message
        assert loser.diff, "the conflict still shows what A wanted to change"
    assert winner.state is State.APPLIED, winner.message + "".join(winner.checks)
    assert loser.state is State.CONFLICT, loser.message
    assert not loser.state.ok
    assert _in_sync(winning_job), "the device holds the winner's intent, untouched by the other run"


def _host_state(lab: Lab) -> str:
    """The host as the simulator holds it, without fabconf's own bookkeeping (checkpoint, commit lock)."""
    state = json.loads(running(lab, HOST))
    own = ("/var/lib/fabconf/", "/run/fabconf/")
    state["files"] = {k: v for k, v in state.get("files", {}).items() if not k.startswith(own)}
    return json.dumps(state, sort_keys=True)


def _owner(lab: Lab, text: str) -> None:
    host = sim(lab, HOST)
    host.fs.mkdir("/run/fabconf", root=True)
    host.fs.mkdir("/run/fabconf/commit.lock", root=True)
    host.state.files[OWNER_FILE] = text


def test_the_host_commit_lock_keeps_out_another_live_run_and_is_taken_over_when_stale(lab: Lab) -> None:
    job = _job(lab, HOST)
    before = repr(sim(lab, HOST).state.nics)
    now = time.time()
    _owner(lab, json.dumps({"controller": "ops-laptop-2", "pid": 4242, "started": now}))
    outcome = _push(job)
    assert outcome.state is State.CONFLICT, outcome.message
    assert "another fabconf run is committing on this host (fabconf process 4242 on ops-laptop-2" in outcome.message
    assert repr(sim(lab, HOST).state.nics) == before

    _owner(lab, json.dumps({"controller": "ops-laptop-2", "pid": 4242, "started": now - 2 * LEASE}))
    assert _push(job).state is State.APPLIED  # its lease ran out: stale, taken over
    assert not sim(lab, HOST).fs.exists("/run/fabconf/commit.lock"), "the lock is released after the commit"

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    _owner(lab, json.dumps({"controller": __import__("socket").gethostname(), "pid": dead.pid, "started": now}))
    assert _push(_job(lab, HOST, other=True)).state is State.APPLIED  # its process is gone on this controller


class _SessionLostMidApply(LinuxDriver):
    """The real driver, whose SSH session drops once half of its first group of changes has run."""

    def _execute(self, changes):
        if not changes:
            return False
        half = max(1, len(changes) // 2)
        reset = super()._execute(changes[:half])
        self._shell.close()
        return reset or super()._execute(changes[half:])


def _commit_losing_the_session(job: Job) -> None:
    base: Any = open_driver(job, DeviceOptions(timeout=20))  # a LinuxDriver: its address and login
    base.close()
    args = {"port": base.port, "known_hosts": os.environ["FABCONF_KNOWN_HOSTS"]}
    lost = _SessionLostMidApply(base.hostname, base.username, base.password, 20, args)
    lost.open()
    lost.load_merge_candidate(config=job.rendered)
    with pytest.raises(Exception):  # noqa: B017 - whatever the lost session raises
        lost.commit_config()


def test_a_host_left_half_applied_is_restored_by_the_next_push(lab: Lab) -> None:
    job = _job(lab, HOST)
    before = _host_state(lab)
    _commit_losing_the_session(job)
    assert _host_state(lab) != before, "half of it was applied"

    # read-only commands name the half-applied host and change nothing
    driver = open_driver(job, DeviceOptions(timeout=20))
    try:
        outcome = diff_device(job, driver)
    finally:
        driver.close()
    assert outcome.state is State.FAILED and "interrupted commit" in outcome.message

    # the next push restores it from the checkpoint before anything else, says so, then applies
    driver = open_driver(job, DeviceOptions(timeout=20))
    try:
        done = driver.finish_interrupted()  # type: ignore[attr-defined]
        assert driver.finish_interrupted() == ""  # type: ignore[attr-defined]
    finally:
        driver.close()
    assert done.startswith("an interrupted commit had left this host half-applied: restored from its checkpoint")
    # back as before, but for what sysfs cannot undo -- which the restore names
    assert "traffic_class was unset and stays 106" in done
    assert re.sub(r'"traffic_class": \d+', '"traffic_class": null', _host_state(lab)) == before
    assert _push(job).state is State.APPLIED


def test_a_push_finishes_an_interrupted_host_commit_first(lab: Lab) -> None:
    job = _job(lab, HOST)
    _commit_losing_the_session(job)
    outcome = _push(job)
    assert outcome.state is State.APPLIED
    assert "interrupted commit had left this host half-applied: restored from its checkpoint first" in outcome.message
    assert _in_sync(job)


def _cli_push(directory: str, locks: Path) -> subprocess.Popen[str]:
    args = ["push", "-i", directory, "--limit", "gpu_hosts", "--yes", "--canary", "0", "--batch", "100%"]
    args += ["--max-fail", "100", "--bgp-wait", "0", "--format", "json"]
    env = {**os.environ, "FABCONF_LOCK_DIR": str(locks)}
    return subprocess.Popen([sys.executable, "-m", "fabconf", *args], env=env, stdout=subprocess.PIPE, text=True)


def test_two_operators_pushing_at_once_never_leave_a_host_at_neither_intent(lab: Lab, tmp_path: Path) -> None:
    """Two `fabconf push` runs from two "machines" (separate lock directories), different intents, started
    together on the same eight GPU hosts: each host ends at one run's intent, whole; a host both runs report
    applied was changed twice in turn (the second diff saw the first); anything else is a conflict."""
    inventory_a = lab.state_dir / "inventory"
    inventory_b = tmp_path / "inventory-b"
    shutil.copytree(inventory_a, inventory_b)
    fabric = inventory_b / "fabric.yaml"
    fabric.write_text(fabric.read_text().replace("gid_index: 3 ", "gid_index: 5 "))
    runs = [_cli_push(str(inventory_a), tmp_path / "locks-a"), _cli_push(str(inventory_b), tmp_path / "locks-b")]
    reports = []
    for run in runs:
        out, _ = run.communicate(timeout=240)
        reports.append({d["device"]: d for d in json.loads(out)["devices"]})
    a, b = reports
    compiled = {"a": compile_inventory(inventory_a), "b": compile_inventory(inventory_b)}
    for host in sorted(a):
        states = {a[host]["state"], b[host]["state"]}
        why = (a[host]["message"], b[host]["message"], a[host]["failed_checks"], b[host]["failed_checks"])
        assert states <= {"applied", "conflict"}, (host, why)
        assert "applied" in (a[host]["state"], b[host]["state"]), f"{host}: neither run applied"
        holds = {
            run
            for run, c in compiled.items()
            if _in_sync(Job(c.model.devices[host], c.data[host], render(c.data[host])))
        }
        assert len(holds) == 1, f"{host} holds {holds or 'neither intent'}"
        if a[host]["state"] != b[host]["state"]:  # one applied, the other conflicted: the winner's intent
            assert holds == {"a" if a[host]["state"] == "applied" else "b"}, host
        checkpoint = json.loads(sim(lab, host).state.files["/var/lib/fabconf/linux-rollback.json"])
        assert checkpoint["applying"] is False, f"{host} is left half-applied"
        assert not sim(lab, host).fs.exists("/run/fabconf/commit.lock"), f"{host}: the commit lock was left behind"
