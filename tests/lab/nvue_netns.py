"""Run a real FRR for simulated Cumulus switches: one network namespace per switch, veth per cable.

The routing state then comes from real ``zebra``/``bgpd`` (8.4, Debian ``frr``) fed with
``nvue_frr.frr_conf`` of each switch's APPLIED tree (docs/reference/roce-lossless.md §12: FRR per namespace without
systemd, ``-N NS`` path spaces, ``vtysh -N NS -f frr.conf`` to load, eBGP unnumbered over veth).

Needs root, ``ip`` (iproute2) and ``/usr/lib/frr``; ``available()`` says whether this machine has them.
Everything created is named with the given prefix and removed by ``stop()``: namespaces, the FRR
daemons this object started (killed by their pid files, never by name) and their run directories.
Namespace links carry only link-local IPv6 and the switches' own addresses, inside the namespaces.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from nvue_frr import frr_conf, ip_commands

from fabconf_lab.nvue.tree import Tree

FRR_DIR = Path("/usr/lib/frr")
RUN_DIR = Path("/var/run/frr")
DAEMONS = ("zebra", "bgpd")


def available() -> bool:
    return (
        os.geteuid() == 0
        and shutil.which("ip") is not None
        and shutil.which("vtysh") is not None
        and all((FRR_DIR / d).exists() for d in DAEMONS)
    )


def _run(argv: list[str], check: bool = True, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, check=check, capture_output=True, text=True, timeout=timeout)


def _device(argv: list[str]) -> str:
    return argv[argv.index("dev") + 1]


class FrrFabric:
    """Namespaces + veths + FRR for a set of switches. ``add`` switches, ``cable`` them, ``start``."""

    def __init__(self, prefix: str, workdir: Path) -> None:
        if len(prefix) > 11:
            raise ValueError("prefix must be at most 11 characters (veth names are limited to 15)")
        self.prefix = prefix
        self.workdir = Path(workdir)
        self.switches: dict[str, tuple[Tree, list[str]]] = {}
        self.cables: list[tuple[str, str, str, str]] = []
        self._started: list[str] = []

    def ns(self, switch: str) -> str:
        return f"{self.prefix}-{switch}"

    def add(self, switch: str, applied: Tree, ports: list[str]) -> None:
        self.switches[switch] = (applied, list(ports))

    def cable(self, a: str, port_a: str, b: str, port_b: str) -> None:
        self.cables.append((a, port_a, b, port_b))

    # -- lifecycle ------------------------------------------------------------------------------------
    def start(self) -> None:
        for switch in self.switches:
            _run(["ip", "netns", "add", self.ns(switch)])
            self._started.append(switch)
            self._exec(switch, ["ip", "link", "set", "dev", "lo", "up"])
        for i, (a, pa, b, pb) in enumerate(self.cables):
            tmp_a, tmp_b = f"{self.prefix[:11]}{i}a", f"{self.prefix[:11]}{i}b"  # <= 15 chars (IFNAMSIZ)
            _run(["ip", "link", "add", tmp_a, "type", "veth", "peer", "name", tmp_b])
            _run(["ip", "link", "set", tmp_a, "netns", self.ns(a)])
            _run(["ip", "link", "set", tmp_b, "netns", self.ns(b)])
            self._exec(a, ["ip", "link", "set", "dev", tmp_a, "name", pa])
            self._exec(b, ["ip", "link", "set", "dev", tmp_b, "name", pb])
        for switch, (applied, ports) in self.switches.items():
            cabled = {p for a, pa, b, pb in self.cables for s, p in ((a, pa), (b, pb)) if s == switch}
            for argv in ip_commands(applied, ports):
                if _device(argv) in cabled or _device(argv) == "lo":
                    self._exec(switch, argv)
            self._start_frr(switch, applied)

    def _exec(self, switch: str, argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        return _run(["ip", "netns", "exec", self.ns(switch), *argv], check=check)

    def _start_frr(self, switch: str, applied: Tree) -> None:
        ns = self.ns(switch)
        rundir = RUN_DIR / ns
        rundir.mkdir(parents=True, exist_ok=True)
        shutil.chown(rundir, "frr", "frr")
        for daemon in DAEMONS:
            args = [str(FRR_DIR / daemon), "-d", "-N", ns, "-P", "0", "-F", "datacenter"]
            self._exec(switch, args)
        conf = self.workdir / f"{ns}.frr.conf"
        conf.write_text(frr_conf(applied))
        deadline = time.time() + 10
        while True:
            result = _run(["vtysh", "-N", ns, "-f", str(conf)], check=False)
            if result.returncode == 0 or time.time() > deadline:
                break
            time.sleep(0.2)
        if result.returncode != 0:
            raise RuntimeError(f"vtysh -f failed for {switch}: {result.stdout}{result.stderr}")

    def reload(self, switch: str, applied: Tree) -> None:
        """Feed a changed applied tree: interface state by ``ip``, routing by ``frr-reload.py`` if present."""
        self.switches[switch] = (applied, self.switches[switch][1])
        ports = self.switches[switch][1]
        cabled = {p for a, pa, b, pb in self.cables for s, p in ((a, pa), (b, pb)) if s == switch}
        for argv in ip_commands(applied, ports):
            if _device(argv) in cabled or _device(argv) == "lo":
                self._exec(switch, argv, check=False)
        conf = self.workdir / f"{self.ns(switch)}.frr.conf"
        conf.write_text(frr_conf(applied))
        _run(["vtysh", "-N", self.ns(switch), "-f", str(conf)], check=False)

    def stop(self) -> None:
        for switch in reversed(self._started):
            ns = self.ns(switch)
            rundir = RUN_DIR / ns
            for daemon in DAEMONS:
                pidfile = rundir / f"{daemon}.pid"
                with contextlib.suppress(OSError, ValueError):
                    os.kill(int(pidfile.read_text().strip()), signal.SIGTERM)
            _run(["ip", "netns", "del", ns], check=False)
            with contextlib.suppress(OSError):
                shutil.rmtree(rundir)
        self._started.clear()

    # -- questions ---------------------------------------------------------------------------------------
    def vtysh_json(self, switch: str, command: str) -> Any:
        result = _run(["vtysh", "-N", self.ns(switch), "-c", command], check=False)
        try:
            return json.loads(result.stdout or "{}")
        except json.JSONDecodeError:
            return {}

    def bgp_states(self, switch: str) -> dict[str, str]:
        summary = self.vtysh_json(switch, "show bgp summary json")
        peers = (summary.get("ipv4Unicast") or {}).get("peers") or {}
        return {peer: info.get("state", "") for peer, info in peers.items()}

    def route_paths(self, switch: str, prefix: str) -> int:
        """Number of kernel next hops for ``prefix`` inside the switch's namespace."""
        result = self._exec(switch, ["ip", "-j", "route", "show", prefix], check=False)
        try:
            routes = json.loads(result.stdout or "[]")
        except json.JSONDecodeError:
            return 0
        if not routes:
            return 0
        return len(routes[0].get("nexthops") or []) or 1
