"""The fault matrix (faultmatrix.py holds the table): every platform x moment x fault, against the lab.

Each cell resets its device to the brownfield start (``Lab.reset``), arms the fault at its moment
(``Faults.set(..., at=MOMENT)``), pushes the one device through fabconf's real push path (``rollout.push``:
the Nornir task, retries, the drivers over real sockets; nothing mocked), then reads the device back from the
lab. The invariant, for every cell: reported ``applied`` means at intent and verified; anything else means
exactly as before. Then the table's entry pins what was reported. ``killed`` cells run the same push in a
process and SIGKILL it while the lab holds the request of that moment.

One lab per xdist worker (module scope); the push's ``--timeout`` is 2 s, a delay is 3 s, revert timers 3-4 s.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from faultmatrix import CELLS, DEVICES, INVENTORIES, Cell, document
from labkit import PASSWORD, ROOT
from network import free_network
from pristine import EXAMPLE

from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.render import render
from fabconf.deploy import rollout
from fabconf.deploy.job import Job, Outcome, State
from fabconf.deploy.options import DeviceOptions, PushOptions
from fabconf.deploy.steps import VerifyContext, verify_device
from fabconf.deploy.tasks import open_driver
from fabconf_lab.orchestrator import Lab

TIMEOUT = 3  # fabconf's --timeout in the matrix (a loaded 2-core CI machine needs a margin)
DELAY = "4"  # a reply this late is a timeout
REVERT = 4  # --confirm-timeout of in-process pushes
KILLED_REVERT = 3  # --confirm-timeout of the pushes that are killed
# the Nth request of the moment: a host's 3rd change of a commit or a restore (two are done), its 2nd read (the 1st
# reads a checkpoint that does not exist, so a garbled or refused reply to it changes nothing)
AFTER = {"linux": {"commit": 3, "rollback": 3, "read": 2}}


@pytest.fixture(scope="module")
def mlab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """The matrix's four devices only; the lab's inventory keeps every other device of the pod (at addresses
    nothing answers on, never contacted) so that it compiles with the whole cabling plan."""
    inventory = EXAMPLE
    base = tmp_path_factory.mktemp("matrix")
    compiled = compile_inventory(inventory)
    the_lab = Lab(
        compiled, inventory, base / "lab", network=free_network(), password=PASSWORD, names=sorted(_POD_DEVICES)
    )
    the_lab.start()
    hosts_file = the_lab.state_dir / "inventory" / "hosts.yaml"
    hosts = yaml.safe_load((inventory / "hosts.yaml").read_text())
    hosts.update(yaml.safe_load(hosts_file.read_text()))
    hosts_file.write_text(yaml.safe_dump(hosts, sort_keys=False))
    lab_compiled = compile_inventory(the_lab.state_dir / "inventory")
    _JOBS.update(
        {
            n: Job(lab_compiled.model.devices[n], lab_compiled.data[n], render(lab_compiled.data[n]))
            for n in _POD_DEVICES
        }
    )
    try:
        yield the_lab
    finally:
        the_lab.stop()


@pytest.fixture(scope="module")
def slab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """The SONiC leaf of examples/sonic-mix (the example pod has none), in a lab of its own; started only when a
    SONiC cell runs."""
    inventory = INVENTORIES["sonic"]
    compiled = compile_inventory(inventory)
    base = tmp_path_factory.mktemp("matrix-sonic")
    the_lab = Lab(
        compiled, inventory, base / "lab", network=free_network(), password=PASSWORD, names=[DEVICES["sonic"]]
    )
    the_lab.start()
    hosts_file = the_lab.state_dir / "inventory" / "hosts.yaml"
    hosts = yaml.safe_load((inventory / "hosts.yaml").read_text())
    hosts.update(yaml.safe_load(hosts_file.read_text()))
    hosts_file.write_text(yaml.safe_dump(hosts, sort_keys=False))
    lab_compiled = compile_inventory(the_lab.state_dir / "inventory")
    name = DEVICES["sonic"]
    _JOBS[name] = Job(lab_compiled.model.devices[name], lab_compiled.data[name], render(lab_compiled.data[name]))
    try:
        yield the_lab
    finally:
        the_lab.stop()


_JOBS: dict[str, Job] = {}
_POD_DEVICES = [n for p, n in DEVICES.items() if p not in INVENTORIES]  # the example pod's


@pytest.fixture
def lab_env(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Lab:
    """The lab of the test's cell: the example pod's, or the SONiC leaf's."""
    cell = getattr(getattr(request.node, "callspec", None), "params", {}).get("cell")
    the_lab: Lab = request.getfixturevalue("slab" if cell is not None and cell.platform == "sonic" else "mlab")
    monkeypatch.setenv("FABCONF_USERNAME", the_lab.username)
    monkeypatch.setenv("FABCONF_PASSWORD", PASSWORD)
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    monkeypatch.setenv("FABCONF_LOCK_DIR", str(tmp_path / "locks"))
    return the_lab


