"""Where the lab's simulators listen: the address and the ports of every device, in one of three layouts.

- ``standard``: each device on its own address of the lab's 127.x network, on its vendor's ports (eAPI/NX-API
  HTTPS 443, SSH 22, NVUE REST 8765). On Linux binding 22 and 443 needs root or ``CAP_NET_BIND_SERVICE``
  ([V] Linux ip(7): ports below ``net.ipv4.ip_unprivileged_port_start``, 1024 by default, are privileged).
- ``high``: each device on its own 127.x address, on unprivileged ports (HTTPS 10443, SSH 10022, NVUE REST 8765):
  what an ordinary user gets on Linux, which routes all of 127.0.0.0/8 to ``lo`` ([V] Linux ip(7), "loopback").
- ``shared``: every device on 127.0.0.1, each with its own block of ``STRIDE`` ports from a base port (HTTPS, SSH,
  metrics): for systems whose loopback carries only 127.0.0.1 ([3P] macOS ``lo0`` until ``ifconfig lo0 alias``).

``choose`` picks the layout: ``FABCONF_LAB_PORTS`` (standard, high, shared) forces one; otherwise a probe of the
network's first address decides: it cannot be bound (EADDRNOTAVAIL): shared; port 22 cannot be bound for lack of
privilege (EACCES): high; else standard. The shared layout's base port is ``FABCONF_LAB_BASE_PORT`` (default
``DEFAULT_BASE_PORT``). Every port chosen here is written into ``STATE/inventory`` (``fabconf_lab.orchestrator``).

A simulator started on its own (tests, scripts) listens where its port argument says; left to its default it takes
its vendor's port, or that port's unprivileged twin (+10000) in a process that may not bind it (``default_port``)."""

from __future__ import annotations

import errno
import functools
import ipaddress
import os
import socket
from dataclasses import dataclass

from fabconf_lab.registry import lab_platform

LAYOUTS = ("standard", "high", "shared")
SHARED_ADDRESS = "127.0.0.1"
DEFAULT_BASE_PORT = 20000
STRIDE = 3  # a device's ports in the shared layout: HTTPS, SSH, metrics
LAYOUT_ENV = "FABCONF_LAB_PORTS"
BASE_PORT_ENV = "FABCONF_LAB_BASE_PORT"

HIGH_OFFSET = 10000  # a privileged port's unprivileged twin: 22 -> 10022, 443 -> 10443, 80 -> 10080
_STANDARD = {"https": 443, "ssh": 22}
_HIGH = {"https": 443 + HIGH_OFFSET, "ssh": 22 + HIGH_OFFSET}


VENDOR = -1  # a simulator's SSH port argument left to its default: ``default_port(22)``


@functools.cache
def _may_bind_privileged() -> bool:
    return _probe("127.0.0.1", _STANDARD["ssh"]) != errno.EACCES


def default_port(vendor: int) -> int:
    """``vendor``, or ``vendor + HIGH_OFFSET`` when it is privileged and this process may not bind it."""
    return vendor if vendor >= 1024 or _may_bind_privileged() else vendor + HIGH_OFFSET


@dataclass(frozen=True)
class DevicePorts:
    """One lab device's ports: ``https`` and ``ssh`` (None: the platform has no such service), ``metrics``
    (its exporter endpoint; ``fabconf_lab.metrics``)."""

    https: int | None
    ssh: int | None
    metrics: int

    @property
    def services(self) -> tuple[int, ...]:
        """The service ports, HTTPS first (what ``lab up`` waits for and ``lab status`` lists)."""
        return tuple(p for p in (self.https, self.ssh) if p is not None)


