"""fabconf's Cumulus/NVUE driver against the lab's NVUE simulator, over real HTTPS and SSH on 127.14.x.x.

No mocks: every test starts ``NvueSim`` in-process (REST on 8765, the ``nv`` CLI over SSH on 22, TLS from a
per-test ``LabCA``) and drives ``CumulusDriver`` at it exactly as fabconf would drive a switch.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import itertools
import logging
import os
import time
import traceback
from pathlib import Path
from typing import Any

import pytest
import yaml
from napalm.base.exceptions import (
    CommitConfirmException,
    CommitError,
    ConnectionException,
    MergeConfigException,
)

from fabconf.compile.render import render
from fabconf.drivers.known_hosts import host_port_name
from fabconf.platform.cumulus.driver import CumulusDriver
from fabconf.platform.cumulus.plan import (
    DocumentError,
    diff_lines,
    merge_plan,
    parse_document,
    same,
    sanitize,
    tree_yaml,
    unowned_paths,
)
from fabconf_lab.faults import Faults
from fabconf_lab.metrics import Storm
from fabconf_lab.nvue.sim import NvueSim, default_startup_config
from fabconf_lab.tls import LabCA
from fabconf_lab.world import World

USER, PASSWORD = "cumulus", "Lab-Sw1tch-Secret-42"
PORTS = ["swp1", "swp2", "swp3", "swp4", "swp5", "swp63", "swp64"]
_BLOCK = 1 + os.getpid() % 250  # a /24 of 127.14.0.0/16 per test process
_hosts = itertools.count(1)


def _address() -> str:
    return f"127.14.{_BLOCK}.{next(_hosts) % 250 + 1}"


def brownfield(name: str = "leaf1") -> dict[str, Any]:
    """The simulator's hand-built switch plus a stale SVI and keys fabconf does not own."""
    tree = default_startup_config(name, PORTS)
    tree["interface"]["vlan100"] = {"type": "svi", "vlan": 100, "ip": {"address": {"10.100.0.1/24": {}}}}
    tree["interface"]["swp5"]["description"] = "keep me: not in intent"
    tree["system"]["timezone"] = "Europe/Berlin"
    return tree


SPINE1 = {  # the far end of leaf1 swp63, so that leaf1's BGP session to 10.254.0.0 can come up
    "system": {"hostname": "spine1"},
    "interface": {"swp1": {"type": "swp", "ip": {"address": {"10.254.0.0/31": {}}}}},
    "router": {"bgp": {"autonomous-system": 65100, "router-id": "10.255.0.1"}},
    "vrf": {
        "default": {
            "router": {"bgp": {"neighbor": {"10.254.0.1": {"type": "numbered", "remote-as": 65101}}}},
        }
    },
}


class Lab:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.ca = LabCA(tmp_path / "tls")
        self.sims: list[NvueSim] = []
        self.drivers: list[CumulusDriver] = []

    def sim(self, name: str = "leaf1", **kwargs: Any) -> NvueSim:
        kwargs.setdefault("ports", PORTS)
        kwargs.setdefault("startup_config", brownfield(name))
        kwargs.setdefault("apply_seconds", 0.05)
        kwargs.setdefault("faults", Faults())
        sim = NvueSim(name, _address(), username=USER, password=PASSWORD, ca=self.ca, **kwargs)
        sim.start()
        self.sims.append(sim)
        return sim

    def known_hosts(self, sim: NvueSim) -> str | None:
        if sim._ssh is None:
            return None
        key = sim._ssh.host_key
        path = self.tmp / f"known_hosts_{sim.name}"
        name = host_port_name(sim.address, sim._ssh.port)
        path.write_text(f"{name} {key.get_name()} {key.get_base64()}\n")
        return str(path)

    def driver(self, sim: NvueSim, password: str = PASSWORD, timeout: int = 10, **extra: Any) -> CumulusDriver:
        args: dict[str, Any] = {
            "port": sim.port,
            "ssh_port": sim.ssh_port,
            "ca_file": str(self.ca.ca_cert_path),
            "ssh_known_hosts": self.known_hosts(sim),
            "poll_interval": 0.02,
        }
        args.update(extra)
        drv = CumulusDriver(sim.address, USER, password, timeout=timeout, optional_args=args)
        self.drivers.append(drv)
        return drv

    def close(self) -> None:
        for drv in self.drivers:
            with contextlib.suppress(Exception):  # teardown must reach every simulator
                drv.close()
        for sim in self.sims:
            sim.stop()