def _job(lab: Lab, name: str) -> Job:
    return _JOBS[name]


def _reset(lab: Lab, name: str) -> None:
    # drivers of earlier cells that are only now collected may still send a request (napalm's __del__ closes,
    # and an EOS close aborts its session): let them, before a fault is armed that such a request could take
    gc.collect()
    sim = lab.reset(name)
    if lab.devices[name].platform == "nxos":
        sim.device.config_replace.min_timeout = 1  # the switch takes 30-3600 s


def _state(lab: Lab, name: str, *, hidden: bool = True) -> str:
    """The device's configuration as the lab holds it; a GPU host's without fabconf's own bookkeeping (its
    checkpoint and commit lock), without systemd's loaded-unit cache (a daemon-reload reads the unit files on
    disk, which are compared), and with the RoCE traffic class sysfs cannot unset (the restore says so)."""
    text = lab.devices[name].sim.running_config()
    if lab.devices[name].platform != "linux":
        return text
    state = json.loads(text)
    own = ("/var/lib/fabconf/", "/run/fabconf/")
    state["files"] = {k: v for k, v in state.get("files", {}).items() if not k.startswith(own)}
    state.pop("units_loaded", None)
    if hidden:  # mlnx_qos shows no DSCP map under trust pcp: a map changed then is inert, and must be reported
        for nic in state.get("nics", {}).values() if isinstance(state.get("nics"), dict) else state.get("nics", []):
            if nic.get("trust") == "pcp":
                nic["dscp2prio"] = None
    return re.sub(r'"traffic_class": \d+', '"traffic_class": null', json.dumps(state, sort_keys=True))


def _pending(lab: Lab, name: str) -> bool:
    """A commit waiting for its confirmation (its revert timer still running) on a switch."""
    sim = lab.devices[name].sim
    platform = lab.devices[name].platform
    if platform == "eos":
        return any(s.state == "pendingCommitTimer" for s in sim.sessions.values())
    if platform == "nxos":
        return sim.device.config_replace.pending is not None
    if platform == "cumulus":
        return sim.store.confirm_status() is not None
    if platform == "sonic":  # no device timer: a kept checkpoint is a commit fabconf never confirmed nor undid
        return bool(sim.db.checkpoints)
    return False


def _settle(lab: Lab, name: str, within: float) -> None:
    """Let a revert timer left running run out (a commit fabconf could not confirm nor undo)."""
    deadline = time.monotonic() + within
    while _pending(lab, name) and time.monotonic() < deadline:
        time.sleep(0.1)


def _at_intent(lab: Lab, job: Job) -> list[str]:
    """What keeps the device from being at intent and verified ([] when it is)."""
    driver = open_driver(job, DeviceOptions(timeout=10))
    try:
        outcome = verify_device(job, driver, VerifyContext(required_peers=set(), bgp_wait=0))
    finally:
        with contextlib.suppress(Exception):
            driver.close()
    return [] if outcome.state is State.VERIFIED else [outcome.message, *outcome.checks]


def _arm(lab: Lab, cell: Cell) -> None:
    faults = lab.devices[cell.device].sim.faults
    after = AFTER.get(cell.platform, {}).get(cell.moment, 1)
    if cell.moment == "rollback":  # a verify that fails is what makes a push roll back
        faults.set("reject", at="verify")
    if cell.fault == "killed":
        faults.set("hang", at=cell.moment, after=after)
    else:
        faults.set(cell.fault, DELAY if cell.fault == "delay" else None, at=cell.moment, after=after)


def _push(job: Job) -> Outcome:
    """``fabconf push --limit DEVICE --canary 0`` as the rollout runs it, with no BGP peer required."""
    the_plan = rollout.plan([job], canary=0, batch="100%")
    push_opts = PushOptions(canary=0, batch="100%", confirm_timeout=REVERT, bgp_wait=0)
    (outcome,) = rollout.push(the_plan, {job.name}, push_opts, DeviceOptions(timeout=TIMEOUT))
    return outcome


