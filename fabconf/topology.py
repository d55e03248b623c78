"""Topology facts derived once from the model: links by role, addresses, ASNs, MTUs per link.

Everything here is linear in devices and links. Problems found while deriving (a link naming a device
or port that does not exist, a port cabled twice, an address pool too small) are recorded, and the
offending item is left out so that later checks still run on the rest.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from fabconf.model import Endpoint, Model, Nic, natural_key
from fabconf.platforms import PLATFORMS
from fabconf.problems import Problems


@dataclass(frozen=True)
class Uplink:
    """One leaf-spine link as seen from both ends."""

    leaf: str
    leaf_port: str
    spine: str
    spine_port: str
    subnet: ipaddress.IPv4Network
    spine_ip: ipaddress.IPv4Address
    leaf_ip: ipaddress.IPv4Address
    mtu: int
    link_index: int


@dataclass(frozen=True)
class HostPort:
    """One GPU host NIC cabled to a leaf port, in its rail's training VLAN."""

    host: str
    nic: Nic
    leaf: str
    leaf_port: str
    vlan: int
    address: ipaddress.IPv4Interface
    gateway: ipaddress.IPv4Address
    link_index: int


@dataclass
class SwitchFacts:
    asn: int | None = None
    loopback: ipaddress.IPv4Address | None = None
    mtu: int = 9216
    uplinks: list[Uplink] = field(default_factory=list)  # leaf: its uplinks; spine: its downlinks
    host_ports: list[HostPort] = field(default_factory=list)
    svis: dict[int, ipaddress.IPv4Interface] = field(default_factory=dict)  # vlan -> gateway address


@dataclass
class Topology:
    switches: dict[str, SwitchFacts]
    host_ports: dict[str, list[HostPort]]  # gpu host -> its cabled NICs
    vlan_by_rail: dict[int, dict]


def _subnet(pool: ipaddress.IPv4Network, prefix: int, index: int) -> ipaddress.IPv4Network | None:
    if prefix < pool.prefixlen:
        return None
    count = 1 << (prefix - pool.prefixlen)
    if index < 0 or index >= count:
        return None
    return ipaddress.IPv4Network((int(pool.network_address) + index * (1 << (32 - prefix)), prefix))


def _net(value: str, file: str, path: list, problems: Problems) -> ipaddress.IPv4Network | None:
    try:
        return ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        problems.add(file, path, f"{value!r} is not an IPv4 network: {exc}")
        return None


