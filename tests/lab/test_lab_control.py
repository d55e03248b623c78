"""The lab's control channel and liveness, tried as another local user could: a client holding the control port
open must not make fabconf think the lab died (it started a second daemon over the first, rewrote lab.env and
orphaned the first, which `lab down` could not stop); a network that is not loopback is refused before anything
binds; `lab down` stops a daemon whose channel does not answer at all."""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from pathlib import Path

import pytest
from labcli import fabconf
from pristine import EXAMPLE

from fabconf_lab import daemon

ROOT = Path(__file__).resolve().parents[2]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] == "Z"


def test_a_held_control_port_neither_kills_nor_doubles_the_lab(lab: tuple[Path, str]) -> None:
    state, network = lab
    pid = daemon.recorded_daemon(state)
    assert pid is not None
    env_before = (state / "lab.env").read_text()
    port = json.loads((state / "control.json").read_text())["port"]
    holders = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]  # connected, sending nothing
    try:
        started = time.monotonic()
        status = fabconf("lab", "status", "--state", str(state))
        assert status.returncode == 0 and "leaf3" in status.stdout, status.stderr
        args = ["diff", "-i", str(EXAMPLE), "--lab", "--state", str(state), "--network", network]
        diff = fabconf(*args, "--limit", "leaf1")
        assert diff.returncode == 2, diff.stderr  # changes pending, from the running lab
        assert time.monotonic() - started < 30
        assert daemon.recorded_daemon(state) == pid, "a second daemon was started over the first"
        assert (state / "lab.env").read_text() == env_before, "lab.env was rewritten"
        again = fabconf("lab", "up", "-i", str(EXAMPLE), "--state", str(state), "--network", network)
        assert again.returncode == 0, again.stderr  # already up is not a failure (it exited 1: issue #40)
        assert f"the lab of {state} is already up (pid {pid})" in again.stdout
        down = fabconf("lab", "down", "--state", str(state))  # while the port is still held
        assert down.returncode == 0 and "stopped" in down.stdout, down.stderr
    finally:
        for holder in holders:
            holder.close()
    deadline = time.monotonic() + 10
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(pid)


def test_lab_down_stops_a_daemon_whose_channel_never_answers(lab: tuple[Path, str]) -> None:
    """A stopped (SIGSTOP) daemon answers nothing, not even SIGTERM: `stop` kills its process group, its
    workers with it."""
    state, _ = lab
    pid = daemon.recorded_daemon(state)
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    assert daemon.is_running(state)  # alive by its recorded pid and start time, though the channel is silent
    assert not daemon.answers(state, timeout=1.0)
    daemon.stop(state, timeout=2.0)
    assert _gone(pid)
    assert not daemon.is_running(state)


@pytest.mark.parametrize(
    "network", ["192.0.2.0/28", "10.0.0.0/8", "0.0.0.0/0", "not-a-network", "127.83.7.1", "127.83.7.0/31"]
)
def test_a_lab_network_must_be_loopback(tmp_path: Path, network: str) -> None:
    state = tmp_path / "lab"
    up = fabconf("lab", "up", "-i", str(EXAMPLE), "--state", str(state), "--network", network)
    assert up.returncode == 1
    assert up.stderr.count("\n") == 1 and f"--network {network}" in up.stderr and "Traceback" not in up.stderr
    assert not state.exists(), "refused before anything was written or bound"
    diff = fabconf("diff", "-i", str(EXAMPLE), "--lab", "--state", str(state), "--network", network)
    assert diff.returncode == 1 and f"--network {network}" in diff.stderr
