"""The SONiC simulator's strict corpus: wrong CONFIG_DB changes a switch's Generic Config Updater refuses (its YANG
models, its empty-table rule, tables without a model) are refused by the lab's, in GCU's words, and nothing is
applied; every SONiC device of every example, as fabconf renders it, is accepted."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.render import render
from fabconf_lab.sonic.gcu import ConfigDb, PatchRefused
from fabconf_lab.sonic.sim import default_config

pytest.importorskip("yangson")
ROOT = Path(__file__).resolve().parents[2]


def _rendered() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for inv in sorted(p.parent for p in ROOT.glob("examples/*/fabric.yaml")):
        compiled = compile_inventory(inv)
        for name, data in sorted(compiled.data.items()):
            if data["platform"] == "sonic":
                out.append((f"{inv.name}/{name}", json.loads(render(data))))
    return out


RENDERED = _rendered()


def _device(rendered: dict[str, Any]) -> ConfigDb:
    """A switch whose CONFIG_DB is fabconf's rendered one over its own ports (the rows fabconf does not own)."""
    base = default_config("leaf", sorted(rendered["PORT"]))
    config = copy.deepcopy(rendered)
    for port, row in config["PORT"].items():
        config["PORT"][port] = {**base["PORT"][port], **row}
    config["DEVICE_METADATA"]["localhost"] = {
        **base["DEVICE_METADATA"]["localhost"],
        **rendered["DEVICE_METADATA"]["localhost"],
    }
    return ConfigDb(config)


@pytest.mark.parametrize("name,rendered", RENDERED, ids=[r[0] for r in RENDERED])
def test_every_rendered_sonic_device_is_accepted(name: str, rendered: dict[str, Any]) -> None:
    device = ConfigDb(default_config("leaf", sorted(rendered["PORT"])))
    ops = [
        {"op": "add", "path": f"/{t}", "value": rows}
        for t, rows in sorted(rendered.items())
        if t not in ("PORT", "DEVICE_METADATA") and rows
    ]
    ops += [
        {"op": "replace", "path": f"/PORT/{p}/{f}", "value": v}
        if f in device.config["PORT"][p]
        else {"op": "add", "path": f"/PORT/{p}/{f}", "value": v}
        for p, row in rendered["PORT"].items()
        for f, v in row.items()
    ]
    device.apply(ops)  # raises PatchRefused when GCU would refuse it
    assert device.config["PORT_QOS_MAP"] == rendered["PORT_QOS_MAP"]


E0 = "/PORT_QOS_MAP/Ethernet1"
WRONG = [
    (f"{E0}/pfc_enable", "8"),
    (f"{E0}/pfc_enable", "3;4"),
    (f"{E0}/pfc_enable", "3,"),
    (f"{E0}/dscp_to_tc_map", "NO_SUCH_MAP"),
    (f"{E0}/tc_to_queue_map", "NO_SUCH_MAP"),
    (f"{E0}/tc_to_pg_map", "NO_SUCH_MAP"),
    (f"{E0}/pfc_to_queue_map", "NO_SUCH_MAP"),
    ("/DSCP_TO_TC_MAP/FABCONF_ROCE/26", "16"),
    ("/DSCP_TO_TC_MAP/FABCONF_ROCE/26", "x"),
    ("/DSCP_TO_TC_MAP/FABCONF_ROCE/64", "0"),
    ("/TC_TO_QUEUE_MAP/FABCONF_ROCE/3", "10"),
    ("/TC_TO_PRIORITY_GROUP_MAP/FABCONF_ROCE/3", "x"),
    ("/MAP_PFC_PRIORITY_TO_QUEUE/FABCONF_ROCE/3", "8"),
    ("/MAP_PFC_PRIORITY_TO_QUEUE/FABCONF_ROCE/8", "0"),
    ("/WRED_PROFILE/FABCONF_ROCE_ECN/ecn", "ecn_on"),
    ("/WRED_PROFILE/FABCONF_ROCE_ECN/green_drop_probability", "101"),
    ("/WRED_PROFILE/FABCONF_ROCE_ECN/green_max_threshold", "1000"),  # below the min threshold (a must)
    ("/WRED_PROFILE/FABCONF_ROCE_ECN/wred_green_enable", "yes"),
    ("/SCHEDULER/FABCONF_Q0/type", "FAIR"),
    ("/SCHEDULER/FABCONF_Q0/weight", "0"),
    ("/SCHEDULER/FABCONF_Q0/weight", "101"),
    ("/QUEUE/Ethernet1|3/scheduler", "NO_SUCH_SCHEDULER"),
    ("/QUEUE/Ethernet1|3/wred_profile", "NO_SUCH_PROFILE"),
    ("/PFC_WD/Ethernet1/action", "shutdown"),
    ("/PFC_WD/Ethernet1/detection_time", "6000"),
    ("/PFC_WD/Ethernet1/restoration_time", "50"),
    ("/PFC_WD/GLOBAL/POLL_INTERVAL", "2000"),
    ("/PORT/Ethernet1/mtu", "9217"),
    ("/PORT/Ethernet1/mtu", "67"),
    ("/PORT/Ethernet1/admin_status", "enabled"),
    ("/VLAN/Vlan101/vlanid", "4095"),
    ("/BUFFER_PG/Ethernet1|3/profile", "NO_SUCH_PROFILE"),
    ("/BGP_NEIGHBOR/10.254.0.0/asn", "not-a-number"),
    ("/DEVICE_METADATA/localhost/bgp_asn", "4294967296"),
]


@pytest.mark.parametrize("path,value", WRONG, ids=[f"{p}={v}" for p, v in WRONG])
def test_a_wrong_value_is_refused_as_gcu_refuses_it_and_nothing_is_applied(path: str, value: str) -> None:
    device = _device(RENDERED[0][1])
    before = copy.deepcopy(device.config)
    parent = path.rsplit("/", 1)[0].split("/")[1:]
    node: Any = device.config
    for part in parent:
        node = node.get(part.replace("~1", "/"), {}) if isinstance(node, dict) else {}
    op = "replace" if path.rsplit("/", 1)[1] in node else "add"
    with pytest.raises(PatchRefused, match="Given patch will produce invalid config"):
        device.apply([{"op": op, "path": path, "value": value}])
    assert device.config == before


def test_an_empty_table_and_a_table_without_a_model_are_refused() -> None:
    device = _device(RENDERED[0][1])
    with pytest.raises(PatchRefused, match="will result in empty tables"):
        device.apply([{"op": "remove", "path": f"/BGP_NEIGHBOR/{k}"} for k in device.config["BGP_NEIGHBOR"]])
    with pytest.raises(PatchRefused, match="tables without YANG models"):
        device.apply([{"op": "add", "path": "/ACL_TABLE", "value": {"X": {"type": "L3"}}}])