def _probe(address: str, port: int) -> int:
    """0 when ``address:port`` can be bound, else the errno."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
    except OSError as exc:
        return exc.errno or -1
    finally:
        sock.close()
    return 0


def choose(network: str, layout: str | None = None) -> str:
    """The layout for a lab on ``network`` (see the module's docstring); a ValueError for an unknown forced one."""
    forced = layout or os.environ.get(LAYOUT_ENV, "").strip()
    if forced:
        if forced not in LAYOUTS:
            raise ValueError(f"{LAYOUT_ENV}={forced}: expected one of {', '.join(LAYOUTS)}")
        return forced
    first = str(next(ipaddress.IPv4Network(network, strict=False).hosts()))
    if _probe(first, 0) == errno.EADDRNOTAVAIL:
        return "shared"
    if _probe(first, _STANDARD["ssh"]) == errno.EACCES:
        return "high"
    return "standard"


def base_port() -> int:
    raw = os.environ.get(BASE_PORT_ENV, "").strip()
    if not raw:
        return DEFAULT_BASE_PORT
    if not raw.isdigit() or not 1024 <= int(raw) <= 65535:
        raise ValueError(f"{BASE_PORT_ENV}={raw}: expected a port number from 1024 to 65535")
    return int(raw)


def assign(names: list[str], kept: dict[str, int], capacity: int) -> dict[str, int]:
    """Each device's slot (1, 2, …: its address or its block of ports, ``place``): the ones of ``kept`` stay
    (``fabconf_lab.orchestrator`` persists them in the lab's state, so a device never moves when others come or go),
    the others take the lowest free slots, in name order. A ValueError when ``capacity`` slots are too few."""
    slots = {name: kept[name] for name in names if name in kept}
    used = set(slots.values())
    free = (n for n in range(1, capacity + 1) if n not in used)
    for name in sorted(n for n in names if n not in slots):
        slot = next(free, None)
        if slot is None:
            raise ValueError(f"room for {capacity} lab devices, not {len(names)}")
        slots[name] = slot
    return slots


def capacity(layout: str, network: str, base: int | None = None) -> int:
    """How many devices a lab of ``layout`` on ``network`` (shared: ports from ``base``) has room for."""
    if layout == "shared":
        start = base_port() if base is None else base
        return max(0, (65536 - start) // STRIDE)
    return ipaddress.IPv4Network(network, strict=False).num_addresses - 2


def place(
    layout: str, network: str, platform: str, slot: int, metrics_ports: dict[str, int], base: int | None = None
) -> tuple[str, DevicePorts]:
    """The address and ports of the device in ``slot``: the slot-th address of ``network`` (standard, high), or
    127.0.0.1 with the slot-th block of ``STRIDE`` ports from ``base`` (shared)."""
    entry = lab_platform(platform)  # the services it answers on ("https": eAPI, NX-API or NVUE REST; "ssh")
    services = entry.services
    if layout == "shared":
        first = (base_port() if base is None else base) + STRIDE * (slot - 1)
        https, ssh = (first if "https" in services else None), (first + 1 if "ssh" in services else None)
        return SHARED_ADDRESS, DevicePorts(https, ssh, first + 2)
    table = _STANDARD if layout == "standard" else _HIGH
    https = (entry.https_port or table["https"]) if "https" in services else None
    address = str(ipaddress.IPv4Network(network, strict=False).network_address + slot)
    return address, DevicePorts(https, table["ssh"] if "ssh" in services else None, metrics_ports[platform])


def plan(
    layout: str,
    network: str,
    platforms: dict[str, str],
    metrics_ports: dict[str, int],
    base: int | None = None,
    slots: dict[str, int] | None = None,
) -> tuple[dict[str, str], dict[str, DevicePorts]]:
    """Addresses and ports for the devices of ``platforms`` (name -> platform): the slots of ``slots`` where given,
    else (``assign``) consecutive addresses of ``network`` (standard, high), or 127.0.0.1 with consecutive blocks of
    ports from ``base`` (shared), in name order. ``metrics_ports``: platform -> the exporter port of the
    per-address layouts. A ValueError when the network or the port range has no room for them all."""
    names = sorted(platforms)
    room = capacity(layout, network, base)
    if slots is None:
        if len(names) > room:
            if layout == "shared":
                start = base_port() if base is None else base
                raise ValueError(f"ports from {start} have room for {room} lab devices, not {len(names)}")
            raise ValueError(f"{network} has room for {room} lab devices, not {len(names)}")
        slots = assign(names, {}, room)
    addresses: dict[str, str] = {}
    ports: dict[str, DevicePorts] = {}
    for name in names:
        if not 1 <= slots[name] <= room:
            raise ValueError(f"{name}: lab slot {slots[name]} is outside the room for {room} lab devices")
        addresses[name], ports[name] = place(layout, network, platforms[name], slots[name], metrics_ports, base)
    return addresses, ports
