"""The whole lab: `fabconf lab up|status|fault|down` in the background, its STATE/inventory and lab.env
used by plain clients (unmodified NAPALM, an HTTPS client, paramiko), and fifty devices at once."""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import subprocess
import sys
import time
from base64 import b64encode
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import napalm
import paramiko
import pytest
import yaml
from network import free_network
from pristine import EXAMPLE

from fabconf.compile.pipeline import compile_inventory
from fabconf_lab.orchestrator import Lab

ROOT = Path(__file__).resolve().parents[2]
NETWORK = free_network()  # this module's lab, one per test process
PREFIX = NETWORK.rsplit(".", 2)[0] + "."  # "127.X."


def fabconf(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "fabconf", *args], capture_output=True, text=True, cwd=ROOT, timeout=240, check=False
    )
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@pytest.fixture(scope="module")
def lab_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    state = tmp_path_factory.mktemp("lab")
    up = fabconf("lab", "up", "-i", str(EXAMPLE), "--state", str(state), "--network", NETWORK)
    assert "leaf3" in up.stdout
    yield state
    fabconf("lab", "down", "--state", str(state), check=False)


def _env(state: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in (state / "lab.env").read_text().splitlines())


def _hosts(state: Path) -> dict:
    return yaml.safe_load((state / "inventory" / "hosts.yaml").read_text())


def _napalm(state: Path, name: str) -> napalm.base.NetworkDriver:
    """Exactly what a plain NAPALM script would do with STATE/inventory and STATE/lab.env."""
    host = _hosts(state)[name]
    platform = {"leaf3": "eos", "spine1": "eos", "leaf4": "nxos", "spine2": "nxos"}[name]
    env = _env(state)
    args = host["connection_options"]["napalm"]["extras"]["optional_args"]
    driver = napalm.get_network_driver(platform)(
        host["hostname"], env["FABCONF_USERNAME"], env["FABCONF_PASSWORD"], optional_args=args
    )
    driver.open()
    return driver


def test_state_inventory_is_a_valid_fabconf_inventory(lab_state: Path) -> None:
    assert (lab_state / "lab.env").stat().st_mode & 0o777 == 0o600
    env = _env(lab_state)
    assert env["FABCONF_USERNAME"] and env["FABCONF_PASSWORD"]
    assert env["FABCONF_PASSWORD"] not in (lab_state / "inventory" / "hosts.yaml").read_text()
    out = fabconf("validate", "-i", str(lab_state / "inventory")).stdout
    assert "valid: 6 switches, 8 GPU hosts, 24 links" in out
    hosts = _hosts(lab_state)
    assert hosts["leaf1"]["hostname"].startswith(PREFIX)
    assert hosts["leaf1"]["groups"] == ["leaves", "sn5600"]


@pytest.mark.parametrize(
    ("name", "line", "section"),
    [
        ("leaf3", "vlan 999\n   name LABTEST\n", "vlan 999"),
        ("leaf4", "vlan 999\n  name LABTEST\n", "vlan 999"),
    ],
)
def test_plain_napalm_diff_commit_rollback(lab_state: Path, name: str, line: str, section: str) -> None:
    driver = _napalm(lab_state, name)
    try:
        assert driver.get_facts()["hostname"] == name
        before = driver.get_config(retrieve="running")["running"]
        assert section not in before
        driver.load_merge_candidate(config=line)
        diff = driver.compare_config()
        assert section in diff and "LABTEST" in diff
        driver.commit_config()
        assert section in driver.get_config(retrieve="running")["running"]
        driver.rollback()
        assert section not in driver.get_config(retrieve="running")["running"]
    finally:
        driver.close()


def test_nvue_revision_over_https(lab_state: Path) -> None:
    host = _hosts(lab_state)["leaf1"]
    env = _env(lab_state)
    ctx = ssl.create_default_context(cafile=env["FABCONF_CA_FILE"])
    ctx.check_hostname = False  # the certificate names the device and its IP; we dial the IP
    auth = {
        "Authorization": "Basic " + b64encode(f"{env['FABCONF_USERNAME']}:{env['FABCONF_PASSWORD']}".encode()).decode(),
        "Content-Type": "application/json",
    }

    def call(method: str, path: str, body: object = None) -> tuple[int, Any]:
        conn = http.client.HTTPSConnection(host["hostname"], 8765, context=ctx, timeout=10)
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=auth)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return resp.status, json.loads(data) if data else None

    status, rev = call("POST", "/nvue_v1/revision")
    assert status == 200
    rev_id = next(iter(rev))
    status, _ = call("PATCH", f"/nvue_v1/?rev={rev_id}", {"system": {"hostname": "leaf1-renamed"}})
    assert status == 200
    status, _ = call("PATCH", f"/nvue_v1/revision/{rev_id}", {"state": "apply", "auto-prompt": {"ays": "ays_yes"}})
    assert status == 200
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        _, info = call("GET", f"/nvue_v1/revision/{rev_id}")
        if info["state"].startswith("applied"):
            break
        time.sleep(0.1)
    _, system = call("GET", "/nvue_v1/system?rev=applied")
    assert system["hostname"] == "leaf1-renamed"