@pytest.fixture
def lab(tmp_path: Path):
    world = Lab(tmp_path)
    yield world
    world.close()


@pytest.fixture(scope="module")
def leaf1_doc(example) -> str:
    return render(example.data["leaf1"])


@pytest.fixture(scope="module")
def leaf1_tree(leaf1_doc: str) -> dict[str, Any]:
    return parse_document(leaf1_doc)


def pending(sim: NvueSim) -> list[str]:
    return [rid for rid, rev in sim.store.revisions.items() if rev.state == "pending"]


def wait_for(predicate, seconds: float = 8.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def owned_part_applied(sim: NvueSim, doc: dict[str, Any]) -> bool:
    applied = sim.store.tree("applied")
    return all(
        [
            same(applied["qos"], doc["qos"]),
            same(applied["interface"]["swp63"], doc["interface"]["swp63"]),
            same(applied["router"]["bgp"], doc["router"]["bgp"]),
            same(applied["vrf"]["default"]["router"]["bgp"], doc["vrf"]["default"]["router"]["bgp"]),
            same(applied["bridge"]["domain"]["br_default"]["vlan"], doc["bridge"]["domain"]["br_default"]["vlan"]),
        ]
    )


# -- open and getters ---------------------------------------------------------------------------------
def test_open_and_getters_in_napalm_shapes(lab: Lab, leaf1_doc: str) -> None:
    world = World([("leaf1", "swp63", "spine1", "swp1")])
    sim = lab.sim(world=world)
    lab.sim("spine1", world=world, ports=["swp1"], startup_config=copy.deepcopy(SPINE1), ssh_port=None)
    drv = lab.driver(sim)
    drv.open()
    assert drv.is_alive() == {"is_alive": True}

    facts = drv.get_facts()
    assert facts["hostname"] == "leaf1" and facts["vendor"] == "NVIDIA"
    assert facts["os_version"].startswith("5.") and facts["serial_number"] and facts["model"]
    assert isinstance(facts["uptime"], float)
    assert facts["interface_list"] == ["eth0", "lo", *PORTS, "vlan100"]

    ifaces = drv.get_interfaces()
    assert ifaces["swp1"] == {
        "is_up": False,  # not cabled in this world
        "is_enabled": True,
        "description": "old uplink - decom 2023",
        "last_flapped": -1.0,
        "mtu": 9216,
        "speed": 400000.0,
        "mac_address": "",
    }
    assert ifaces["swp63"]["is_up"] is True and ifaces["eth0"]["mtu"] == 1500

    assert drv.get_lldp_neighbors() == {"swp63": [{"hostname": "spine1", "port": "swp1"}]}
    assert drv.get_bgp_neighbors() == {"global": {"router_id": "", "peers": {}}}  # brownfield has no BGP

    config = drv.get_config()
    assert config["running"].startswith("- set:\n") and config["candidate"] == ""
    assert parse_document(config["running"]) == sim.store.tree("applied")
    assert config == drv.get_config()  # deterministic
    assert drv.get_config(retrieve="startup") == {"running": "", "startup": config["startup"], "candidate": ""}

    # once leaf1 runs its intent, the session to spine1 (cabled, addressed, ASNs agree) is established
    drv.load_merge_candidate(config=leaf1_doc)
    drv.commit_config()
    bgp = drv.get_bgp_neighbors()["global"]
    assert bgp["router_id"] == "10.255.1.1"
    up, down = bgp["peers"]["10.254.0.0"], bgp["peers"]["10.254.0.2"]
    assert (up["is_up"], up["remote_as"], up["local_as"], up["description"]) == (
        True,
        65100,
        65101,
        "spine1:Ethernet1/1",
    )
    assert (down["is_up"], down["remote_as"], down["is_enabled"]) == (False, 65100, True)
    assert set(up["address_family"]["ipv4"]) == {"received_prefixes", "accepted_prefixes", "sent_prefixes"}
    assert drv.get_interfaces()["swp63"]["mtu"] == 9214


def test_pfc_counters_per_switch_priority_move_with_a_storm(lab: Lab) -> None:
    """``nv show interface IF counters qos pfc-stats`` through the REST API, per port: each switch priority's
    received PFC frames; a pfc-storm fault (the orchestrator hands the simulator its Storm) moves the RoCE
    priority's on a port that is up, and nothing on one that is down; errors move with ``link PORT:errors=R``."""
    world = World([("leaf1", "swp63", "spine1", "swp1")])
    sim = lab.sim(world=world)
    lab.sim("spine1", world=world, ports=["swp1"], startup_config=copy.deepcopy(SPINE1), ssh_port=None)
    drv = lab.driver(sim)
    drv.open()
    clean = drv.pfc_counters(["swp63", "swp1"])
    assert clean["swp63"] == {str(p): 0 for p in range(8)} and set(clean) == {"swp63", "swp1"}
    storm = Storm()
    storm.start()
    sim.pfc_pauses = storm.pauses  # `fabconf lab fault leaf1 pfc-storm`
    sim.error_ratio["swp63"] = 0.01  # `fabconf lab fault leaf1 link swp63:errors=0.01`
    first = drv.pfc_counters(["swp63", "swp1"])
    errors = drv.get_interfaces_counters()["swp63"]
    time.sleep(0.05)
    second = drv.pfc_counters(["swp63", "swp1"])
    assert second["swp63"]["3"] > first["swp63"]["3"] > 0
    assert {p: n for p, n in second["swp63"].items() if p != "3"} == {str(p): 0 for p in range(8) if p != 3}
    assert second["swp1"]["3"] == 0  # not cabled: down
    assert drv.get_interfaces_counters()["swp63"]["rx_errors"] > errors["rx_errors"] > 0
    assert drv.pfc_counters(["swp99"]) == {}  # no such port: left out


# -- merge, compare, discard ------------------------------------------------------------------------------
def test_merge_onto_brownfield_compare_and_discard(lab: Lab, leaf1_doc: str) -> None:
    sim = lab.sim()
    before = sim.store.tree("applied")
    drv = lab.driver(sim)
    drv.open()
    drv.load_merge_candidate(config=leaf1_doc)
    assert len(pending(sim)) == 1
    diff = drv.compare_config()
    lines = diff.splitlines()
    assert "nv set qos mapping default-global trust l3" in lines
    assert "nv set qos pfc default-global switch-priority 3" in lines
    assert "nv set qos congestion-control default-global traffic-class 3 min-threshold 150000" in lines
    assert "nv unset bridge domain br_default vlan 100" in lines  # VLAN gone from intent
    assert "nv unset interface vlan100" in lines  # stale SVI
    assert "nv unset interface swp64 bridge" in lines  # the old access port is now an uplink
    assert "nv set interface swp63 link mtu 9214" in lines
    assert not [line for line in lines if "swp5" in line or "eth0" in line or "timezone" in line or "untagged" in line]
    unsets = [line for line in lines if line.startswith("nv unset")]
    assert lines[: len(unsets)] == unsets and all(line.startswith("nv set") for line in lines[len(unsets) :])
    assert diff == drv.compare_config()  # deterministic
    assert drv.get_config(retrieve="candidate")["candidate"].startswith("- set:")

    drv.discard_config()
    assert pending(sim) == [] and sim.store.revisions == {}
    assert drv.compare_config() == ""
    assert sim.store.tree("applied") == before


def test_merge_sends_only_owned_paths_that_differ(lab: Lab, leaf1_tree: dict[str, Any]) -> None:
    sim = lab.sim()
    applied = sim.store.tree("applied")
    plan = merge_plan(leaf1_tree, applied)
    assert ("interface", "vlan100") in plan.deletes and ("interface", "swp5") not in plan.changed
    assert ("interface", "eth0") not in plan.changed and "eth0" not in plan.patch.get("interface", {})
    assert ("system", "hostname") not in plan.changed  # already "leaf1": nothing sent
    assert "system" not in plan.patch and "system" not in [p[0] for p in plan.deletes]
    # a document already applied plans nothing at all
    assert merge_plan(leaf1_tree, parse_document(tree_yaml(leaf1_tree))).empty


def test_document_outside_the_owned_paths_is_refused(lab: Lab, leaf1_doc: str) -> None:
    sim = lab.sim()
    drv = lab.driver(sim)
    drv.open()
    doc = parse_document(leaf1_doc)
    doc["system"]["timezone"] = "UTC"
    doc["vrf"]["mgmt"] = {"router": {"static": {}}}
    with pytest.raises(MergeConfigException, match=r"system/timezone, vrf/mgmt"):
        drv.load_merge_candidate(config=tree_yaml(doc))
    assert sim.store.revisions == {}  # refused before any revision was created
    with pytest.raises(MergeConfigException, match="not valid YAML"):
        drv.load_merge_candidate(config="- set: {unclosed")


# -- commit, idempotence, ownership ---------------------------------------------------------------------
def test_commit_then_second_merge_is_idempotent(lab: Lab, leaf1_doc: str, leaf1_tree: dict[str, Any]) -> None:
    sim = lab.sim()
    drv = lab.driver(sim)
    drv.open()
    drv.load_merge_candidate(config=leaf1_doc)
    drv.commit_config(message="lossless qos")
    assert pending(sim) == [] and not drv.has_pending_commit()
    applied = sim.store.tree("applied")
    assert owned_part_applied(sim, leaf1_tree)
    assert applied["qos"]["mapping"]["default-global"]["trust"] == "l3"
    assert applied["qos"]["congestion-control"]["default-global"]["traffic-class"]["3"]["max-threshold"] == 1500000
    assert applied["interface"]["swp63"]["link"]["mtu"] == 9214 and applied["interface"]["swp1"]["link"]["mtu"] == 9216
    assert "vlan100" not in applied["interface"] and applied["bridge"]["domain"]["br_default"]["vlan"] == {"101": {}}
    # what fabconf does not own survives
    assert applied["interface"]["swp5"]["description"] == "keep me: not in intent"
    assert applied["interface"]["eth0"] == {"type": "eth", "ip": {"address": {"dhcp": {}}, "vrf": "mgmt"}}
    assert applied["system"]["timezone"] == "Europe/Berlin"
    assert applied["bridge"]["domain"]["br_default"]["untagged"] == 1
    assert sim.store.startup == sim.store.applied  # auto-save

    history = len(sim.store.history)
    drv.load_merge_candidate(config=leaf1_doc)
    assert drv.compare_config() == ""
    drv.commit_config()  # nothing to change: nothing is applied, the revision is gone
    assert len(sim.store.history) == history and pending(sim) == []
    drv.confirm_commit()  # confirming a commit that changed nothing is a no-op


def test_replace_candidate_becomes_the_whole_config_but_management(
    lab: Lab, leaf1_doc: str, leaf1_tree: dict[str, Any]
) -> None:
    sim = lab.sim()
    drv = lab.driver(sim)
    drv.open()
    eth0 = sim.store.tree("applied")["interface"]["eth0"]
    drv.load_replace_candidate(config=leaf1_doc)
    lines = drv.compare_config().splitlines()
    assert "nv unset system timezone" in lines and "nv unset interface swp5" in lines
    assert not any(line.startswith("nv unset interface eth0") for line in lines)  # management is kept
    drv.commit_config()
    applied = sim.store.tree("applied")
    assert applied["interface"].pop("eth0") == eth0
    assert applied["system"].pop("snmp-server")["state"] == "enabled"  # the brownfield's SNMP agent is kept too
    assert same(applied, leaf1_tree)
    drv.load_replace_candidate(config=leaf1_doc)
    assert drv.compare_config() == ""
    drv.discard_config()
    assert pending(sim) == []


def test_replace_keeps_the_operators_snmp_agent(lab: Lab, leaf1_doc: str) -> None:
    """The switch metrics are read over the operator's SNMP agent (system snmp-server), which fabconf does not
    render: a replace push keeps it, as it keeps eth0 (issue 38; it was removed before)."""
    startup = brownfield("leaf1")
    snmp = {"state": "enabled", "listening-address": {"localhost": {}}}
    startup["system"]["snmp-server"] = copy.deepcopy(snmp)
    sim = lab.sim(startup_config=startup)
    drv = lab.driver(sim)
    drv.open()
    assert "snmp-server" not in parse_document(leaf1_doc).get("system", {})
    drv.load_replace_candidate(config=leaf1_doc)
    assert not any(line.startswith("nv unset system snmp-server") for line in drv.compare_config().splitlines())
    drv.commit_config()
    assert sim.store.tree("applied")["system"]["snmp-server"] == snmp


# -- commit-confirm over SSH ----------------------------------------------------------------------------
def test_commit_with_revert_in_and_no_confirm_reverts_by_itself(
    lab: Lab, leaf1_doc: str, leaf1_tree: dict[str, Any]
) -> None:
    sim = lab.sim()
    before = sim.store.tree("applied")
    drv = lab.driver(sim)
    drv.open()
    drv.load_merge_candidate(config=leaf1_doc)
    drv.commit_config(revert_in=2)
    assert owned_part_applied(sim, leaf1_tree)
    assert drv.has_pending_commit() is True
    assert sim.store.startup == before  # not saved while the confirm is pending
    assert wait_for(lambda: not drv.has_pending_commit(), 6.0)
    assert sim.store.tree("applied") == before
    assert sim.store.history[-1].action == "confirm-timeout"
    with pytest.raises(CommitConfirmException):
        drv.confirm_commit()  # too late: the switch already reverted


def test_commit_with_revert_in_and_confirm_stays(lab: Lab, leaf1_doc: str, leaf1_tree: dict[str, Any]) -> None:
    sim = lab.sim()
    drv = lab.driver(sim)
    drv.open()
    drv.load_merge_candidate(config=leaf1_doc)
    drv.commit_config(message="canary", revert_in=2)
    assert drv.has_pending_commit()
    drv.confirm_commit()
    assert not drv.has_pending_commit()
    time.sleep(2.5)
    assert owned_part_applied(sim, leaf1_tree)
    assert sim.store.startup == sim.store.applied  # saved on confirm (auto-save)
    assert all(entry.action == "apply" for entry in sim.store.history)
    with pytest.raises(CommitConfirmException):
        drv.confirm_commit()  # nothing left to confirm


def test_a_later_session_confirms_what_the_switch_holds(lab: Lab, leaf1_doc: str, tmp_path: Path) -> None:
    sim = lab.sim()
    path = tmp_path / "leaf1.yaml"
    path.write_text(leaf1_doc)
    with lab.driver(sim) as first:
        first.load_merge_candidate(filename=str(path))
        first.commit_config(revert_in=30)
    with lab.driver(sim) as second:  # as NAPALM's EOS driver: confirm what the device has pending
        assert second.has_pending_commit()
        second.confirm_commit()
        assert not second.has_pending_commit()
        with pytest.raises(CommitConfirmException, match="no commit is waiting"):
            second.confirm_commit()
    assert sim.store.applied["qos"]["mapping"]["default-global"]["trust"] == "l3"


def test_unknown_ssh_host_key_refuses_revert_in_commit_and_leaves_nothing(lab: Lab, leaf1_doc: str) -> None:
    sim = lab.sim()
    before = sim.store.tree("applied")
    other = lab.sim("leaf9")  # its host key is not leaf1's
    wrong = lab.tmp / "wrong_known_hosts"
    key = other._ssh.host_key
    wrong.write_text(f"{host_port_name(sim.address, sim.ssh_port)} {key.get_name()} {key.get_base64()}\n")
    drv = lab.driver(sim, ssh_known_hosts=str(wrong))
    drv.open()
    drv.load_merge_candidate(config=leaf1_doc)
    with pytest.raises(ConnectionException, match="host key"):
        drv.commit_config(revert_in=30)
    assert sim.store.tree("applied") == before and pending(sim) == []


# -- rollback --------------------------------------------------------------------------------------------
def test_rollback_reapplies_the_previous_revision(lab: Lab, leaf1_doc: str) -> None:
    sim = lab.sim()
    drv = lab.driver(sim)
    drv.open()
    drv.load_merge_candidate(config=leaf1_doc)
    drv.commit_config()
    first = sim.store.applied_id
    tree_a = sim.store.tree("applied")
    doc_b = parse_document(leaf1_doc)
    doc_b["qos"]["pfc"]["default-global"]["cable-length"] = 50
    doc_b["interface"]["swp1"]["link"]["mtu"] = 9000
    drv.load_merge_candidate(config=tree_yaml(doc_b))
    assert drv.compare_config().splitlines() == [
        "nv set interface swp1 link mtu 9000",
        "nv set qos pfc default-global cable-length 50",
    ]
    drv.commit_config()
    assert sim.store.applied["interface"]["swp1"]["link"]["mtu"] == 9000
    drv.rollback()
    assert sim.store.tree("applied") == tree_a
    assert (sim.store.history[-1].action, sim.store.history[-1].rev_id) == ("rollback", first)
    with pytest.raises(CommitError, match="nothing to roll back"):
        drv.rollback()


def test_rollback_of_the_first_commit_returns_to_brownfield(lab: Lab, leaf1_doc: str) -> None:
    sim = lab.sim()
    before = sim.store.tree("applied")
    drv = lab.driver(sim)
    drv.open()
    drv.load_merge_candidate(config=leaf1_doc)
    drv.commit_config()
    assert sim.store.tree("applied") != before
    drv.rollback()  # no earlier revision id and startup was saved over: a revision holding the old tree
    assert sim.store.tree("applied") == before and pending(sim) == []
    assert sim.store.history[-1].action == "apply" and len(sim.store.history) == 2


def test_rollback_while_a_confirm_is_pending(lab: Lab, leaf1_doc: str) -> None:
    sim = lab.sim()
    before = sim.store.tree("applied")
    drv = lab.driver(sim)
    drv.open()
    drv.load_merge_candidate(config=leaf1_doc)
    drv.commit_config(revert_in=60)
    assert drv.has_pending_commit()
    drv.rollback()  # verify failed: back at once, do not wait a minute for the timer
    assert sim.store.tree("applied") == before
    last = sim.store.history[-1]
    assert (last.action, last.message) == ("rollback", "rollback to startup")  # startup was not saved over
    assert not drv.has_pending_commit()


# -- failures --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("revert_in", [None, 30], ids=["rest", "cli"])
def test_rejected_apply_changes_nothing(lab: Lab, leaf1_doc: str, revert_in: int | None) -> None:
    faults = Faults()
    faults.set("reject", r"qos mapping default-global trust l3")
    sim = lab.sim(faults=faults)
    before = sim.store.tree("applied")
    drv = lab.driver(sim)
    drv.open()
    drv.load_merge_candidate(config=leaf1_doc)
    with pytest.raises(CommitError) as err:
        drv.commit_config(revert_in=revert_in)
    assert "not applied" in str(err.value)
    assert "Rejected by the switch: nv set qos mapping default-global trust l3" in str(err.value)
    assert sim.store.tree("applied") == before and pending(sim) == []
    assert not drv.has_pending_commit()


@pytest.mark.parametrize("revert_in", [None, 30], ids=["rest", "cli"])
def test_connection_dropped_on_commit_leaves_the_switch_unchanged(
    lab: Lab, leaf1_doc: str, revert_in: int | None
) -> None:
    faults = Faults()
    sim = lab.sim(faults=faults)
    before = sim.store.tree("applied")
    drv = lab.driver(sim)
    drv.open()
    drv.load_merge_candidate(config=leaf1_doc)
    faults.set("drop-on-commit")
    with pytest.raises((CommitError, ConnectionException)) as err:
        drv.commit_config(revert_in=revert_in)
    assert "did not apply" in str(err.value) and "nothing changed" in str(err.value)
    assert sim.store.tree("applied") == before and pending(sim) == []
    faults.clear()
    # the driver reconnects by itself and can go on
    assert drv.is_alive() == {"is_alive": True}
    drv.load_merge_candidate(config=leaf1_doc)
    drv.commit_config(revert_in=revert_in)
    if revert_in:
        drv.confirm_commit()
    assert sim.store.applied["qos"]["mapping"]["default-global"]["trust"] == "l3"


def _chain(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)) + repr(exc)


