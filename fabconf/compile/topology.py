"""Topology facts derived once from the model: links by role, addresses, ASNs, MTUs per link.

Everything here is linear in devices and links. Problems found while deriving (a link naming a device
or port that does not exist, a port cabled twice, an address pool too small) are recorded, and the
offending item is left out so that later checks still run on the rest.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from dataclasses import dataclass, field
from socket import inet_ntoa
from typing import Any, NamedTuple

from fabconf.compile.model import SWITCH_ROLES, UPPER_ROLE, Endpoint, Model, Nic, natural_key
from fabconf.compile.problems import Problems, format_path
from fabconf.compile.vlanplace import check_placement, placed_leaves
from fabconf.platforms import PLATFORMS

Links = list[tuple[Endpoint, Endpoint, int]]  # (one end, the other end, index in cabling.yaml)


@dataclass(frozen=True)
class Pod:
    name: str
    id: int
    spine_asn: int | None = None  # an override from fabric.yaml pods.<name>.spine_asn


class Uplink(NamedTuple):
    """One link from a switch to the tier above it (leaf -> spine, spine -> super-spine), seen from both ends.
    The lower end's id numbers the /31: adding a device or a pod never renumbers another's links. A tuple, with
    its addresses as integers: a 32k-GPU fabric has 32,768 of them, and most runs read the addresses of a few."""

    lower: str
    lower_port: str
    upper: str
    upper_port: str
    network: int  # the /31's first address: the upper end's
    mtu: int
    link_index: int

    @property
    def subnet(self) -> ipaddress.IPv4Network:
        return ipaddress.IPv4Network((self.network, 31))

    @property
    def upper_ip(self) -> ipaddress.IPv4Address:
        return ipaddress.IPv4Address(self.network)

    @property
    def lower_ip(self) -> ipaddress.IPv4Address:
        return ipaddress.IPv4Address(self.network + 1)

    def label(self) -> str:
        return f"{self.lower}:{self.lower_port} <-> {self.upper}:{self.upper_port}"


class HostPort(NamedTuple):
    """One GPU host NIC cabled to a leaf port, in its rail's training VLAN (addresses as integers, like Uplink)."""

    host: str
    nic: Nic
    leaf: str
    leaf_port: str
    vlan: int
    ip: int
    prefix: int
    gateway_ip: int
    link_index: int

    @property
    def address(self) -> ipaddress.IPv4Interface:
        return ipaddress.IPv4Interface((self.ip, self.prefix))

    @property
    def gateway(self) -> ipaddress.IPv4Address:
        return ipaddress.IPv4Address(self.gateway_ip)


@dataclass
class SwitchFacts:
    asn: int | None = None
    loopback: ipaddress.IPv4Address | None = None
    mtu: int = 9216
    pod: str | None = None  # None for super-spines
    uplinks: list[Uplink] = field(default_factory=list)  # links to the tier above
    cabled_uplinks: int = 0  # links to the tier above in cabling.yaml, addressed or not
    downlinks: list[Uplink] = field(default_factory=list)  # links to the tier below
    host_ports: list[HostPort] = field(default_factory=list)
    svis: dict[int, ipaddress.IPv4Interface] = field(default_factory=dict)  # vlan -> gateway address


@dataclass
class Topology:
    switches: dict[str, SwitchFacts]
    host_ports: dict[str, list[HostPort]]  # gpu host -> its cabled NICs
    vlan_by_rail: dict[int, dict]
    pods: dict[str, Pod] = field(default_factory=dict)
    leaves_by_pod: dict[str | None, list[str]] = field(default_factory=dict)  # sorted names, for verify targets
    # ends of links whose other end is a device that could not be resolved (``Model.unresolved``): left out of the
    # topology without a problem of their own (that device's problem is the one to fix)
    orphaned: set[Endpoint] = field(default_factory=set)


def dotted(address: int) -> str:
    """An IPv4 address (an integer) as ``str(ipaddress.IPv4Address(address))`` writes it, without making one."""
    return inet_ntoa(address.to_bytes(4, "big"))


