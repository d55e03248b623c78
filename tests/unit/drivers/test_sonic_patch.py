"""SONiC's JSON Patch: what merge and replace mode change, and that the patch, applied as RFC 6902 says, turns the
running CONFIG_DB into the target (checked by an independent applier, the lab's)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fabconf.platform.sonic.patch import PatchError, describe, json_patch, parse, target
from fabconf_lab.sonic.gcu import PatchRefused, apply_patch

RUNNING: dict[str, Any] = {
    "DEVICE_METADATA": {"localhost": {"hostname": "old", "hwsku": "Mellanox-SN5600", "mac": "00:11:22:33:44:55"}},
    "MGMT_INTERFACE": {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}},
    "PORT": {
        "Ethernet0": {"lanes": "0,1,2,3", "speed": "400000", "mtu": "9100", "fec": "rs"},
        "Ethernet8": {"lanes": "8,9,10,11", "speed": "400000", "mtu": "9100"},
    },
    "INTERFACE": {"Ethernet0": {}, "Ethernet0|10.9.9.0/31": {}},
    "BGP_NEIGHBOR": {"10.9.9.1": {"asn": "65000", "name": "old-spine"}},
    "DSCP_TO_TC_MAP": {"AZURE": {"0": "1"}, "FABCONF_OLD": {"0": "0"}},
    "PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3,4"}, "Ethernet8": {"pfc_enable": "3"}},
}
RENDERED: dict[str, Any] = {
    "DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "bgp_asn": "65101"}},
    "PORT": {"Ethernet0": {"mtu": "9216", "admin_status": "up"}},
    "INTERFACE": {"Ethernet0": {}, "Ethernet0|10.254.0.1/31": {}},
    "BGP_NEIGHBOR": {"10.254.0.0": {"asn": "65100", "name": "spine1"}},
    "DSCP_TO_TC_MAP": {"FABCONF_ROCE": {"26": "3"}},
    "PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3", "dscp_to_tc_map": "FABCONF_ROCE"}},
}


def test_merge_changes_what_fabconf_owns_and_keeps_the_rest() -> None:
    want = target(RUNNING, RENDERED, replace=False)
    assert want["MGMT_INTERFACE"] == RUNNING["MGMT_INTERFACE"]  # the management plane is never touched
    assert want["DEVICE_METADATA"]["localhost"] == {
        "hostname": "leaf1",
        "bgp_asn": "65101",
        "hwsku": "Mellanox-SN5600",
        "mac": "00:11:22:33:44:55",
    }
    assert want["PORT"]["Ethernet0"] == {
        "lanes": "0,1,2,3",
        "speed": "400000",
        "mtu": "9216",
        "fec": "rs",
        "admin_status": "up",
    }
    assert want["PORT"]["Ethernet8"] == RUNNING["PORT"]["Ethernet8"]  # a port fabconf does not manage
    assert want["INTERFACE"] == RENDERED["INTERFACE"]  # the old /31 is removed: routing rows are all fabconf's
    assert want["BGP_NEIGHBOR"] == RENDERED["BGP_NEIGHBOR"]
    assert want["DSCP_TO_TC_MAP"] == {"AZURE": {"0": "1"}, "FABCONF_ROCE": {"26": "3"}}  # FABCONF_OLD removed
    # another port's QoS row stays; the managed port's row keeps fields fabconf does not render (merge)
    assert want["PORT_QOS_MAP"]["Ethernet8"] == {"pfc_enable": "3"}
    assert want["PORT_QOS_MAP"]["Ethernet0"] == {"pfc_enable": "3", "dscp_to_tc_map": "FABCONF_ROCE"}


def test_replace_drops_unrendered_fields_of_owned_rows_but_never_the_devices_port_fields() -> None:
    running = copy.deepcopy(RUNNING)
    running["PORT_QOS_MAP"]["Ethernet0"]["pfcwd_sw_enable"] = "3"
    merged = target(running, RENDERED, replace=False)
    replaced = target(running, RENDERED, replace=True)
    assert merged["PORT_QOS_MAP"]["Ethernet0"]["pfcwd_sw_enable"] == "3"
    assert "pfcwd_sw_enable" not in replaced["PORT_QOS_MAP"]["Ethernet0"]
    assert replaced["PORT"]["Ethernet0"]["lanes"] == "0,1,2,3"
    assert replaced["MGMT_INTERFACE"] == RUNNING["MGMT_INTERFACE"]


@pytest.mark.parametrize("replace", [False, True])
def test_the_patch_turns_running_into_the_target(replace: bool) -> None:
    want = target(RUNNING, RENDERED, replace=replace)
    ops = json_patch(RUNNING, want)
    assert apply_patch(RUNNING, ops) == want
    assert json_patch(want, want) == []  # idempotent: nothing left to change


def test_a_key_with_a_slash_is_escaped_as_rfc_6901_says() -> None:
    ops = json_patch(RUNNING, target(RUNNING, RENDERED, replace=False))
    paths = {o["path"] for o in ops}
    assert "/INTERFACE/Ethernet0|10.254.0.1~131" in paths
    assert "/INTERFACE/Ethernet0|10.9.9.0~131" in paths


def test_a_table_left_empty_is_removed_whole_and_a_new_one_added_whole() -> None:
    running = {"PORT": {"Ethernet0": {"lanes": "0", "speed": "1000"}}, "BGP_NEIGHBOR": {"10.0.0.1": {"asn": "1"}}}
    rendered = {"PORT": {"Ethernet0": {"mtu": "9216"}}, "VLAN": {"Vlan10": {"vlanid": "10"}}}
    ops = json_patch(running, target(running, rendered, replace=False))
    assert {"op": "remove", "path": "/BGP_NEIGHBOR"} in ops
    assert {"op": "add", "path": "/VLAN", "value": {"Vlan10": {"vlanid": "10"}}} in ops


def test_describe_reads_as_a_diff() -> None:
    ops = json_patch(RUNNING, target(RUNNING, RENDERED, replace=False))
    text = describe(ops, RUNNING)
    assert '- PORT|Ethernet0 mtu: "9100"\n+ PORT|Ethernet0 mtu: "9216"' in text
    assert '- BGP_NEIGHBOR|10.9.9.1: {"asn": "65000", "name": "old-spine"}' in text
    assert "+ INTERFACE|Ethernet0|10.254.0.1/31: {}" in text


def test_bad_documents_are_refused_with_a_message() -> None:
    with pytest.raises(PatchError, match="not JSON"):
        parse("{", "leaf1.json")
    with pytest.raises(PatchError, match="object of rows"):
        parse('{"PORT": []}', "leaf1.json")
    assert "bgpraw" not in parse('{"PORT": {}, "bgpraw": "router bgp 65101"}')
    with pytest.raises(PatchError, match="tables fabconf does not own: MGMT_INTERFACE"):
        target(RUNNING, {"MGMT_INTERFACE": {}}, replace=False)


def test_the_lab_refuses_a_patch_rfc_6902_refuses() -> None:
    with pytest.raises(PatchRefused):
        apply_patch(RUNNING, [{"op": "remove", "path": "/PORT/Ethernet99"}])
    with pytest.raises(PatchRefused):
        apply_patch(RUNNING, [{"op": "replace", "path": "/NOPE/x/y", "value": "1"}])


def test_drift_sections_of_a_config_db_diff() -> None:
    from fabconf.deploy.sections import classify
    from fabconf.platforms import Candidate

    ops = json_patch(RUNNING, target(RUNNING, RENDERED, replace=False))
    # the hostname in DEVICE_METADATA is "other"
    assert classify(describe(ops, RUNNING), "", Candidate.CONFIG_DB) == ["qos", "pfc", "interfaces", "bgp", "other"]


def test_the_patch_tests_every_table_it_touches_as_read() -> None:
    from fabconf.platform.sonic.patch import base_moved, guarded

    running = {"PORT": {"Ethernet0": {"mtu": "9100"}}, "BGP_NEIGHBOR": {"10.0.0.1": {"asn": "1"}}, "AAA": {}}
    ops: list[dict[str, Any]] = [
        {"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9216"},
        {"op": "remove", "path": "/BGP_NEIGHBOR"},
        {"op": "add", "path": "/PFC_WD", "value": {"GLOBAL": {"POLL_INTERVAL": "100"}}},
    ]
    assert guarded(ops, running) == [
        {"op": "test", "path": "/BGP_NEIGHBOR", "value": {"10.0.0.1": {"asn": "1"}}},
        {"op": "test", "path": "/PORT", "value": {"Ethernet0": {"mtu": "9100"}}},
        *ops,
    ]  # a table added whole was absent: RFC 6902 cannot test absence; a table not touched is not tested
    assert guarded([], running) == []
    assert base_moved("Failed to apply patch due to: 9100 (<class 'str'>) is not equal to tested value 1500")
    assert base_moved("member 'PORT' not found in {}")
    assert not base_moved("Given patch will produce invalid config. Error: pfc_enable")


# `show pfc counters` as sonic-utilities' scripts/pfcstat prints it (tabulate "simple", right-aligned, counts with
# thousands commas, N/A where the ASIC counts none); after `sonic-clear pfccounters` a line names the cached time
PFCSTAT = """Last cached time was 2026-12-05 01:00:00.123456
  Port Rx    PFC0    PFC1    PFC2       PFC3    PFC4    PFC5    PFC6    PFC7
---------  ------  ------  ------  ---------  ------  ------  ------  ------
Ethernet0       0       0       0  1,234,567       0       0       0       0
Ethernet8       0     N/A       0         12       0       0       0       0

  Port Tx    PFC0    PFC1    PFC2       PFC3    PFC4    PFC5    PFC6    PFC7
---------  ------  ------  ------  ---------  ------  ------  ------  ------
Ethernet0       0       0       0        999       0       0       0       0
"""


def test_the_pfc_frames_received_are_read_from_the_rx_table() -> None:
    from fabconf.platform.sonic.driver import parse_pfc_rx

    got = parse_pfc_rx(PFCSTAT)
    assert got["Ethernet0"] == {"0": 0, "1": 0, "2": 0, "3": 1234567, "4": 0, "5": 0, "6": 0, "7": 0}
    assert "1" not in got["Ethernet8"] and got["Ethernet8"]["3"] == 12  # N/A: not counted, left out
    assert set(got) == {"Ethernet0", "Ethernet8"}  # the Tx table is not read
    assert parse_pfc_rx("") == {}