def test_bad_password_is_a_connection_error_without_the_password(lab: Lab) -> None:
    sim = lab.sim()
    wrong = "Wr0ng-Secret-Value-7"
    drv = lab.driver(sim, password=wrong)
    with pytest.raises(ConnectionException, match="refused user 'cumulus': HTTP 401") as err:
        drv.open()
    assert wrong not in _chain(err.value) and PASSWORD not in _chain(err.value)


def test_unreachable_untrusted_and_hanging_switches(lab: Lab) -> None:
    sim = lab.sim(faults=Faults())
    # nothing listens there
    drv = CumulusDriver(_address(), USER, PASSWORD, timeout=3, optional_args={"ca_file": str(lab.ca.ca_cert_path)})
    with pytest.raises(ConnectionException, match=r"cannot reach the NVUE API at https://127\.14.*refused"):
        drv.open()
    # a certificate from a CA we do not trust
    drv = lab.driver(sim, ca_file=None)
    with pytest.raises(ConnectionException, match="TLS certificate not trusted"):
        drv.open()
    drv = lab.driver(sim, ca_file=None, verify=False)  # explicitly unverified: works
    drv.open()
    drv.close()
    # a switch that accepts and never answers
    sim.faults.set("hang")
    drv = lab.driver(sim, timeout=1)
    try:
        with pytest.raises(ConnectionException, match="timed out") as err:
            drv.open()
        assert PASSWORD not in _chain(err.value)
    finally:
        sim.faults.clear()


