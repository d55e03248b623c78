"""Issue 29's rendered-configuration review: one explicit DSCP map on every platform, a Cumulus scheduler with no
0 % DWRR class, every EOS queue scheduled, and a PFC watchdog that acts at the intent's timeout everywhere.
Each test reads the rendered configuration, as a device would."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from pristine import EXAMPLE

from fabconf.compile.pipeline import Compiled, compile_inventory
from fabconf.compile.render import render

ROOT = Path(__file__).resolve().parents[3]
LOSSLESS_DSCP, CNP_DSCP = 26, 48


@pytest.fixture(scope="module")
def example() -> Compiled:
    return compile_inventory(EXAMPLE)


def _nvue_qos(example: Compiled, name: str) -> dict:
    return yaml.safe_load(render(example.data[name]))[0]["set"]["qos"]


def _cumulus_map(example: Compiled, name: str) -> dict[int, int]:
    """DSCP -> traffic class as the NVUE tree says: DSCP -> switch priority -> traffic class."""
    qos = _nvue_qos(example, name)
    to_sp = {int(d): e["switch-priority"] for d, e in qos["mapping"]["default-global"]["dscp"].items()}
    to_tc = {
        int(sp): e["traffic-class"]
        for sp, e in qos["egress-queue-mapping"]["default-global"]["switch-priority"].items()
    }
    return {d: to_tc[sp] for d, sp in to_sp.items()}


def _eos_map(text: str) -> dict[int, int]:
    out: dict[int, int] = {}
    for dscps, tc in re.findall(r"^qos map dscp ([\d ]+) to traffic-class (\d)$", text, re.MULTILINE):
        for d in dscps.split():
            assert int(d) not in out, f"DSCP {d} mapped twice"
            out[int(d)] = int(tc)
    return out


def _nxos_map(text: str) -> dict[int, int]:
    classes = dict(re.findall(r"^class-map type qos match-any (\S+)\n  match dscp (\d+)$", text, re.MULTILINE))
    groups = dict(re.findall(r"^  class (\S+)\n    set qos-group (\d)$", text, re.MULTILINE))
    table = {d: int(groups["class-default"]) for d in range(64)}
    table.update({int(dscp): int(groups[name]) for name, dscp in classes.items()})
    return table


def test_every_platform_maps_all_64_dscps_the_same_way(example: Compiled) -> None:
    rendered = {name: render(data) for name, data in example.data.items()}
    platform = {name: data["platform"] for name, data in example.data.items()}
    lossless = {name: set(data["qos"].get("pfc_priorities", [])) for name, data in example.data.items()}
    seen = 0
    for name, text in rendered.items():
        if platform[name] == "cumulus":
            table, pfc = _cumulus_map(example, name), set(example.data[name]["qos"]["pfc"]["priorities"])
        elif platform[name] == "eos":
            table, pfc = _eos_map(text), lossless[name]
        elif platform[name] == "nxos":
            table = _nxos_map(text)
            pfc = {c["pause_cos"] for c in example.data[name]["qos"]["network_qos"]["classes"] if c["pause_cos"]}
        else:
            doc = yaml.safe_load(text)
            table = dict(map(tuple, doc["qos"]["dscp2prio"]))
            pfc = {p for p, on in enumerate(doc["qos"]["pfc"].split(",")) if on == "1"}
        seen += 1
        assert sorted(table) == list(range(64)), f"{name}: not every DSCP is mapped explicitly"
        assert {d for d, tc in table.items() if tc in pfc} == {LOSSLESS_DSCP}, f"{name}: other DSCPs are lossless"
        assert table[CNP_DSCP] not in pfc and table[CNP_DSCP] != table[0], f"{name}: CNP not in a class of its own"
        assert len({tc for d, tc in table.items() if d not in (LOSSLESS_DSCP, CNP_DSCP)}) == 1, name
    assert seen == len(rendered)


def test_cumulus_schedules_like_the_roce_profile(example: Compiled) -> None:
    for name in ("leaf1", "leaf2"):
        qos = _nvue_qos(example, name)
        sched = qos["egress-scheduler"]["default-global"]["traffic-class"]
        assert sched == {
            "0": {"mode": "dwrr", "bw-percent": 50},
            "3": {"mode": "dwrr", "bw-percent": 50},
            "6": {"mode": "strict"},
        }, name
        queues = qos["egress-queue-mapping"]["default-global"]["switch-priority"]
        assert {sp: e["traffic-class"] for sp, e in queues.items()} == {
            "0": 0,
            "1": 0,
            "2": 0,
            "3": 3,
            "4": 0,
            "5": 0,
            "6": 6,
            "7": 0,
        }


def test_eos_schedules_every_queue_but_the_control_queue(example: Compiled) -> None:
    for name in ("leaf3", "spine1"):
        text = render(example.data[name])
        modes = dict(re.findall(r"^   (?:uc-)?tx-queue (\d)\n      (no priority|priority strict)$", text, re.MULTILINE))
        assert modes == {
            "0": "no priority",
            "1": "no priority",
            "2": "no priority",
            "3": "no priority",
            "4": "no priority",
            "5": "no priority",
            "6": "priority strict",
        }, name


def test_the_watchdog_acts_at_the_intent_timeout_on_every_platform(example: Compiled) -> None:
    wd = example.model.fabric["roce"]["pfc_watchdog"]
    assert (wd["polling_interval_ms"], wd["timeout_ms"]) == (100, 200)
    nvue = _nvue_qos(example, "leaf1")["pfc-watchdog"]
    assert nvue["polling-interval"] * nvue["robustness"] == 200
    nxos = render(example.data["leaf4"])
    interval = int(re.search(r"watch-dog interval (\d+)", nxos).group(1))  # type: ignore[union-attr]
    multiplier = int(re.search(r"shutdown-multiplier (\d+)", nxos).group(1))  # type: ignore[union-attr]
    assert interval * multiplier == 200
    assert "priority-flow-control pause watchdog default timeout 0.2\n" in render(example.data["leaf3"])


def test_profile_b_maps_and_schedules_its_own_values(tmp_path: Path) -> None:
    """The second RoCE profile (DSCP 34 on priority 4, lossless 3 and 4, CNP 46 on priority 5): only DSCP 34 is
    lossless everywhere, two DWRR shares of 25 %, and EOS queue 7 is left to the Sand switch's control plane (CNP on
    priority 7 is refused where a Sand switch is in the fabric)."""
    from profiles import profile_inventory

    compiled = compile_inventory(profile_inventory(tmp_path))
    leaf1 = yaml.safe_load(render(compiled.data["leaf1"]))[0]["set"]["qos"]
    assert leaf1["egress-scheduler"]["default-global"]["traffic-class"] == {
        "0": {"mode": "dwrr", "bw-percent": 50},
        "3": {"mode": "dwrr", "bw-percent": 25},
        "4": {"mode": "dwrr", "bw-percent": 25},
        "5": {"mode": "strict"},
    }
    assert _eos_map(render(compiled.data["leaf3"]))[34] == 4 and _eos_map(render(compiled.data["leaf3"]))[26] == 1
    assert "uc-tx-queue 5\n      priority strict" in render(compiled.data["leaf3"])
    assert "tx-queue 7" not in render(compiled.data["spine1"])  # Sand: the control-plane queue
    host = dict(map(tuple, yaml.safe_load(render(compiled.data["gpu01"]))["qos"]["dscp2prio"]))
    assert {d for d, p in host.items() if p in (3, 4)} == {34} and host[46] == 5


def test_roce_on_priority_7_schedules_queue_7_on_strata(tmp_path: Path) -> None:
    """RoCE on priority 7 (lossless 7) in a fabric whose EOS switches are all Strata: queue 7 is configurable
    there, and gets the RoCE share and ECN (it was a KeyError traceback; Sand switches are refused by validate)."""
    from profiles import profile_inventory

    inventory = profile_inventory(tmp_path, {"roce": {"priority": 7, "pfc_priorities": [7]}})
    hosts = yaml.safe_load((inventory / "hosts.yaml").read_text())
    hosts["spine1"]["groups"] = ["spines", "dcs-7060x5"]  # the example's one Sand switch, made Strata
    (inventory / "hosts.yaml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    compiled = compile_inventory(inventory)
    eos = render(compiled.data["leaf3"])
    assert _eos_map(eos)[26] == 7
    queue7 = eos[eos.index("uc-tx-queue 7\n") :].split("\n   uc-tx-queue")[0]
    assert "bandwidth percent 50" in queue7 and "random-detect ecn minimum-threshold 150 kbytes" in queue7
    assert "priority-flow-control priority 7 no-drop" in eos