def derive(model: Model, problems: Problems) -> Topology:
    fab = model.fabric
    ffile = model.files.get("fabric", "fabric.yaml")
    cfile = model.files.get("cabling", "cabling.yaml")
    hfile = model.files.get("hosts", "hosts.yaml")
    devices = model.devices
    switches: dict[str, SwitchFacts] = {}

    # -- per-switch identity: id, ASN, loopback, MTU -------------------------------------------------
    lo_pools = {
        role: _net(v, ffile, ["addressing", "loopbacks", role], problems)
        for role, v in fab["addressing"]["loopbacks"].items()
    }
    for name, dev in sorted(devices.items()):
        if not dev.is_switch:
            continue
        facts = SwitchFacts()
        facts.mtu = int(dev.data.get("mtu") or fab["mtu"]["switch"])
        if dev.role not in ("spine", "leaf"):
            problems.add(hfile, [name, "data", "role"], f"a {dev.platform} switch must be a spine or a leaf")
            continue
        if dev.id is None and ("asn" not in dev.data or "loopback" not in dev.data):
            problems.add(hfile, [name, "data", "id"], "a switch needs data.id (or both data.asn and data.loopback)")
        if "asn" in dev.data:
            facts.asn = int(dev.data["asn"])
        elif dev.role == "spine":
            facts.asn = int(fab["bgp"]["spine_asn"])
        elif dev.id is not None:
            facts.asn = int(fab["bgp"]["leaf_asn_base"]) + dev.id
            if facts.asn > 4294967295:
                problems.add(hfile, [name, "data", "id"], f"leaf ASN {facts.asn} exceeds 4294967295")
        if "loopback" in dev.data:
            try:
                facts.loopback = ipaddress.IPv4Address(dev.data["loopback"])
            except ValueError:
                problems.add(hfile, [name, "data", "loopback"], f"{dev.data['loopback']!r} is not an IPv4 address")
        elif dev.id is not None and lo_pools.get(dev.role) is not None:
            pool = lo_pools[dev.role]
            assert pool is not None
            if dev.id >= pool.num_addresses:
                problems.add(
                    hfile, [name, "data", "id"], f"id {dev.id} is outside loopback pool {pool} for role {dev.role}"
                )
            else:
                facts.loopback = pool.network_address + dev.id
        switches[name] = facts

    # -- links: resolve endpoints, classify, detect reuse ---------------------------------------------
    used: dict[tuple[str, str], int] = {}
    fabric_links: list[tuple[Endpoint, Endpoint, int]] = []  # (leaf end, spine end)
    host_links: list[tuple[Endpoint, Endpoint, int]] = []  # (host end, leaf end)
    for link in model.links:
        ok = True
        for side, ep in (("0", link.a), ("1", link.b)):
            path: list[str | int] = ["links", link.index, int(side)]
            found = devices.get(ep.device)
            if found is None:
                problems.add(cfile, path, f"device {ep.device!r} is not in the inventory")
                ok = False
                continue
            if found.is_switch:
                plat = PLATFORMS[found.platform]
                if not plat.port_pattern.match(ep.port):
                    problems.add(cfile, path, f"{ep.port!r} is not a {found.platform} port name")
                    ok = False
                elif found.ports is not None and ep.port not in found.ports:
                    problems.add(cfile, path, f"{ep.device} has no port {ep.port!r}")
                    ok = False
            elif not any(n.netdev == ep.port for n in found.nics):
                problems.add(cfile, path, f"{ep.device} has no NIC {ep.port!r} (data.nics)")
                ok = False
            key = (ep.device, ep.port)
            if key in used:
                problems.add(cfile, path, f"{ep} is already cabled in links[{used[key]}]")
                ok = False
            else:
                used[key] = link.index
        if not ok:
            continue
        ra, rb = devices[link.a.device].role, devices[link.b.device].role
        roles = {ra, rb}
        if roles == {"leaf", "spine"}:
            leaf, spine = (link.a, link.b) if ra == "leaf" else (link.b, link.a)
            fabric_links.append((leaf, spine, link.index))
        elif roles == {"gpu_host", "leaf"}:
            host, leaf = (link.a, link.b) if ra == "gpu_host" else (link.b, link.a)
            host_links.append((host, leaf, link.index))
        else:
            problems.add(cfile, ["links", link.index], f"a {ra}-{rb} link is not part of a leaf-spine fabric")

    # -- leaf uplinks: /31 per link from the p2p pool, slots reserved per leaf ---------------------------
    p2p = _net(fab["addressing"]["p2p_pool"], ffile, ["addressing", "p2p_pool"], problems)
    per_leaf = int(fab["addressing"]["uplinks_per_leaf"])
    by_leaf: dict[str, list[tuple[Endpoint, Endpoint, int]]] = {}
    for leaf, spine, idx in fabric_links:
        by_leaf.setdefault(leaf.device, []).append((leaf, spine, idx))
    for leaf_name, ups in sorted(by_leaf.items()):
        ups.sort(key=lambda t: natural_key(t[0].port))
        leaf_dev = devices[leaf_name]
        if len(ups) > per_leaf:
            problems.add(
                cfile,
                ["links", ups[per_leaf][2]],
                f"{leaf_name} has {len(ups)} uplinks but addressing.uplinks_per_leaf is {per_leaf}",
            )
            ups = ups[:per_leaf]
        for slot, (leaf, spine, idx) in enumerate(ups):
            if p2p is None or leaf_dev.id is None or leaf_name not in switches or spine.device not in switches:
                continue
            subnet = _subnet(p2p, 31, (leaf_dev.id - 1) * per_leaf + slot)
            if subnet is None:
                problems.add(ffile, ["addressing", "p2p_pool"], f"{p2p} is too small for the uplinks of {leaf_name}")
                continue
            spine_dev = devices[spine.device]
            mtu = min(
                switches[leaf_name].mtu,
                switches[spine.device].mtu,
                PLATFORMS[leaf_dev.platform].max_mtu,
                PLATFORMS[spine_dev.platform].max_mtu,
            )
            up = Uplink(
                leaf_name,
                leaf.port,
                spine.device,
                spine.port,
                subnet,
                subnet.network_address,
                subnet.network_address + 1,
                mtu,
                idx,
            )
            switches[leaf_name].uplinks.append(up)
            switches[spine.device].uplinks.append(up)

    # -- host ports: rail -> VLAN -> per-leaf subnet; hosts numbered by leaf port order ----------------------
    vlan_by_rail: dict[int, dict] = {}
    for i, vlan in enumerate(fab["vlans"]):
        if vlan["rail"] in vlan_by_rail:
            problems.add(
                ffile, ["vlans", i, "rail"], f"rail {vlan['rail']} already has VLAN {vlan_by_rail[vlan['rail']]['id']}"
            )
            continue
        vlan_by_rail[vlan["rail"]] = {**vlan, "_index": i}
    host_ports: dict[str, list[HostPort]] = {}
    groups: dict[tuple[str, int], list[tuple[Endpoint, Endpoint, int, Nic]]] = {}
    for host, leaf, idx in host_links:
        nic = next(n for n in devices[host.device].nics if n.netdev == host.port)
        vlan = vlan_by_rail.get(nic.rail)
        if vlan is None:
            problems.add(cfile, ["links", idx], f"{host} is on rail {nic.rail}, which no VLAN in fabric.yaml serves")
            continue
        groups.setdefault((leaf.device, vlan["id"]), []).append((host, leaf, idx, nic))
    for (leaf_name, vid), members in sorted(groups.items()):
        members.sort(key=lambda t: natural_key(t[1].port))
        vlan = next(v for v in vlan_by_rail.values() if v["id"] == vid)
        leaf_dev = devices[leaf_name]
        if leaf_name not in switches or leaf_dev.id is None:
            continue
        pool = _net(vlan["subnet_pool"], ffile, ["vlans", vlan["_index"], "subnet_pool"], problems)
        if pool is None:
            continue
        prefix = int(vlan.get("prefix_length") or 24)
        subnet = _subnet(pool, prefix, leaf_dev.id - 1)
        if subnet is None:
            problems.add(
                ffile,
                ["vlans", vlan["_index"], "subnet_pool"],
                f"{pool} has no /{prefix} for {leaf_name} (data.id {leaf_dev.id})",
            )
            continue
        gateway = subnet.network_address + 1
        if len(members) > subnet.num_addresses - 3:
            problems.add(
                ffile,
                ["vlans", vlan["_index"], "prefix_length"],
                f"/{prefix} holds {subnet.num_addresses - 3} hosts but {leaf_name} has {len(members)} in VLAN {vid}",
            )
            continue
        switches[leaf_name].svis[vid] = ipaddress.IPv4Interface(f"{gateway}/{prefix}")
        for n, (host, leaf, idx, nic) in enumerate(members):
            if nic.address:
                address = ipaddress.IPv4Interface(nic.address)
            else:
                address = ipaddress.IPv4Interface((int(gateway) + 1 + n, prefix))
            hp = HostPort(host.device, nic, leaf_name, leaf.port, vid, address, gateway, idx)
            switches[leaf_name].host_ports.append(hp)
            host_ports.setdefault(host.device, []).append(hp)
    for hps in host_ports.values():
        hps.sort(key=lambda hp: natural_key(hp.nic.netdev))
    return Topology(switches=switches, host_ports=host_ports, vlan_by_rail=vlan_by_rail)