def _slot(pool: ipaddress.IPv4Network, prefix: int, index: int) -> int | None:
    """The first address, as an integer, of the ``index``-th /``prefix`` of ``pool``; None when it has none."""
    if prefix < pool.prefixlen or not 0 <= index < 1 << (prefix - pool.prefixlen):
        return None
    return int(pool.network_address) + index * (1 << (32 - prefix))


def _subnet(pool: ipaddress.IPv4Network, prefix: int, index: int) -> ipaddress.IPv4Network | None:
    start = _slot(pool, prefix, index)
    return None if start is None else ipaddress.IPv4Network((start, prefix))


def _pinned_ok(address: ipaddress.IPv4Interface, subnet: ipaddress.IPv4Network, gateway: ipaddress.IPv4Address) -> bool:
    usable = subnet.prefixlen >= 31 or address.ip not in (subnet.network_address, subnet.broadcast_address)
    return address.network == subnet and address.ip != gateway and usable


def _net(value: str, file: str, path: list, problems: Problems) -> ipaddress.IPv4Network | None:
    try:
        return ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        problems.add(file, path, f"{value!r} is not an IPv4 network: {exc}")
        return None


def _pods(model: Model, problems: Problems) -> dict[str, Pod]:
    """Declared pods (fabric.yaml ``pods``), or the one implicit pod every switch shares."""
    ffile = model.files.get("fabric", "fabric.yaml")
    declared = model.fabric.get("pods") or {}
    if declared:
        pods = {name: Pod(name, int(p["id"]), p.get("spine_asn")) for name, p in sorted(declared.items())}
        seen: dict[int, str] = {}
        for pod in pods.values():
            if pod.id in seen:
                problems.add(ffile, ["pods", pod.name, "id"], f"pod id {pod.id} is already used by {seen[pod.id]}")
            seen.setdefault(pod.id, pod.name)
        return pods
    named = sorted({d.pod for d in model.devices.values() if d.role in ("spine", "leaf") and d.pod})
    if len(named) > 1:
        problems.add(
            ffile,
            "pods",
            f"switches name pods {', '.join(named)}: declare them under pods: with an id each "
            "(the id keeps each pod's ASN and addresses stable as pods are added)",
        )
    name = named[0] if named else str(model.fabric.get("name") or "pod1")
    return {name: Pod(name, 1)}