def _check(lab: Lab, cell: Cell, job: Job, before: str, raw_before: str, outcome: Outcome) -> None:
    said = f"{cell.id}: reported {outcome.state}: {outcome.message} {outcome.checks}"
    if outcome.state in (State.APPLIED, State.UNCHANGED):
        assert outcome.state is State.APPLIED, said  # the brownfield device always has something to change
        assert _at_intent(lab, job) == [], "reported applied but not at intent: " + said
    else:
        assert _state(lab, cell.device) == before, "not exactly as before: " + said
        if _state(lab, cell.device, hidden=False) != raw_before:  # only a DSCP map trust pcp hides differs
            assert "hidden by trust pcp" in outcome.message, "a hidden DSCP map changed, not reported: " + said
        if outcome.state is State.FAILED:  # says where the device is
            assert re.search(r"nothing was (committed|changed)|previous configuration|as before", outcome.message), said


@pytest.mark.parametrize("cell", [c for c in CELLS if c.fault != "killed"], ids=lambda c: c.id)
def test_cell(lab_env: Lab, cell: Cell) -> None:
    if cell.na:
        pytest.skip(f"n/a: {cell.na}")
    lab, name = lab_env, cell.device
    _reset(lab, name)
    job = _job(lab, name)
    before, raw_before = _state(lab, name), _state(lab, name, hidden=False)
    _arm(lab, cell)
    try:
        outcome = _push(job)
    finally:
        fired = list(lab.devices[name].sim.faults.fired)
        lab.devices[name].sim.faults.clear()
    _settle(lab, name, REVERT + 3)
    assert any(f.startswith(f"{cell.fault} ") and f"--at {cell.moment}" in f for f in fired), (
        f"{cell.id}: the fault never fired (fired: {fired}): {outcome.state}: {outcome.message}"
    )
    _check(lab, cell, job, before, raw_before, outcome)
    assert str(outcome.state) in cell.states, f"{cell.id}: {outcome.state}: {outcome.message} {outcome.checks}"


_KILLED_PUSH = """
import json, sys
from fabconf.deploy import rollout
from fabconf.deploy.options import DeviceOptions, PushOptions
from fabconf.deploy.job import Job
from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.render import render
inventory, name, revert, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
compiled = compile_inventory(inventory)
job = Job(compiled.model.devices[name], compiled.data[name], render(compiled.data[name]))
opts = PushOptions(canary=0, batch="100%", confirm_timeout=revert, bgp_wait=0)
(outcome,) = rollout.push(rollout.plan([job], canary=0, batch="100%"), {name}, opts, DeviceOptions(timeout=timeout))
print(json.dumps(outcome.as_dict()))
"""


@pytest.mark.parametrize("cell", [c for c in CELLS if c.fault == "killed"], ids=lambda c: c.id)
def test_killed(lab_env: Lab, cell: Cell) -> None:
    """fabconf SIGKILLed while the lab holds the request of the moment: the device reverts by its own timer
    (switches), or the next push restores what the killed one left half-applied (GPU hosts)."""
    if cell.na:
        pytest.skip(f"n/a: {cell.na}")
    lab, name = lab_env, cell.device
    _reset(lab, name)
    job = _job(lab, name)
    before = _state(lab, name)
    _kill_at(lab, cell, KILLED_REVERT, faults=2 if cell.moment == "rollback" else 1)
    _settle(lab, name, KILLED_REVERT + 3)
    end = "before" if _state(lab, name) == before else "intent" if not _at_intent(lab, job) else "neither"
    if cell.platform in ("linux", "sonic"):  # no device timer: the next push cleans what the killed one left
        outcome = _push(job)
        assert outcome.state in (State.APPLIED, State.UNCHANGED), f"{cell.id}: {outcome.state}: {outcome.message}"
        assert _at_intent(lab, job) == [], cell.id
        if end == "neither":
            assert "restored from its checkpoint first" in outcome.message, f"{cell.id}: {outcome.message}"
            end = "intent"
    assert end in cell.states, f"{cell.id}: the device is left {end}"


def test_the_document_is_the_table() -> None:
    from faultmatrix import DOC

    assert DOC.read_text() == document(), "run `python tests/e2e/faultmatrix.py` to rewrite docs/fault-matrix.md"


# -- the kill matrix (#39): a push SIGKILLed at any moment never blocks the next one ---------------------------------
KILL_MOMENTS = ("connect", "read", "stage", "commit", "verify", "confirm")
KILL_CELLS = [c for c in CELLS if c.fault == "killed" and c.moment in KILL_MOMENTS and not c.na]
LONG_REVERT = 600  # the killed push's --confirm-timeout: no revert timer runs out while the test runs


