"""Ctrl-C during a push, as an engineer would press it: fabconf in a subprocess against the lab.

The first SIGINT is acknowledged at once, no new device starts, the device in flight reaches a defined end
state; a second SIGINT rolls the device in flight back. Either way the summary is printed, every touched
device is in the audit log, untouched devices are unchanged, and the exit status is 130.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from labkit import ROOT, inv, running

from fabconf.cli import main
from fabconf.compile.pipeline import compile_inventory
from fabconf_lab.orchestrator import Lab

LEAVES = ("leaf1", "leaf2", "leaf3", "leaf4")


@pytest.fixture
def lab(lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Lab:
    """The spines hold fabconf's intent (so leaf1's sessions to them are required), but leaf1's uplink cables are
    cut: the canary leaf1 commits, then waits for BGP sessions that never come up."""
    with monkeypatch.context() as scoped:  # the spines' push keeps out of the audit log the tests read
        scoped.setenv("FABCONF_AUDIT_LOG", str(tmp_path / "spines-audit.jsonl"))
        code = main(["push", "-i", inv(lab), "--limit", "spines", "--yes", "--bgp-wait", "0", "--format", "json"])
    assert code == 0
    for itf in compile_inventory(Path(inv(lab))).data["leaf1"]["interfaces"]:
        if itf["kind"] == "uplink":
            lab.fault("leaf1", "link", f"{itf['name']}:down")
    return lab


def _start_push(lab: Lab, bgp_wait: str) -> tuple[subprocess.Popen[str], queue.Queue[str]]:
    # the canary leaf1 commits, then waits for BGP to the spines, which never comes up (its uplinks are cut)
    args = ["push", "-i", inv(lab), "--limit", "leaves", "--canary", "1", "--batch", "1", "--yes"]
    args += ["--format", "json", "--bgp-wait", bgp_wait, "--confirm-timeout", "600"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabconf", *args],
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return proc, lines


def _wait_committed(lab: Lab, proc: subprocess.Popen[str], before: str) -> None:
    deadline = time.monotonic() + 60
    while running(lab, "leaf1") == before:
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail("the canary never committed: " + (proc.communicate()[0] or ""))
        time.sleep(0.1)


def _wait_line(lines: queue.Queue[str], text: str, within: float) -> str:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            break
        if text in line:
            return line
    pytest.fail(f"no {text!r} on stderr within {within} s")


def _audit(lab: Lab, committing: bool = False) -> list[dict[str, str]]:
    """The audit's outcome records (``committing``: the records written just before each commit instead)."""
    path = Path(os.environ["FABCONF_AUDIT_LOG"])
    entries = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [e for e in entries if (e["result"] == "committing") == committing]


def test_ctrl_c_twice_rolls_back_the_device_in_flight(lab: Lab) -> None:
    before = {n: running(lab, n) for n in LEAVES}
    proc, lines = _start_push(lab, bgp_wait="300")
    _wait_committed(lab, proc, before["leaf1"])

    asked = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _wait_line(lines, "no new device starts", within=2.0)
    assert time.monotonic() - asked < 2.0
    assert proc.poll() is None  # the device in flight is still being worked on
    proc.send_signal(signal.SIGINT)
    _wait_line(lines, "rolling back", within=2.0)
    out, _ = proc.communicate(timeout=60)

    assert proc.returncode == 130
    report = json.loads(out)  # the summary is printed, as one JSON document
    states = {d["device"]: d for d in report["devices"]}
    assert states["leaf1"]["state"] == "rolled back", states["leaf1"]
    assert "interrupted" in " ".join(states["leaf1"]["failed_checks"])
    for name in ("leaf2", "leaf3", "leaf4"):
        assert states[name]["state"] == "untouched"
        assert "interrupted" in states[name]["message"]
    for name in LEAVES:  # leaf1 rolled back, the others never touched
        assert running(lab, name) == before[name], name
    assert [(a["device"], a["result"]) for a in _audit(lab)] == [("leaf1", "rolled back")]
    assert [a["device"] for a in _audit(lab, committing=True)] == ["leaf1"]  # announced before the commit


def test_one_ctrl_c_lets_the_device_in_flight_finish(lab: Lab) -> None:
    before = {n: running(lab, n) for n in LEAVES}
    proc, lines = _start_push(lab, bgp_wait="4")
    _wait_committed(lab, proc, before["leaf1"])
    proc.send_signal(signal.SIGINT)
    _wait_line(lines, "no new device starts", within=2.0)
    out, _ = proc.communicate(timeout=60)

    assert proc.returncode == 130
    states = {d["device"]: d["state"] for d in json.loads(out)["devices"]}
    # leaf1 finished its own verify (BGP to the spines stays down: its uplinks are cut) and was rolled back by it
    assert states == {"leaf1": "rolled back", "leaf2": "untouched", "leaf3": "untouched", "leaf4": "untouched"}
    assert [a["device"] for a in _audit(lab)] == ["leaf1"]
    for name in LEAVES:
        assert running(lab, name) == before[name], name
