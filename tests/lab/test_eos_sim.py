"""The EOS eAPI simulator driven by the UNMODIFIED napalm ``eos`` driver and pyeapi over real HTTPS sockets.

Addresses: 127.10.0.0/16 (this helper's range), the vendor's standard port 443 (10443 without the privilege to
bind it).
"""

from __future__ import annotations

import errno
import http.client
import itertools
import json
import random
import re
import ssl
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyeapi
import pytest
from napalm import get_network_driver
from napalm.base.exceptions import CommitError, MergeConfigException, SessionLockedException
from pyeapi.eapilib import CommandError
from pyeapi.eapilib import ConnectionError as EapiConnectionError

from fabconf.drivers.cli.remediation import keep_management
from fabconf_lab.eos.sim import EosSim, default_startup_config
from fabconf_lab.faults import Faults
from fabconf_lab.ports import default_port
from fabconf_lab.tls import LabCA
from fabconf_lab.world import World

API = "management api http-commands\n   no shutdown\n!\n"  # the lab answers eAPI only with the API on
USER, PASSWORD = "admin", "lab-pw"
GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "devices"
# a random third octet per test process, so two runs of this file at once rarely meet on one address
_BASE = random.randrange(0, 250 * 200)
_ADDRESSES = (f"127.10.{(_BASE + i) // 250 % 250}.{(_BASE + i) % 250 + 1}" for i in itertools.count(1))


@pytest.fixture
def ca(tmp_path: Path) -> LabCA:
    # one CA per test: LabCA caches a device certificate by name, and tests reuse names at new addresses
    return LabCA(tmp_path / "tls")


@pytest.fixture
def make_sim(ca: LabCA) -> Iterator[Callable[..., EosSim]]:
    started: list[EosSim] = []

    def make(name: str = "leaf1", ports: list[str] | None = None, **kwargs) -> EosSim:
        port = kwargs.pop("port", default_port(443))  # 10443 where this process may not bind 443
        for attempt in range(5):
            sim = EosSim(
                name,
                next(_ADDRESSES),
                ports=ports or ["Ethernet1", "Ethernet2", "Ethernet3"],
                username=USER,
                password=PASSWORD,
                ca=ca,
                port=port,
                **kwargs,
            )
            try:
                sim.start()
            except OSError as e:  # another run holds this address: take the next one
                if e.errno != errno.EADDRINUSE or attempt == 4:
                    raise
                # LabCA caches a device certificate by name: drop the one issued for the busy address
                for suffix in (".pem", ".key"):
                    (ca.directory / f"{name}{suffix}").unlink(missing_ok=True)
                continue
            started.append(sim)
            return sim
        raise AssertionError("unreachable")

    yield make
    for sim in started:
        sim.stop()


def napalm_eos(sim: EosSim, timeout: int = 10, **optional_args):
    args = {"transport": "https", "port": sim.port, **optional_args}
    driver = get_network_driver("eos")(sim.address, USER, PASSWORD, timeout=timeout, optional_args=args)
    driver.open()
    return driver


def pyeapi_node(sim: EosSim, password: str = PASSWORD, **kwargs) -> pyeapi.client.Node:
    conn = pyeapi.connect(
        transport="https", host=sim.address, port=sim.port, username=USER, password=password, **kwargs
    )
    return pyeapi.client.Node(conn)


# -- transport, auth, TLS -----------------------------------------------------------------------------------------


def test_open_and_get_facts(make_sim) -> None:
    sim = make_sim("leaf1")
    driver = napalm_eos(sim)
    facts = driver.get_facts()
    assert facts["hostname"] == "leaf1"
    assert facts["fqdn"] == "leaf1.lab.example"
    assert facts["vendor"] == "Arista"
    assert facts["os_version"].startswith("4.32.2F")
    assert facts["interface_list"] == ["Ethernet1", "Ethernet2", "Ethernet3", "Management1"]
    assert facts["uptime"] > 86400
    driver.close()