def _identity(model: Model, pods: dict[str, Pod], problems: Problems) -> dict[str, SwitchFacts]:
    """Per switch: pod, ASN (RFC 7938: one per super-spine tier, one per pod's spines, one per leaf), loopback,
    MTU. Every value is derived from ids and overridable per device."""
    fab = model.fabric
    ffile = model.files.get("fabric", "fabric.yaml")
    bgp = fab["bgp"]
    lo_pools = {
        role: _net(v, ffile, ["addressing", "loopbacks", role], problems)
        for role, v in fab["addressing"]["loopbacks"].items()
    }
    implicit = None if model.fabric.get("pods") else next(iter(pods.values()))
    switches: dict[str, SwitchFacts] = {}
    missing_pool_reported: set[str] = set()
    undeclared: set[tuple[str, str, str]] = set()  # (file, path, pod) of the undeclared pods reported
    for name, dev in sorted(model.devices.items()):
        if not dev.is_switch:
            continue
        facts = SwitchFacts()
        facts.mtu = switch_mtu(dev.data, fab)
        if dev.role not in SWITCH_ROLES:
            file, path = dev.where("role")
            problems.add(file, path, f"{name}: a {dev.platform} switch must be a super_spine, spine or leaf")
            continue
        if dev.id is None and ("asn" not in dev.data or "loopback" not in dev.data):
            problems.add(*dev.where("id"), "a switch needs data.id (or both data.asn and data.loopback)")
        pod: Pod | None = None
        if dev.role == "super_spine":
            if dev.pod is not None and model.fabric.get("pods"):
                file, path = dev.where("pod")
                problems.add(file, path, f"{name}: super-spines join pods together and belong to none")
        elif implicit is not None:
            pod = implicit
        elif dev.pod is None:
            file, path = dev.where("pod")
            problems.add(file, path, f"{name}: a {dev.role} needs data.pod (one of: {', '.join(pods)})")
        elif dev.pod not in pods:
            file, path = dev.where("pod")
            if (file, str(path), dev.pod) not in undeclared:  # once where it is written, not once per switch
                undeclared.add((file, str(path), dev.pod))
                problems.add(file, path, f"{name}: pod {dev.pod!r} is not declared under pods: in {ffile}")
        else:
            pod = pods[dev.pod]
        facts.pod = pod.name if pod else None
        if "asn" in dev.data:
            facts.asn = int(dev.data["asn"])
        elif dev.role == "super_spine":
            if bgp.get("super_spine_asn") is None:
                if "super_spine_asn" not in missing_pool_reported:
                    missing_pool_reported.add("super_spine_asn")
                    problems.add(ffile, "bgp.super_spine_asn", "is required when the fabric has super-spines")
            else:
                facts.asn = int(bgp["super_spine_asn"])
        elif dev.role == "spine" and pod is not None:
            facts.asn = int(pod.spine_asn) if pod.spine_asn else int(bgp["spine_asn"]) + pod.id - 1
        elif dev.role == "leaf" and dev.id is not None:
            facts.asn = int(bgp["leaf_asn_base"]) + dev.id
        if facts.asn is not None and facts.asn > 4294967295:
            problems.add(*dev.where("id"), f"{name}: derived ASN {facts.asn} exceeds 4294967295")
            facts.asn = None
        if "loopback" in dev.data:
            try:
                facts.loopback = ipaddress.IPv4Address(dev.data["loopback"])
            except ValueError:
                problems.add(*dev.where("loopback"), f"{dev.data['loopback']!r} is not an IPv4 address")
        elif dev.id is not None and dev.role not in lo_pools:
            if dev.role not in missing_pool_reported:
                missing_pool_reported.add(dev.role)
                problems.add(ffile, f"addressing.loopbacks.{dev.role}", f"is required: {name} is a {dev.role}")
        elif dev.id is not None and lo_pools.get(dev.role) is not None:
            pool = lo_pools[dev.role]
            assert pool is not None
            if dev.id >= pool.num_addresses:
                problems.add(*dev.where("id"), f"id {dev.id} is outside loopback pool {pool} for role {dev.role}")
            else:
                facts.loopback = pool.network_address + dev.id
        switches[name] = facts
    return switches


def switch_mtu(data: dict[str, Any], fabric: dict[str, Any]) -> int:
    """A switch's MTU: its own ``data.mtu``, else the fabric's ``mtu.switch``."""
    return int(data.get("mtu") or fabric["mtu"]["switch"])


def mtu_caps(model: Model, switches: dict[str, SwitchFacts]) -> dict[str, int]:
    """The largest MTU a link may carry at each switch: its configured MTU, within its platform's maximum."""
    devices = model.devices
    return {name: min(f.mtu, PLATFORMS[devices[name].platform].max_mtu) for name, f in switches.items()}


# (lower role, upper role) -> (pool key, slots key) under ``addressing``
_TIERS = {"leaf": ("p2p_pool", "uplinks_per_leaf"), "spine": ("spine_p2p_pool", "uplinks_per_spine")}


