"""SONiC's CONFIG_DB as fabconf renders it, checked against SONiC's own YANG models (sonic-yang-models at the commit
in tests/sonic_yang/README.md) with yangson: every switch of the example inventories rendered as a SONiC switch
passes, and a deliberately wrong table fails.

SONiC is not wired into the platform table yet, so each switch's device data is re-designed here the way design
would for ``platform: sonic``: its ports named as SONiC names them and its QoS from the ``sonic_configdb`` builder.
The PORT rows carry what the device's own CONFIG_DB has and fabconf does not own (lanes, speed), as GCU validates
the configuration a patch leads to, not the patch alone.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from fabconf.compile.design.qos import Hardware
from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.render import environment
from fabconf.platform.sonic.design import qos_sonic

yangcheck = pytest.importorskip("fabconf_lab.sonic.yangcheck")
pytest.importorskip("yangson")

ROOT = Path(__file__).resolve().parents[3]
INVENTORIES = [ROOT / "inventory", ROOT / "examples" / "two-pods"]
HW: Hardware = {"family": "", "line": ""}


@pytest.fixture(scope="module")
def validator() -> Any:
    return yangcheck.Validator()


def _as_sonic(data: dict[str, Any], fabric: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The device data of a switch as SONiC's (EthernetN ports, 8 lanes each), and the PORT rows the device owns."""
    d = copy.deepcopy(data)
    names = {i["name"]: f"Ethernet{n * 8}" for n, i in enumerate(d["interfaces"])}
    for i in d["interfaces"]:
        i["name"] = names[i["name"]]
    d["platform"] = "sonic"
    d["qos"] = qos_sonic(fabric, d["mtu"], HW)
    base = {
        port: {"lanes": ",".join(str(n * 8 + j) for j in range(8)), "speed": "400000"}
        for n, port in enumerate(names.values())
    }
    return d, base


