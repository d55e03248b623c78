"""Where the lab listens (``fabconf_lab.ports``): the vendor's ports where they can be bound, high ports on per-device
addresses where they cannot, and 127.0.0.1 with a block of ports per device where per-device addresses do not exist;
FABCONF_LAB_PORTS forces a layout, and a bad value or a full port range is an error in one line."""

from __future__ import annotations

import errno

import pytest

from fabconf_lab import ports

PLATFORMS = {"spine1": "eos", "spine2": "nxos", "leaf1": "cumulus", "gpu01": "linux"}
METRICS = {"linux": 19100, "eos": 19116, "nxos": 19116, "cumulus": 19116}


def test_standard_and_high_layouts_keep_per_device_addresses() -> None:
    addresses, std = ports.plan("standard", "127.50.0.0/16", PLATFORMS, METRICS)
    assert addresses == {"gpu01": "127.50.0.1", "leaf1": "127.50.0.2", "spine1": "127.50.0.3", "spine2": "127.50.0.4"}
    assert std["spine1"] == ports.DevicePorts(443, None, 19116)
    assert std["spine2"].services == (443, 22) and std["leaf1"].services == (8765, 22)
    assert std["gpu01"] == ports.DevicePorts(None, 22, 19100)
    again, high = ports.plan("high", "127.50.0.0/16", PLATFORMS, METRICS)
    assert again == addresses
    assert high["spine2"].services == (10443, 10022) and high["leaf1"].services == (8765, 10022)
    assert all(p >= 1024 for dp in high.values() for p in dp.services)


def test_shared_layout_gives_each_device_its_own_ports() -> None:
    addresses, shared = ports.plan("shared", "127.50.0.0/16", PLATFORMS, METRICS, base=30000)
    assert set(addresses.values()) == {"127.0.0.1"}
    every = [p for dp in shared.values() for p in (*dp.services, dp.metrics)]
    assert len(every) == len(set(every)) and min(every) >= 30000
    assert shared["gpu01"] == ports.DevicePorts(None, 30001, 30002)
    with pytest.raises(ValueError, match="room for 1 lab devices, not 4"):
        ports.plan("shared", "127.50.0.0/16", PLATFORMS, METRICS, base=65533)


def test_forced_layout_and_bad_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ports.LAYOUT_ENV, "shared")
    assert ports.choose("127.50.0.0/16") == "shared"
    monkeypatch.setenv(ports.LAYOUT_ENV, "low")
    with pytest.raises(ValueError, match="FABCONF_LAB_PORTS=low: expected one of standard, high, shared"):
        ports.choose("127.50.0.0/16")
    monkeypatch.setenv(ports.BASE_PORT_ENV, "80")
    with pytest.raises(ValueError, match="FABCONF_LAB_BASE_PORT=80"):
        ports.base_port()


@pytest.mark.parametrize(
    ("first", "ssh", "layout"),
    [
        (errno.EADDRNOTAVAIL, 0, "shared"),
        (0, errno.EACCES, "high"),
        (0, 0, "standard"),
        (0, errno.EADDRINUSE, "standard"),
    ],
)
def test_the_probe_decides(monkeypatch: pytest.MonkeyPatch, first: int, ssh: int, layout: str) -> None:
    monkeypatch.delenv(ports.LAYOUT_ENV, raising=False)
    monkeypatch.setattr(ports, "_probe", lambda address, port: first if port == 0 else ssh)
    assert ports.choose("127.50.0.0/16") == layout
