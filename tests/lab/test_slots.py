"""Where a lab device sits (``fabconf_lab.ports.assign``/``place``, ``STATE/slots.json``): kept by name, new devices
in the lowest free slots in name order, never in a slot a running device holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabconf_lab import ports
from fabconf_lab.orchestrator import METRICS_PORTS, load_slots, save_slots


def test_kept_slots_stay_and_new_devices_take_the_lowest_free_ones() -> None:
    first = ports.assign(["leaf3", "spine1", "gpu01"], {}, 10)
    assert first == {"gpu01": 1, "leaf3": 2, "spine1": 3}  # a fresh lab: name order, as before
    grown = ports.assign(["gpu00", "gpu01", "leaf3", "spine1", "gpu09"], first, 10)
    assert {n: grown[n] for n in first} == first  # nobody moves, although gpu00 sorts first
    assert grown["gpu00"] == 4 and grown["gpu09"] == 5
    shrunk = ports.assign(["leaf3", "gpu09", "gpu10"], grown, 10)
    assert shrunk == {"leaf3": 2, "gpu09": 5, "gpu10": 1}  # a gone device's slot is free again
    with pytest.raises(ValueError, match="room for 3 lab devices, not 4"):
        ports.assign(["a", "b", "c", "d"], {}, 3)


def test_a_slot_is_an_address_or_a_block_of_ports() -> None:
    assert ports.place("high", "127.80.0.0/16", "eos", 11, METRICS_PORTS)[0] == "127.80.0.11"
    address, shared = ports.place("shared", "127.80.0.0/16", "nxos", 3, METRICS_PORTS, base=20000)
    assert address == "127.0.0.1" and (shared.https, shared.ssh, shared.metrics) == (20006, 20007, 20008)
    assert ports.capacity("shared", "127.80.0.0/16", 65530) == 2 and ports.capacity("high", "127.80.0.0/24") == 254


def test_the_slots_file_is_read_defensively(tmp_path: Path) -> None:
    save_slots(tmp_path, {"leaf3": 11, "gpu01": 1})
    assert load_slots(tmp_path, 20) == {"gpu01": 1, "leaf3": 11}
    assert load_slots(tmp_path, 5) == {"gpu01": 1}  # a smaller network: leaf3 gets a new place
    (tmp_path / "slots.json").write_text(json.dumps({"slots": {"a": 1, "b": 1, "c": "x", "d": True, "e": 2.0}}))
    assert load_slots(tmp_path, 5) == {"a": 1}  # one device per slot; only numbers
    (tmp_path / "slots.json").write_text("not json")
    assert load_slots(tmp_path, 5) == {}