def derive(model: Model, problems: Problems) -> Topology:
    """The fabric's topology from the model, in three phases: the links resolved and classified (``_links``), an
    address per uplink (``_uplinks``), and the host ports with their VLAN subnets (``_host_ports``)."""
    _misplaced_roles(model, problems)
    pods = _pods(model, problems)
    switches = _identity(model, pods, problems)
    nic_of = {name: {n.netdev: n for n in dev.nics} for name, dev in model.devices.items() if not dev.is_switch}
    orphaned: set[Endpoint] = set()
    fabric_links, host_links = _links(model, switches, nic_of, problems, orphaned)
    _uplinks(model, switches, fabric_links, problems)
    placed = check_placement(model.fabric, model.files.get("fabric", "fabric.yaml"), problems)
    host_ports, vlan_by_rail = _host_ports(model, switches, host_links, nic_of, placed, problems)
    _placed_vlans(model, switches, pods, placed, problems)
    leaves_by_pod: dict[str | None, list[str]] = {}
    for name, facts in sorted(switches.items()):
        if model.devices[name].role == "leaf" and facts.loopback is not None:
            leaves_by_pod.setdefault(facts.pod, []).append(name)
    return Topology(
        switches=switches,
        host_ports=host_ports,
        vlan_by_rail=vlan_by_rail,
        pods=pods,
        leaves_by_pod=leaves_by_pod,
        orphaned=orphaned,
    )


def _clos(ra: str, rb: str) -> bool:
    """Whether a link between roles ``ra`` and ``rb`` is part of a Clos."""
    return UPPER_ROLE.get(ra) == rb or UPPER_ROLE.get(rb) == ra or {ra, rb} == {"gpu_host", "leaf"}


def _misplaced_roles(model: Model, problems: Problems) -> None:
    """One cause, one error: a device none of whose links fits its role, while each of its peers has a link that
    fits (so the peers are where the Clos says they are), has the wrong role. It is reported once where its role
    is written (a group's role, once for the group) and set aside like a device that cannot be resolved, so its
    links, its peers' missing uplinks and its id and address clashes are not reported as problems of their own."""
    devices = model.devices
    peers: dict[str, list[str]] = defaultdict(list)
    for link in model.links:
        a, b = link.a.device, link.b.device
        if a in devices and b in devices and a != b:
            peers[a].append(b)
            peers[b].append(a)
    fits = {name: any(_clos(devices[name].role, devices[p].role) for p in ps) for name, ps in peers.items()}
    odd = sorted(name for name, ps in peers.items() if not fits[name] and all(fits[p] for p in ps))
    by_origin: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name in odd:
        file, at = devices[name].where("role")
        by_origin[(file, format_path(at))].append(name)
    for (file, path), names in by_origin.items():
        role = devices[names[0]].role
        kinds = sorted({"-".join(sorted((role, devices[p].role))) for n in names for p in peers[n]})
        problems.add(
            file,
            path,
            f"role {role!r} fits none of the links of {', '.join(names[:4])}{', ...' if len(names) > 4 else ''} "
            f"({', '.join(kinds)}: not part of a Clos), while their peers' other links fit theirs: this role is the "
            "one to fix",
        )
        for name in names:
            model.unresolved[name] = devices.pop(name).data
    _misplaced_pods(model, peers, problems)


def _misplaced_pods(model: Model, peers: dict[str, list[str]], problems: Problems) -> None:
    """The same for a pod: a spine or leaf of a declared pod none of whose peers is in its pod, while they are all
    in one other pod, is in the wrong pod (reported where its pod is written, once for a group); it is set aside as
    cabled into that other pod, whose own checks it would otherwise fail."""
    devices = model.devices
    declared = model.fabric.get("pods") or {}  # an undeclared pod is its own problem (``_pods``)
    odd: dict[str, str] = {}  # device -> the one other pod all its peers are in
    for name, ps in sorted(peers.items()):
        dev = devices.get(name)
        if dev is None or dev.role not in ("spine", "leaf") or dev.pod not in declared:
            continue
        theirs = {str(devices[p].pod) for p in ps if p in devices and devices[p].pod}
        if len(theirs) == 1 and str(dev.pod) not in theirs:
            odd[name] = theirs.pop()
    by_origin: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for name, other in odd.items():
        # its peers must be where they belong: a spine whose leaves are all in the wrong pod is not the one to fix
        if all(p in odd or not devices[p].pod for p in peers[name] if p in devices):
            continue
        file, at = devices[name].where("pod")
        by_origin[(file, format_path(at))].append((name, other))
    for (file, path), found in by_origin.items():
        names = [n for n, _ in found]
        pod, cabled = devices[names[0]].pod, sorted({q for _, q in found})
        problems.add(
            file,
            path,
            f"pod {pod}: {', '.join(names[:4])}{', ...' if len(names) > 4 else ''} are cabled only to devices of "
            f"pod {' and '.join(cabled)}: this pod is the one to fix",
        )
        for name, other in found:
            model.unresolved[name] = {**devices.pop(name).data, "pod": other}  # its pod's checks wait for the fix


