"""What an inventory looks like in Nautobot: the objects ``fabconf sot export`` writes, computed from the compiled
inventory and the host entries as written (no network here).

Each device carries Nautobot's own fields (role, platform, device type, rack, primary IPv4 address: what other
tools read) and fabconf's custom fields (its id, its groups, its pod, its ASN, the rest of its own entry), so that
``fabconf sot import`` rebuilds the same ``hosts.yaml`` entry. Interfaces are the cabled ports (speed from the
link, MTU from the topology), a loopback on each switch and a management interface holding the primary address.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fabconf.compile.model import natural_key
from fabconf.compile.pipeline import Compiled
from fabconf.platforms import platform

# Keys of a host's own ``data`` that live in Nautobot fields rather than in the fabconf_extra custom field.
MAPPED_DATA = ("id", "role", "model", "pod", "rack")
# Each platform's management and loopback interface, manufacturer and Nautobot network_driver are in its row
# (fabconf/platform/<name>/__init__.py: ``mgmt_interface``, ``loopback_interface``, ``manufacturer``,
# ``network_driver``).
NO_MODEL = "unspecified"  # the device type of a device whose intent names no model
# Nautobot interface types by speed (Gb/s) [3P: Nautobot's InterfaceTypeChoices]
TYPE_BY_SPEED = {
    10: "10gbase-x-sfpp",
    25: "25gbase-x-sfp28",
    50: "50gbase-x-sfp56",
    100: "100gbase-x-qsfp28",
    200: "200gbase-x-qsfp56",
    400: "400gbase-x-qsfpdd",
    800: "800gbase-x-qsfpdd",
}
ROLE_ORDER = {"super_spine": 0, "spine": 1, "leaf": 2, "gpu_host": 3}


@dataclass
class DesiredDevice:
    name: str
    role: str
    platform: str
    model: str
    mgmt: str  # the management address (hosts.yaml `hostname`), as address/32
    id: int | None
    pod: str | None
    rack: str | None
    asn: int | None
    groups: list[str]
    extra: dict[str, Any]  # the rest of the host's own entry (data keys, port, ...)


@dataclass
class DesiredInterface:
    device: str
    name: str
    type: str
    mtu: int | None = None
    speed_gbps: int | None = None
    mgmt_only: bool = False
    addresses: list[str] = field(default_factory=list)  # address/prefix


@dataclass
class Desired:
    location: str
    devices: dict[str, DesiredDevice]
    interfaces: dict[tuple[str, str], DesiredInterface]
    cables: list[tuple[tuple[str, str], tuple[str, str]]]
    prefixes: dict[str, str]  # prefix -> its Nautobot type (container, network)


def raw_hosts(directory: Path) -> dict[str, dict[str, Any]]:
    """hosts.yaml as written (the inventory has compiled already, so it parses)."""
    loaded = yaml.safe_load((directory / "hosts.yaml").read_text()) or {}
    return {str(name): dict(entry or {}) for name, entry in loaded.items()}


def extra_of(entry: dict[str, Any]) -> dict[str, Any]:
    """The part of a host entry that has no Nautobot field: every key but hostname, groups, platform, the mapped
    data keys, and how fabconf connects (port, connection_options: the local inventory's, never the source of
    truth's; ``sot import`` ignores them)."""
    skipped = ("hostname", "groups", "data", "platform", "port", "connection_options")
    out = {k: v for k, v in entry.items() if k not in skipped}
    data = {k: v for k, v in (entry.get("data") or {}).items() if k not in MAPPED_DATA}
    if data:
        out["data"] = data
    return out


def device_order(role: str, name: str) -> tuple[Any, ...]:
    return (ROLE_ORDER.get(role, 9), natural_key(name))


def desired(compiled: Compiled, directory: Path) -> Desired:
    model, topo = compiled.model, compiled.topology
    location = str(model.fabric["name"])
    raw = raw_hosts(directory)
    devices: dict[str, DesiredDevice] = {}
    interfaces: dict[tuple[str, str], DesiredInterface] = {}
    prefixes: dict[str, str] = {}
    mtu_host = int((model.fabric.get("mtu") or {}).get("host", 9000))
    for name in sorted(model.devices, key=lambda n: device_order(model.devices[n].role, n)):
        dev = model.devices[name]
        facts = topo.switches.get(name)
        rack = dev.data.get("rack")
        pod = dev.pod or dev.data.get("pod")
        devices[name] = DesiredDevice(
            name=name,
            role=dev.role,
            platform=dev.platform,
            model=str(dev.data.get("model") or NO_MODEL),
            mgmt=f"{dev.hostname}/32",
            id=dev.id,
            pod=str(pod) if pod is not None else None,
            rack=str(rack) if rack is not None else None,
            asn=facts.asn if facts else None,
            groups=list(dev.groups),
            extra=extra_of(raw.get(name, {})),
        )
        mgmt = DesiredInterface(name, platform(dev.platform).mgmt_interface, "1000base-t", mgmt_only=True)
        mgmt.addresses.append(f"{dev.hostname}/32")
        interfaces[(name, mgmt.name)] = mgmt
        if facts is not None and facts.loopback is not None and platform(dev.platform).loopback_interface:
            lo = DesiredInterface(name, platform(dev.platform).loopback_interface, "virtual")
            lo.addresses.append(f"{facts.loopback}/32")
            interfaces[(name, lo.name)] = lo
    cables = []
    for link in model.links:
        a, b = link.a, link.b
        speed = model.link_speed(a.device, a.port, b.device, b.port)
        for ep in (a, b):
            interfaces.setdefault(
                (ep.device, ep.port),
                DesiredInterface(ep.device, ep.port, TYPE_BY_SPEED.get(speed, "other"), speed_gbps=speed),
            )
        cables.append(((a.device, a.port), (b.device, b.port)))
    for facts in topo.switches.values():
        for up in facts.uplinks:
            prefixes[str(up.subnet)] = "network"
            lower, upper = interfaces.get((up.lower, up.lower_port)), interfaces.get((up.upper, up.upper_port))
            for iface, ip in ((lower, up.lower_ip), (upper, up.upper_ip)):
                if iface is not None:
                    iface.mtu = up.mtu
                    iface.addresses.append(f"{ip}/31")
        for _vlan, svi in facts.svis.items():
            prefixes[str(svi.network)] = "network"
    for host, ports in topo.host_ports.items():
        for hp in ports:
            nic = interfaces.get((host, hp.nic.netdev))
            if nic is not None:
                nic.mtu = mtu_host
                nic.addresses.append(str(hp.address))
                prefixes[str(hp.address.network)] = "network"
            leaf_port = interfaces.get((hp.leaf, hp.leaf_port))
            facts_leaf = topo.switches.get(hp.leaf)
            if leaf_port is not None and facts_leaf is not None:
                leaf_port.mtu = facts_leaf.mtu
    for (dev_name, _port), iface in interfaces.items():
        if iface.mtu is None and iface.type not in ("virtual", "1000base-t"):
            facts = topo.switches.get(dev_name)
            iface.mtu = facts.mtu if facts else mtu_host
    cables.sort(key=lambda c: (natural_key(c[0][0]), natural_key(c[0][1])))
    # every address needs a parent prefix in the namespace: the fabric's own root container holds the rest
    for iface in interfaces.values():
        for address in iface.addresses:
            ipaddress.IPv4Interface(address)  # validated by the compiler already; a cheap guard
    prefixes.setdefault("0.0.0.0/0", "container")
    return Desired(location, devices, interfaces, cables, prefixes)
