"""Switch error and PFC counters: the parsers on NX-API- and NVUE-shaped output, and the ``[counters]`` /
``[pfc]`` judgements between two reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabconf.compile.pipeline import Compiled, compile_inventory
from fabconf.drivers.cli import nxos_counters
from fabconf.platform.cumulus import getters as nvue_getters
from fabconf.preflight.host import PAUSE_STORM_PER_S
from fabconf.preflight.switch import check_counters, check_pfc, lossless_priorities, pfc_rates

# ``show interface | json`` as NX-API gives it: one row is the row itself; counters of errors are strings
# (greenpau/go-cisco-nx-api, client/interface.go), loopbacks carry no eth_ receive counters
SHOW_INTERFACE: dict[str, Any] = {
    "TABLE_interface": {
        "ROW_interface": [
            {
                "interface": "Ethernet1/1",
                "state": "up",
                "eth_inucast": 76873996004,
                "eth_inpkts": 76878491050,
                "eth_inerr": "12",
                "eth_crc": "12",
                "eth_outucast": 87720386925,
                "eth_outerr": "0",
            },
            {"interface": "loopback0", "state": "up", "eth_hw_desc": "Loopback"},
        ]
    }
}
SHOW_PFC_ONE_ROW: dict[str, Any] = {
    "TABLE_module": {
        "ROW_module": {
            "TABLE_pfc_interface": {
                "ROW_pfc_interface": {
                    "if_name_str": "Ethernet1/1",
                    "admin": "On",
                    "oper": "On",
                    "rx-stats": 39027,
                    "tx-stats": 0,
                }
            }
        }
    }
}
# GET /interface/swp1/counters/qos/pfc-stats (the rows of `nv show interface swp1 counters qos pfc-stats`)
PFC_STATS: dict[str, Any] = {
    "switch-priority": {
        str(p): {
            "rx-pause-frames": 500 if p == 3 else 0,
            "rx-pause-duration": 0,
            "tx-pause-frames": 0,
            "tx-pause-duration": 0,
        }
        for p in range(8)
    }
}
PORTS = [{"name": "Ethernet1/1", "peer": "gpu01:ens1f0np0"}, {"name": "Ethernet1/2", "peer": "spine1:Ethernet1/1"}]

ROOT = Path(__file__).resolve().parents[3]


def test_nxos_show_interface_json_to_napalm_counter_keys() -> None:
    assert nxos_counters.interfaces_counters(SHOW_INTERFACE) == {
        "Ethernet1/1": {
            "rx_unicast_packets": 76873996004,
            "rx_errors": 12,
            "tx_unicast_packets": 87720386925,
            "tx_errors": 0,
        }
    }
    assert nxos_counters.interfaces_counters({}) == {}


def test_nxos_pfc_table_one_row_or_many() -> None:
    assert nxos_counters.pfc_counters(SHOW_PFC_ONE_ROW) == {"Ethernet1/1": {"all": 39027}}
    module = SHOW_PFC_ONE_ROW["TABLE_module"]["ROW_module"]
    row = module["TABLE_pfc_interface"]["ROW_pfc_interface"]
    two = {
        "TABLE_module": {
            "ROW_module": [
                {
                    "TABLE_pfc_interface": {
                        "ROW_pfc_interface": [row, {**row, "if_name_str": "Ethernet1/2", "rx-stats": 1}]
                    }
                }
            ]
        }
    }
    assert nxos_counters.pfc_counters(two) == {"Ethernet1/1": {"all": 39027}, "Ethernet1/2": {"all": 1}}


def test_nvue_pfc_stats_per_switch_priority() -> None:
    assert nvue_getters.pfc_counters(PFC_STATS) == {str(p): (500 if p == 3 else 0) for p in range(8)}
    assert nvue_getters.pfc_counters({}) == {}


def test_lossless_priorities_in_each_qos_dialect(example: Compiled, two_pods: Compiled) -> None:
    """Each switch platform keeps its lossless priorities in its own shape (NVUE ``pfc.priorities``, EOS
    ``pfc_priorities``, NX-OS the network-qos classes' ``pause_cos``, SONiC the ports' ``pfc_enable``); preflight
    reads them through the platform's chain reader, and finds the intent's on every switch of the examples."""
    sonic_mix = compile_inventory(ROOT / "examples" / "sonic-mix")
    seen = set()
    for compiled in (example, two_pods, sonic_mix):
        wanted = sorted(compiled.model.fabric["roce"]["pfc_priorities"])
        for name, device in compiled.model.devices.items():
            if device.is_host:
                continue
            seen.add(device.platform)
            assert lossless_priorities(device.platform, compiled.data[name]["qos"]) == wanted, name
    assert seen >= {"cumulus", "eos", "nxos", "sonic"}
    assert lossless_priorities("eos", {}) == []


@pytest.mark.parametrize(
    ("first", "second", "failed"),
    [
        ({"3": 0, "0": 0}, {"3": 1000, "0": 0}, False),  # a few pauses: congestion, not a storm
        ({"3": 0}, {"3": int(PAUSE_STORM_PER_S * 2) + 2}, True),  # the RoCE priority storms
        ({"0": 0}, {"0": int(PAUSE_STORM_PER_S * 4)}, False),  # a lossy priority is not judged
        ({"all": 0}, {"all": int(PAUSE_STORM_PER_S * 4)}, True),  # NX-OS: the port's PFC frames
    ],
)
def test_pfc_storm_against_the_hosts_threshold(first: dict, second: dict, failed: bool) -> None:
    lines = check_pfc(PORTS, [3], {"Ethernet1/1": first}, {"Ethernet1/1": second}, 2.0)
    assert bool(lines) is failed
    if failed:
        assert lines[0].startswith("[pfc] Ethernet1/1 (to gpu01:ens1f0np0): ")
        assert f"above {PAUSE_STORM_PER_S}/s: a pause storm" in lines[0]


def test_pfc_rates_are_the_evidence() -> None:
    rates = pfc_rates([3], {"swp1": {"3": 100, "0": 5}}, {"swp1": {"3": 300, "0": 9}}, 2.0)
    assert rates == {"swp1": {"3": 100.0}}


def test_nxos_counters_feed_the_error_check() -> None:
    first = nxos_counters.interfaces_counters(SHOW_INTERFACE)
    later = {"Ethernet1/1": {**first["Ethernet1/1"]}}
    later["Ethernet1/1"]["rx_unicast_packets"] += 100_000
    later["Ethernet1/1"]["rx_errors"] += 100  # 0.1 %
    assert check_counters(PORTS, first, later, 0.00001)[0].startswith("[counters] Ethernet1/1 (to gpu01:")
    assert check_counters(PORTS, first, first, 0.00001) == []
