"""A lab spread over two worker processes (switches in one, GPU hosts in the other) replicates each device's view to
the other worker when it changes, whatever changed it: a request, even one that takes longer than the publisher's
round (``PUBLISH_EVERY``); a commit timer running out after every request; a reboot. The publisher looks only at
the devices marked changed (``Faults.changed``), so each of these must mark its device (issue 42: the 2-s sweep of
every recently asked device was half the GPU-host worker's CPU at 704 devices)."""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import labcli
import paramiko
import pytest
import yaml
from network import free_network
from pristine import EXAMPLE

from fabconf_lab import daemon

WAIT = 20.0  # seconds a change may take to reach the other worker on a busy machine (0.1 s when idle)


def _env(state: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in (state / "lab.env").read_text().splitlines())


def _host(state: Path, name: str) -> dict[str, Any]:
    hosts: dict[str, Any] = yaml.safe_load((state / "inventory" / "hosts.yaml").read_text())
    return dict(hosts[name])


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    state = tmp_path_factory.mktemp("publish")
    up = labcli.fabconf(
        "lab", "up", "-i", str(EXAMPLE), "--state", str(state), "--network", free_network(), "--workers", "2"
    )
    assert up.returncode == 0, up.stdout + up.stderr
    try:
        yield state
    finally:
        labcli.fabconf("lab", "down", "--state", str(state))


def eapi(state: Path, name: str, cmds: list[str]) -> list[Any]:
    """``runCmds`` on a lab EOS switch, as pyeapi sends it."""
    host, env = _host(state, name), _env(state)
    ctx = ssl.create_default_context(cafile=env["FABCONF_CA_FILE"])
    port = int(host.get("port") or 443)
    conn = http.client.HTTPSConnection(host["hostname"], port, context=ctx, timeout=30)
    auth = base64.b64encode(f"{env['FABCONF_USERNAME']}:{env['FABCONF_PASSWORD']}".encode()).decode()
    body = {"jsonrpc": "2.0", "method": "runCmds", "params": {"version": 1, "cmds": cmds}, "id": "1"}
    try:
        conn.request(
            "POST",
            "/command-api",
            json.dumps(body),
            {"Authorization": f"Basic {auth}", "Content-Type": "application/json"},
        )
        reply = json.loads(conn.getresponse().read())
    finally:
        conn.close()
    assert "error" not in reply, reply
    result: list[Any] = reply["result"]
    return result


def ssh(state: Path, name: str, command: str) -> tuple[str, int]:
    """One exec request on a lab GPU host (a reboot closes the connection: status -1)."""
    host, env = _host(state, name), _env(state)
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect(
        host["hostname"],
        int(host.get("port") or 22),
        env["FABCONF_USERNAME"],
        env["FABCONF_PASSWORD"],
        look_for_keys=False,
        allow_agent=False,
        timeout=30,
    )
    try:
        _, out, _ = client.exec_command(command, timeout=60)
        text = out.read().decode()
        return text, out.channel.recv_exit_status()
    finally:
        client.close()


def fault(state: Path, name: str, kind: str, arg: str | None = None) -> None:
    daemon.request(state, {"cmd": "fault", "device": name, "kind": kind, **({"arg": arg} if arg else {})})


def eventually(probe: Callable[[], Any], want: Any) -> None:
    deadline, got = time.monotonic() + WAIT, None
    while time.monotonic() < deadline:
        got = probe()
        if got == want:
            return
        time.sleep(0.2)
    raise AssertionError(f"after {WAIT:g} s the other worker still sees {got!r}, not {want!r}")


def leaf3_sees(state: Path) -> Callable[[], str | None]:
    """The name leaf3 (the switches' worker) shows on its Ethernet1/1, cabled to gpu05 (the GPU hosts' worker)."""

    def probe() -> str | None:
        (lldp,) = eapi(state, "leaf3", ["show lldp neighbors"])
        for row in lldp["lldpNeighbors"]:
            if row["port"] == "Ethernet1/1":
                return str(row["neighborDevice"])
        return None

    return probe


def gpu05_sees(state: Path) -> Callable[[], str | None]:
    """The name gpu05's lldpd (the GPU hosts' worker) shows on ens1f0np0, cabled to leaf3 (the switches' worker)."""

    def probe() -> str | None:
        out, status = ssh(state, "gpu05", "lldpctl -f json ens1f0np0")
        assert status == 0, out
        for entry in json.loads(out)["lldp"]["interface"]:
            for port, seen in entry.items():
                if port == "ens1f0np0":
                    return str(next(iter(seen["chassis"])))
        return None

    return probe


def test_the_two_workers_run_switches_and_hosts_apart(two: Path) -> None:
    status = daemon.request(two, {"cmd": "status"})
    assert len(set(status["pids"])) == 3  # the coordinator and two workers
    eventually(leaf3_sees(two), "gpu05")
    eventually(gpu05_sees(two), "leaf3")


def test_a_request_longer_than_a_round_reaches_the_other_worker(two: Path) -> None:
    """The change comes at the END of a request that takes a second (a ``delay`` fault is served first): a
    publisher that looked at the device only when its request started never sent it."""
    fault(two, "gpu05", "delay", "1.5")
    try:
        out, status = ssh(two, "gpu05", "sudo hostname gpu05-slow")
        assert status == 0, out
        eventually(leaf3_sees(two), "gpu05-slow")
    finally:
        fault(two, "gpu05", "clear")


def test_a_hosts_reboot_reaches_the_other_worker(two: Path) -> None:
    """A reboot forgets a name set by ``hostname`` (not in /etc/hostname): the view changes inside a request that
    ends by dropping the connection, a second after it started."""
    out, status = ssh(two, "gpu05", "sudo hostname gpu05-transient")
    assert status == 0, out
    eventually(leaf3_sees(two), "gpu05-transient")
    fault(two, "gpu05", "delay", "1.5")
    try:
        ssh(two, "gpu05", "sudo reboot")
        eventually(leaf3_sees(two), "gpu05")  # before the fault's clear, itself a reason to look at gpu05 again
    finally:
        fault(two, "gpu05", "clear")


def test_a_commit_timer_running_out_reaches_the_other_worker(two: Path) -> None:
    """EOS's ``commit timer`` restores the previous running config seconds after every request ended: only the timer
    itself can tell the publisher."""
    eapi(two, "leaf3", ["enable", "configure session t1", "hostname leaf3-timed", "commit timer 00:00:04"])
    eventually(gpu05_sees(two), "leaf3-timed")
    time.sleep(4)
    eventually(gpu05_sees(two), "leaf3")