def _links(
    model: Model,
    switches: dict[str, SwitchFacts],
    nic_of: dict[str, dict[str, Nic]],
    problems: Problems,
    orphaned: set[Endpoint],
) -> tuple[Links, Links]:
    """Every link's endpoints resolved (a known device, a port of its platform, a NIC of a host), each end cabled
    once, and classified: fabric links (lower end, upper end) and host links (host end, leaf end). A link to a
    device that could not be resolved is left out quietly, its other end added to ``orphaned``."""
    cfile = model.files.get("cabling", "cabling.yaml")
    devices = model.devices
    fabric_links: Links = []  # (lower end, upper end)
    host_links: Links = []  # (host end, leaf end)
    # what a cabled port must be, per device, worked out once (65k links at 32k GPUs)
    port_ok: dict[tuple[str, str], bool] = {}  # (platform, port) -> a port name of that platform
    used: dict[Endpoint, int] = {}
    for link in model.links:
        if link.a.device in model.unresolved or link.b.device in model.unresolved:
            orphaned.update(ep for ep in (link.a, link.b) if ep.device not in model.unresolved)
            continue
        ok = True
        for side, ep in ((0, link.a), (1, link.b)):
            found = devices.get(ep.device)
            problem = ""
            nics = nic_of.get(ep.device)
            if found is None:
                problem = f"device {ep.device!r} is not in the inventory"
            elif nics is not None:
                if ep.port not in nics:
                    problem = f"{ep.device} has no NIC {ep.port!r} (data.nics)"
            else:
                named = port_ok.get((found.platform, ep.port))
                if named is None:
                    named = port_ok[(found.platform, ep.port)] = bool(
                        PLATFORMS[found.platform].port_pattern.match(ep.port)
                    )
                if not named:
                    problem = f"{ep.port!r} is not a {found.platform} port name"
                elif found.ports is not None and ep.port not in found.ports:
                    problem = f"{ep.device} has no port {ep.port!r}"
            if problem:
                problems.add(cfile, ["links", link.index, side], problem)
                ok = False
                if found is None:
                    continue
            if ep in used:
                problems.add(cfile, ["links", link.index, side], f"{ep} is already cabled in links[{used[ep]}]")
                ok = False
            else:
                used[ep] = link.index
        if not ok:
            continue
        ra, rb = devices[link.a.device].role, devices[link.b.device].role
        if UPPER_ROLE.get(ra) == rb or UPPER_ROLE.get(rb) == ra:
            lower, upper = (link.a, link.b) if UPPER_ROLE.get(ra) == rb else (link.b, link.a)
            lp = switches[lower.device].pod if lower.device in switches else None
            up = switches[upper.device].pod if upper.device in switches else None
            if lp and up and lp != up:
                problems.add(
                    cfile,
                    ["links", link.index],
                    f"{lower.device} (pod {lp}) is cabled to {upper.device} (pod {up}); "
                    "leaves connect to the spines of their own pod, pods meet at the super-spines",
                )
                continue
            fabric_links.append((lower, upper, link.index))
        elif {ra, rb} == {"gpu_host", "leaf"}:
            host, leaf = (link.a, link.b) if ra == "gpu_host" else (link.b, link.a)
            host_links.append((host, leaf, link.index))
        else:
            problems.add(
                cfile,
                ["links", link.index],
                f"a {ra}-{rb} link is not part of a Clos (leaf-spine, spine-super_spine or gpu_host-leaf)",
            )

    return fabric_links, host_links


