"""The lab spread over worker processes (`fabconf lab up --workers N`): devices of one BGP session run in different
processes, yet push, verify, LLDP, faults, status and down work as in one process."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import labcli
import pytest
from network import free_network
from pristine import EXAMPLE

from fabconf_lab import daemon
from fabconf_lab.shards import DEVICES_PER_WORKER, SWITCHES_PER_WORKER, default_workers, shares


def fabconf(state: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if (state / "lab.env").exists():
        env |= dict(line.split("=", 1) for line in (state / "lab.env").read_text().splitlines())
    proc = labcli.fabconf(*args, env=env)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    state = tmp_path_factory.mktemp("shards")
    up = fabconf(
        state, "lab", "up", "-i", str(EXAMPLE), "--state", str(state), "--network", free_network(), "--workers", "4"
    )
    assert "leaf3" in up.stdout
    yield state
    fabconf(state, "lab", "down", "--state", str(state), check=False)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_workers_are_sized_to_the_machine() -> None:
    assert default_workers(14) == 1  # a small lab stays in one process
    assert default_workers(100_000) == (os.cpu_count() or 1)
    assert default_workers(DEVICES_PER_WORKER + 1) == min(2, os.cpu_count() or 1)


def test_switches_and_gpu_hosts_run_in_different_workers() -> None:
    names = [f"gpu{i:02}" for i in range(1, 9)] + ["leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2"]
    hosts = {n for n in names if n.startswith("gpu")}
    assert shares(names, hosts, 1) == [names]
    two = shares(names, hosts, 2)
    assert two == [["leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2"], sorted(hosts)]
    four = shares(names, hosts, 4)  # switches take their share by count (6 of 14 -> 2 of 4), dealt out in turn
    assert four[:2] == [["leaf1", "leaf3", "spine1"], ["leaf2", "leaf4", "spine2"]]
    assert sorted(n for share in four[2:] for n in share) == sorted(hosts) and len(four[2]) == len(four[3]) == 4
    assert shares(names[:8], hosts, 3) == [names[0:8:3], names[1:8:3], names[2:8:3]]  # one kind: dealt out
    assert sorted(n for share in shares(names, hosts, 40) for n in share) == sorted(
        names
    )  # never more workers than devices


def test_the_switches_of_a_large_lab_run_in_several_workers() -> None:
    """The 32,768-GPU fabric's 1,536 switches ran in one worker (one GIL, one core) by default on two cores, and a
    full-size verify's spine304 went unanswered for 60 s (issue 42): a worker per ``SWITCHES_PER_WORKER`` switches,
    past the cores if need be, and the GPU hosts still in workers of their own."""
    switches = [f"leaf{i:04}" for i in range(1024)] + [f"spine{i:03}" for i in range(512)]
    hosts = {f"gpu{i:04}" for i in range(4096)}
    names = sorted([*switches, *hosts])
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: the lab stays in one process")
    workers = default_workers(len(names), len(switches))
    assert workers >= -(-1536 // SWITCHES_PER_WORKER) + 1
    split = shares(names, hosts, workers)
    for_switches = [s for s in split if not hosts & set(s)]
    assert len(for_switches) == -(-1536 // SWITCHES_PER_WORKER) and max(map(len, for_switches)) <= SWITCHES_PER_WORKER
    assert sorted(n for s in split if hosts & set(s) for n in s) == sorted(hosts)  # hosts apart from switches
    assert sorted(n for s in split for n in s) == names
    assert len(shares(names, hosts, 2)) == 2  # --workers 2 is still one worker of each kind
    assert default_workers(704, 192) == min(2, os.cpu_count() or 1)  # a worker of 192 switches: as before


def test_a_sharded_lab_pushes_and_verifies_across_processes(sharded: Path) -> None:
    status = daemon.request(sharded, {"cmd": "status"})
    assert len(status["devices"]) == 14
    pids = status["pids"]
    assert len(set(pids)) == 5 and all(_alive(p) for p in pids)  # the coordinator and four workers
    inv = str(sharded / "inventory")
    push = fabconf(sharded, "push", "-i", inv, "--yes", "--canary", "0", "--batch", "100%", "--bgp-wait", "30")
    assert "14 applied" in push.stdout, push.stdout
    # leaf2 runs in another worker than spine1, and every GPU host in another than its leaves: their BGP sessions
    # and LLDP still come up
    verify = fabconf(sharded, "verify", "-i", inv, "--bgp-wait", "30", "--format", "json")
    states = {d["device"]: d["state"] for d in json.loads(verify.stdout)["devices"]}
    assert set(states.values()) == {"verified"}, states


def test_faults_reach_the_worker_that_runs_the_device(sharded: Path) -> None:
    inv = str(sharded / "inventory")
    out = fabconf(sharded, "lab", "fault", "--state", str(sharded), "spine2", "auth-refuse").stdout
    assert "spine2: faults: auth-refuse" in out
    assert "auth-refuse" in fabconf(sharded, "lab", "status", "--state", str(sharded)).stdout
    diff = fabconf(sharded, "diff", "-i", inv, "--limit", "spine2", "--format", "json", check=False)
    (device,) = json.loads(diff.stdout)["devices"]
    assert device["state"] == "unreachable" and "auth" in device["message"].lower()
    fabconf(sharded, "lab", "fault", "--state", str(sharded), "spine2", "clear")
    bad = fabconf(sharded, "lab", "fault", "--state", str(sharded), "spine9", "hang", check=False)
    assert bad.returncode == 1 and "no lab device 'spine9'" in bad.stderr


def test_down_stops_every_worker(tmp_path: Path) -> None:
    state = tmp_path / "lab"
    fabconf(
        state, "lab", "up", "-i", str(EXAMPLE), "--state", str(state), "--network", free_network(), "--workers", "3"
    )
    pids = daemon.request(state, {"cmd": "status"})["pids"]
    assert len(set(pids)) == 4
    fabconf(state, "lab", "down", "--state", str(state))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)
