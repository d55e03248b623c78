"""The NX-OS simulator driven by real clients over real sockets: the unmodified NAPALM ``nxos`` driver
(NX-API over HTTPS, plus netmiko SSH/SCP on port 22, or 10022 without the privilege to bind 22, for replace),
netmiko ``cisco_nxos`` and raw HTTP."""

from __future__ import annotations

import base64
import http.client
import io
import itertools
import json
import os
import ssl
import time
from pathlib import Path
from typing import Any

import paramiko
import pytest
from napalm import get_network_driver
from napalm.base.exceptions import ConnectionException, MergeConfigException
from netmiko import ConnectHandler
from netmiko.exceptions import NetmikoAuthenticationException

from fabconf.drivers.known_hosts import ssh_port_config
from fabconf_lab.faults import Faults
from fabconf_lab.nxos.sim import NxosSim, default_startup_config
from fabconf_lab.ports import default_port
from fabconf_lab.tls import LabCA
from fabconf_lab.world import World

USER, PASSWORD = "admin", "lab-pass"
PORTS = [f"Ethernet1/{i}" for i in range(1, 7)]
# 127.11.0.0/16 is this file's range; the block depends on the pid so two concurrent runs do not collide
_addresses = (f"127.11.{n // 250 % 250}.{n % 250 + 2}" for n in itertools.count((os.getpid() % 1000) * 60))

LEAF = """hostname leaf1
feature bgp
feature nxapi
feature lldp
interface Ethernet1/1
  no switchport
  mtu 9216
  ip address 10.0.0.0/31
  no shutdown
interface Ethernet1/2
  description to-spine1-e2
interface Ethernet1/4
  shutdown
router bgp 65001
  router-id 10.255.0.1
  address-family ipv4 unicast
    network 10.1.0.0/24
    maximum-paths 4
  neighbor 10.0.0.1
    remote-as 65000
  neighbor 10.0.0.5
    remote-as 65099
"""

