"""diff and push against the lab, every platform: the real drivers over real sockets, no mocks.

Each test gets a fresh brownfield lab of the example pod (in process, at its own loopback range), and
runs the fabconf CLI in process against the lab's own inventory with the lab's credentials.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from labkit import PASSWORD, ROOT, fab, inv, napalm_merge, open_connections, push_all, running, sim

from fabconf.cli import main
from fabconf.deploy.lock import DeviceLocks, lock_address
from fabconf_lab.orchestrator import Lab


def test_diff_then_push_then_diff_is_empty(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = fab(capsys, "diff", "-i", inv(lab))
    assert code == 2, out
    assert "qos profile FABCONF_ROCE" in out  # EOS
    assert "pause pfc-cos 3" in out  # NX-OS
    assert "qos" in out and "leaf1 (cumulus)" in out  # Cumulus
    assert "+  trust: dscp" in out  # GPU host NIC (the unified diff of its NIC-state document)
    assert "no vlan 99" in out or "-vlan 99" in out  # a stale VLAN is removed
    # a dry run leaves nothing behind: no EOS session, no NX-OS candidate/checkpoint, no NVUE revision
    assert not [s for s in sim(lab, "leaf3").sessions.values() if s.state in ("pending", "pendingCommitTimer")]
    assert not [f for f in sim(lab, "leaf4").bootflash() if "candidate" in f or "sot_file" in f]
    assert all(r.state != "pending" for r in sim(lab, "leaf1").store.revisions.values())

    code, out = push_all(lab, capsys)
    report = json.loads(out)
    states = {d["device"]: d["state"] for d in report["devices"]}
    assert code == 0, json.dumps(report, indent=1)
    assert set(states.values()) == {"applied"}
    assert open_connections(lab) == []  # every driver closed what it opened (napalm's NX-OS SCP session too)

    code, out = fab(capsys, "diff", "-i", inv(lab), "--format", "json")
    assert code == 0, out
    assert {d["state"] for d in json.loads(out)["devices"]} == {"unchanged"}
    assert "priority-flow-control priority 3 no-drop" in running(lab, "leaf3")
    assert "pause pfc-cos 3" in running(lab, "leaf4")
    assert "vlan 99" not in running(lab, "leaf3")
    applied = sim(lab, "leaf1").store.tree("applied")
    assert "3" in applied["qos"]["pfc"]["default-global"]["switch-priority"]
    assert applied["interface"]["swp1"]["link"]["mtu"] == 9216
    audit = [json.loads(line) for line in (lab.state_dir.parent / "audit.jsonl").read_text().splitlines()]
    outcomes = [a for a in audit if a["result"] not in ("committing", "staging")]
    assert {a["device"] for a in outcomes} == set(states) and all(a["result"] == "applied" for a in outcomes)
    # each commit was announced (fsync'ed, with the configuration it replaced) before it happened
    first: dict[Any, Any] = {}
    for i, a in enumerate(audit):
        first.setdefault((a["device"], a["result"] in ("committing", "staging")), i)
    assert all(first[(d, True)] < first[(d, False)] for d in states), audit
    # the password is in no output (fab() checks every command's stdout and stderr) and in no file fabconf
    # wrote: audit log, locks, reports; only the lab's own credentials file holds it (lab.env, mode 0600)
    fab(capsys, "verify", "-i", inv(lab), "--format", "json", "--bgp-wait", "0")
    fab(capsys, "diff", "-i", inv(lab), "--commands")
    fab(capsys, "audit", "--format", "json")
    written = [p for p in lab.state_dir.parent.rglob("*") if p.is_file() and lab.state_dir not in p.parents]
    assert {p.name for p in written} >= {"audit.jsonl"} and any(p.suffix == ".lock" for p in written)
    for path in written:
        assert PASSWORD.encode() not in path.read_bytes(), path
    assert (lab.state_dir / "lab.env").stat().st_mode & 0o077 == 0


def test_rejected_line_applies_nothing(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    before = running(lab, "leaf3")
    lab.fault("leaf3", "reject", "random-detect")
    code, out = fab(capsys, "push", "-i", inv(lab), "--limit", "leaf3", "--yes")
    assert code == 1
    assert "leaf3" in out and ("failed" in out or "rolled back" in out)
    assert running(lab, "leaf3") == before
    assert not [s for s in sim(lab, "leaf3").sessions.values() if s.state in ("pending", "pendingCommitTimer")]


@pytest.mark.parametrize("name", ["leaf3", "leaf4", "leaf1"])
def test_connection_dropped_during_commit_leaves_device_as_it_was(
    lab: Lab, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    before = running(lab, name)
    lab.fault(name, "drop-on-commit")
    code, out = fab(capsys, "push", "-i", inv(lab), "--limit", name, "--yes", "--format", "json")
    assert code == 1
    device = json.loads(out)["devices"][0]
    assert device["state"] == "rolled back", device
    assert "commit failed" in device["message"]
    lab.fault(name, "clear")
    assert running(lab, name) == before


def _break_spine2_session_to_leaf1(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = push_all(lab, capsys)
    assert code == 0, out
    # spine2 now expects the wrong AS from leaf1 (10.254.0.3): that session cannot come up. Through the lab's own
    # HTTPS port for spine2 (443 as root, 10443 for an ordinary user), never an assumed one
    napalm_merge(lab, "spine2", "nxos", "router bgp 65100\n  neighbor 10.254.0.3\n    remote-as 65999\n")


def _change_leaves(lab: Lab) -> None:
    fabric = lab.state_dir / "inventory" / "fabric.yaml"
    doc = yaml.safe_load(fabric.read_text())
    doc["ecmp"]["max_paths"] = 32
    fabric.write_text(yaml.safe_dump(doc, sort_keys=False))


def test_failed_verification_rolls_back_and_canary_stops_rollout(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    _break_spine2_session_to_leaf1(lab, capsys)
    _change_leaves(lab)
    before = {n: running(lab, n) for n in ("leaf1", "leaf2", "leaf3", "leaf4")}
    code, out = fab(
        capsys,
        "push",
        "-i",
        inv(lab),
        "--limit",
        "leaves",
        "--canary",
        "1",
        "--yes",
        "--bgp-wait",
        "2",
        "--format",
        "json",
    )
    assert code == 1
    states = {d["device"]: d for d in json.loads(out)["devices"]}
    assert states["leaf1"]["state"] == "rolled back"
    assert any("10.254.0.2 (spine2)" in c for c in states["leaf1"]["failed_checks"]), states["leaf1"]
    for other in ("leaf2", "leaf3", "leaf4"):
        assert states[other]["state"] == "untouched"
        assert "canary failed" in states[other]["message"]
    for n, text in before.items():
        assert running(lab, n) == text, n


def test_killed_push_reverts_by_itself(lab: Lab, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """EOS and Cumulus commit with a device-side timer: fabconf dying before confirm reverts them."""
    before = {n: running(lab, n) for n in ("leaf3", "leaf1")}
    for n in before:  # verify's reads stall, so fabconf is still before confirm when it dies
        lab.fault(n, "delay", "60", at="verify", every=True)
    env = dict(os.environ)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fabconf",
            "push",
            "-i",
            inv(lab),
            "--limit",
            "leaf3,leaf1",
            "--canary",
            "0",
            "--batch",
            "2",
            "--yes",
            "--confirm-timeout",
            "4",
            "--bgp-wait",
            "120",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until both commits are in
        if running(lab, "leaf3") != before["leaf3"] and running(lab, "leaf1") != before["leaf1"]:
            break
        time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("the push never committed: " + proc.communicate()[0].decode())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    for n in before:
        lab.fault(n, "clear")
    time.sleep(6)
    for n, text in before.items():
        assert running(lab, n) == text, f"{n} did not revert by itself"
    # the audit trail: a `committing` record (fsync'ed before each commit) without an outcome, for both
    code = main(["audit", "--format", "json"])
    unfinished = json.loads(capsys.readouterr().out)["unfinished"]
    assert code == 2 and {e["device"] for e in unfinished} == {"leaf1", "leaf3"}, unfinished
    assert all(e["config_before_sha256"] for e in unfinished)
    # the next verify of such a device warns (its state is what the device did after fabconf died)
    _code, text = fab(capsys, "verify", "-i", inv(lab), "--limit", "leaf3", "--bgp-wait", "0")
    assert "leaf3: a commit of run" in text and "never recorded its outcome" in text
    # that verify read leaf3 back: its unfinished commit is resolved; leaf1's stays until acknowledged
    code = main(["audit", "--format", "json"])
    assert code == 2 and [e["device"] for e in json.loads(capsys.readouterr().out)["unfinished"]] == ["leaf1"]
    _code, text = fab(capsys, "verify", "-i", inv(lab), "--limit", "leaf3", "--bgp-wait", "0")
    assert "never recorded its outcome" not in text  # warned once, not forever
    code, text = fab(capsys, "audit", "--ack", "leaf1", "--note", "checked by hand: reverted")
    assert code == 0 and "leaf1: 1 unfinished commit(s) acknowledged" in text
    code, text = fab(capsys, "audit")
    assert code == 0 and "no unfinished commits" in text


def test_second_push_on_a_locked_device_is_refused(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    # the lock is keyed by platform and management address: another inventory's name for the same switch
    leaf3 = lab.devices["leaf3"]
    with DeviceLocks([("tor-a17", "eos", lock_address(leaf3.address, leaf3.ports[0]))]):
        code, out = fab(capsys, "push", "-i", inv(lab), "--limit", "leaf3", "--yes")
    assert code == 1
    assert "another push holds these devices: leaf3 (pid" in out and "as tor-a17" in out


def test_unreachable_device_is_reported_and_never_green(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    lab.fault("spine1", "auth-refuse")
    code, out = fab(capsys, "diff", "-i", inv(lab), "--limit", "spine1,spine2", "--format", "json")
    assert code == 1
    states = {d["device"]: d for d in json.loads(out)["devices"]}
    assert states["spine1"]["state"] == "unreachable"
    assert states["spine2"]["state"] == "changes"


def test_runbooks_against_the_lab(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    before = running(lab, "spine1")
    code, out = fab(capsys, "run", str(ROOT / "tasks" / "change-window-diff.yaml"), "-i", inv(lab), "-l", "spines")
    assert code == 2, out
    assert "== step 2: diff" in out and "spine1" in out
    code, out = fab(capsys, "run", str(ROOT / "tasks" / "push-lossless-qos.yaml"), "-i", inv(lab), "--check")
    assert code == 2, out
    assert "check mode" in out and "== step 3: diff" in out  # the push step ran as a dry run
    assert running(lab, "spine1") == before  # nothing committed
    assert not [s for s in sim(lab, "spine1").sessions.values() if s.state in ("pending", "pendingCommitTimer")]


def test_runbook_push_asks_like_push_and_json_runbooks_print_one_document(
    lab: Lab, capsys: pytest.CaptureFixture[str]
) -> None:
    before = running(lab, "spine1")
    book = ROOT / "tasks" / "push-lossless-qos.yaml"
    code, out = fab(capsys, "run", str(book), "-i", inv(lab), "-l", "spine1")  # stdin is not a terminal here
    assert code == 1
    assert "needs --yes when not run interactively" in out
    assert running(lab, "spine1") == before  # nothing was pushed
    # the nightly runbook: stdout is exactly one JSON document; headers went to stderr
    code = main(["run", str(ROOT / "tasks" / "nightly-drift.yaml"), "-i", inv(lab), "-l", "spine1,leaf3"])
    captured = capsys.readouterr()
    assert code == 2
    doc = json.loads(captured.out)
    assert doc["runbook"] == "nightly drift check" and doc["exit_code"] == 2
    assert [s["kind"] for s in doc["steps"]] == ["validate", "drift"]
    assert {d["device"] for d in doc["steps"][1]["report"]["devices"]} == {"spine1", "leaf3"}
    assert doc["steps"][1]["report"]["drift"] == {"in_sync": 0, "drifted": 2, "unreachable": 0, "failed": 0}
    assert "== runbook" in captured.err and "== runbook" not in captured.out
    code, out = fab(capsys, "run", str(book), "-i", inv(lab), "-l", "gpu01", "--yes")  # a host: no BGP to wait for
    assert code == 0, out
    audit = [json.loads(line) for line in (lab.state_dir.parent / "audit.jsonl").read_text().splitlines()]
    (record,) = [a for a in audit if a["device"] == "gpu01" and a["result"] != "committing"]
    assert record["inventory"] == str(Path(inv(lab)).resolve()) and record["mode"] == "devices"
    assert record["target"] == record["address"] == lab.devices["gpu01"].address  # not a lab run: its address
    assert record["config_before_sha256"] != record["config_after_sha256"] and record["result"] == "applied"


def test_miscabled_host_ports_fail_verification(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    """LLDP is read back in verify: two host cables swapped on leaf1 make leaf1 roll back."""
    lab.world.cable("leaf1", "swp1", "gpu02", "ens1f0np0")
    lab.world.cable("leaf1", "swp2", "gpu01", "ens1f0np0")
    before = running(lab, "leaf1")
    # one wave (no canary, one batch): no device waits for BGP to a peer that is not applied yet
    code, out = fab(capsys, "push", "-i", inv(lab), "--canary", "0", "--batch", "100%", "--yes", "--format", "json")
    assert code == 1
    states = {d["device"]: d for d in json.loads(out)["devices"]}
    assert states["leaf1"]["state"] == "rolled back"
    assert any(
        "swp1: LLDP sees gpu02:ens1f0np0, the cabling says gpu01:ens1f0np0" in c
        for c in states["leaf1"]["failed_checks"]
    ), states["leaf1"]
    assert states["leaf2"]["state"] == "applied"
    assert running(lab, "leaf1") == before


def test_verify_is_read_only_and_catches_a_broken_session(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = fab(capsys, "verify", "-i", inv(lab), "--limit", "spine1", "--bgp-wait", "0")
    assert code == 1  # brownfield: nothing of the intent is there yet
    code, out = push_all(lab, capsys)
    assert code == 0, out
    code, out = fab(capsys, "verify", "-i", inv(lab), "--format", "json")
    assert code == 0, out
    assert {d["state"] for d in json.loads(out)["devices"]} == {"verified"}
    before = running(lab, "leaf3")
    lab.world.cable("leaf3", "Ethernet63/1", "spine1", "Ethernet9/1")  # leaf3's uplink moved to another port
    code, out = fab(capsys, "verify", "-i", inv(lab), "--limit", "leaf3", "--bgp-wait", "0", "--format", "json")
    assert code == 1
    (device,) = json.loads(out)["devices"]
    assert any("Ethernet63/1: LLDP sees spine1:Ethernet9/1" in c for c in device["failed_checks"]), device
    assert running(lab, "leaf3") == before  # verify never changes anything