def _rendered(data: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    db: dict[str, Any] = json.loads(environment().get_template("sonic/device.j2").render(**data))
    for port, row in base.items():
        db["PORT"][port].update(row)
    return db


def _switches() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    out = []
    for inv in INVENTORIES:
        compiled = compile_inventory(inv)
        for name, data in sorted(compiled.data.items()):
            if "bgp" in data:  # switches (hosts have no BGP)
                out.append((f"{inv.name}/{name}", data, compiled.model.fabric))
    return out


SWITCHES = _switches()


@pytest.mark.parametrize("name,data,fabric", SWITCHES, ids=[s[0] for s in SWITCHES])
def test_every_example_switch_rendered_as_sonic_passes_the_yang_models(
    validator: Any, name: str, data: dict[str, Any], fabric: dict[str, Any]
) -> None:
    db = _rendered(*_as_sonic(data, fabric))
    assert validator.check(db) == [], name
    # the one DSCP map of every platform: RoCE DSCP on the lossless priority, CNP on its own, everything else 0
    roce = fabric["roce"]
    dscp = db["DSCP_TO_TC_MAP"]["FABCONF_ROCE"]
    assert len(dscp) == 64
    assert dscp[str(roce["dscp"])] == str(roce["priority"])
    assert dscp[str(roce["cnp"]["dscp"])] == str(roce["cnp"]["priority"])
    assert {v for k, v in dscp.items() if int(k) not in (roce["dscp"], roce["cnp"]["dscp"])} == {"0"}
    for port in db["PORT_QOS_MAP"].values():
        assert port["pfc_enable"] == ",".join(str(p) for p in sorted(roce["pfc_priorities"]))
    assert {p["mtu"] for p in db["PORT"].values()} <= {str(i["mtu"]) for i in data["interfaces"]}
    # every routed port (a leaf's uplinks, a spine's downlinks) has its address, and every neighbour is there
    sonic, _ = _as_sonic(data, fabric)
    routed = {f"{i['name']}|{i['address']}" for i in sonic["interfaces"] if i["address"]}
    assert routed and routed <= set(db["INTERFACE"])
    assert set(db["BGP_NEIGHBOR"]) == {n["address"] for n in data["bgp"]["neighbors"]}


def _leaf1(validator: Any) -> dict[str, Any]:
    _name, data, fabric = SWITCHES[0]
    db = _rendered(*_as_sonic(data, fabric))
    assert validator.check(db) == []
    return db


@pytest.mark.parametrize(
    "table,key,field,value,expected",
    [
        ("PORT_QOS_MAP", None, "pfc_enable", "9", "pattern"),  # PFC priorities are 0-7
        ("DSCP_TO_TC_MAP", "FABCONF_ROCE", "26", "16", "Invalid Traffic Class"),  # tc_type 0..15 (sonic-types)
        ("DSCP_TO_TC_MAP", "FABCONF_ROCE", "64", "0", "Invalid DSCP"),  # no DSCP 64
        ("PORT", None, "mtu", "9300", "range"),  # PORT mtu 68..9216
        ("QUEUE", None, "scheduler", "NO_SUCH_SCHEDULER", "instance-required"),  # a leafref to no row
        ("PFC_WD", None, "detection_time", "50", "must-violation"),  # a must: not below POLL_INTERVAL
        ("WRED_PROFILE", "FABCONF_ROCE_ECN", "ecn", "ecn_sometimes", "enumeration"),
    ],
)
def test_a_wrong_table_fails_the_yang_models(
    validator: Any, table: str, key: str | None, field: str, value: str, expected: str
) -> None:
    db = _leaf1(validator)
    rows = db[table]
    row = rows[key] if key is not None else next(r for k, r in sorted(rows.items()) if k != "GLOBAL")
    row[field] = value
    problems = validator.check(db)
    assert problems, f"{table} {field}={value} passed SONiC's YANG models"
    assert expected in " ".join(problems)


def test_a_table_no_model_has_and_a_field_no_model_has_fail(validator: Any) -> None:
    db = _leaf1(validator)
    db["NO_SUCH_TABLE"] = {"x": {}}
    assert validator.check(db) == ["NO_SUCH_TABLE: no SONiC YANG model has this table"]
    db = _leaf1(validator)
    next(iter(db["PORT"].values()))["no_such_field"] = "1"
    assert validator.check(db)


def test_lossless_priorities_that_are_not_one_range_are_refused() -> None:
    fabric = copy.deepcopy(SWITCHES[0][2])
    fabric["roce"]["pfc_priorities"] = [3, 5]
    with pytest.raises(ValueError, match="not contiguous"):
        qos_sonic(fabric, 9216, HW)


def test_the_designed_qos_has_its_declared_shape_and_reads_back_the_chain() -> None:
    from fabconf.compile.devicedata import conforms
    from fabconf.platform.sonic.design import SonicQos, read_chain

    for _name, _data, fabric in SWITCHES:
        q = qos_sonic(fabric, 9216, HW)
        assert conforms(q, SonicQos, "qos") == []
        roce = fabric["roce"]
        assert read_chain(q, roce["dscp"]) == (roce["priority"], set(roce["pfc_priorities"]), None)
        assert read_chain(q, roce["cnp"]["dscp"])[0] == roce["cnp"]["priority"]
    fabric = copy.deepcopy(SWITCHES[0][2])
    fabric["roce"]["pfc_watchdog"]["enabled"] = False
    q = qos_sonic(fabric, 9216, HW)
    assert "PFC_WD" not in q["tables"] and q["watchdog"]["action"] == ""


def test_every_sonic_device_of_every_example_passes_the_yang_models(validator: Any) -> None:
    """The rendered CONFIG_DB of each ``platform: sonic`` switch of every example, as ``fabconf render`` writes it."""
    from fabconf.compile.render import render

    found = []
    for inv in [*sorted(p.parent for p in ROOT.glob("examples/*/fabric.yaml")), ROOT / "inventory"]:
        compiled = compile_inventory(inv)
        for name, data in sorted(compiled.data.items()):
            if data["platform"] != "sonic":
                continue
            db = json.loads(render(data))
            for n, row in enumerate(db["PORT"].values()):  # the device's own fields of each row
                row.update(lanes=",".join(str(n * 8 + j) for j in range(8)), speed="400000")
            assert validator.check(db) == [], f"{inv.name}/{name}"
            found.append(f"{inv.name}/{name}")
    assert found == ["sonic-mix/p1-leaf1", "sonic-mix/p2-leaf2"]


def test_adaptive_routing_on_a_sonic_switch_is_refused_with_the_reason(tmp_path: Path) -> None:
    import shutil

    from fabconf.compile.problems import InputError

    shutil.copytree(ROOT / "examples" / "sonic-mix", tmp_path / "inv")
    groups = tmp_path / "inv" / "groups.yaml"
    groups.write_text(groups.read_text().replace('"Ethernet{1-64}"], load_balancing: ecmp,', '"Ethernet{1-64}"],'))
    with pytest.raises(InputError) as refused:
        compile_inventory(tmp_path / "inv")
    text = "\n".join(str(p) for p in refused.value.problems)
    assert "load_balancing.mode: p1-leaf1: cannot run adaptive routing" in text, text
    assert "no sonic-ars model" in text


def test_the_gnmi_server_is_rendered_in_the_gnmi_table_and_passes_the_yang_models(validator: Any) -> None:
    """monitoring.telemetry on a SONiC switch: sonic-gnmi.yang's GNMI|gnmi (its port, password logins, no client
    certificates); a wrong value fails the model."""
    _name, data, fabric = next(s for s in SWITCHES if s[0] == "inventory/leaf3")  # telemetry on
    db = _rendered(*_as_sonic(data, fabric))
    assert db["GNMI"] == {"gnmi": {"port": "9339", "client_auth": "false", "user_auth": "password"}}
    assert validator.check(db) == []
    for field, value, expected in (("user_auth", "kerberos", "pattern"), ("client_auth", "maybe", "")):
        wrong = copy.deepcopy(db)
        wrong["GNMI"]["gnmi"][field] = value
        problems = validator.check(wrong)
        assert problems and expected in " ".join(problems), (field, problems)
    quiet = copy.deepcopy(data)
    quiet["telemetry"] = None
    assert "GNMI" not in _rendered(*_as_sonic(quiet, fabric))
