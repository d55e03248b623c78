"""Shared by the end-to-end tests: a fresh brownfield lab of the example pod per test, and the CLI run
in process against the lab's own inventory with the lab's credentials."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import napalm
import paramiko
import pytest
from network import free_network
from pristine import EXAMPLE
from prometheus_client.parser import text_string_to_metric_families

from fabconf.cli import main
from fabconf.compile.pipeline import compile_inventory
from fabconf_lab.orchestrator import Lab

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "Lab-Pw-7f3k9Q"


def lab_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inventory: Path = EXAMPLE) -> Iterator[Lab]:
    the_lab = Lab(
        compile_inventory(inventory),
        inventory,
        tmp_path / "lab",
        network=free_network(),
        password=PASSWORD,
    )
    the_lab.start()
    for key, value in the_lab.env().items():  # credentials, CA file and known_hosts, as lab.env has them
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    monkeypatch.setenv("FABCONF_LOCK_DIR", str(tmp_path / "locks"))
    try:
        yield the_lab
    finally:
        the_lab.stop()


def inv(lab: Lab) -> str:
    return str(lab.state_dir / "inventory")


def fab(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out = capsys.readouterr()
    text = out.out + out.err
    assert PASSWORD not in text
    return code, text


def sim(lab: Lab, name: str):
    return lab.devices[name].sim


def running(lab: Lab, name: str) -> str:
    """The device's configuration as text, whatever its platform (the simulator contract)."""
    return sim(lab, name).running_config()


def scrape(lab: Lab, name: str) -> tuple[int, str]:
    """One scrape of a switch's snmp_exporter endpoint: (HTTP status, body)."""
    dev = lab.devices[name]
    url = f"http://{dev.address}:{dev.service_ports.metrics}/snmp?target={dev.address}&module=if_mib"
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def scrape_gnmic(lab: Lab, name: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """One scrape of the gnmic output a lab switch serves for itself (``/gnmic``): {(metric, labels): value}."""
    dev = lab.devices[name]
    with urllib.request.urlopen(f"http://{dev.address}:{dev.service_ports.metrics}/gnmic", timeout=10) as reply:
        assert reply.status == 200
        text = reply.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def ssh_change(lab: Lab, name: str, *commands: str) -> None:
    """An out-of-band change, as an operator makes one: each command over the device's SSH, which must succeed."""
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect(
        lab.devices[name].address,
        lab.devices[name].service_ports.ssh,
        lab.username,
        PASSWORD,
        look_for_keys=False,
        allow_agent=False,
        timeout=10,
    )
    try:
        for command in commands:
            _stdin, stdout, stderr = client.exec_command(command, timeout=10)
            status = stdout.channel.recv_exit_status()
            assert status == 0, (name, command, stdout.read().decode(), stderr.read().decode())
    finally:
        client.close()


def napalm_merge(lab: Lab, name: str, platform: str, config: str) -> None:
    """An out-of-band change through unmodified NAPALM over the device's HTTPS API: merge ``config``, commit."""
    args = {"transport": "https", "port": lab.devices[name].service_ports.https}
    driver = napalm.get_network_driver(platform)(lab.devices[name].address, lab.username, PASSWORD, optional_args=args)
    driver.open()
    try:
        driver.load_merge_candidate(config=config)
        driver.commit_config()
    finally:
        driver.close()


def push_all(lab: Lab, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    # one wave per role (spines, leaves, hosts): each role verifies its BGP sessions to the ones before it
    return fab(
        capsys,
        "push",
        "-i",
        inv(lab),
        "--yes",
        "--bgp-wait",
        "10",
        "--canary",
        "0",
        "--batch",
        "100%",
        "--format",
        "json",
    )


def open_connections(lab: Lab) -> list[str]:
    """This process's TCP connections to a lab device's service port that are still open (ESTABLISHED): a driver
    that does not close what it opened leaves one per device and run."""
    import os

    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    services = {(d.address, port): d.name for d in lab.devices.values() for port in d.ports}  # the lab's own ports
    found = []
    for line in Path("/proc/self/net/tcp").read_text().splitlines()[1:]:
        cols = line.split()
        addr, hexport = cols[2].split(":")
        ip, port = ".".join(str(int(addr[i : i + 2], 16)) for i in (6, 4, 2, 0)), int(hexport, 16)
        if cols[9] in inodes and cols[3] == "01" and (ip, port) in services:
            found.append(f"{services[ip, port]}:{port}")
    return sorted(found)
