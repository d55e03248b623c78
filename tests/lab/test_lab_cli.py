"""What the lab's commands say (issue #40). A lab notices that the code it runs was replaced under it: after a
reinstall (`pip install -e '.[docs]'`, as the docs said to do next) its simulators failed with an ImportError only
lab.log showed, and `preflight --bandwidth` spent 8 minutes on 16 timeouts; the command that starts a lab records a
fingerprint of the installed code, and every later command that uses the lab compares and says what to do. A GPU
host's hardware fault is listed once set (`lab fault gpu02 mtu …` replied "faults: none")."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from labcli import fabconf
from network import free_network
from pristine import EXAMPLE

ROOT = Path(__file__).resolve().parents[2]


def test_a_lab_whose_code_was_replaced_says_so_on_the_next_command(lab: tuple[Path, str]) -> None:
    state, network = lab
    record = state / "code.json"
    assert oct(record.stat().st_mode & 0o777) == oct(0o600)
    assert fabconf("lab", "status", "--state", str(state)).returncode == 0  # the same code: no complaint
    where = ["-i", str(EXAMPLE), "--lab", "--state", str(state), "--network", network]
    diff = fabconf("diff", *where, "--limit", "leaf1")
    assert diff.returncode in (0, 2), diff.stderr
    # the installation changes under the running lab (what a reinstall does to the modules it recorded)
    recorded = json.loads(record.read_text())
    record.write_text(json.dumps(recorded | {"fingerprint": "0" * 64}))
    for args in (["lab", "status", "--state", str(state)], ["diff", *where, "--limit", "leaf1"]):
        done = fabconf(*args)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert f"the lab of {state} runs code that changed after it started" in done.stderr, done.stderr
        assert f"fabconf lab down --state {state}" in done.stderr and "Traceback" not in done.stderr
    down = fabconf("lab", "down", "--state", str(state))  # stopping it is always allowed
    assert down.returncode == 0 and "stopped" in down.stdout, down.stderr


def test_the_fingerprint_follows_a_reinstall_and_an_edit(tmp_path: Path) -> None:
    """Over a copy of the two packages (as a reinstall would write them): an edited module, and the same code
    installed elsewhere, each change the fingerprint; nothing else does."""
    site = tmp_path / "site"
    for package in ("fabconf", "fabconf_lab"):
        shutil.copytree(ROOT / package, site / package, ignore=shutil.ignore_patterns("__pycache__"))
    show = (
        "import sys; sys.path.insert(0, sys.argv[1]); from fabconf.cli import lab, labcode; "
        "print(labcode.fingerprint(lab.LAB_PACKAGE))"
    )

    def fingerprint(where: Path) -> str:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        return subprocess.run(
            [sys.executable, "-c", show, str(where)], capture_output=True, text=True, env=env, check=True
        ).stdout.strip()

    first = fingerprint(site)
    assert fingerprint(site) == first
    module = site / "fabconf_lab" / "daemon.py"
    module.write_text(module.read_text() + "\n# a reinstall\n")
    edited = fingerprint(site)
    assert edited != first
    shutil.copytree(site, tmp_path / "elsewhere", copy_function=shutil.copy2)
    assert fingerprint(tmp_path / "elsewhere") != edited  # the same files installed in another place


def test_a_host_hardware_fault_is_listed_once_set(lab: tuple[Path, str]) -> None:
    state, _ = lab
    done = fabconf("lab", "fault", "gpu02", "mtu", "ens1f0np0:1024", "--state", str(state))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "gpu02: faults: mtu ens1f0np0:1024"
    again = fabconf("lab", "fault", "gpu02", "mtu", "ens1f0np0:2048", "--state", str(state))  # replaces, per NIC
    assert again.stdout.strip() == "gpu02: faults: mtu ens1f0np0:2048", again.stderr
    status = fabconf("lab", "status", "--state", str(state)).stdout
    assert "mtu ens1f0np0:2048" in next(line for line in status.splitlines() if "gpu02" in line), status


def test_the_lab_keeps_its_network_across_down_and_up(tmp_path: Path) -> None:
    """`lab up --network X`, `lab down`, then `lab up` without --network started on the default network, so every
    device moved (issue #40); it now starts where it last ran (--network and FABCONF_LAB_NETWORK still win)."""
    state, network = tmp_path / "lab", free_network()
    prefix = network.split("/")[0].rsplit(".", 2)[0] + "."  # 127.N.
    env = {k: v for k, v in os.environ.items() if k != "FABCONF_LAB_NETWORK"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "fabconf", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=240
        )

    try:
        assert run("lab", "up", "-i", str(EXAMPLE), "--state", str(state), "--network", network).returncode == 0
        assert run("lab", "down", "--state", str(state)).returncode == 0
        again = run("lab", "up", "-i", str(EXAMPLE), "--state", str(state))
        assert again.returncode == 0, again.stderr
        hosts = (state / "inventory" / "hosts.yaml").read_text()
        assert f"hostname: {prefix}" in hosts and "hostname: 127.77." not in hosts, hosts[:400]
    finally:
        run("lab", "down", "--state", str(state))
