"""The README's first command as an ordinary user runs it: ``fabconf diff --lab`` starts the lab without root and
diffs every device; the lab's ports are written into STATE/inventory and known_hosts names them as OpenSSH does.
Run as root, the commands run as ``nobody`` (setpriv, which drops every capability with the uid); a machine where
that user cannot run this interpreter skips, saying so. The shared-address layout (127.0.0.1, a block of ports per
device: where per-device loopback addresses do not exist) is forced with FABCONF_LAB_PORTS and pushes NX-OS, whose
SCP must reach the device's own SSH port."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from labkit import ROOT
from network import base_port, free_network
from pristine import EXAMPLE

NOBODY = 65534
LAB_ENV = ("FABCONF_LAB_PORTS", "FABCONF_LAB_BASE_PORT", "FABCONF_LAB_NETWORK")


def _unprivileged_start() -> int:
    """The lowest port an unprivileged process may bind ([V] Linux ip(7): net.ipv4.ip_unprivileged_port_start)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_unprivileged_port_start").read_text())
    except (OSError, ValueError):
        return 1024


def _as_user() -> list[str]:
    """The command prefix that runs a command unprivileged: none when this process is not root."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv (util-linux) is missing: cannot drop privileges")
    prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all"]
    prefix += ["--bounding-set=-all"]
    nested = "import subprocess, sys; sys.exit(subprocess.call([sys.executable, '-c', 'import fabconf_lab.daemon']))"
    probe = subprocess.run([*prefix, sys.executable, "-c", nested], capture_output=True, text=True, cwd="/")
    if probe.returncode != 0:
        pytest.skip(
            f"running as root, and uid {NOBODY} cannot run {sys.executable} with this checkout "
            f"(an interpreter or checkout under a private home): {probe.stderr.strip()[-200:]}"
        )
    return prefix


@pytest.fixture
def workdir() -> Iterator[Path]:
    """A directory the unprivileged user owns (pytest's own tmp_path is private to the user running pytest)."""
    where = Path(tempfile.mkdtemp(prefix="fabconf-unpriv-"))
    where.chmod(0o755)
    if os.geteuid() == 0:
        os.chown(where, NOBODY, NOBODY)
    try:
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _run(prefix: list[str], home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in LAB_ENV and not k.startswith("FABCONF_")}
    clean |= {"HOME": str(home), **(env or {})}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "fabconf", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=clean,
        timeout=300,
        check=False,
    )


def _lab_hosts(state: Path) -> dict:
    return yaml.safe_load((state / "inventory" / "hosts.yaml").read_text())


def _all_ports(entry: dict) -> set[int]:
    ports = {int(entry["port"])}
    for section in entry["connection_options"].values():
        ports.add(int(section["port"]))
        extras = section.get("extras") or {}
        if extras.get("ssh_port"):
            ports.add(int(extras["ssh_port"]))
        if (extras.get("optional_args") or {}).get("port"):
            ports.add(int(extras["optional_args"]["port"]))
    return ports


def test_diff_lab_as_an_ordinary_user(workdir: Path) -> None:
    prefix = _as_user()
    state = workdir / "state"
    network = free_network()
    try:
        diff = _run(prefix, workdir, "diff", "-i", str(EXAMPLE), "--lab", "--state", str(state), "--network", network)
        assert diff.returncode in (0, 2), diff.stdout[-2000:] + diff.stderr[-4000:]  # 2: the brownfield differs
        assert "Traceback" not in diff.stderr
        hosts = _lab_hosts(state)
        assert len(hosts) == 14
        privileged = _unprivileged_start() > 22  # as on every Linux by default: the lab takes high ports
        for name, entry in hosts.items():
            assert entry["hostname"].startswith(network.split(".0.0/")[0] + "."), name
            assert not privileged or min(_all_ports(entry)) >= 1024, (name, entry)
        known = (state / "known_hosts").read_text().splitlines()
        assert len(known) >= 10  # the hosts', NX-OS's and Cumulus's SSH (EOS: none in the lab)
        if privileged:
            assert all(line.startswith("[127.") and "]:10022 " in line for line in known), known[:3]
            listed = _run(prefix, workdir, "lab", "status", "--state", str(state))
            assert listed.returncode == 0 and "10022" in listed.stdout and "10443" in listed.stdout, listed.stdout
    finally:
        _run(prefix, workdir, "lab", "down", "--state", str(state))


def test_shared_address_layout_diffs_and_pushes_nxos_over_its_own_ssh_port(tmp_path: Path) -> None:
    network = free_network()
    state = tmp_path / "state"
    env = {"FABCONF_LAB_PORTS": "shared", "FABCONF_LAB_BASE_PORT": str(base_port(network))}
    where = ["-i", str(EXAMPLE), "--lab", "--state", str(state), "--network", network]
    try:
        diff = _run([], tmp_path, "diff", *where, "--format", "json", env=env)
        assert diff.returncode == 2, diff.stderr[-4000:]
        assert {d["state"] for d in json.loads(diff.stdout)["devices"]} == {"changes"}
        hosts = _lab_hosts(state)
        assert {e["hostname"] for e in hosts.values()} == {"127.0.0.1"}
        every = [p for e in hosts.values() for p in _all_ports(e)]
        assert len(every) == len(set(every)), "two devices share a port"
        leaf4 = hosts["leaf4"]["connection_options"]["napalm"]
        assert leaf4["extras"]["ssh_port"] not in (22, leaf4["port"])
        # NX-OS's push uploads its candidate by SCP (configure replace ... commit-timeout): to the lab's SSH port
        push = _run([], tmp_path, "push", *where, "--limit", "leaf4", "--yes", "--bgp-wait", "0", env=env)
        assert push.returncode in (0, 1), push.stdout[-3000:] + push.stderr[-3000:]
        again = _run([], tmp_path, "diff", *where, "--limit", "leaf4", "--format", "json", env=env)
        assert json.loads(again.stdout)["devices"][0]["state"] == "unchanged", again.stdout[-2000:]
        # its exporters share an address too: monitoring --lab says what it needs instead of wrong targets
        out = tmp_path / "monitoring"
        mon = _run([], tmp_path, "monitoring", "-i", str(EXAMPLE), "-o", str(out), "--lab", "--state", str(state))
        assert mon.returncode == 1 and "FABCONF_LAB_PORTS=high" in mon.stderr and "Traceback" not in mon.stderr
    finally:
        _run([], tmp_path, "lab", "down", "--state", str(state))