SPINE = """hostname spine1
feature bgp
feature nxapi
feature lldp
interface Ethernet1/1
  no switchport
  mtu 9216
  ip address 10.0.0.1/31
interface Ethernet1/2
  shutdown
router bgp 65000
  address-family ipv4 unicast
    network 10.9.0.0/24
    network 10.9.1.0/24
  neighbor 10.0.0.0
    remote-as 65001
"""


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> LabCA:
    return LabCA(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def make_sim(tmp_path: Path):
    """Simulators with a CA of their own per test (a LabCA issues one certificate per device name)."""
    sims: list[NxosSim] = []
    ca = LabCA(tmp_path / "tls")

    def make(
        name: str = "leaf1", *, address: str | None = None, world: World | None = None, startup: str | None = None
    ) -> NxosSim:
        sim = NxosSim(
            name,
            address or next(_addresses),
            ports=PORTS,
            username=USER,
            password=PASSWORD,
            ca=ca,
            world=world,
            state_dir=tmp_path / "state" / name,
            faults=Faults(),
            startup_config=startup,
        )
        sim.start()
        sims.append(sim)
        return sim

    yield make
    for sim in sims:
        sim.stop()


@pytest.fixture(scope="module")
def fabric(ca: LabCA, tmp_path_factory: pytest.TempPathFactory):
    """leaf1 and spine1 cabled on Ethernet1/1 (both up) and Ethernet1/2 (spine side shut)."""
    world = World(
        [
            ("leaf1", "Ethernet1/1", "spine1", "Ethernet1/1"),
            ("leaf1", "Ethernet1/2", "spine1", "Ethernet1/2"),
        ]
    )
    state = tmp_path_factory.mktemp("fabric")
    sims = {}
    for name, cfg in (("leaf1", LEAF), ("spine1", SPINE)):
        sims[name] = NxosSim(
            name,
            next(_addresses),
            ports=PORTS,
            username=USER,
            password=PASSWORD,
            ca=ca,
            world=world,
            state_dir=state / name,
            startup_config=cfg,
        )
        sims[name].start()
    yield sims
    for sim in sims.values():
        sim.stop()


def driver(sim: NxosSim, timeout: int = 10):
    args: dict[str, Any] = {"transport": "https", "port": sim.http_port}
    if sim.ssh_port not in (None, 22):  # napalm sends its SCP to 22: netmiko takes the port from an ssh_config
        args["ssh_config_file"] = ssh_port_config(sim.address, sim.ssh_port)
    d = get_network_driver("nxos")(sim.address, USER, PASSWORD, timeout=timeout, optional_args=args)
    d.open()
    return d


def nxapi(sim: NxosSim, payload: object, password: str = PASSWORD, timeout: float = 10) -> tuple[int, Any]:
    """A raw NX-API request with http.client (TLS verified against the lab CA)."""
    ctx = sim.ca.client_context()
    conn = http.client.HTTPSConnection(sim.address, sim.http_port, context=ctx, timeout=timeout)
    auth = base64.b64encode(f"{USER}:{password}".encode()).decode()
    headers = {"content-type": "application/json-rpc", "Authorization": f"Basic {auth}"}
    try:
        conn.request("POST", "/ins", body=json.dumps(payload), headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    return resp.status, json.loads(raw) if raw else None


def rpc(cmds: list[str], method: str = "cli") -> list[dict]:
    return [
        {"jsonrpc": "2.0", "method": method, "params": {"cmd": c, "version": 1.0}, "id": i}
        for i, c in enumerate(cmds, 1)
    ]


# ---------------------------------------------------------------------------------------------------------------
# getters


def test_open_and_get_facts(fabric) -> None:
    d = driver(fabric["leaf1"])
    facts = d.get_facts()
    assert facts["hostname"] == "leaf1"
    assert facts["vendor"] == "Cisco"
    assert facts["model"].startswith("Nexus9000")
    assert facts["os_version"] == "10.3(4a)"
    assert facts["serial_number"].startswith("FDO")
    assert facts["interface_list"] == [*PORTS, "mgmt0"]
    assert facts["uptime"] >= 0


def test_get_interfaces_from_running_config_and_cabling(fabric) -> None:
    ifs = driver(fabric["leaf1"]).get_interfaces()
    e1, e2, e3, e4 = (ifs[f"Ethernet1/{i}"] for i in (1, 2, 3, 4))
    assert e1["mtu"] == 9216 and e1["is_up"] and e1["is_enabled"]
    assert e1["speed"] == 400000.0
    assert e2["description"] == "to-spine1-e2"
    assert e2["is_enabled"] and not e2["is_up"]  # far end (spine1 Ethernet1/2) is shut
    assert e3["is_enabled"] and not e3["is_up"] and e3["mtu"] == 1500  # not cabled
    assert not e4["is_enabled"] and not e4["is_up"]  # shutdown
    assert e1["mac_address"] != e3["mac_address"]


def test_get_lldp_neighbors_two_sims(fabric) -> None:
    leaf = driver(fabric["leaf1"]).get_lldp_neighbors()
    spine = driver(fabric["spine1"]).get_lldp_neighbors()
    assert leaf == {"Ethernet1/1": [{"port": "Ethernet1/1", "hostname": "spine1"}]}
    assert spine == {"Ethernet1/1": [{"port": "Ethernet1/1", "hostname": "leaf1"}]}


def test_get_bgp_neighbors_established_and_not(fabric) -> None:
    bgp = driver(fabric["leaf1"]).get_bgp_neighbors()
    glob = bgp["global"]
    assert glob["router_id"] == "10.255.0.1"
    up, down = glob["peers"]["10.0.0.1"], glob["peers"]["10.0.0.5"]
    assert up["is_up"] and up["local_as"] == 65001 and up["remote_as"] == 65000
    # the count is the world's (world.py also counts leaf1's own 10.1.0.0/24 reflected back by spine1)
    world_count = {s.peer: s.prefixes_received for s in fabric["leaf1"].world.bgp_sessions("leaf1")}
    assert up["address_family"]["ipv4"]["received_prefixes"] == world_count["10.0.0.1"] >= 2
    assert not down["is_up"] and down["remote_as"] == 65099
    assert down["address_family"]["ipv4"]["received_prefixes"] == 0


def test_get_config_strips_headers(fabric) -> None:
    cfg = driver(fabric["leaf1"]).get_config()
    assert cfg["running"].splitlines()[0].startswith("!Running configuration last done at:")
    assert "!Command" not in cfg["running"] and "!Time" not in cfg["running"]
    assert "hostname leaf1" in cfg["running"]
    assert "router bgp 65001\n  router-id 10.255.0.1" in cfg["running"]
    assert "Startup config saved" not in cfg["startup"] and "hostname leaf1" in cfg["startup"]


def test_lab_view_from_running_config(fabric) -> None:
    view = fabric["leaf1"].lab_view()
    assert view.hostname == "leaf1" and view.asn == 65001 and view.router_id == "10.255.0.1"
    assert view.ports["Ethernet1/1"].mtu == 9216 and view.ports["Ethernet1/1"].address == "10.0.0.0/31"
    assert not view.ports["Ethernet1/4"].enabled
    assert {(n.peer, n.remote_as) for n in view.neighbors} == {("10.0.0.1", 65000), ("10.0.0.5", 65099)}
    assert view.networks == ("10.1.0.0/24",) and view.maximum_paths == 4
    assert fabric["leaf1"].world.ecmp_paths("leaf1") == {"10.9.0.0/24": 1, "10.9.1.0/24": 1}


def test_bgp_session_follows_config_on_both_ends(make_sim) -> None:
    world = World([("leaf1", "Ethernet1/1", "spine1", "Ethernet1/1")])
    leaf = make_sim("leaf1", world=world, startup=LEAF)
    spine = make_sim("spine1", world=world, startup=SPINE.replace("    remote-as 65001\n", "    remote-as 65999\n"))
    d = driver(leaf)
    assert not d.get_bgp_neighbors()["global"]["peers"]["10.0.0.1"]["is_up"]  # spine expects the wrong AS
    s = driver(spine)
    s.load_merge_candidate(config="router bgp 65000\n  neighbor 10.0.0.0\n    remote-as 65001\n")
    s.commit_config()
    assert d.get_bgp_neighbors()["global"]["peers"]["10.0.0.1"]["is_up"]
    s.load_merge_candidate(config="interface Ethernet1/1\n  shutdown\n")
    s.commit_config()
    assert not d.get_bgp_neighbors()["global"]["peers"]["10.0.0.1"]["is_up"]  # link down on the far end
    assert not d.get_interfaces()["Ethernet1/1"]["is_up"]
    assert d.get_lldp_neighbors() == {}


def test_plain_http_transport_without_ca(tmp_path: Path) -> None:
    sim = NxosSim("leaf9", next(_addresses), ports=PORTS, username=USER, password=PASSWORD, ca=None, ssh_port=None)
    sim.start()
    try:
        assert sim.http_port == default_port(80)  # 10080 where this process may not bind 80
        args = {"transport": "http", "port": sim.http_port}
        d = get_network_driver("nxos")(sim.address, USER, PASSWORD, optional_args=args)
        d.open()
        assert d.get_facts()["hostname"] == "leaf9"
    finally:
        sim.stop()


def test_concurrent_world_questions_do_not_deadlock(fabric) -> None:
    """Every BGP/LLDP answer asks the world, which asks every simulator: both at once must not deadlock."""
    from concurrent.futures import ThreadPoolExecutor

    def ask(i: int) -> int:
        sim = fabric["leaf1" if i % 2 else "spine1"]
        status, _ = nxapi(sim, rpc(["show bgp all summary vrf all", "show lldp neighbors detail", "show interface"]))
        return status

    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(ask, range(40)))
    assert statuses == [200] * 40
    assert time.monotonic() - t0 < 20


# ---------------------------------------------------------------------------------------------------------------
# NX-API wire shapes


def test_nxapi_shapes_errors_and_auth(make_sim) -> None:
    sim = make_sim()
    status, body = nxapi(sim, rpc(["show hostname"]))
    assert status == 200 and body == {"jsonrpc": "2.0", "result": {"body": {"hostname": "leaf1"}}, "id": 1}
    status, body = nxapi(sim, rpc(["show version", "show inventory"]))
    assert status == 200 and isinstance(body, list) and len(body) == 2
    status, body = nxapi(sim, rpc(["show interface Ethernet1/1"]))
    assert isinstance(body["result"]["body"]["TABLE_interface"]["ROW_interface"], dict)  # one row: a dict
    # a batch stops at the first bad line: earlier lines stay applied, later ones never run
    status, body = nxapi(sim, rpc(["interface Ethernet1/3", "  description before", "  bogus words", "  mtu 9000"]))
    assert status == 500 and len(body) == 3
    assert body[0]["result"] is None and body[1]["result"] is None
    assert body[2]["error"] == {
        "code": -32602,
        "message": "Invalid params",
        "data": {"msg": "% Invalid command at '^' marker.\n"},
    }
    assert "interface Ethernet1/3\n  description before\n\ninterface Ethernet1/4" in sim.running_config()
    status, body = nxapi(sim, rpc(["show running-config"], "cli_ascii"))
    assert body["result"]["msg"].startswith("!Command: show running-config\n")
    status, body = nxapi(sim, rpc(["show hostname"]), password="wrong")
    assert status == 401


def test_invalid_values_are_refused(make_sim) -> None:
    sim = make_sim()
    for cmds in (
        ["interface Ethernet1/1", "mtu 12000"],
        ["interface Ethernet9/1"],
        ["router bgp 65001"],  # needs feature bgp
        ["policy-map type queuing Q", "class type queuing c-out-8q-q3", "random-detect minimum-threshold 150 "
         "kbytes maximum-threshold 3000 kbytes drop-probability 700 weight 0 ecn"],
    ):  # fmt: skip
        status, body = nxapi(sim, rpc(cmds))
        assert status == 500, cmds
        last = body if isinstance(body, dict) else body[-1]
        assert "marker" in last["error"]["data"]["msg"], cmds


# ---------------------------------------------------------------------------------------------------------------
# configuration lifecycle


QOS_MERGE = """feature bgp
policy-map type network-qos qos_network
  class type network-qos c-8q-nq3
    mtu 9216
    pause pfc-cos 3
system qos
  service-policy type network-qos qos_network
interface Ethernet1/1
  mtu 9216
  priority-flow-control mode on
router bgp 65010
  address-family ipv4 unicast
    maximum-paths 64
"""


def test_merge_compare_commit(make_sim) -> None:
    sim = make_sim()
    d = driver(sim)
    d.load_merge_candidate(config=QOS_MERGE)
    diff = d.compare_config()
    assert "interface Ethernet1/1\n  mtu 9216" in diff
    assert "pause pfc-cos 3" in diff and "feature bgp" in diff
    assert "mtu 9216" not in sim.running_config()  # nothing applied before commit
    d.commit_config()
    run = sim.running_config()
    assert (
        "interface Ethernet1/1\n  description old-uplink-do-not-use\n  mtu 9216\n  priority-flow-control mode on" in run
    )
    assert "system qos\n  service-policy type network-qos qos_network" in run
    assert "router bgp 65010\n  address-family ipv4 unicast\n    maximum-paths 64" in run
    assert sim.startup_config() == run  # copy run start
    assert "rollback_config.txt" in sim.bootflash()
    # compare after commit: nothing left to merge
    d.load_merge_candidate(config=QOS_MERGE)
    assert d.compare_config() == ""
    d.discard_config()


def test_replace_over_ssh_scp_compare_commit_discard_rollback(make_sim) -> None:
    sim = make_sim()
    before = sim.running_config()
    target = default_startup_config("leaf1", PORTS)
    target = target.replace("vlan 99\n  name OLD-STORAGE\n", "").replace(
        "do-not-use\n  mtu 9000", "do-not-use\n  mtu 9216"
    )
    target += "feature bgp\nrouter bgp 65020\n  neighbor 10.0.0.1\n    remote-as 65000\n"
    d = driver(sim)
    try:
        t0 = time.monotonic()
        d.load_replace_candidate(config=target)
        took = time.monotonic() - t0
        assert sim.bootflash()["candidate_config.txt"] == target.encode()  # arrived by SCP, byte for byte
        diff = d.compare_config()
        assert "no vlan 99" in diff and "interface Ethernet1/1\n  mtu 9216" in diff
        assert "router bgp 65020\n  neighbor 10.0.0.1\n    remote-as 65000" in diff
        d.discard_config()
        assert "candidate_config.txt" not in sim.bootflash()
        assert sim.running_config() == before

        d.load_replace_candidate(config=target)
        d.commit_config()
        run = sim.running_config()
        assert "vlan 99" not in run and "router bgp 65020" in run and "  mtu 9216" in run
        assert sim.startup_config() == run

        d.rollback()
        assert sim.running_config() == before
        assert sim.startup_config() == before
    finally:
        d.close()
    assert took < 10


def test_rejected_line_leaves_running_unchanged(make_sim) -> None:
    sim = make_sim()
    before = sim.running_config()
    sim.faults.set("reject", r"^priority-flow-control mode")
    d = driver(sim)
    d.load_merge_candidate(config=QOS_MERGE)
    with pytest.raises(MergeConfigException, match="Invalid command"):
        d.commit_config()
    assert sim.running_config() == before  # lines before the rejected one were rolled back by the driver


def test_invalid_rollback_target_is_atomic(make_sim) -> None:
    sim = make_sim()
    before = sim.running_config()
    status, _ = nxapi(sim, rpc(["terminal dont-ask", "checkpoint file good.cfg"]))
    assert status == 200
    sim.device.write_file("bootflash:bad.cfg", (before + "interface Ethernet1/1\n  mtu 99999\n").encode())
    status, body = nxapi(sim, rpc(["rollback running-config file bad.cfg"], "cli_ascii"))
    assert status == 500 and "Rollback failed." in body["error"]["data"]["msg"]
    assert sim.running_config() == before
    status, body = nxapi(sim, rpc(["show diff rollback-patch file good.cfg file good.cfg"], "cli_ascii"))
    assert "Rollback Patch is Empty" in body["result"]["msg"]


# docs/reference/roce-lossless.md §3: what fabconf pushes to NX-OS for lossless RoCEv2
ROCE_QOS = """feature bgp
system jumbomtu 9216
priority-flow-control watch-dog-interval on
class-map type qos match-any ROCEv2
  match dscp 24-26
class-map type qos match-any CNP
  match dscp 48
policy-map type qos QOS_CLASSIFICATION
  class ROCEv2
    set qos-group 3
  class CNP
    set qos-group 7
  class class-default
    set qos-group 0
policy-map type network-qos qos_network
  class type network-qos c-8q-nq3
    mtu 9216
    pause pfc-cos 3
  class type network-qos c-8q-nq-default
    mtu 9216
policy-map type queuing QOS_EGRESS_PORT
  class type queuing c-out-8q-q3
    bandwidth remaining percent 50
    random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn
  class type queuing c-out-8q-q7
    priority level 1
  class type queuing c-out-8q-q-default
    bandwidth remaining percent 50
system qos
  service-policy type network-qos qos_network
  service-policy type queuing output QOS_EGRESS_PORT
interface Ethernet1/1
  mtu 9216
  priority-flow-control mode on
  priority-flow-control watch-dog-interval on
  service-policy type qos input QOS_CLASSIFICATION
router bgp 65001
  bestpath as-path multipath-relax
  address-family ipv4 unicast
    maximum-paths 64
"""


def test_roce_qos_merge_is_accepted_and_idempotent(make_sim) -> None:
    sim = make_sim()
    d = driver(sim)
    d.load_merge_candidate(config=ROCE_QOS)
    assert "pause pfc-cos 3" in d.compare_config()
    d.commit_config()
    run = sim.running_config()
    for block in (
        "policy-map type network-qos qos_network\n  class type network-qos c-8q-nq3\n    mtu 9216\n    pause pfc-cos 3",
        "  class type queuing c-out-8q-q7\n    priority level 1",
        "interface Ethernet1/1\n  description old-uplink-do-not-use\n  mtu 9216\n  priority-flow-control mode on",
        "system qos\n  service-policy type network-qos qos_network\n"
        "  service-policy type queuing output QOS_EGRESS_PORT",
    ):
        assert block in run
    d.load_merge_candidate(config=ROCE_QOS)
    assert d.compare_config() == ""  # the device's rendering round-trips: no permanent drift
    d.discard_config()
    # PFC state follows the config: mode on + 'pause pfc-cos 3' in the system network-qos policy
    text = d.cli(["show interface priority-flow-control"])["show interface priority-flow-control"]
    assert "Ethernet1/1        On   On  (8)" in text and "Ethernet1/2        Auto Off" in text
    status, body = nxapi(sim, rpc(["show interface Ethernet1/1 priority-flow-control"]))
    row = body["result"]["body"]["TABLE_module"]["ROW_module"]["TABLE_pfc_interface"]["ROW_pfc_interface"]
    assert row == {"if_name_str": "Ethernet1/1", "admin": "On", "oper": "On", "rx-stats": 0, "tx-stats": 0}
    # references must resolve, and a policy in use cannot be removed
    for cmds, error in (
        (["interface Ethernet1/2", "service-policy type qos input QOS_TYPO"], "policy-map QOS_TYPO does not exist"),
        (["policy-map type qos P2", "class ROCEv3"], "class-map ROCEv3 does not exist"),
        (["no policy-map type network-qos qos_network"], "in use"),
    ):
        status, body = nxapi(sim, rpc(cmds))
        last = body if isinstance(body, dict) else body[-1]
        assert status == 500 and error in last["error"]["data"]["msg"]


def _scp_put(sim: NxosSim, name: str, data: bytes) -> None:
    """Upload to bootflash with the python scp package over paramiko (what netmiko uses)."""
    from scp import SCPClient

    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect(sim.address, sim.ssh_port, USER, PASSWORD, look_for_keys=False, allow_agent=False)
    try:
        transport = client.get_transport()
        assert transport is not None
        with SCPClient(transport) as scp:
            scp.putfo(io.BytesIO(data), f"bootflash:/{name}")
    finally:
        client.close()


def test_configure_replace_commit_timeout(make_sim) -> None:
    sim = make_sim()
    before = sim.running_config()
    target = before.replace("hostname leaf1", "hostname leaf1-new")
    _scp_put(sim, "target.cfg", target.encode())
    # the device's own range is 30-3600 s; the lab knob lets a test see the timer expire
    status, body = nxapi(sim, rpc(["configure replace bootflash:target.cfg commit-timeout 10"], "cli_ascii"))
    assert status == 500 and "Invalid range" in body["error"]["data"]["msg"]
    sim.device.config_replace.min_timeout = 1

    status, body = nxapi(sim, rpc(["configure replace bootflash:target.cfg commit-timeout 30"], "cli_ascii"))
    assert status == 200 and "configure replace commit" in body["result"]["msg"]
    assert "hostname leaf1-new" in sim.running_config()
    status, body = nxapi(sim, rpc(["show config-replace status"], "cli_ascii"))
    assert "Pending" in body["result"]["msg"]
    status, body = nxapi(sim, rpc(["configure replace commit"], "cli_ascii"))
    assert status == 200 and "hostname leaf1-new" in sim.running_config()

    # not confirmed in time: the previous configuration comes back by itself
    status, _ = nxapi(sim, rpc(["hostname leaf1", "copy running-config bootflash:orig.cfg"]))
    orig = sim.running_config()
    status, _ = nxapi(sim, rpc(["configure replace bootflash:target.cfg commit-timeout 1"], "cli_ascii"))
    assert status == 200 and "hostname leaf1-new" in sim.running_config()
    time.sleep(1.6)
    assert sim.running_config() == orig

    # drop-on-commit on the confirmation: the connection closes, the timer keeps running and expires
    status, _ = nxapi(sim, rpc(["configure replace bootflash:target.cfg commit-timeout 1"], "cli_ascii"))
    assert status == 200
    sim.faults.set("drop-on-commit")
    with pytest.raises((ConnectionError, http.client.HTTPException)):
        nxapi(sim, rpc(["configure replace commit"], "cli_ascii"))
    time.sleep(1.6)
    sim.faults.clear()
    assert sim.running_config() == orig
    status, body = nxapi(sim, rpc(["show config-replace status"], "cli_ascii"))
    assert "previous configuration restored" in body["result"]["msg"]


# ---------------------------------------------------------------------------------------------------------------
# SSH front end


def test_netmiko_cisco_nxos_session(make_sim) -> None:
    sim = make_sim()
    conn = ConnectHandler(
        device_type="cisco_nxos", host=sim.address, username=USER, password=PASSWORD, port=sim.ssh_port
    )
    try:
        assert conn.find_prompt() == "leaf1#"
        out = conn.send_config_set(["interface Ethernet1/5-6", "description via-ssh", "mtu 9216"])
        assert "leaf1(config-if)#" in out
        for port in ("Ethernet1/5", "Ethernet1/6"):  # a range applies to every member
            assert f"interface {port}\n  description via-ssh\n  mtu 9216\n" in sim.running_config()
        bad = conn.send_config_set(["no-such-command here"])
        assert "% Invalid command at '^' marker." in bad
        assert "interface Ethernet1/5" in conn.send_command("show running-config")
        listing = conn.send_command("dir bootflash:")
        assert "bytes free" in listing
    finally:
        conn.disconnect()


# ---------------------------------------------------------------------------------------------------------------
# faults


def test_fault_drop_on_commit(make_sim) -> None:
    sim = make_sim()
    before = sim.running_config()
    sim.faults.set("drop-on-commit")
    d = driver(sim)
    status, body = nxapi(sim, rpc(["show ip route vrf foo"]))  # not a commit: answered, not dropped
    assert status == 500 and "Invalid command" in body["error"]["data"]["msg"]
    d.load_merge_candidate(config=QOS_MERGE)
    with pytest.raises(Exception) as info:
        d.commit_config()
    assert "Connection" in type(info.value).__name__ or "Connection" in str(info.value)
    assert sim.running_config() == before  # neither the batch nor the driver's rollback was applied
    assert "rollback_config.txt" in sim.bootflash()  # the checkpoint before the commit was taken
    sim.faults.clear()
    d.commit_config()
    assert "priority-flow-control mode on" in sim.running_config()


def test_fault_drop_on_commit_over_ssh(make_sim) -> None:
    sim = make_sim()
    before = sim.running_config()
    sim.faults.set("drop-on-commit")
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect(sim.address, sim.ssh_port, USER, PASSWORD, look_for_keys=False, allow_agent=False)
    try:
        shell = client.invoke_shell()
        shell.settimeout(5)
        shell.sendall(b"configure terminal\n")
        buf = b""
        while b"(config)#" not in buf:
            buf += shell.recv(4096)
        shell.sendall(b"interface Ethernet1/3\n")
        t0 = time.monotonic()
        while True:
            chunk = shell.recv(4096)
            if not chunk:
                break
        assert time.monotonic() - t0 < 3  # closed at once, no reply
    finally:
        client.close()
    assert sim.running_config() == before


def test_fault_delay_and_hang(make_sim) -> None:
    sim = make_sim()
    sim.faults.set("delay", "0.6")
    t0 = time.monotonic()
    status, _ = nxapi(sim, rpc(["show hostname"]))
    assert status == 200 and time.monotonic() - t0 >= 0.6
    sim.faults.clear()
    sim.faults.set("hang")
    with pytest.raises(TimeoutError):
        nxapi(sim, rpc(["show hostname"]), timeout=0.5)
    sim.faults.clear()
    status, _ = nxapi(sim, rpc(["show hostname"]))
    assert status == 200


def test_fault_auth_refuse(make_sim) -> None:
    sim = make_sim()
    sim.faults.set("auth-refuse")
    with pytest.raises(ConnectionException):
        driver(sim)
    with pytest.raises(NetmikoAuthenticationException):
        ConnectHandler(device_type="cisco_nxos", host=sim.address, username=USER, password=PASSWORD, port=sim.ssh_port)
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    with pytest.raises(paramiko.AuthenticationException):
        client.connect(sim.address, sim.ssh_port, USER, PASSWORD, look_for_keys=False, allow_agent=False)
    client.close()
    sim.faults.clear()
    assert driver(sim).get_facts()["hostname"] == "leaf1"


def test_startup_persists_in_state_dir(make_sim) -> None:
    sim = make_sim()
    status, _ = nxapi(sim, rpc(["hostname persisted1", "copy running-config startup-config"]))
    assert status == 200
    sim.stop()
    again = make_sim(sim.name, address=sim.address)
    assert "hostname persisted1" in again.running_config()
    assert ssl.OPENSSL_VERSION  # TLS stack present (the lab CA verified every request above)


def test_error_and_pfc_counters_move_with_the_faults_through_napalm_cli(make_sim) -> None:
    """NAPALM's NX-API driver has no counters getter: fabconf reads ``show interface | json`` and ``show interface
    priority-flow-control | json`` through its ``cli()``; a ``link PORT:errors=R`` fault raises the port's input
    errors, a pfc-storm fault its received PFC frames (RxPPP)."""
    from fabconf.drivers.cli import nxos_counters
    from fabconf.drivers.cli.staging import StagedCliDriver
    from fabconf.platforms import platform
    from fabconf_lab.metrics import Storm

    sim = make_sim()
    d = driver(sim)
    d.load_merge_candidate(config=ROCE_QOS)
    d.commit_config()
    staged = StagedCliDriver(d, platform("nxos"))
    first = staged.get_interfaces_counters()
    assert first["Ethernet1/1"]["rx_unicast_packets"] > 0 and first["Ethernet1/1"]["rx_errors"] == 0
    assert "loopback0" not in first and "Ethernet1/4" in first  # a shut port reports zeros
    raw = json.loads(d.cli([nxos_counters.INTERFACES])[nxos_counters.INTERFACES])  # NX-OS prints the JSON as text
    rows = {r["interface"]: r for r in raw["TABLE_interface"]["ROW_interface"]}
    assert isinstance(rows["Ethernet1/1"]["eth_inerr"], str) and isinstance(rows["Ethernet1/1"]["eth_inucast"], int)
    assert staged.pfc_counters(["Ethernet1/1", "Ethernet1/2"]) == {
        "Ethernet1/1": {"all": 0},
        "Ethernet1/2": {"all": 0},
    }

    sim.error_ratio["Ethernet1/1"] = 0.01  # `fabconf lab fault leaf1 link Ethernet1/1:errors=0.01`
    storm = Storm()  # `fabconf lab fault leaf1 pfc-storm`, as the orchestrator hands it to the simulator
    storm.start()
    sim.pfc_pauses = storm.pauses
    time.sleep(0.05)
    a, b = staged.get_interfaces_counters()["Ethernet1/1"], staged.get_interfaces_counters()["Ethernet1/1"]
    assert 0 < a["rx_errors"] < b["rx_errors"] and b["rx_errors"] == int(b["rx_unicast_packets"] * 0.01)
    p1, p2 = staged.pfc_counters(["Ethernet1/1"]), staged.pfc_counters(["Ethernet1/1"])
    assert p2["Ethernet1/1"]["all"] > p1["Ethernet1/1"]["all"] > 0
    assert staged.pfc_counters(["Ethernet1/2"]) == {"Ethernet1/2": {"all": 0}}  # PFC not operational there
    status, body = nxapi(sim, rpc(["show version | json"], method="cli_ascii"))
    assert status == 200 and json.loads(body["result"]["msg"])["host_name"] == "leaf1"


def test_replace_push_keeps_the_operators_snmp_ntp_and_logging(make_sim) -> None:
    """A replace push of a config without snmp-server keeps the running snmp-server, ntp and logging lines: the
    switch metrics are read over that SNMP agent (issue 38; a replace removed them before)."""
    from fabconf.drivers.cli.remediation import keep_management

    operator = (
        "snmp-server community fabmon group network-operator\n"
        "ntp server 10.9.9.1 use-vrf management\n"
        "logging server 10.9.9.2\n"
    )
    sim = make_sim(startup=default_startup_config("leaf1", PORTS) + operator)
    target = default_startup_config("leaf1", PORTS) + "feature bgp\nrouter bgp 65020\n"
    d = driver(sim)
    try:
        assert "snmp-server community fabmon" in sim.running_config()
        d.load_replace_candidate(config=keep_management("nxos", sim.running_config(), target))
        assert "snmp-server" not in d.compare_config()
        d.commit_config()
        running = sim.running_config()
        assert "router bgp 65020" in running
        for line in operator.splitlines():
            assert line in running
    finally:
        d.close()