def test_gpu_host_tools_over_ssh(lab_state: Path) -> None:
    host = _hosts(lab_state)["gpu01"]
    env = _env(lab_state)
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect(
        host["hostname"],
        host["port"],  # the lab's SSH port: 22, or 10022 without the privilege to bind 22
        env["FABCONF_USERNAME"],
        env["FABCONF_PASSWORD"],
        look_for_keys=False,
        allow_agent=False,
    )
    try:

        def run(cmd: str) -> str:
            _, out, _ = client.exec_command(cmd)
            return out.read().decode()

        assert "Priority trust state: pcp" in run("mlnx_qos -i ens1f0np0")  # brownfield
        run("sudo mlnx_qos -i ens1f0np0 --trust dscp --pfc 0,0,0,1,0,0,0,0")
        shown = run("mlnx_qos -i ens1f0np0")
        assert "Priority trust state: dscp" in shown
        assert "\tenabled     0   0   0   1   0   0   0   0" in shown
    finally:
        client.close()


def test_faults_via_cli(lab_state: Path) -> None:
    host = _hosts(lab_state)["spine1"]
    out = fabconf("lab", "fault", "--state", str(lab_state), "spine1", "auth-refuse").stdout
    assert "auth-refuse" in out
    with pytest.raises(Exception, match="Unauthorized"):  # pyeapi's ConnectionError on HTTP 401
        _napalm(lab_state, "spine1")
    fabconf("lab", "fault", "--state", str(lab_state), "spine1", "clear")
    fabconf("lab", "fault", "--state", str(lab_state), "spine1", "delay", "1.5")
    started = time.monotonic()
    driver = _napalm(lab_state, "spine1")  # open() is one request
    assert time.monotonic() - started >= 1.5
    driver.close()
    assert "delay 1.5" in fabconf("lab", "status", "--state", str(lab_state)).stdout
    fabconf("lab", "fault", "--state", str(lab_state), "spine1", "clear")
    out = fabconf("lab", "fault", "--state", str(lab_state), "spine1", "drop", "--at", "commit", "--after", "2").stdout
    assert "drop --at commit --after 2" in out
    out = fabconf("lab", "fault", "--state", str(lab_state), "spine1", "delay", "2", "--at", "verify").stdout
    assert "drop --at commit --after 2, delay 2 --at verify" in out  # step faults add up
    fabconf("lab", "fault", "--state", str(lab_state), "spine1", "clear")
    bad = fabconf("lab", "fault", "--state", str(lab_state), "spine9", "hang", check=False)
    assert bad.returncode == 1 and "no lab device 'spine9'" in bad.stderr
    assert host["hostname"].startswith(PREFIX)


def test_lab_down_stops_every_device(tmp_path: Path) -> None:
    state = tmp_path / "lab"
    network = free_network()
    leaf = network.replace("0.0/16", "0.11")
    fabconf("lab", "up", "--state", str(state), "--network", network)
    port = next(h["port"] for h in _hosts(state).values() if h["hostname"] == leaf)  # 443, or 10443 unprivileged
    assert socket.create_connection((leaf, port), timeout=2)
    fabconf("lab", "down", "--state", str(state))
    deadline = time.monotonic() + 10  # `down` returns once the daemon is told; its sockets close right after
    while time.monotonic() < deadline:
        try:
            socket.create_connection((leaf, port), timeout=1).close()
        except OSError:
            break
        time.sleep(0.1)
    with pytest.raises(OSError):
        socket.create_connection((leaf, port), timeout=1)
    assert fabconf("lab", "status", "--state", str(state), check=False).returncode == 1