def _uplinks(
    model: Model,
    switches: dict[str, SwitchFacts],
    fabric_links: Links,
    problems: Problems,
) -> None:
    """A /31 per fabric link from the lower tier's pool, the slots reserved per lower device; each uplink at the
    smaller of its two ends' MTUs."""
    fab = model.fabric
    ffile = model.files.get("fabric", "fabric.yaml")
    cfile = model.files.get("cabling", "cabling.yaml")
    devices = model.devices
    by_lower: dict[str, Links] = {}
    for lower, upper, idx in fabric_links:
        by_lower.setdefault(lower.device, []).append((lower, upper, idx))
    pools: dict[str, ipaddress.IPv4Network | None] = {}
    mtu_cap = mtu_caps(model, switches)
    for lower_name, ups in sorted(by_lower.items()):
        ups.sort(key=lambda t: natural_key(t[0].port))
        lower_dev = devices[lower_name]
        if lower_name in switches:
            switches[lower_name].cabled_uplinks = len(ups)
        pool_key, slots_key = _TIERS[lower_dev.role]
        if pool_key not in pools:
            value = fab["addressing"].get(pool_key)
            if value is None:
                problems.add(ffile, ["addressing", pool_key], f"is required: {lower_name} has {lower_dev.role} uplinks")
                pools[pool_key] = None
            else:
                pools[pool_key] = _net(value, ffile, ["addressing", pool_key], problems)
        p2p = pools[pool_key]
        per = int(fab["addressing"][slots_key])
        if len(ups) > per:
            problems.add(
                cfile,
                ["links", ups[per][2]],
                f"{lower_name} has {len(ups)} uplinks but addressing.{slots_key} is {per}",
            )
            ups = ups[:per]
        if p2p is None or lower_dev.id is None or lower_name not in switches:
            continue
        lower_facts = switches[lower_name]
        for slot, (lower, upper, idx) in enumerate(ups):
            upper_facts = switches.get(upper.device)
            if upper_facts is None:
                continue
            network = _slot(p2p, 31, (lower_dev.id - 1) * per + slot)
            if network is None:
                problems.add(ffile, ["addressing", pool_key], f"{p2p} is too small for the uplinks of {lower_name}")
                continue
            mtu = min(mtu_cap[lower_name], mtu_cap[upper.device])
            uplink = Uplink(lower_name, lower.port, upper.device, upper.port, network, mtu, idx)
            lower_facts.uplinks.append(uplink)
            upper_facts.downlinks.append(uplink)


def _vlans_by_rail(fab: dict[str, Any], ffile: str, placed: list[int], problems: Problems) -> dict[int, dict[str, Any]]:
    """Each rail's VLAN (with its index in fabric.yaml), of the VLANs ``placed`` well; a second VLAN for a rail is a
    problem."""
    vlan_by_rail: dict[int, dict[str, Any]] = {}
    for i in placed:
        vlan = fab["vlans"][i]
        if "rail" not in vlan:
            continue
        if vlan["rail"] in vlan_by_rail:
            problems.add(
                ffile, ["vlans", i, "rail"], f"rail {vlan['rail']} already has VLAN {vlan_by_rail[vlan['rail']]['id']}"
            )
            continue
        vlan_by_rail[vlan["rail"]] = {**vlan, "_index": i}
    return vlan_by_rail


