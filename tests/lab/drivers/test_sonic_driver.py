"""The SONiC driver against the lab's SONiC simulator over real SSH: a rendered CONFIG_DB staged as a JSON Patch
(merge and replace), committed with a checkpoint, confirmed or rolled back; a patch SONiC's YANG models refuse
changes nothing and says why in GCU's words."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from napalm.base.exceptions import CommitConfirmException, CommitError, ConnectionException

from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.render import environment
from fabconf.drivers.contract import CommitConflict, ConfigDiff, RevertTimer
from fabconf.platform.sonic.design import qos_sonic
from fabconf.platform.sonic.driver import CHECKPOINT, SonicDriver
from fabconf_lab.sonic.sim import SonicSim
from fabconf_lab.world import World

ROOT = Path(__file__).resolve().parents[3]
ADDR = "127.0.0.1"
USER, PASSWORD = "admin", "lab-sonic-pw"


def _rendered() -> tuple[str, dict[str, Any]]:
    """leaf1 of the example inventory as a SONiC switch, and the brownfield CONFIG_DB of that switch."""
    compiled = compile_inventory(ROOT / "inventory")
    d = copy.deepcopy(compiled.data["leaf1"])
    names = {i["name"]: f"Ethernet{n * 8}" for n, i in enumerate(d["interfaces"])}
    for i in d["interfaces"]:
        i["name"] = names[i["name"]]
    d["qos"] = qos_sonic(compiled.model.fabric, d["mtu"], {"family": "", "line": ""})
    text = environment().get_template("sonic/device.j2").render(**d)
    ports = [*names.values(), "Ethernet96"]  # one port fabconf does not manage
    brownfield: dict[str, Any] = {
        "DEVICE_METADATA": {"localhost": {"hostname": "sonic", "hwsku": "Mellanox-SN5600", "platform": "x86_64"}},
        "MGMT_INTERFACE": {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}},
        "PORT": {
            p: {
                "lanes": ",".join(str(n * 8 + j) for j in range(8)),
                "speed": "400000",
                "mtu": "9100",
                "admin_status": "up",
            }
            for n, p in enumerate(ports)
        },
        "INTERFACE": {"Ethernet96": {}, "Ethernet96|10.9.9.0/31": {}},
        "BGP_NEIGHBOR": {"10.9.9.1": {"asn": "65000", "name": "old"}},
    }
    return text, brownfield


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[SonicSim, SonicDriver, str]]:
    text, brownfield = _rendered()
    sim = SonicSim(
        "leaf1",
        ADDR,
        ssh_port=0,
        ports=sorted(brownfield["PORT"]),
        username=USER,
        password=PASSWORD,
        config=brownfield,
        bgpraw="router bgp 1",
        state_dir=tmp_path,
    )
    sim.start()
    key = sim.ssh.host_key
    known = tmp_path / "known_hosts"
    known.write_text(f"[{ADDR}]:{sim.port} {key.get_name()} {key.get_base64()}\n")
    driver = SonicDriver(
        ADDR, USER, PASSWORD, timeout=20, optional_args={"port": sim.port, "ssh_known_hosts": str(known)}
    )
    try:
        driver.open()
        yield sim, driver, text
    finally:
        driver.close()
        sim.stop()


def test_merge_push_confirm_then_nothing_left_to_change(lab: tuple[SonicSim, SonicDriver, str]) -> None:
    sim, driver, text = lab
    driver.load_merge_candidate(config=text)
    diff = driver.compare_config()
    assert '- PORT|Ethernet0 mtu: "9100"\n+ PORT|Ethernet0 mtu: "9216"' in diff
    assert "- BGP_NEIGHBOR|10.9.9.1" in diff  # routing rows are fabconf's: the stale neighbour goes
    assert "+ PFC_WD" in diff
    assert isinstance(driver, ConfigDiff) and not isinstance(driver, RevertTimer)  # fabconf reverts: a checkpoint
    unified = driver.config_diff()
    lines = unified.splitlines()
    assert any(ln.startswith("-") and '"mtu": "9100"' in ln for ln in lines)
    assert any(ln.startswith("+") and '"mtu": "9216"' in ln for ln in lines)
    driver.commit_config(revert_in=60)
    assert CHECKPOINT in sim.db.checkpoints and driver.has_pending_commit()
    driver.confirm_commit()
    assert CHECKPOINT not in sim.db.checkpoints and not driver.has_pending_commit()
    running = sim.db.running()
    assert running["MGMT_INTERFACE"] == {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}}  # never touched
    assert running["PORT"]["Ethernet96"]["mtu"] == "9100"  # a port fabconf does not manage
    assert running["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3"
    assert running["DEVICE_METADATA"]["localhost"]["hwsku"] == "Mellanox-SN5600"
    driver.load_merge_candidate(config=text)
    assert driver.compare_config() == ""  # idempotent
    assert json.loads(driver.get_config()["running"]) == running
    itfs = driver.get_interfaces()
    assert itfs["Ethernet0"]["mtu"] == 9216
    # Ethernet96 lost its stale /31 (routing rows are fabconf's) and is in no VLAN: an empty Vlan cell is read right
    assert "Ethernet96" not in {k.split("|")[0] for k in running["INTERFACE"]}
    assert itfs["Ethernet96"]["is_up"] and itfs["Ethernet96"]["mtu"] == 9100
    assert driver.get_facts()["hostname"] == "leaf1"


def test_an_unconfirmed_commit_is_rolled_back_from_the_checkpoint(lab: tuple[SonicSim, SonicDriver, str]) -> None:
    sim, driver, text = lab
    before = sim.db.running()
    driver.load_replace_candidate(config=text)
    driver.commit_config(revert_in=60)
    assert sim.db.running() != before
    driver.rollback()
    assert sim.db.running() == before
    assert not sim.db.checkpoints
    with pytest.raises(CommitConfirmException):
        driver.confirm_commit()


def test_a_patch_the_yang_models_refuse_changes_nothing(lab: tuple[SonicSim, SonicDriver, str]) -> None:
    pytest.importorskip("yangson")
    sim, driver, text = lab
    before = sim.db.running()
    doc = json.loads(text)
    doc["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "9"
    driver.load_merge_candidate(config=json.dumps(doc))
    with pytest.raises(CommitError, match=r"Given patch will produce invalid config.*pfc_enable"):
        driver.commit_config()
    assert sim.db.running() == before
    assert not sim.db.checkpoints  # the checkpoint of the refused commit is gone too


def test_a_change_made_between_read_and_apply_is_a_conflict_and_survives(
    lab: tuple[SonicSim, SonicDriver, str],
) -> None:
    """#43 on SONiC: another changer edits a table fabconf's patch touches after fabconf read the running CONFIG_DB.
    The patch's ``test`` operations make GCU refuse it whole: nothing of fabconf's is applied, the other change
    stays (no rollback from a checkpoint taken before it), no checkpoint is left, and the driver says conflict."""
    sim, driver, text = lab
    driver.load_merge_candidate(config=text)
    assert '+ PORT|Ethernet0 mtu: "9216"' in driver.compare_config()
    sim.db.apply([{"op": "add", "path": "/PORT/Ethernet0/fec", "value": "rs"}])  # the other changer
    moved = sim.db.running()
    with pytest.raises(CommitConflict, match=r"changed since its diff was computed.*is not equal to tested value"):
        driver.commit_config(revert_in=60)
    assert sim.db.running() == moved
    assert sim.db.running()["PORT"]["Ethernet0"]["fec"] == "rs"
    assert not sim.db.checkpoints and not driver.has_pending_commit()
    driver.load_merge_candidate(config=text)  # read again: the next push applies over the new base
    driver.commit_config(revert_in=60)
    driver.confirm_commit()
    assert sim.db.running()["PORT"]["Ethernet0"]["mtu"] == "9216"
    assert sim.db.running()["PORT"]["Ethernet0"]["fec"] == "rs"  # a field fabconf does not render stays


def test_the_simulator_refuses_a_failed_test_operation_in_jsonpatch_words(
    lab: tuple[SonicSim, SonicDriver, str],
) -> None:
    sim, _driver, _text = lab
    before = sim.db.running()
    sim.files["/tmp/p.json"] = json.dumps(
        [
            {"op": "test", "path": "/PORT/Ethernet0/mtu", "value": "1500"},
            {"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9216"},
        ]
    ).encode()
    _out, err, status = sim.run("sudo config apply-patch /tmp/p.json")
    assert status == 2 and "Failed to apply patch due to: 9100 (<class 'str'>) is not equal to tested value 1500" in err
    sim.files["/tmp/p.json"] = json.dumps([{"op": "test", "path": "/NO_SUCH/x", "value": {}}]).encode()
    _out, err, status = sim.run("sudo config apply-patch /tmp/p.json")
    assert status == 2 and "member 'NO_SUCH' not found in" in err
    assert sim.db.running() == before
    sim.files["/tmp/p.json"] = json.dumps([{"op": "test", "path": "/PORT/Ethernet0/mtu", "value": "9100"}]).encode()
    assert sim.run("sudo config apply-patch /tmp/p.json")[2] == 0


def test_preflight_reads_the_pfc_frames_received(lab: tuple[SonicSim, SonicDriver, str]) -> None:
    sim, driver, _text = lab
    assert driver.pfc_counters(["Ethernet0", "Ethernet8"]) == {
        "Ethernet0": {str(p): 0 for p in range(8)},
        "Ethernet8": {str(p): 0 for p in range(8)},
    }
    sim.pfc_pauses = lambda: 1234567  # a pause storm (the lab's pfc-storm fault), on priority 3 of ports up
    got = driver.pfc_counters(["Ethernet0", "Ethernet96", "Ethernet404"])
    assert set(got) == {"Ethernet0", "Ethernet96"}  # a port the switch does not have is left out
    assert got["Ethernet0"]["3"] == 1234567 and got["Ethernet0"]["4"] == 0
    assert "1,234,567" in sim.run("show pfc counters")[0]  # printed with thousands commas, as pfcstat does


def test_the_reads_verify_and_preflight_use(lab: tuple[SonicSim, SonicDriver, str]) -> None:
    sim, driver, text = lab
    driver.load_merge_candidate(config=text)
    driver.commit_config()
    driver.confirm_commit()
    sim.storms["Ethernet0:3"] = (1, 0)
    stats, _, status = driver._run("show pfcwd stats")
    assert status == 0
    assert stats.splitlines()[0].split()[:3] == ["QUEUE", "STATUS", "STORM"]
    assert "Ethernet0:3      stormed" in stats
    counters, _, _ = driver._run("show interfaces counters")
    assert counters.splitlines()[0].split()[:3] == ["IFACE", "STATE", "RX_OK"]
    sim.counters["Ethernet8"] = {"RX_OK": 1_234_567, "RX_ERR": 12, "TX_DRP": 3}
    read = driver.get_interfaces_counters()
    assert read["Ethernet8"]["rx_unicast_packets"] == 1_234_567  # portstat prints 1,234,567
    assert (read["Ethernet8"]["rx_errors"], read["Ethernet8"]["tx_discards"]) == (12, 3)
    assert read["Ethernet0"]["rx_errors"] == 0
    _, err, status = driver._run("sudo config rollback no-such-checkpoint")
    assert status == 2 and "Error: Checkpoint 'no-such-checkpoint' does not exist" in err


def test_the_simulator_refuses_what_gcu_refuses(lab: tuple[SonicSim, SonicDriver, str]) -> None:
    pytest.importorskip("yangson")
    sim, driver, _ = lab
    before = sim.db.running()
    cases = [
        ([{"op": "remove", "path": "/BGP_NEIGHBOR/10.9.9.1"}], "will result in empty tables"),
        ([{"op": "add", "path": "/NO_MODEL", "value": {"x": {"a": "b"}}}], "tables without YANG models"),
        ([{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9300"}], 'PORT_LIST[name="Ethernet0"]/mtu'),
    ]
    for patch, why in cases:
        driver._send("/tmp/p.json", json.dumps(patch).encode())
        _, err, status = driver._run("sudo config apply-patch /tmp/p.json")
        assert status == 2, patch
        assert err.startswith("Failed to apply patch due to: ") and why in err, err
        assert "Usage: config apply-patch [OPTIONS] PATCH_FILE_PATH" in err
    assert sim.db.running() == before


def test_the_world_sees_what_was_pushed(lab: tuple[SonicSim, SonicDriver, str]) -> None:
    sim, driver, text = lab
    driver.load_merge_candidate(config=text)
    driver.commit_config()
    driver.confirm_commit()
    view = sim.lab_view()
    assert view.hostname == "leaf1" and view.asn == 65101 and view.router_id == "10.255.1.1"
    assert {(n.peer, n.remote_as) for n in view.neighbors} == {("10.254.0.0", 65100), ("10.254.0.2", 65100)}
    assert view.ports["Ethernet32"].address == "10.254.0.1/31" and view.ports["Ethernet0"].mtu == 9216
    assert set(view.networks) == {"10.255.1.1/32", "10.101.0.0/24"}
    assert json.loads(sim.running_config()) == sim.db.running()


def test_a_connection_lost_mid_commit_leaves_the_checkpoint_to_roll_back_from(
    lab: tuple[SonicSim, SonicDriver, str],
) -> None:
    sim, driver, text = lab
    before = sim.db.running()
    driver.load_merge_candidate(config=text)
    sim.faults.drop_on_commit = True
    with pytest.raises(ConnectionException):
        driver.commit_config(revert_in=60)
    sim.faults.clear()
    assert sim.db.running() != before  # GCU applied it; the answer never came
    driver.open()  # a fresh connection (the next run) finds the unconfirmed commit and undoes it
    assert driver.has_pending_commit()
    driver.rollback()
    assert sim.db.running() == before and not driver.has_pending_commit()


def test_a_rejected_patch_is_reported_and_leaves_nothing(lab: tuple[SonicSim, SonicDriver, str]) -> None:
    sim, driver, text = lab
    before = sim.db.running()
    driver.load_merge_candidate(config=text)
    sim.faults.reject = re.compile("^/PFC_WD")
    with pytest.raises(CommitError, match="rejected /PFC_WD"):
        driver.commit_config()
    assert sim.db.running() == before and not sim.db.checkpoints


def _as_sonic(name: str) -> tuple[str, dict[str, str]]:
    compiled = compile_inventory(ROOT / "inventory")
    d = copy.deepcopy(compiled.data[name])
    names = {i["name"]: f"Ethernet{n * 8}" for n, i in enumerate(d["interfaces"])}
    for i in d["interfaces"]:
        i["name"] = names[i["name"]]
    d["qos"] = qos_sonic(compiled.model.fabric, d["mtu"], {"family": "", "line": ""})
    return environment().get_template("sonic/device.j2").render(**d), names


def test_lldp_and_bgp_read_back_from_the_world(tmp_path: Path) -> None:
    """leaf1 and spine1 as SONiC switches, cabled as the inventory says: after a push, leaf1 sees spine1 over LLDP
    and its BGP session to spine1 is up; the one to spine2 (not in this lab) is not."""
    leaf_text, leaf_ports = _as_sonic("leaf1")
    spine_text, spine_ports = _as_sonic("spine1")
    world = World([("leaf1", leaf_ports["swp63"], "spine1", spine_ports["Ethernet1/1"])])
    known = tmp_path / "known_hosts"
    sims, drivers = [], []
    try:
        for name, ports in (("leaf1", leaf_ports), ("spine1", spine_ports)):
            sim = SonicSim(
                name, ADDR, ssh_port=0, ports=sorted(ports.values()), username=USER, password=PASSWORD,
                world=world, state_dir=tmp_path,
            )  # fmt: skip
            sim.start()  # registers with the World
            sims.append(sim)
            key = sim.ssh.host_key
            with known.open("a") as fh:
                fh.write(f"[{ADDR}]:{sim.port} {key.get_name()} {key.get_base64()}\n")
        for sim, text in zip(sims, (leaf_text, spine_text), strict=True):
            args = {"port": sim.port, "ssh_known_hosts": str(known)}
            driver = SonicDriver(ADDR, USER, PASSWORD, timeout=20, optional_args=args)
            drivers.append(driver)
            driver.load_merge_candidate(config=text)
            driver.commit_config()
            driver.confirm_commit()
        world.invalidate()
        leaf = drivers[0]
        assert leaf.get_lldp_neighbors() == {
            leaf_ports["swp63"]: [{"hostname": "spine1", "port": spine_ports["Ethernet1/1"]}]
        }
        bgp = leaf.get_bgp_neighbors()["global"]
        assert bgp["router_id"] == "10.255.1.1"
        assert bgp["peers"]["10.254.0.0"]["is_up"] and bgp["peers"]["10.254.0.0"]["remote_as"] == 65100
        assert bgp["peers"]["10.254.0.0"]["description"] == "spine1:Ethernet1/1"
        assert not bgp["peers"]["10.254.0.2"]["is_up"]  # spine2 is not in this lab
        # the operational state: the cabled uplink is up; a port with no cable has no carrier in the World
        itfs = leaf.get_interfaces()
        assert itfs[leaf_ports["swp63"]]["is_up"] and itfs[leaf_ports["swp63"]]["speed"] == 400000.0
        world.set_carrier("leaf1", leaf_ports["swp63"], False)
        assert not leaf.get_interfaces()[leaf_ports["swp63"]]["is_up"]
        world.set_carrier("leaf1", leaf_ports["swp63"], True)
        # verify's ECMP read: spine1 reaches leaf1's loopback through leaf1's /31 only
        assert drivers[1].route_paths("10.255.1.1/32") == ["10.254.0.1"]
        assert leaf.route_paths("10.255.9.9/32") == []
        with pytest.raises(ValueError, match="not an IPv4 prefix"):
            leaf.route_paths('x"; reboot')
    finally:
        for driver in drivers:
            driver.close()
        for sim in sims:
            sim.stop()


def test_the_config_db_survives_a_restart_of_the_simulator(tmp_path: Path) -> None:
    """As /etc/sonic/config_db.json does on a switch: what GCU applied is there after ``lab down`` / ``lab up``."""
    ports = ["Ethernet0", "Ethernet8"]
    state = tmp_path / "leaf1"

    def start() -> SonicSim:
        sim = SonicSim("leaf1", ADDR, ssh_port=0, ports=ports, username=USER, password=PASSWORD, state_dir=state)
        sim.start()
        return sim

    sim = start()
    try:
        sim.db.apply([{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9216"}])
        applied = sim.db.running()
    finally:
        sim.stop()
    assert (state / "config_db.json").stat().st_mode & 0o077 == 0  # the operator's only
    sim = start()
    try:
        assert sim.db.running() == applied and applied["PORT"]["Ethernet0"]["mtu"] == "9216"
    finally:
        sim.stop()


def test_the_gnmi_server_is_pushed_and_counted_as_a_metric_source(lab: tuple[SonicSim, SonicDriver, str]) -> None:
    """monitoring.telemetry on SONiC: GNMI|gnmi passes the simulator's GCU (sonic-gnmi.yang), and the lab then
    counts the switch's gNMI server as configured (its /gnmic series)."""
    from fabconf_lab.metrics import switch_sources

    sim, driver, text = lab
    assert "gnmi" not in switch_sources(sim, "sonic")
    db = json.loads(text)
    db["GNMI"] = {"gnmi": {"port": "9339", "client_auth": "false", "user_auth": "password"}}
    driver.load_merge_candidate(config=json.dumps(db))
    assert "+ GNMI" in driver.compare_config()
    driver.commit_config()
    running = sim.db.running()
    assert running["GNMI"]["gnmi"] == {"port": "9339", "client_auth": "false", "user_auth": "password"}
    assert switch_sources(sim, "sonic") >= {"gnmi"}