def test_one_https_connection_and_no_secret_in_logs(lab: Lab, leaf1_doc: str, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    sim = lab.sim()
    drv = lab.driver(sim)
    drv.open()
    assert drv.api._conn is not None
    sock = drv.api._conn.sock
    drv.get_facts()
    drv.get_interfaces()
    drv.load_merge_candidate(config=leaf1_doc)
    drv.compare_config()
    drv.commit_config(revert_in=30)  # the SSH session logs in with the same password
    drv.confirm_commit()
    drv.get_config()
    assert (
        drv.api._conn is not None and drv.api._conn.sock is sock
    )  # every request above went over the connection open() made
    drv.close()
    assert drv.is_alive() == {"is_alive": False}
    assert "GET /nvue_v1/system" in caplog.text and "nv config apply" in caplog.text
    assert PASSWORD not in caplog.text
    assert base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode() not in caplog.text


def test_without_ssh_there_is_no_revert_in(lab: Lab, leaf1_doc: str) -> None:
    sim = lab.sim(ssh_port=None)
    before = sim.store.tree("applied")
    drv = lab.driver(sim, ssh_port=None, ssh_known_hosts=None)
    drv.open()
    assert drv.has_pending_commit() is False
    drv.load_merge_candidate(config=leaf1_doc)
    with pytest.raises(CommitError, match="needs the nv CLI over SSH"):
        drv.commit_config(revert_in=30)
    assert sim.store.tree("applied") == before and pending(sim) == []


def test_close_deletes_an_uncommitted_candidate(lab: Lab, leaf1_doc: str) -> None:
    sim = lab.sim()
    with lab.driver(sim) as drv:
        drv.load_merge_candidate(config=leaf1_doc)
        assert len(pending(sim)) == 1
    assert pending(sim) == []


# -- the pure parts --------------------------------------------------------------------------------------
def test_document_reading_keeps_nvue_strings_strings() -> None:
    tree = parse_document("- header: {model: X}\n- set:\n    a:\n      enable: on\n      rt: 65101:10\n      n: 7\n")
    assert tree == {"a": {"enable": "on", "rt": "65101:10", "n": 7}}
    assert parse_document("- set: {a: {b: 1}}\n- set: {a: {c: }}") == {"a": {"b": 1, "c": {}}}
    assert parse_document('{"a": {"10": {}}}') == {"a": {"10": {}}}
    with pytest.raises(DocumentError, match="expected 'set'"):
        parse_document("- unset: {a: {}}")
    with pytest.raises(DocumentError, match="a list is not part"):
        parse_document("- set: {a: [1, 2]}")


def test_diff_lines_plan_and_printing() -> None:
    before = {"s": {"h": "x", "old": {"k": 1}}, "i": {"swp10": {"m": 1}, "swp2": {"m": 1}}}
    after = {"s": {"h": "y z"}, "i": {"swp2": {"m": 2, "d": {}}, "swp10": {"m": "1"}}}
    assert diff_lines(before, after) == ["nv unset s old", "nv set i swp2 d", "nv set i swp2 m 2", "nv set s h 'y z'"]
    assert diff_lines(after, after) == []
    plan = merge_plan({"system": {"hostname": "b"}}, {"system": {"hostname": "a", "timezone": "UTC"}})
    assert (plan.deletes, plan.patch) == ((), {"system": {"hostname": "b"}})  # a leaf over a leaf: set only
    assert unowned_paths({"system": {"hostname": "h"}, "bridge": {"domain": {"br_default": {"untagged": 1}}}}) == [
        "bridge/domain/br_default/untagged"
    ]
    tree = {"b": {"enable": "on", "10": {}, "9": {}}, "a": {"password": "s3cret", "rt": "65101:10"}}
    text = tree_yaml(tree)
    assert text.index("'9'") < text.index("'10'") and text.index("a:") < text.index("b:")
    assert parse_document(text) == tree and yaml.safe_load(text)[0]["set"]["b"]["enable"] == "on"
    assert sanitize(tree)["a"] == {"password": "<removed>", "rt": "65101:10"}


def test_merge_keeps_a_bridge_vlan_an_unowned_port_still_uses() -> None:
    """A brownfield access port fabconf does not own keeps its VLAN in the bridge (NVUE refuses an access VLAN
    outside the bridge on apply); an owned port's old VLAN is still removed."""
    from fabconf.platform.cumulus.plan import keep_used_vlans

    applied: dict[str, Any] = {
        "interface": {
            "swp1": {"bridge": {"domain": {"br_default": {"access": 99}}}},
            "swp9": {"bridge": {"domain": {"br_default": {"access": 100}}}},
        },
        "bridge": {"domain": {"br_default": {"vlan": {"99": {}, "100": {}}}}},
    }
    doc: dict[str, Any] = {
        "interface": {"swp1": {"bridge": {"domain": {"br_default": {"access": 101}}}}},
        "bridge": {"domain": {"br_default": {"vlan": {"101": {}}}}},
    }
    kept = keep_used_vlans(doc, applied)
    assert kept["bridge"]["domain"]["br_default"]["vlan"] == {"101": {}, "100": {}}
    assert doc["bridge"]["domain"]["br_default"]["vlan"] == {"101": {}}  # the document itself is not changed
    assert keep_used_vlans(doc, {"interface": {}}) is doc
    # a routed switch: no VLANs at all
    spine: dict[str, Any] = {"interface": {"swp1": {"ip": {"address": {"10.0.0.1/31": {}}}}}}
    assert keep_used_vlans(spine, applied)["bridge"] == {"domain": {"br_default": {"vlan": {"100": {}}}}}