def _host_ports(
    model: Model,
    switches: dict[str, SwitchFacts],
    host_links: Links,
    nic_of: dict[str, dict[str, Nic]],
    placed: list[int],
    problems: Problems,
) -> tuple[dict[str, list[HostPort]], dict[int, dict[str, Any]]]:
    """Host ports: rail -> VLAN -> a subnet per leaf; hosts numbered in leaf port order (or pinned addresses)."""
    fab = model.fabric
    ffile = model.files.get("fabric", "fabric.yaml")
    cfile = model.files.get("cabling", "cabling.yaml")
    devices = model.devices
    vlan_by_rail = _vlans_by_rail(fab, ffile, placed, problems)
    host_ports: dict[str, list[HostPort]] = {}
    groups: dict[tuple[str, int], list[tuple[Endpoint, Endpoint, int, Nic]]] = {}
    for host, leaf, idx in host_links:
        nic = nic_of[host.device][host.port]
        vlan = vlan_by_rail.get(nic.rail)
        if vlan is None:
            problems.add(cfile, ["links", idx], f"{host} is on rail {nic.rail}, which no VLAN in fabric.yaml serves")
            continue
        groups.setdefault((leaf.device, vlan["id"]), []).append((host, leaf, idx, nic))
    used = {vid for _, vid in groups}
    for vlan in vlan_by_rail.values():
        if vlan["id"] not in used:
            problems.warn(
                ffile,
                ["vlans", vlan["_index"]],
                f"VLAN {vlan['id']} lands on no device: no GPU host NIC of rail {vlan['rail']} is cabled to a leaf",
            )
    vlan_pools: dict[int, ipaddress.IPv4Network | None] = {}
    for (leaf_name, vid), members in sorted(groups.items()):
        members.sort(key=lambda t: natural_key(t[1].port))
        vlan = next(v for v in vlan_by_rail.values() if v["id"] == vid)
        leaf_dev = devices[leaf_name]
        if leaf_name not in switches or leaf_dev.id is None:
            continue
        if vid not in vlan_pools:
            vlan_pools[vid] = _net(vlan["subnet_pool"], ffile, ["vlans", vlan["_index"], "subnet_pool"], problems)
        pool = vlan_pools[vid]
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
        switches[leaf_name].svis[vid] = ipaddress.IPv4Interface((int(gateway), prefix))
        first = int(gateway) + 1
        for n, (host, leaf, idx, nic) in enumerate(members):
            if nic.address:
                address = ipaddress.IPv4Interface(nic.address)
                if not _pinned_ok(address, subnet, gateway):
                    host_dev = devices[host.device]
                    file, path = host_dev.where("nics")
                    position = host_dev.nics.index(nic)
                    problems.add(
                        file,
                        [*path, position, "address"],
                        f"{host.device}:{nic.netdev}: {address} must be a host address of {subnet} "
                        f"({leaf_name} VLAN {vid}) other than the gateway {gateway}",
                    )
                    continue
                ip = int(address.ip)
            else:
                ip = first + n
            hp = HostPort(host.device, nic, leaf_name, leaf.port, vid, ip, prefix, first - 1, idx)
            switches[leaf_name].host_ports.append(hp)
            host_ports.setdefault(host.device, []).append(hp)
    for hps in host_ports.values():
        hps.sort(key=lambda hp: natural_key(hp.nic.netdev))
    return host_ports, vlan_by_rail


def _placed_vlans(
    model: Model, switches: dict[str, SwitchFacts], pods: dict[str, Pod], placed: list[int], problems: Problems
) -> None:
    """The gateways of the VLANs placed on all leaves, on pods or on named leaves (``fabconf.compile.vlanplace``)."""
    ffile = model.files.get("fabric", "fabric.yaml")
    leaf_pods = {n: f.pod for n, f in switches.items() if model.devices[n].role == "leaf"}
    for i in placed:
        vlan = model.fabric["vlans"][i]
        if "rail" in vlan:
            continue
        leaves = placed_leaves(model, leaf_pods, sorted(pods, key=natural_key), i, problems)
        if not leaves:
            problems.warn(ffile, ["vlans", i], f"VLAN {vlan['id']} lands on no device: no leaf matches its placement")
            continue
        pool = _net(vlan["subnet_pool"], ffile, ["vlans", i, "subnet_pool"], problems)
        prefix = int(vlan.get("prefix_length") or 24)
        for name in leaves:
            dev_id = model.devices[name].id
            subnet = None if pool is None or dev_id is None else _subnet(pool, prefix, dev_id - 1)
            if subnet is None:
                if pool is not None and dev_id is not None:
                    problems.add(
                        ffile, ["vlans", i, "subnet_pool"], f"{pool} has no /{prefix} for {name} (data.id {dev_id})"
                    )
                continue
            switches[name].svis[int(vlan["id"])] = ipaddress.IPv4Interface((int(subnet.network_address) + 1, prefix))