def _kill_at(lab: Lab, cell: Cell, revert: int, faults: int = 1) -> None:
    """Run the push in a process (``--confirm-timeout revert``) and SIGKILL it while the lab holds the request of
    ``cell.moment`` (once ``faults`` faults armed for the cell have fired)."""
    armed = lab.devices[cell.device].sim.faults
    fired = len(armed.fired)
    _arm(lab, cell)
    args = [str(lab.state_dir / "inventory"), cell.device, str(revert), "30"]
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_PUSH, *args], env=dict(os.environ), cwd=ROOT)
    try:
        reached = armed.wait_fired(fired + faults, timeout=30)
        assert reached, f"{cell.id}: the push never reached {cell.moment} (fired: {armed.fired})"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        armed.clear()  # the held request is dropped, never carried out


@pytest.mark.parametrize("cell", KILL_CELLS, ids=lambda c: f"{c.platform}-{c.moment}")
def test_killed_push_never_blocks_the_next(lab_env: Lab, cell: Cell) -> None:
    """kill -9 at the moment, with the revert timer far away: the next push cleans what the killed one left
    (recorded in the audit), applies, and closes the killed run's unfinished commit; the audit is clean and the
    device verifies."""
    from fabconf.cli import main
    from fabconf.jobs.push import resolve_unfinished

    lab, name = lab_env, cell.device
    _reset(lab, name)
    job = _job(lab, name)
    _kill_at(lab, cell, LONG_REVERT)
    left = _left_over(lab, name)
    outcome = _push(job)
    said = f"{cell.id}: the next push: {outcome.state}: {outcome.message}"
    assert outcome.state in (State.APPLIED, State.UNCHANGED), said  # `fabconf push` exits 0
    assert ("cleaned what a killed run left" in outcome.message) == bool(left), f"{said} (left: {left})"
    assert [e["result"] for e in _audit_log() if e["result"] == "cleaned"] == (["cleaned"] if left else [])
    resolve_unfinished("push", [job], [outcome], {})  # what `fabconf push` does after its rollout
    assert main(["audit"]) == 0, f"{cell.id}: the audit is not clean after the next push"
    assert _at_intent(lab, job) == [], cell.id
    assert not _left_over(lab, name), f"{cell.id}: still left on the device: {_left_over(lab, name)}"


def _left_over(lab: Lab, name: str) -> list[str]:
    """What a push left on a switch: an open EOS config session, a commit waiting for its confirmation, a pending
    (staged, never applied) NVUE revision."""
    sim = lab.devices[name].sim
    platform = lab.devices[name].platform
    found = ["a commit waiting for its confirmation"] if _pending(lab, name) else []
    if platform == "eos":
        found += [f"session {n} ({s.state})" for n, s in sim.sessions.items() if s.state == "pending"]
    if platform == "cumulus":
        found += [f"revision {n}" for n, r in sim.store.revisions.items() if r.state == "pending"]
    return found


def _audit_log() -> list[dict[str, str]]:
    path = Path(os.environ["FABCONF_AUDIT_LOG"])
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _kill_cell(platform: str, moment: str) -> Cell:
    return next(c for c in KILL_CELLS if c.platform == platform and c.moment == moment)


def test_after_a_kill_verify_resolves_and_ack_closes_and_the_push_still_cleans(lab_env: Lab) -> None:
    """The warning's promise: a verify that reads the device back resolves the unfinished commit, `fabconf audit
    --ack` closes it; neither cleans the device, and the next push still does (what was left is in the audit)."""
    from fabconf.cli import main
    from fabconf.jobs.push import resolve_unfinished

    lab, name = lab_env, DEVICES["eos"]
    _reset(lab, name)
    job = _job(lab, name)
    _kill_at(lab, _kill_cell("eos", "commit"), LONG_REVERT)
    assert main(["audit"]) == 2  # outcome never recorded
    read = verify_device(job, open_driver(job, DeviceOptions(timeout=10)), VerifyContext(set(), bgp_wait=0))
    resolve_unfinished("verify", [job], [read], {})
    assert main(["audit"]) == 0, read
    assert _left_over(lab, name)  # the session is still there: only a push cleans

    _kill_at(lab, _kill_cell("eos", "verify"), LONG_REVERT)
    assert main(["audit"]) == 2
    assert main(["audit", "--ack", name, "--note", "looked at the switch"]) == 0
    assert main(["audit"]) == 0
    outcome = _push(job)
    assert outcome.state is State.APPLIED, outcome.message
    assert "aborted config session fabconf_" in outcome.message, outcome.message
    # the second killed run had already cleaned the first one's session before it staged its own
    assert [e["result"] for e in _audit_log()].count("cleaned") == 2
    assert _at_intent(lab, job) == [] and not _left_over(lab, name)