def test_fifty_devices_concurrently(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from genfabric import generate

    size = generate(tmp_path / "inv", hosts=40, rails=1)  # 32 spines, 2 leaves, 40 hosts
    lab = Lab(
        compile_inventory(tmp_path / "inv"),
        tmp_path / "inv",
        tmp_path / "state",
        network=free_network(),
        password="pw50",
    )
    lab.start()
    try:
        chosen = [d for d in lab.devices.values() if d.platform != "linux"][:25]
        chosen += [d for d in lab.devices.values() if d.platform == "linux"][:25]
        assert len(chosen) == 50 and size["spines"] == 32

        def touch(dev) -> str:
            if dev.platform == "linux":
                c = paramiko.SSHClient()
                c.set_missing_host_key_policy(paramiko.AutoAddPolicy())
                c.connect(dev.address, dev.service_ports.ssh, "fabconf", "pw50", look_for_keys=False, allow_agent=False)
                _, out, _ = c.exec_command("hostname")
                name = out.read().decode().strip()
                c.close()
                return name
            if dev.platform == "cumulus":
                ctx = ssl.create_default_context(cafile=str(lab.ca.ca_cert_path))
                ctx.check_hostname = False
                conn = http.client.HTTPSConnection(dev.address, dev.service_ports.https, context=ctx, timeout=20)
                conn.request(
                    "GET",
                    "/nvue_v1/system?rev=applied",
                    headers={"Authorization": "Basic " + b64encode(b"fabconf:pw50").decode()},
                )
                name = json.loads(conn.getresponse().read())["hostname"]
                conn.close()
                return name
            drv = napalm.get_network_driver(dev.platform)(
                dev.address, "fabconf", "pw50", optional_args={"transport": "https", "port": dev.service_ports.https}
            )
            drv.open()
            name = drv.get_facts()["hostname"]
            drv.close()
            return name

        with ThreadPoolExecutor(max_workers=50) as pool:
            names = list(pool.map(touch, chosen))
        assert names == [d.name for d in chosen]
    finally:
        lab.stop()


def test_lab_cli_edges(lab_state: Path, tmp_path: Path) -> None:
    # `lab down` when nothing runs is not an error
    idle = fabconf("lab", "down", "--state", str(tmp_path / "nothing-here"), check=False)
    assert idle.returncode == 0 and "no lab is running" in idle.stdout
    # a fault's argument is checked: a delay needs its seconds
    bad = fabconf("lab", "fault", "--state", str(lab_state), "leaf3", "delay", check=False)
    assert bad.returncode == 1 and "needs SECONDS" in bad.stderr
    bad = fabconf("lab", "fault", "--state", str(lab_state), "leaf3", "reject", "([", check=False)
    assert bad.returncode == 1 and "not a regular expression" in bad.stderr
    # a new fault replaces the active one: no `clear` needed between kinds
    fabconf("lab", "fault", "--state", str(lab_state), "leaf3", "auth-refuse")
    out = fabconf("lab", "fault", "--state", str(lab_state), "leaf3", "delay", "0.1").stdout
    assert "faults: delay 0.1" in out and "auth-refuse" not in out
    fabconf("lab", "fault", "--state", str(lab_state), "leaf3", "clear")
    # routine disconnects (every client above hung up) leave no traceback in the lab's log
    log = (lab_state / "lab.log").read_text()
    assert "Traceback" not in log and "Socket exception" not in log, log[-2000:]


def test_gpu_hosts_keep_their_state_across_lab_down_and_up(tmp_path: Path) -> None:
    compiled = compile_inventory(EXAMPLE)
    first = Lab(compiled, EXAMPLE, tmp_path / "lab", network=free_network(), password="pw")
    first.start()
    try:
        nic = first.devices["gpu01"].sim.state.nics[0]
        nic.trust, nic.mtu = "dscp", 9000
        first.devices["gpu01"].sim.state.files["/etc/nccl.conf"] = "NCCL_IB_TC=106\n"
    finally:
        first.stop()
    again = Lab(compiled, EXAMPLE, tmp_path / "lab", network=free_network(), password="pw")
    again.start()
    try:
        state = again.devices["gpu01"].sim.state
        assert (state.nics[0].trust, state.nics[0].mtu) == ("dscp", 9000)
        assert state.files["/etc/nccl.conf"] == "NCCL_IB_TC=106\n"
        assert again.devices["gpu02"].sim.state.nics[0].trust == "pcp"  # the others as they were
    finally:
        again.stop()


def test_the_lab_daemon_never_imports_files_of_the_current_directory(tmp_path: Path) -> None:
    """`fabconf lab up` started in a folder holding files named like standard-library modules runs neither."""
    marker = tmp_path / "pwned"
    for module in ("secrets", "json", "socket"):
        (tmp_path / f"{module}.py").write_text(f"open({str(marker)!r}, 'a').write({module!r})\n")
    state = tmp_path / "state"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # the console script, as a user runs it (`python -m` would itself put the current directory on sys.path)
    proc = subprocess.run(
        [
            str(Path(sys.executable).parent / "fabconf"),
            "lab",
            "up",
            "-i",
            str(EXAMPLE),
            "--state",
            str(state),
            "--network",
            free_network(),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=240,
        check=False,
    )
    try:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert not marker.exists(), marker.read_text()
    finally:
        subprocess.run([sys.executable, "-m", "fabconf", "lab", "down", "--state", str(state)], cwd=ROOT, check=False)


def test_lab_host_cards_follow_the_inventory_declarations() -> None:
    """A NIC keeps its ``pci``; ports declared by ``adapter`` + ``port`` are functions of one card on a bus no
    declared address uses; a NIC declared by neither is a card of its own (the lab used to pass ``pci`` only)."""
    from fabconf.compile.model import Nic
    from fabconf_lab.orchestrator import _nic_specs

    nics = (
        Nic("ens1f0np0", "mlx5_0", 0, pci="0000:17:00.0"),
        Nic("ens2f0np0", "mlx5_1", 1, adapter="cx7-b", port=1),
        Nic("ens2f1np1", "mlx5_2", 1, adapter="cx7-b", port=2),
        Nic("ens3f0np0", "mlx5_3", 2),
    )
    assert [spec["pci"] for spec in _nic_specs(nics)] == [
        "0000:17:00.0",
        # 0x17 is declared, 0x18 is a GPU's and 0x19's switch port would be on it (issue 39): the next free bus
        "0000:1a:00.0",
        "0000:1a:00.1",
        "0000:27:00.0",
    ]
