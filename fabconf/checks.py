"""Cross-checks over the resolved model, its topology and the designed device data.

Each check is a small function that appends problems; together they implement the rules of
shared/reference/roce-lossless.md §6 that a single file's schema cannot express. Every check is linear
(or n log n) in devices and links: lookups go through dicts, never nested loops over devices.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from fabconf.design import ECT0, roce_tos
from fabconf.model import Model
from fabconf.platforms import PLATFORMS
from fabconf.problems import Problems
from fabconf.topology import Topology

Check = Callable[[Model, Topology, Problems], None]


def _ffile(model: Model) -> str:
    return model.files.get("fabric", "fabric.yaml")


def _hfile(model: Model) -> str:
    return model.files.get("hosts", "hosts.yaml")


def check_priorities(model: Model, topo: Topology, problems: Problems) -> None:
    """One or two lossless priorities, including the RoCE priority; CNP strict and distinct."""
    f, roce = _ffile(model), model.fabric["roce"]
    pfc = roce["pfc_priorities"]
    if roce["priority"] not in pfc:
        problems.add(f, "roce.pfc_priorities", f"must include the RoCE priority {roce['priority']} (PFC on RoCE data)")
    if len(pfc) > 2:
        problems.add(f, "roce.pfc_priorities", f"{len(pfc)} lossless priorities; use one or two (buffer headroom)")
    cnp = roce["cnp"]
    if cnp["priority"] == roce["priority"]:
        problems.add(f, "roce.cnp.priority", "CNP priority must differ from the RoCE data priority")
    if cnp["priority"] in pfc:
        problems.add(f, "roce.cnp.priority", f"CNP priority {cnp['priority']} must not be lossless (it is strict)")
    if cnp["priority"] == 0:
        problems.add(f, "roce.cnp.priority", "CNP priority 0 is the default lossy class; use a strict class such as 6")
    if 0 in pfc:
        problems.add(f, "roce.pfc_priorities", "priority 0 is the default lossy class and cannot be lossless")
    if cnp["dscp"] == roce["dscp"]:
        problems.add(f, "roce.cnp.dscp", "CNP DSCP must differ from the RoCE data DSCP")
    if roce["ets"]["roce_percent"] >= 100:
        problems.add(f, "roce.ets.roce_percent", "leave some bandwidth to the default queue (1..99)")


def check_ecn(model: Model, topo: Topology, problems: Problems) -> None:
    """0 < min < max, in the units each platform in the fabric accepts."""
    f, ecn = _ffile(model), model.fabric["roce"]["ecn"]
    lo, hi = ecn["min_threshold_bytes"], ecn["max_threshold_bytes"]
    if not 0 < lo < hi:
        problems.add(f, "roce.ecn", f"thresholds need 0 < min ({lo}) < max ({hi})")
    platforms = {d.platform for d in model.devices.values() if d.is_switch}
    for name in sorted(platforms):
        unit = PLATFORMS[name].ecn_unit_bytes
        for key, value in (("min_threshold_bytes", lo), ("max_threshold_bytes", hi)):
            if value % unit:
                problems.add(f, f"roce.ecn.{key}", f"{value} is not a whole number of kbytes, which {name} requires")


def check_mtu(model: Model, topo: Topology, problems: Problems) -> None:
    """host MTU <= every switch port MTU; both ends of every link equal; within platform limits."""
    f, h = _ffile(model), _hfile(model)
    host_mtu, switch_mtu = model.fabric["mtu"]["host"], model.fabric["mtu"]["switch"]
    if host_mtu > switch_mtu:
        problems.add(f, "mtu.host", f"host MTU {host_mtu} exceeds switch MTU {switch_mtu}")
    for name, facts in sorted(topo.switches.items()):
        dev = model.devices[name]
        plat = PLATFORMS[dev.platform]
        where = [name, "data", "mtu"] if "mtu" in dev.data else "mtu.switch"
        file = h if "mtu" in dev.data else f
        if facts.mtu < plat.min_mtu:
            problems.add(file, where, f"{name}: MTU {facts.mtu} is below the {dev.platform} minimum {plat.min_mtu}")
        if "mtu" in dev.data and dev.data["mtu"] > plat.max_mtu:
            problems.add(h, where, f"{name}: MTU {dev.data['mtu']} exceeds the {dev.platform} maximum {plat.max_mtu}")
        if min(facts.mtu, plat.max_mtu) < host_mtu and facts.host_ports:
            problems.add(file, where, f"{name}: host ports MTU {min(facts.mtu, plat.max_mtu)} < host MTU {host_mtu}")
        if dev.role != "leaf":
            continue
        for up in facts.uplinks:
            ends = ((up.leaf, topo.switches[up.leaf].mtu), (up.spine, topo.switches[up.spine].mtu))
            for dname, configured in ends:
                if "mtu" in model.devices[dname].data and configured != up.mtu:
                    problems.add(
                        h,
                        [dname, "data", "mtu"],
                        f"{up.leaf}:{up.leaf_port} <-> {up.spine}:{up.spine_port}: MTU {configured} on {dname} "
                        f"but {up.mtu} on the other end; every hop must carry the same MTU",
                    )
            if up.mtu < host_mtu:
                problems.add(
                    _ffile(model),
                    "mtu.switch",
                    f"{up.leaf}:{up.leaf_port} <-> {up.spine}:{up.spine_port}: MTU {up.mtu} < host MTU {host_mtu}",
                )


def check_vlans(model: Model, topo: Topology, problems: Problems) -> None:
    f = _ffile(model)
    # VLANs carried by the switches of each platform (every platform when no switch carries any yet)
    carried: dict[str, set[int]] = defaultdict(set)
    for n, s in topo.switches.items():
        carried[model.devices[n].platform].update(s.svis)
    seen_id: dict[int, int] = {}
    seen_name: dict[str, int] = {}
    for i, vlan in enumerate(model.fabric["vlans"]):
        vid = vlan["id"]
        if not 1 <= vid <= 4094:
            problems.add(f, ["vlans", i, "id"], f"{vid} is not in 1..4094")
        for spec in PLATFORMS.values():
            for lo, hi in spec.reserved_vlans:
                if lo <= vid <= hi and (vid in carried[spec.name] or not topo.switches):
                    problems.add(f, ["vlans", i, "id"], f"{vid} is in the {spec.label} reserved range {lo}-{hi}")
        if vid in seen_id:
            problems.add(f, ["vlans", i, "id"], f"VLAN {vid} is already defined at vlans[{seen_id[vid]}]")
        seen_id.setdefault(vid, i)
        if vlan["name"] in seen_name:
            problems.add(
                f, ["vlans", i, "name"], f"name {vlan['name']!r} is already used at vlans[{seen_name[vlan['name']]}]"
            )
        seen_name.setdefault(vlan["name"], i)


def check_ecmp(model: Model, topo: Topology, problems: Problems) -> None:
    f, h = _ffile(model), _hfile(model)
    for name, facts in sorted(topo.switches.items()):
        dev = model.devices[name]
        override = "ecmp_max_paths" in dev.data
        paths = int(dev.data.get("ecmp_max_paths") or model.fabric["ecmp"]["max_paths"])
        file, where = (h, [name, "data", "ecmp_max_paths"]) if override else (f, "ecmp.max_paths")
        plat = PLATFORMS[dev.platform]
        if paths > plat.max_ecmp:
            problems.add(file, where, f"{name}: {paths} paths exceed the {dev.platform} maximum of {plat.max_ecmp}")
        if dev.role == "leaf":
            if not facts.uplinks:
                problems.add(h, [name], "leaf has no uplinks in cabling.yaml")
            elif paths < len(facts.uplinks):
                problems.add(file, where, f"{name}: {paths} ECMP paths < its {len(facts.uplinks)} uplinks")
        elif dev.role == "spine" and not facts.uplinks:
            problems.warn(h, [name], "spine has no leaf links in cabling.yaml")


def check_unique(model: Model, topo: Topology, problems: Problems) -> None:
    """Unique management addresses, ids per role, leaf ASNs, loopbacks and interface addresses."""
    h, c = _hfile(model), model.files.get("cabling", "cabling.yaml")
    first: dict[tuple[str, Any], str] = {}

    def claim(kind: str, value: Any, owner: str, file: str, path: Any, what: str) -> None:
        key = (kind, value)
        if key in first and first[key] != owner:
            problems.add(file, path, f"{what} {value} is already used by {first[key]}")
        else:
            first.setdefault(key, owner)

    spine_asn = model.fabric["bgp"]["spine_asn"]
    for name, dev in sorted(model.devices.items()):
        claim("mgmt", dev.hostname, name, h, [name, "hostname"], "management address")
        if dev.id is not None:
            claim(f"id-{dev.role}", dev.id, name, h, [name, "data", "id"], f"{dev.role} id")
        facts = topo.switches.get(name)
        if facts is None:
            continue
        if dev.role == "leaf" and facts.asn is not None:
            path = [name, "data", "asn" if "asn" in dev.data else "id"]
            if facts.asn == spine_asn:
                problems.add(h, path, f"leaf ASN {facts.asn} equals the spine ASN")
            claim("asn", facts.asn, name, h, path, "ASN")
        if facts.loopback is not None:
            claim(
                "ip",
                facts.loopback,
                name,
                h,
                [name, "data", "loopback" if "loopback" in dev.data else "id"],
                "loopback",
            )
        for vid, gw in facts.svis.items():
            claim("net", gw.network, f"{name} VLAN {vid}", h, [name], "subnet")
    for name, facts in sorted(topo.switches.items()):
        if model.devices[name].role != "leaf":
            continue
        for up in facts.uplinks:
            claim("net", up.subnet, f"{up.leaf}:{up.leaf_port}", c, ["links", up.link_index], "link subnet")
    for host, ports in sorted(topo.host_ports.items()):
        for hp in ports:
            claim("ip", hp.address.ip, f"{host}:{hp.nic.netdev}", c, ["links", hp.link_index], "address")


def check_hosts(model: Model, topo: Topology, problems: Problems) -> None:
    """ToS, NCCL and firmware settings agree with the RoCE profile; every NIC is cabled."""
    f, h = _ffile(model), _hfile(model)
    roce, hosts = model.fabric["roce"], model.fabric["hosts"]
    tos = roce_tos(model.fabric)
    if tos >> 2 != roce["dscp"]:
        problems.add(f, "hosts.tos", f"ToS {tos} carries DSCP {tos >> 2}, not the RoCE DSCP {roce['dscp']}")
    elif tos & 0b11 == 0:
        problems.add(f, "hosts.tos", f"ToS {tos} is Not-ECT; use {(roce['dscp'] << 2) | ECT0} so DCQCN can mark")
    nccl_tc = hosts["nccl"].get("NCCL_IB_TC")
    if nccl_tc is not None and int(nccl_tc) != tos:
        problems.add(f, "hosts.nccl.NCCL_IB_TC", f"{nccl_tc} differs from the RoCE ToS {tos}")
    mlx = hosts["mlxconfig"]
    for key, want in (("CNP_DSCP_P1", roce["cnp"]["dscp"]), ("CNP_802P_PRIO_P1", roce["cnp"]["priority"])):
        if key in mlx and str(mlx[key]) != str(want):
            problems.add(f, f"hosts.mlxconfig.{key}", f"{mlx[key]} differs from roce.cnp ({want})")
    mask = mlx.get("ROCE_CC_PRIO_MASK_P1")
    if mask is not None:
        try:
            bits = int(str(mask), 0)
        except ValueError:
            problems.add(f, "hosts.mlxconfig.ROCE_CC_PRIO_MASK_P1", f"{mask!r} is not a number")
        else:
            for p in roce["pfc_priorities"]:
                if not bits >> p & 1:
                    problems.add(
                        f, "hosts.mlxconfig.ROCE_CC_PRIO_MASK_P1", f"{mask} leaves DCQCN off on lossless priority {p}"
                    )
    for name, dev in sorted(model.devices.items()):
        if not dev.is_host:
            continue
        if not dev.nics:
            problems.add(h, [name, "data", "nics"], "a GPU host needs at least one RoCE NIC")
        cabled = {hp.nic.netdev for hp in topo.host_ports.get(name, [])}
        seen: dict[str, str] = {}
        for i, nic in enumerate(dev.nics):
            if nic.rdma in seen:
                problems.add(h, [name, "data", "nics", i, "rdma"], f"{nic.rdma} is already used by {seen[nic.rdma]}")
            seen[nic.rdma] = nic.netdev
            if nic.netdev not in cabled:
                problems.warn(h, [name, "data", "nics", i], f"{name}:{nic.netdev} is not cabled to a leaf")


# What a switch's designed QoS data says about the priority chain, per QoS dialect (design.QOS_BUILDERS):
# (traffic class of the RoCE DSCP, lossless priorities, None when trust is right or the problem's detail).
ChainView = tuple[int | None, set[int], str | None]


def _chain_nxos(q: dict[str, Any], dscp: int) -> ChainView:
    tc = next((c["qos_group"] for c in q["classes"] if c["dscp"] == dscp), None)
    return tc, {x["cos"] for x in q["network_qos"]["lossless"]}, None


def _chain_eos(q: dict[str, Any], dscp: int) -> ChainView:
    tc = dict(map(tuple, q["dscp_map"])).get(dscp)
    return tc, set(q["pfc_priorities"]), None if q.get("trust") == "dscp" else ""


def _chain_nvue(q: dict[str, Any], dscp: int) -> ChainView:
    tc = dict(map(tuple, q["dscp_map"])).get(dscp)
    return tc, set(q["pfc"]["priorities"]), None if q.get("trust") in ("l3", "both") else " (l3 or both)"


_CHAIN_READERS: dict[str, Callable[[dict[str, Any], int], ChainView]] = {
    "nxos_cli": _chain_nxos,
    "eos_cli": _chain_eos,
    "nvue": _chain_nvue,
}


def check_device_data(model: Model, topo: Topology, problems: Problems, data: dict[str, dict[str, Any]]) -> None:
    """The priority chain end to end, read back from the designed device data of every device.

    host DSCP -> host priority (dscp2prio) -> PFC bit  ==  switch DSCP map -> traffic class -> PFC priority,
    trust DSCP where RoCE enters, and PFC on both ends of every host link.
    """
    roce = model.fabric["roce"]
    dscp, prio = roce["dscp"], roce["priority"]
    h = _hfile(model)
    switch_view: dict[str, tuple[int | None, set[int]]] = {}
    for name, d in data.items():
        q = d.get("qos", {})
        spec = PLATFORMS[d["platform"]]
        if spec.is_host:
            explicit = {a: b for a, b in q.get("dscp2prio", [])}
            host_prio = explicit.get(dscp, dscp >> 3)
            if host_prio != prio:
                problems.add(h, [name], f"host maps DSCP {dscp} to priority {host_prio}, fabric expects {prio}")
            if q.get("trust") != "dscp":
                problems.add(h, [name], "host NICs must trust DSCP")
            if (d["roce_tos"] >> 2) != dscp:
                problems.add(h, [name], f"host ToS {d['roce_tos']} does not carry DSCP {dscp}")
            if not q.get("pfc", [0] * 8)[host_prio]:
                problems.add(h, [name], f"host PFC is off on priority {host_prio}")
            continue
        tc, lossless, trust_problem = _CHAIN_READERS[spec.qos_dialect](q, dscp)
        if trust_problem is not None:
            problems.add(h, [name], f"{spec.label} RoCE ports must trust DSCP{trust_problem}")
        switch_view[name] = (tc, lossless)
        if tc != prio:
            problems.add(h, [name], f"switch maps DSCP {dscp} to traffic class {tc}, fabric expects {prio}")
        if prio not in lossless:
            problems.add(h, [name], f"switch has no PFC on priority {prio}")
    by_leaf: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for name, d in data.items():
        if not PLATFORMS[d["platform"]].is_host:
            for itf in d["interfaces"]:
                by_leaf[name][itf["name"]] = itf
    for host, ports in topo.host_ports.items():
        for hp in ports:
            itf = by_leaf.get(hp.leaf, {}).get(hp.leaf_port)
            if itf is not None and not itf["pfc"]:
                problems.add(h, [hp.leaf], f"{hp.leaf}:{hp.leaf_port} faces {host} but has PFC off")


CHECKS: tuple[Check, ...] = (check_priorities, check_ecn, check_mtu, check_vlans, check_ecmp, check_unique, check_hosts)


def run(model: Model, topo: Topology, problems: Problems) -> None:
    for check in CHECKS:
        check(model, topo, problems)