def test_certificate_verifies_against_the_lab_ca(make_sim, ca: LabCA) -> None:
    sim = make_sim("leaf1")
    node = pyeapi_node(sim, context=ca.client_context())
    assert node.run_commands(["show hostname"])[0]["hostname"] == "leaf1"
    # napalm passes an ssl context through to pyeapi: verification against the CA succeeds
    driver = napalm_eos(sim, context=ca.client_context())
    assert driver.get_facts()["hostname"] == "leaf1"
    driver.close()
    # a client that does not trust the lab CA refuses the certificate
    untrusting = pyeapi_node(sim, context=ssl.create_default_context())
    with pytest.raises(EapiConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
        untrusting.run_commands(["show hostname"])


def test_bad_credentials_get_http_401(make_sim, ca: LabCA) -> None:
    sim = make_sim("leaf1")
    with pytest.raises(EapiConnectionError, match="Unauthorized"):
        pyeapi_node(sim, password="wrong").run_commands(["show version"])
    conn = http.client.HTTPSConnection(sim.address, sim.port, context=ca.client_context(), timeout=5)
    conn.request("POST", "/command-api", body=b"{}", headers={"Content-Type": "application/json-rpc"})
    assert conn.getresponse().status == 401


def test_errors_have_the_eapi_shape(make_sim, ca: LabCA) -> None:
    sim = make_sim("leaf1")
    node = pyeapi_node(sim, context=ca.client_context())
    with pytest.raises(CommandError) as info:
        node.run_commands(["show hostname", "show bogus"])
    err = info.value
    assert err.error_code == 1002
    assert err.error_text == "CLI command 3 of 3 'show bogus' failed: invalid command"  # 'enable' is command 1
    assert err.output[1]["hostname"] == "leaf1"
    assert err.output[2] == {"errors": ["Invalid input (at token 1: 'bogus')"]}
    with pytest.raises(CommandError) as info:
        node.run_commands(["configure", "interface Ethernet1", "frobnicate 7"], encoding="text")
    assert info.value.output[-1]["output"].startswith("% Invalid input")
    # the lines before the failing one took effect, as on the device (no session: plain configure)
    assert node.run_commands(["configure", "interface Ethernet2", "mtu 9100", "end"])[1:] == [{}, {}, {}]
    assert "   mtu 9100" in sim.running_config()


# -- getters ----------------------------------------------------------------------------------------------------------


def test_get_interfaces_reads_running_config(make_sim) -> None:
    sim = make_sim("leaf1")
    driver = napalm_eos(sim)
    driver.load_merge_candidate(config="interface Ethernet3\n   shutdown\n   description parked\n")
    driver.commit_config()
    ifs = driver.get_interfaces()
    assert ifs["Ethernet1"]["mtu"] == 9000  # brownfield leftover
    assert ifs["Ethernet1"]["description"] == "old-uplink (decommissioned)"
    assert ifs["Ethernet1"]["speed"] == 400000.0
    assert ifs["Ethernet1"]["is_up"] and ifs["Ethernet1"]["is_enabled"]
    assert ifs["Ethernet3"]["is_enabled"] is False and ifs["Ethernet3"]["is_up"] is False
    assert ifs["Ethernet3"]["description"] == "parked"
    assert ifs["Management1"]["speed"] == 1000.0
    driver.close()


def test_lldp_neighbors_follow_the_world_cabling(make_sim) -> None:
    world = World([("leaf1", "Ethernet1", "spine1", "Ethernet3")])
    leaf = make_sim("leaf1", world=world)
    spine = make_sim("spine1", world=world)
    driver = napalm_eos(leaf)
    assert driver.get_lldp_neighbors() == {"Ethernet1": [{"hostname": "spine1", "port": "Ethernet3"}]}
    ifs = driver.get_interfaces()
    assert ifs["Ethernet1"]["is_up"] and not ifs["Ethernet2"]["is_up"]  # Ethernet2 is not cabled
    spine_driver = napalm_eos(spine)
    spine_driver.load_merge_candidate(config="interface Ethernet3\n   shutdown\n")
    spine_driver.commit_config()
    assert driver.get_lldp_neighbors() == {}
    driver.close()
    spine_driver.close()


def _bgp_startup(host: str, asn: int, addr: str, peer: str, peer_as: int, rid: str, net: str) -> str:
    return (
        f"hostname {host}\n!\ninterface Ethernet1\n   mtu 9214\n   no switchport\n   ip address {addr}\n!\n"
        f"interface Loopback0\n   ip address {rid}/32\n!\nip routing\n!\n"
        f"router bgp {asn}\n   router-id {rid}\n   maximum-paths 4 ecmp 4\n"
        f"   neighbor {peer} remote-as {peer_as}\n   network {net}\n!\n{API}end\n"
    )


def test_bgp_neighbors_established_over_a_cabled_31_and_not_with_a_wrong_as(make_sim) -> None:
    world = World([("leaf1", "Ethernet1", "spine1", "Ethernet1")])
    leaf = make_sim(
        "leaf1",
        world=world,
        startup_config=_bgp_startup("leaf1", 65101, "10.0.0.1/31", "10.0.0.0", 65100, "10.255.0.11", "10.1.0.0/24"),
    )
    spine = make_sim(
        "spine1",
        world=world,
        startup_config=_bgp_startup("spine1", 65100, "10.0.0.0/31", "10.0.0.1", 65101, "10.255.0.1", "10.9.0.0/24"),
    )
    driver = napalm_eos(leaf)
    bgp = driver.get_bgp_neighbors()
    peer = bgp["global"]["peers"]["10.0.0.0"]
    assert bgp["global"]["router_id"] == "10.255.0.11"
    assert peer["is_up"] and peer["is_enabled"]
    assert (peer["local_as"], peer["remote_as"], peer["remote_id"]) == (65101, 65100, "10.255.0.1")
    # from World.bgp_sessions: the spine's network (the World also counts the leaf's own prefix reflected back)
    assert peer["address_family"]["ipv4"]["received_prefixes"] >= 1
    assert world.ecmp_paths("leaf1") == {"10.9.0.0/24": 1}

    # misconfigure the spine's view of the leaf's AS: the session drops on both ends
    spine_driver = napalm_eos(spine)
    spine_driver.load_merge_candidate(config="router bgp 65100\n   neighbor 10.0.0.1 remote-as 65999\n")
    spine_driver.commit_config()
    peer = driver.get_bgp_neighbors()["global"]["peers"]["10.0.0.0"]
    assert not peer["is_up"] and peer["remote_id"] == "0.0.0.0"
    assert not spine_driver.get_bgp_neighbors()["global"]["peers"]["10.0.0.1"]["is_up"]
    driver.close()
    spine_driver.close()


def _unnumbered(host: str, asn: int, peer_as: int, net: str) -> str:
    return (
        f"hostname {host}\n!\ninterface Ethernet1\n   mtu 9214\n   no switchport\n   ipv6 enable\n!\nip routing\n!\n"
        f"router bgp {asn}\n   router-id 10.255.{asn % 256}.1\n   maximum-paths 64 ecmp 64\n"
        f"   neighbor FABRIC peer group\n   neighbor interface Ethernet1 peer-group FABRIC remote-as {peer_as}\n"
        f"   network {net}\n!\n{API}end\n"
    )


def test_unnumbered_bgp_and_concurrent_getters_on_both_ends(make_sim) -> None:
    world = World([("leaf1", "Ethernet1", "spine1", "Ethernet1")])
    leaf = make_sim("leaf1", world=world, startup_config=_unnumbered("leaf1", 65101, 65100, "10.1.0.0/24"))
    spine = make_sim("spine1", world=world, startup_config=_unnumbered("spine1", 65100, 65101, "10.9.0.0/24"))
    # several clients on both simulators at once, each simulator asking the World about the other: no
    # lock-order deadlock (one napalm driver per thread: a pyeapi connection is not thread-safe)
    drivers = [napalm_eos(leaf if i % 2 == 0 else spine) for i in range(6)]

    def poll(driver) -> dict:
        for _ in range(4):
            out = driver.get_bgp_neighbors()
        return out

    with ThreadPoolExecutor(max_workers=len(drivers)) as pool:
        results = [f.result(timeout=30) for f in [pool.submit(poll, d) for d in drivers]]
    leaf_peers = results[0]["global"]["peers"]
    (address,) = leaf_peers
    assert address.startswith("fe80::") and address.endswith("%Et1")
    assert leaf_peers[address]["is_up"] and leaf_peers[address]["remote_as"] == 65100
    assert leaf_peers[address]["remote_id"] == "10.255.76.1"  # spine1's router-id (65100 % 256 = 76)
    for driver in drivers:
        driver.close()


@pytest.mark.parametrize("device", ["leaf3", "spine1"])  # a Strata and a Sand switch
def test_fabconf_rendered_config_replaces_cleanly(make_sim, device: str) -> None:
    path = GOLDEN / f"{device}.cfg"
    if not path.exists():
        pytest.skip(f"{path} not present")
    text = path.read_text()
    ports = sorted({m for m in re.findall(r"^interface (Ethernet\S+)", text, re.M)})
    model = re.match(r"! fabconf \S+ \((\S+)\)", text).group(1)  # type: ignore[union-attr]
    sim = make_sim(device, ports=ports, model=model)  # the hardware family decides the queue command
    driver = napalm_eos(sim)
    # as fabconf's wrapper does: the rendered config has no management plane, the switch keeps its own
    text = keep_management("eos", driver.get_config(retrieve="running")["running"], text)
    driver.load_replace_candidate(config=text)
    assert "+qos profile FABCONF_ROCE" in driver.compare_config()
    driver.commit_config()
    ifs = driver.get_interfaces()
    assert all(ifs[p]["mtu"] == 9214 for p in ports)
    driver.load_replace_candidate(config=text)
    assert driver.compare_config() == ""  # idempotent: the same config again is no change
    driver.discard_config()
    driver.close()


def test_lab_view_reads_peer_groups_unnumbered_networks_and_ecmp(make_sim) -> None:
    config = (
        "hostname leaf2\n!\ninterface Ethernet1\n   no switchport\n   ip address 10.0.0.3/31\n!\n"
        "interface Ethernet2\n   shutdown\n!\n"
        "router bgp 4200200001\n   router-id 10.255.0.12\n   maximum-paths 64 ecmp 64\n"
        "   neighbor SPINES peer group\n   neighbor SPINES remote-as 65100\n"
        "   neighbor 10.0.0.2 peer group SPINES\n"
        "   neighbor interface Ethernet3 peer-group FABRIC remote-as 4200200000\n"
        "   neighbor 10.0.0.9 remote-as 65100\n   neighbor 10.0.0.9 shutdown\n"
        "   !\n   address-family ipv4\n      network 10.2.0.0/24\n!\nend\n"
    )
    sim = make_sim("leaf2", startup_config=config)
    view = sim.lab_view()
    assert view.hostname == "leaf2" and view.asn == 4200200001 and view.router_id == "10.255.0.12"
    assert view.ports["Ethernet1"].address == "10.0.0.3/31"
    assert view.ports["Ethernet2"].enabled is False
    assert view.ports["Ethernet3"].address is None  # a switchport has no L3 address
    assert [(n.peer, n.remote_as) for n in view.neighbors] == [("10.0.0.2", 65100), ("Ethernet3", 4200200000)]
    assert view.networks == ("10.2.0.0/24",)
    assert view.maximum_paths == 64


def test_get_config_and_running_config_sections(make_sim, ca: LabCA) -> None:
    sim = make_sim("leaf1")
    driver = napalm_eos(sim)
    config = driver.get_config()
    assert config["startup"] == default_startup_config("leaf1", ["Ethernet1", "Ethernet2", "Ethernet3"])
    assert config["running"].startswith("! Command: show running-config\n")
    assert "\nhostname leaf1\n" in config["running"] and config["running"].endswith("!\nend\n")
    assert config["candidate"] == ""
    sanitized = driver.get_config(retrieve="running", sanitized=True)["running"]
    assert "secret sha512 <removed>" in sanitized and "notarealhash" not in sanitized
    driver.load_merge_candidate(config="hostname leaf1-new\n")
    assert "hostname leaf1-new" in driver.get_config(retrieve="candidate")["candidate"]
    driver.discard_config()
    node = pyeapi_node(sim, context=ca.client_context())
    out = node.run_commands(["show running-config section vlan"], encoding="text")[0]["output"]
    # every section with a matching line, as EOS does: the VLANs and the port in VLAN 10
    assert out == (
        "vlan 10\n   name OLD_SERVERS\n!\nvlan 99\n   name STALE\n!\n"
        "interface Ethernet2\n   switchport access vlan 10\n"
    )
    as_json = node.run_commands(["show running-config"])[0]
    assert as_json["cmds"]["vlan 10"]["cmds"] == {"name OLD_SERVERS": None}
    driver.close()


# -- candidate / commit lifecycle ---------------------------------------------------------------------------------

MERGE = """\
qos map dscp 26 to traffic-class 3
!
qos profile ROCE
   qos trust dscp
   priority-flow-control on
   priority-flow-control priority 3 no-drop
   !
   uc-tx-queue 3
      bandwidth percent 50
      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100
!
interface Ethernet1
   description spine1:Ethernet1
   mtu 9214
   service-profile ROCE
!
no vlan 99
"""


MERGE_DIFF = """\
@@ -16,18 +16,17 @@
 spanning-tree mode mstp
 !
 qos map dscp 24 to traffic-class 2
+qos map dscp 26 to traffic-class 3
 !
 snmp-server community lab-ro ro
 !
 vlan 10
    name OLD_SERVERS
 !
-vlan 99
-   name STALE
-!
 interface Ethernet1
-   description old-uplink (decommissioned)
-   mtu 9000
+   description spine1:Ethernet1
+   mtu 9214
+   service-profile ROCE
 !
 interface Ethernet2
    switchport access vlan 10
@@ -40,4 +39,13 @@
 management api http-commands
    no shutdown
 !
+qos profile ROCE
+   qos trust dscp
+   priority-flow-control on
+   priority-flow-control priority 3 no-drop
+   !
+   uc-tx-queue 3
+      bandwidth percent 50
+      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100
+!
 end"""


def test_merge_compare_commit(make_sim) -> None:
    sim = make_sim("leaf1")
    startup_before = sim.startup_config()
    driver = napalm_eos(sim)
    driver.load_merge_candidate(config=MERGE)
    assert driver.compare_config() == MERGE_DIFF
    assert sim.running_config().count("mtu 9214") == 0  # nothing applied before commit
    driver.commit_config()
    running = sim.running_config()
    assert "   mtu 9214" in running and "vlan 99" not in running and "qos profile ROCE" in running
    assert sim.startup_config() == running  # commit_config ends with 'write memory'
    assert sim.flash["rollback-0"] == startup_before  # napalm saved the old startup first
    assert driver.compare_config() == ""
    driver.close()


def test_load_replace_candidate(make_sim) -> None:
    sim = make_sim("leaf1")
    driver = napalm_eos(sim)
    full = "hostname leaf1\n!\ninterface Ethernet1\n   mtu 9214\n!\n"
    full += "management api http-commands\n   no shutdown\n!\nend\n"
    driver.load_replace_candidate(config=full)
    diff = driver.compare_config()
    assert "-vlan 10" in diff and "-no aaa root" in diff and "+   mtu 9214" in diff
    driver.commit_config()
    running = sim.running_config()
    assert "vlan 10" not in running and "dns domain" not in running
    # every physical port is still listed, as EOS shows them
    assert "interface Ethernet2\n!\ninterface Ethernet3\n!\n" in running
    driver.close()


@pytest.mark.parametrize("version", ["4.32.2F", "4.31.1F"])
def test_commit_timer_then_confirm(make_sim, version: str, ca: LabCA) -> None:
    sim = make_sim("leaf1", version=version)
    driver = napalm_eos(sim)
    driver.load_merge_candidate(config="interface Ethernet2\n   mtu 9214\n")
    driver.commit_config(revert_in=30)
    assert "   mtu 9214" in sim.running_config()
    assert driver.has_pending_commit()
    detail = pyeapi_node(sim, context=ca.client_context()).run_commands(["show configuration sessions detail"])[0]
    if version >= "4.32":
        assert detail["commitTimerSessionName"] == driver.config_session
        assert 25 < detail["commitTimerExpireTime"] - sim.uptime() <= 30
    else:
        assert 25 < detail["sessions"][driver.config_session]["commitBy"] - sim.uptime() <= 30
    assert detail["sessions"][driver.config_session]["state"] == "pendingCommitTimer"
    assert "   mtu 9214" not in sim.startup_config()  # no 'write memory' until confirmed
    driver.confirm_commit()
    assert not driver.has_pending_commit()
    assert "   mtu 9214" in sim.startup_config() and "   mtu 9214" in sim.running_config()
    driver.close()


def test_commit_timer_expires_and_reverts_by_itself(make_sim) -> None:
    sim = make_sim("leaf1")
    before = sim.running_config()
    driver = napalm_eos(sim)
    driver.load_merge_candidate(config="interface Ethernet2\n   mtu 9214\n")
    driver.commit_config(revert_in=2)
    assert "   mtu 9214" in sim.running_config()
    time.sleep(2.6)
    assert sim.running_config() == before
    assert not driver.has_pending_commit()
    with pytest.raises(CommitError):
        driver.confirm_commit()
    driver.close()


def test_discard_config(make_sim, ca: LabCA) -> None:
    sim = make_sim("leaf1")
    before = sim.running_config()
    driver = napalm_eos(sim)
    driver.load_merge_candidate(config="hostname other\n")
    node = pyeapi_node(sim, context=ca.client_context())
    assert [s["state"] for s in node.run_commands(["show configuration sessions"])[0]["sessions"].values()] == [
        "pending"
    ]
    driver.discard_config()
    assert node.run_commands(["show configuration sessions"])[0]["sessions"] == {}
    assert driver.compare_config() == ""
    assert sim.running_config() == before
    driver.close()


def test_rollback_restores_the_startup_config_saved_before_the_commit(make_sim) -> None:
    sim = make_sim("leaf1")
    before = sim.running_config()
    driver = napalm_eos(sim)
    driver.load_merge_candidate(config="interface Ethernet2\n   mtu 9214\n")
    driver.commit_config()
    assert "   mtu 9214" in sim.running_config()
    driver.rollback()  # configure replace flash:rollback-0, write memory
    assert sim.running_config() == before
    assert "   mtu 9214" not in sim.startup_config()
    # during a commit timer, rollback aborts the session at once
    driver.load_merge_candidate(config="interface Ethernet3\n   mtu 9100\n")
    driver.commit_config(revert_in=60)
    assert "   mtu 9100" in sim.running_config()
    driver.rollback()
    assert sim.running_config() == before and not driver.has_pending_commit()
    driver.close()


def test_a_pending_session_locks_out_a_second_napalm_load(make_sim) -> None:
    sim = make_sim("leaf1")
    first = napalm_eos(sim)
    first.load_merge_candidate(config="hostname a\n")
    second = napalm_eos(sim)
    second.config_session = "napalm_other"  # napalm names sessions by microsecond; make them distinct
    started = time.monotonic()
    with pytest.raises(SessionLockedException):
        second.load_merge_candidate(config="hostname b\n")
    assert time.monotonic() - started >= 10  # napalm retried for its 10 s lock wait
    first.commit_config()
    second.load_merge_candidate(config="hostname b\n")  # free again
    second.commit_config()
    assert "hostname b" in sim.running_config()
    first.close()
    second.close()


def test_state_dir_keeps_flash_across_restarts(make_sim, tmp_path: Path) -> None:
    sim = make_sim("leaf1", state_dir=tmp_path / "leaf1")
    driver = napalm_eos(sim)
    driver.load_merge_candidate(config="interface Ethernet3\n   description kept\n")
    driver.commit_config()
    driver.close()
    sim.stop()
    assert "description kept" in (tmp_path / "leaf1" / "flash" / "startup-config").read_text()
    again = make_sim("leaf1", state_dir=tmp_path / "leaf1")
    assert "   description kept" in again.running_config()


# -- faults -----------------------------------------------------------------------------------------------------------


def test_fault_reject_fails_the_load_like_an_invalid_command(make_sim, ca: LabCA) -> None:
    faults = Faults()
    faults.set("reject", r"^mtu 9214$")
    sim = make_sim("leaf1", faults=faults)
    driver = napalm_eos(sim)
    with pytest.raises(MergeConfigException, match="Invalid input"):
        driver.load_merge_candidate(config="interface Ethernet1\n   mtu 9214\n")
    node = pyeapi_node(sim, context=ca.client_context())
    assert node.run_commands(["show configuration sessions"])[0]["sessions"] == {}  # napalm aborted it
    driver.load_merge_candidate(config="interface Ethernet1\n   mtu 9100\n")  # other lines still pass
    driver.discard_config()
    driver.close()


def test_fault_drop_on_commit_closes_the_connection_and_does_not_commit(make_sim) -> None:
    faults = Faults()
    sim = make_sim("leaf1", faults=faults)
    before = sim.running_config()
    driver = napalm_eos(sim)
    driver.load_merge_candidate(config="interface Ethernet1\n   mtu 9214\n")
    faults.set("drop-on-commit")
    with pytest.raises(EapiConnectionError):
        driver.commit_config()
    assert sim.running_config() == before
    faults.clear()
    driver.commit_config()  # the session is still pending: the retry commits it
    assert "   mtu 9214" in sim.running_config()
    driver.close()


def test_faults_auth_refuse_delay_and_hang(make_sim) -> None:
    faults = Faults()
    sim = make_sim("leaf1", faults=faults)
    faults.set("auth-refuse")
    with pytest.raises(EapiConnectionError, match="Unauthorized"):
        napalm_eos(sim)
    faults.clear()
    faults.set("delay", "0.5")
    driver = napalm_eos(sim)
    started = time.monotonic()
    driver.get_facts()
    assert time.monotonic() - started >= 0.5
    faults.clear()
    faults.set("hang")
    slow = get_network_driver("eos")(
        sim.address, USER, PASSWORD, timeout=1, optional_args={"transport": "https", "port": sim.port}
    )
    started = time.monotonic()
    with pytest.raises(EapiConnectionError):
        slow.open()
    assert 0.9 <= time.monotonic() - started < 5
    faults.clear()
    assert driver.get_facts()["hostname"] == "leaf1"
    driver.close()


def test_jsonrpc_protocol_errors(make_sim, ca: LabCA) -> None:
    sim = make_sim("leaf1")
    import base64

    auth = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()

    def post(body: bytes) -> dict:
        conn = http.client.HTTPSConnection(sim.address, sim.port, context=ca.client_context(), timeout=5)
        conn.request("POST", "/command-api", body=body, headers={"Authorization": f"Basic {auth}"})
        return json.loads(conn.getresponse().read())

    assert post(b"not json")["error"]["code"] == -32700
    assert post(json.dumps({"jsonrpc": "2.0", "method": "nope", "id": "1"}).encode())["error"]["code"] == -32601
    ok = post(
        json.dumps(
            {"jsonrpc": "2.0", "method": "runCmds", "params": {"version": 1, "cmds": ["show hostname"]}, "id": "7"}
        ).encode()
    )
    assert ok == {"jsonrpc": "2.0", "id": "7", "result": [{"hostname": "leaf1", "fqdn": "leaf1.lab.example"}]}


def test_a_flash_copy_never_leads_out_of_flash(make_sim, tmp_path: Path, ca: LabCA) -> None:
    """`copy running-config flash:../../x` wrote the running config wherever the path led, as the lab's user; a
    symlink planted in flash was written through."""
    sim = make_sim("leaf1", state_dir=tmp_path / "leaf1")
    node = pyeapi_node(sim, context=ca.client_context())
    with pytest.raises(CommandError, match="No such file or directory"):
        node.run_commands(["enable", "copy running-config flash:../../escaped"])
    assert not (tmp_path / "escaped").exists()
    flash = tmp_path / "leaf1" / "flash"
    flash.mkdir(parents=True, exist_ok=True)
    outside = tmp_path / "outside"
    outside.write_text("precious\n")
    (flash / "backup.cfg").symlink_to(outside)
    node.run_commands(["enable", "copy running-config flash:backup.cfg"])
    assert outside.read_text() == "precious\n" and "hostname leaf1" in (flash / "backup.cfg").read_text()


OPERATOR_MANAGEMENT = (
    "snmp-server community fabmon ro\n"
    "snmp-server host 10.9.9.9 version 2c fabmon\n"
    "ntp server 10.9.9.1\n"
    "logging host 10.9.9.2\n"
)


def test_replace_push_keeps_the_operators_snmp_ntp_and_logging(make_sim) -> None:
    """The switch metrics are read over the operator's SNMP agent: a replace push of fabconf's config (which renders
    no snmp-server) keeps the running snmp-server, ntp and logging lines (issue 38; they were removed before)."""
    text = (GOLDEN / "leaf3.cfg").read_text()
    ports = sorted(set(re.findall(r"^interface (Ethernet\S+)", text, re.M)))
    model = re.match(r"! fabconf \S+ \((\S+)\)", text).group(1)  # type: ignore[union-attr]
    startup = default_startup_config("leaf3", ports).rstrip("\n").removesuffix("end").rstrip("\n")
    sim = make_sim("leaf3", ports=ports, model=model, startup_config=startup + "\n" + OPERATOR_MANAGEMENT + "end\n")
    driver = napalm_eos(sim)
    assert "snmp-server community fabmon ro" in driver.get_config(retrieve="running")["running"]
    assert "snmp-server" not in text
    driver.load_replace_candidate(config=keep_management("eos", driver.get_config(retrieve="running")["running"], text))
    assert not re.search(r"^-\s*(snmp-server|ntp|logging) ", driver.compare_config(), re.M)
    driver.commit_config()
    running = driver.get_config(retrieve="running")["running"]
    for line in OPERATOR_MANAGEMENT.splitlines():
        assert line in running
    driver.close()


# -- the lab view after each request (issue 42: made again only when the running config may have changed) ----------
def test_lab_view_follows_running_config_not_session_lines() -> None:
    sim = EosSim("leaf1", "127.0.0.1", ports=["Ethernet1"], username=USER, password=PASSWORD, ca=None)
    assert sim.lab_view().hostname == "leaf1"

    def ok(cmds: list[str], fmt: str = "json") -> list[dict]:
        reply = sim.run_cmds(cmds, fmt)
        assert "result" in reply, reply
        return reply["result"]

    # a session's lines, its diff and leaving it do not touch the running config, nor the view
    ok(["configure session s1", "hostname h1", "end"])
    assert "+hostname h1" in ok(["show session-config named s1 diffs"], "text")[0]["output"]
    assert sim.lab_view().hostname == "leaf1"
    # its commit does, at once
    ok(["configure session s1", "commit"])
    assert sim.lab_view().hostname == "h1"
    # configure mode, and a show later in the same request sees the change
    out = ok(["configure", "hostname h2", "end", "show hostname"])
    assert out[-1]["hostname"] == "h2" and sim.lab_view().hostname == "h2"
    # a commit timer that expires returns to the config before it (and the view with it)
    ok(["configure session s2", "hostname h3", "commit timer 00:00:01"])
    assert sim.lab_view().hostname == "h3"
    deadline = time.time() + 5
    while sim.lab_view().hostname != "h2" and time.time() < deadline:
        time.sleep(0.05)
    assert sim.lab_view().hostname == "h2"
    # aborting a session with a pending timer restores the running config
    ok(["configure session s3", "hostname h4", "commit timer 00:05:00"])
    assert sim.lab_view().hostname == "h4"
    ok(["configure session s3 abort"])
    assert sim.lab_view().hostname == "h2"
    # a request that fails halfway keeps what its earlier commands changed (eAPI runs them in order)
    reply = sim.run_cmds(["configure", "hostname h5", "bogus command here"], "json")
    assert "error" in reply and sim.lab_view().hostname == "h5"