def test_someone_elses_session_stops_the_push_named(lab_env: Lab) -> None:
    """A pending EOS session no fabconf run recorded is another changer's: the push touches nothing and names it."""
    lab, name = lab_env, DEVICES["eos"]
    _reset(lab, name)
    job = _job(lab, name)
    sim = lab.devices[name].sim
    before = _state(lab, name)
    sim.run_cmds(["configure session operator_change", "interface Ethernet1", "description by hand", "end"], "json")
    outcome = _push(job)
    assert outcome.state is State.CONFLICT, outcome.message
    assert "operator_change" in outcome.message and "nothing was" in outcome.message, outcome.message
    assert _state(lab, name) == before
    assert sim.sessions["operator_change"].state == "pending"  # left alone


def test_a_push_killed_while_its_eos_session_is_being_staged(lab_env: Lab) -> None:
    """Killed while the switch carries out the staging request (before any commit was recorded): the session it
    left is named in the audit's `staging` record, so the next push aborts it."""
    from fabconf.cli import main

    lab, name = lab_env, DEVICES["eos"]
    _reset(lab, name)
    job = _job(lab, name)
    left = _kill_while_staging(lab, name, _KILLED_PUSH, [str(LONG_REVERT), "60"])
    assert left.startswith("session fabconf_"), left
    assert [e["result"] for e in _audit_log()] == ["staging"]  # no commit was ever announced
    outcome = _push(job)
    assert outcome.state is State.APPLIED, outcome.message
    assert "aborted config session fabconf_" in outcome.message and "never committed" in outcome.message
    assert main(["audit"]) == 0
    assert _at_intent(lab, job) == [] and not _left_over(lab, name)


_KILLED_DIFF = """
import sys
from fabconf.deploy import rollout
from fabconf.deploy.options import DeviceOptions
from fabconf.deploy.job import Job
from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.render import render
inventory, name, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3])
compiled = compile_inventory(inventory)
job = Job(compiled.model.devices[name], compiled.data[name], render(compiled.data[name]))
rollout.diff([job], DeviceOptions(timeout=timeout))
"""


def _kill_while_staging(lab: Lab, name: str, script: str, args: list[str]) -> str:
    """Run ``script`` (a push or a diff of ``name``, with ``args`` after the inventory and the name) in a process
    and SIGKILL it while the switch carries out its staging request; returns what it left on the device (one open
    session)."""
    sim = lab.devices[name].sim
    fired = len(sim.faults.fired)
    sim.faults.set("delay", "30", at="stage")  # carried out at once, answered 30 s later
    argv = [str(lab.state_dir / "inventory"), name, *args]
    proc = subprocess.Popen([sys.executable, "-c", script, *argv], env=dict(os.environ), cwd=ROOT)
    try:
        assert sim.faults.wait_fired(fired + 1, timeout=30)
        deadline = time.monotonic() + 10
        while not _left_over(lab, name) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        sim.faults.clear()
    (left,) = _left_over(lab, name)
    return left


def test_a_diff_killed_while_staging_never_blocks_the_next_push_or_diff(lab_env: Lab) -> None:
    """#39: a diff stages in an EOS config session too. Killed while staging, it leaves a session named as
    fabconf's diff, with its lock free: the next push aborts it and applies (exit 0); the next diff does the same."""
    from fabconf.cli import main

    lab, name = lab_env, DEVICES["eos"]
    _reset(lab, name)
    job = _job(lab, name)
    left = _kill_while_staging(lab, name, _KILLED_DIFF, ["60"])
    assert left.startswith("session fabconf_diff"), left  # not NAPALM's napalm_<microseconds>
    outcome = _push(job)
    assert outcome.state is State.APPLIED, outcome.message
    assert "aborted config session fabconf_diff" in outcome.message, outcome.message
    assert main(["audit"]) == 0
    assert _at_intent(lab, job) == [] and not _left_over(lab, name)

    _reset(lab, name)  # away from intent again: a diff has something to stage
    left = _kill_while_staging(lab, name, _KILLED_DIFF, ["60"])
    assert left.startswith("session fabconf_diff"), left
    (seen,) = rollout.diff([job], DeviceOptions(timeout=10))
    assert seen.state is State.CHANGES, seen.message
    assert "aborted config session fabconf_diff" in seen.message, seen.message
    assert not _left_over(lab, name)
