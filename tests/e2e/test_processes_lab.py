"""fabconf's read-only runs over more than one process (issue 42; ``fabconf.deploy.processes``), end to end: fabconf
in a subprocess against the lab, as an engineer runs it, its worker processes seen in /proc.

- The same lab diffed, verified and checked for drift in one process and in two gives the same reports, device by
  device.
- A worker killed in the middle of a diff leaves every device it had not finished failed, saying so, and the exit
  status 1; the next diff is not blocked by anything it left.
- Ctrl-C during a diff in two processes stops new devices in both: those in flight finish, the others are
  untouched, the exit status is 130.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from labkit import PASSWORD, ROOT, inv

from fabconf_lab.orchestrator import Lab


@dataclass
class Run:
    """fabconf running in a subprocess: its stdout and stderr read as they come (a full pipe would block it)."""

    proc: subprocess.Popen[str]
    lines: queue.Queue[str]  # stderr
    out: list[str]
    pumps: list[threading.Thread]

    def said(self, text: str) -> int:
        return sum(1 for line in list(self.lines.queue) if text in line)

    def finish(self, timeout: float = 120) -> tuple[int, dict[str, Any]]:
        """Its exit status and JSON report (no secret in anything it wrote)."""
        self.proc.wait(timeout)
        for pump in self.pumps:
            pump.join(timeout)
        out = "".join(self.out)
        assert PASSWORD not in out + "".join(self.lines.queue)
        return self.proc.returncode, json.loads(out)


def _start(lab: Lab, command: str, *args: str) -> Run:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabconf", command, "-i", inv(lab), "--format", "json", *args],
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        start_new_session=True,  # its own process group, as a terminal's foreground job: Ctrl-C reaches every process
    )
    assert proc.stdout is not None and proc.stderr is not None
    run = Run(proc, queue.Queue(), [], [])
    for stream, put in ((proc.stdout, run.out.append), (proc.stderr, run.lines.put)):
        pump = threading.Thread(target=lambda s=stream, p=put: [p(line) for line in s], daemon=True)
        pump.start()
        run.pumps.append(pump)
    return run


def _children(pid: int) -> list[int]:
    """The processes ``pid`` forked (its worker processes: fabconf starts no other child for a diff or a verify)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return sorted(set(found))


def _run(lab: Lab, command: str, *args: str) -> tuple[int, dict[str, Any], set[int]]:
    """Run fabconf to its end; the exit status, the JSON report and the worker processes seen while it ran."""
    run = _start(lab, command, *args)
    seen: set[int] = set()
    while run.proc.poll() is None:
        seen.update(_children(run.proc.pid))
        time.sleep(0.01)
    code, report = run.finish()
    return code, report, seen


def _comparable(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every device's entry, but the seconds it took."""
    return [{k: v for k, v in d.items() if k != "seconds"} for d in report["devices"]]


@pytest.mark.parametrize(("command", "code"), [("diff", 2), ("verify", 1), ("drift", 2)])
def test_two_processes_report_what_one_process_reports(lab: Lab, command: str, code: int) -> None:
    extra = ["--bgp-wait", "0"] if command == "verify" else []
    one_code, one, one_workers = _run(lab, command, "--processes", "1", *extra)
    two_code, two, two_workers = _run(lab, command, "--processes", "2", *extra)

    assert one_workers == set()
    assert len(two_workers) == 1  # the run had its worker process
    assert two_code == one_code == code
    timing = {"devices", "started", "duration_seconds"}  # drift's report says when it ran, and for how long
    assert {k: v for k, v in two.items() if k not in timing} == {k: v for k, v in one.items() if k not in timing}
    assert _comparable(two) == _comparable(one)  # the same devices, in the same order, each as reported in one
    assert len({d["device"] for d in two["devices"]}) == len(lab.devices)


def _hold_every_read(lab: Lab) -> None:
    """Each device's first read waits until its fault is cleared: every device the run starts stays in flight."""
    for name in lab.devices:
        lab.fault(name, "hold", at="read")


def _clear(lab: Lab) -> None:
    for name in lab.devices:
        lab.fault(name, "clear")


def _in_flight(lab: Lab, count: int, within: float = 30) -> list[str]:
    """Wait until ``count`` devices hold a read; their names."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        held = [n for n, d in lab.devices.items() if d.sim.faults.fired]
        if len(held) >= count:
            return held
        time.sleep(0.05)
    pytest.fail(f"{count} devices never held a read (held: {held})")


def test_a_worker_killed_mid_diff_leaves_its_devices_failed_and_the_next_diff_runs(lab: Lab) -> None:
    _hold_every_read(lab)
    run = _start(lab, "diff", "--processes", "2")
    try:
        _in_flight(lab, len(lab.devices))  # every device started, in one process or the other
        (worker,) = _children(run.proc.pid)
        os.kill(worker, signal.SIGKILL)
        time.sleep(0.5)  # the parent sees its pipe close
    finally:
        _clear(lab)
    code, report = run.finish()

    assert code == 1
    devices = report["devices"]  # in job order, as every report
    assert sorted(d["device"] for d in devices) == sorted(lab.devices)
    # the worker had every other device of the job order (round-robin): each failed, saying why; never green
    for d in devices[1::2]:
        assert d["state"] == "failed", d
        assert f"worker process {worker} ended (killed by SIGKILL)" in d["message"], d
    assert {d["state"] for d in devices[0::2]} == {"changes"}
    assert report["summary"] == {"changes": len(devices[0::2]), "failed": len(devices[1::2])}

    # what the killed worker left (a staged EOS session, its lock file) does not block the next run
    again, after, _ = _run(lab, "diff", "--processes", "1")
    assert again == 2, after
    assert {d["state"] for d in after["devices"]} == {"changes"}


def test_ctrl_c_stops_new_devices_in_every_process(lab: Lab) -> None:
    _hold_every_read(lab)
    # one switch and one GPU host at a time in each process: four devices in flight, ten not started
    run = _start(lab, "diff", "--processes", "2", "--workers", "2", "--host-workers", "2")
    try:
        held = _in_flight(lab, 4)
        assert len(_children(run.proc.pid)) == 1
        os.killpg(run.proc.pid, signal.SIGINT)  # Ctrl-C on a terminal: fabconf and its worker get it
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not run.said("no new device starts"):
            time.sleep(0.05)
        time.sleep(0.5)  # the worker is told
    finally:
        _clear(lab)
    code, report = run.finish()

    assert code == 130
    devices = report["devices"]
    assert len(devices) == len(lab.devices)
    states = {d["device"]: d["state"] for d in devices}
    assert sorted(n for n, s in states.items() if s == "changes") == sorted(held)  # those in flight finished
    untouched = [d for d in devices if d["state"] == "untouched"]
    assert len(untouched) == len(devices) - 4
    assert all("interrupted" in d["message"] for d in untouched)
    # both processes stopped: devices of the worker's share (every other one) and of this process's are untouched
    worker_share = {d["device"] for d in devices[1::2]}
    assert worker_share & {d["device"] for d in untouched}
    assert {d["device"] for d in untouched} - worker_share
    assert run.said("no new device starts") == 1  # said once, by fabconf itself (its worker ignores SIGINT)
