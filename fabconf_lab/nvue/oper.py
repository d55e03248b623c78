"""What a simulated Cumulus switch shows beyond its configuration: operational state and the lab view.

Everything here is computed from the APPLIED tree (plus the lab world for link, LLDP and BGP state).

Operational leaves [U] (shapes chosen to look like ``nv show`` output, not checked against a switch):

- ``interface <x> link``: ``oper-status`` / ``admin-status`` (``up``/``down``), ``mtu`` (configured or
  the 9216 ifupdown2 default for swp, 1500 for eth, 65536 for lo), ``speed``.
- ``interface <x> lldp neighbor <remote-hostname>``: ``chassis.system-name``, ``chassis.chassis-id``,
  ``port.name``, ``port.description``. A port is oper-up when it is admin-up and, in a lab world, cabled
  to a far end that is admin-up too (no world: oper follows admin).
- ``system``: ``build``, ``product-name``, ``product-release``, ``uptime`` (seconds), ``hostname``;
  ``platform``: ``manufacturer``, ``product-name``, ``serial-number``, ``system-mac``, ``asic-model``.
- ``qos roce`` with RoCE enabled: the operational summary of ``nv show qos roce`` (reference §1.1:
  ``pfc`` only in the lossless modes, ``congestion-control`` thresholds printed as ``146.48 KB`` /
  ``1.43 MB``, ``trust``, ``lldp-app-tlv``).
- ``vrf default router bgp neighbor <peer>``: ``session-state`` (``established`` / ``active`` / ``idle``),
  ``peer-hostname``, ``remote-as-operational`` [U name], ``address-family ipv4-unicast rx-prefix``.
"""

from __future__ import annotations

import hashlib
import ipaddress
import time

from fabconf_lab.nvue.tree import Tree, as_int, copy_tree
from fabconf_lab.world import BgpSession, DeviceView, NeighborView, PortView, RouteView, World

DEFAULT_MTU = {"swp": 9216, "eth": 1500, "lo": 65536}


def _default_mtu(ifname: str) -> int:
    for prefix, mtu in DEFAULT_MTU.items():
        if ifname.startswith(prefix):
            return mtu
    return 9216


def _interfaces(applied: Tree, ports: list[str]) -> dict[str, Tree]:
    """Every interface the box has: physical ports plus configured ones (lo, eth0, vlanX…)."""
    configured = applied.get("interface", {}) or {}
    out: dict[str, Tree] = {p: {} for p in ports}
    for name, iface in configured.items():
        out[name] = iface if isinstance(iface, dict) else {}
    return out


def admin_up(iface: Tree) -> bool:
    state = (iface.get("link", {}) or {}).get("state", {}) or {}
    return not (isinstance(state, dict) and "down" in state)


def mtu_of(name: str, iface: Tree) -> int:
    return as_int((iface.get("link", {}) or {}).get("mtu")) or _default_mtu(name)


def disabled(node: Tree) -> bool:
    """``enable: off`` (releases before 5.15) or ``state: disabled`` (5.15 and later)."""
    return node.get("enable") == "off" or node.get("state") == "disabled"


def first_ipv4(iface: Tree) -> str | None:
    """The first IPv4 address: under ``ip`` before 5.15, ``ipv4`` from 5.15 on."""
    block = iface.get("ipv4") or iface.get("ip") or {}
    for key in (block or {}).get("address", {}) or {}:
        try:
            addr = ipaddress.ip_interface(key)
        except ValueError:
            continue
        if addr.version == 4:
            return str(addr)
    return None


def _bgp(applied: Tree) -> tuple[Tree, Tree]:
    return (
        (applied.get("router", {}) or {}).get("bgp", {}) or {},
        ((applied.get("vrf", {}) or {}).get("default", {}) or {}).get("router", {}).get("bgp", {}) or {},
    )


def device_view(hostname: str, applied: Tree, ports: list[str]) -> DeviceView:
    """The lab's view of the running (applied) configuration."""
    port_views = {
        name: PortView(name, admin_up(iface), mtu_of(name, iface), first_ipv4(iface))
        for name, iface in _interfaces(applied, ports).items()
    }
    glob, vrf = _bgp(applied)
    asn = as_int(vrf.get("autonomous-system")) or as_int(glob.get("autonomous-system"))
    router_id = vrf.get("router-id") if vrf.get("router-id") not in (None, "auto") else glob.get("router-id")
    enabled = not disabled(glob) and not disabled(vrf)
    neighbors: list[NeighborView] = []
    groups = vrf.get("peer-group", {}) or {}
    for peer, nb in (vrf.get("neighbor", {}) or {}).items() if enabled else ():
        nb = nb or {}
        if nb.get("shutdown") in ("on", "enabled") or disabled(nb):
            continue
        remote = nb.get("remote-as")
        if remote is None and nb.get("peer-group"):
            remote = (groups.get(nb["peer-group"]) or {}).get("remote-as")
        if remote is None:
            continue
        number = as_int(remote)
        neighbors.append(
            NeighborView(peer, number if number is not None else ("external" if remote == "auto" else remote))
        )
    af = (vrf.get("address-family", {}) or {}).get("ipv4-unicast", {}) or {}
    networks = tuple(sorted((af.get("network", {}) or {}).keys()))
    paths = as_int((af.get("multipaths", {}) or {}).get("ebgp")) or 64
    system_name = (applied.get("system", {}) or {}).get("hostname") or hostname
    return DeviceView(
        hostname=system_name,
        ports=port_views,
        asn=asn if enabled else None,
        router_id=str(router_id) if router_id else None,
        neighbors=tuple(neighbors),
        networks=networks,
        maximum_paths=paths,
    )


def _chassis_id(device: str) -> str:
    digest = hashlib.sha256(device.encode()).digest()
    return ":".join(f"{b:02x}" for b in (0x48, 0xB0, 0x2D, *digest[:3]))


RELEASE = "5.12.0"
MODEL = "SN5600"


def _serial(device: str) -> str:
    return "MT" + hashlib.sha256(device.encode()).hexdigest()[:10].upper()


def system_oper(
    name: str, applied: Tree, booted: float, now: float, release: str = RELEASE, model: str = MODEL
) -> tuple[Tree, Tree]:
    """(system, platform) operational leaves. [U] key names beyond the reference."""
    hostname = (applied.get("system", {}) or {}).get("hostname") or name
    system = {
        "hostname": hostname,
        "build": f"Cumulus Linux {release}",
        "product-name": "Cumulus Linux",
        "product-release": release,
        "uptime": int(now - booted),
    }
    platform = {
        "manufacturer": "NVIDIA",
        "product-name": model,
        "serial-number": _serial(name),
        "system-mac": _chassis_id(name),
        "asic-model": "Spectrum-4",
    }
    return system, platform


def _kb(n: int) -> str:
    return f"{n / 1024:.2f} KB"


def _mb(n: int) -> str:
    return f"{n / 1024**2:.2f} MB"


def roce_oper(applied: Tree) -> Tree | None:
    """``nv show qos roce`` operational leaves, or None when RoCE is not enabled.

    A bare ``nv set qos roce`` (an empty node) means lossless; ``enable off`` turns it off.
    """
    roce = (applied.get("qos", {}) or {}).get("roce")
    if not isinstance(roce, dict) or roce.get("enable") == "off":
        return None
    mode = roce.get("mode", "lossless")
    out: Tree = {
        "mode": mode,
        "congestion-control": {
            "congestion-mode": "ECN",
            "enabled-tc": "0,3",
            "min-threshold": _kb(150000),
            "max-threshold": _mb(1500000),
            "probability": 100,
        },
        "trust": {"trust-mode": "pcp,dscp"},
        "lldp-app-tlv": {"priority": 3, "protocol-id": 4791, "selector": "UDP"},
    }
    if mode.startswith("lossless"):
        cable = as_int(roce.get("cable-length")) or 100
        out["pfc"] = {"pfc-priority": 3, "rx-enabled": "enabled", "tx-enabled": "enabled", "cable-length": cable}
    return out


STORM_PRIORITY = 3  # the priority a lab pause storm runs on, as its SNMP model (fabconf_lab.metrics) [U: a lab model]


def pfc_stats(pauses: int) -> Tree:
    """``nv show interface swpN counters qos pfc-stats`` (Cumulus Linux 5.5 and later; ``qos counters pfc-stats``
    before): one row per switch priority with ``rx-pause-frames``, ``rx-pause-duration``, ``tx-pause-frames``,
    ``tx-pause-duration`` [V: NVIDIA, NVUE command reference, "nv show interface <interface-id> counters qos
    pfc-stats", and the Cumulus Linux 5.x QoS page, "Show Qos Counters"]. As JSON, a ``switch-priority`` map keyed
    by the priority [U: the REST layout, taken from the table's first column]."""
    rows = {}
    for prio in range(8):
        rx = pauses if prio == STORM_PRIORITY else 0
        rows[str(prio)] = {"rx-pause-frames": rx, "rx-pause-duration": 0, "tx-pause-frames": 0, "tx-pause-duration": 0}
    return {"switch-priority": rows}


FRAMES_PER_S = 1_000_000.0  # a lab model, as a GPU host's NIC port
_EPOCH = time.monotonic()


def operational_tree(
    name: str,
    applied: Tree,
    ports: list[str],
    world: World | None,
    booted: float = 0.0,
    now: float = 0.0,
    identity: tuple[str, str] = (RELEASE, MODEL),
    negotiated: dict[str, int] | None = None,
    top: str | None = None,
    errors: dict[str, float] | None = None,
    pauses: int = 0,
    path: list[str] | None = None,
) -> Tree:
    """The applied tree with operational leaves added (what a GET without ``rev`` returns); ``identity`` is the
    (release, model) the switch reports; ``negotiated``: port -> Gb/s its link came up at (a cable/optic fault),
    else swp ports report 400G [U: the lab's fabric links run at 400G]; ``errors``: port -> share of received frames
    in error (``link PORT:errors=R``), shown in ``link stats`` (``in-pkts``, ``in-errors``: frames grow with time
    while the link is up) [3P: tests/captures/nvue-interface]; ``pauses``: PFC frames
    received so far on the RoCE priority of every swp port that is up (``fabconf lab fault DEV pfc-storm``), in
    ``counters qos pfc-stats`` (``pfc_stats``).

    ``top``: only that top-level key is asked for (``GET /nvue_v1/system``): the rest is neither copied nor worked
    out. A spine's RIB holds a route per leaf prefix of its plane, and building it for every ``GET /system`` was
    the likely cause of a 1,024-device lab's spines missing 60 s read timeouts. ``path``: the whole path asked for,
    when it is more than ``top``: under ``vrf/default/router/bgp`` no RIB is worked out, and under
    ``vrf/default/router/rib/ipv4/route/PREFIX`` only that prefix's route goes into the answer, from the RIB table
    made once while the World's routes stand (verify's ECMP check asks one route at a time, again until they
    converge, and each GET built every route with every next hop: half of a switch worker's interpreter time in a
    verify). The subtree returned is the same as in the whole tree."""
    asked = applied if top is None else {k: v for k, v in applied.items() if k == top}
    out = copy_tree(asked)
    system, platform = system_oper(name, applied, booted, now, *identity)
    if top in (None, "system"):
        out.setdefault("system", {}).update(system)
    if top in (None, "platform"):
        out.setdefault("platform", {}).update(platform)
    roce = roce_oper(applied) if top in (None, "qos") else None
    if roce is not None:
        out.setdefault("qos", {}).setdefault("roce", {}).update(roce)
    if top not in (None, "interface", "vrf"):
        return out
    lldp: dict[str, tuple[str, str, str]] = {}
    sessions: list[BgpSession] = []
    if world is not None:
        if top in (None, "interface"):
            lldp = {local: (local, rdev, rport) for local, rdev, rport in world.lldp_neighbors(name)}
        if top in (None, "vrf"):
            sessions = world.bgp_sessions(name)
    if top == "vrf":
        _bgp_oper(out, sessions, world, name, _rib_asked(path or []))
        return out
    ifaces = out.setdefault("interface", {})
    for ifname, iface in _interfaces(applied, ports).items():
        node = ifaces.setdefault(ifname, {})
        if ifname in ports:
            node.setdefault("type", "swp")
        up = admin_up(iface)
        cabled = ifname in lldp if world is not None else True
        link = node.setdefault("link", {})
        link["admin-status"] = "up" if up else "down"
        link["oper-status"] = "up" if up and (cabled or not ifname.startswith("swp")) else "down"
        link["mtu"] = mtu_of(ifname, iface)
        if negotiated and ifname in negotiated:
            link["speed"] = f"{negotiated[ifname]}G"
        link.setdefault("speed", "400G" if ifname.startswith("swp") else "1G")
        if ifname.startswith("swp"):
            frames = int(FRAMES_PER_S * (time.monotonic() - _EPOCH)) if link["oper-status"] == "up" else 0
            ratio = (errors or {}).get(ifname, 0.0)
            link["stats"] = {"in-pkts": frames, "in-errors": int(frames * ratio), "out-pkts": frames, "out-errors": 0}
            node["counters"] = {"qos": {"pfc-stats": pfc_stats(pauses if link["oper-status"] == "up" else 0)}}
        if ifname in lldp:
            _, rdev, rport = lldp[ifname]
            node.setdefault("lldp", {})["neighbor"] = {
                rdev: {
                    "chassis": {"system-name": rdev, "chassis-id": _chassis_id(rdev)},
                    "port": {"name": rport, "description": rport},
                }
            }
    if top is None:
        _bgp_oper(out, sessions, world, name)
    return out


# device -> (the World's routes, the RIB's route table made of them): while the routes stand (the World answers the
# same dict), a GET of the VRFs serves the same table, read only like everything in an answer
_RIB_TABLES: dict[str, tuple[dict[str, RouteView], Tree]] = {}


def _rib_table(name: str, routes: dict[str, RouteView]) -> Tree:
    made = _RIB_TABLES.get(name)
    if made is not None and made[0] is routes:
        return made[1]
    table = _route_table(routes)
    _RIB_TABLES[name] = (routes, table)
    return table


def _route_table(routes: dict[str, RouteView]) -> Tree:
    """``vrf default router rib ipv4 route``: each learnt route's selected entry and its next hops."""
    table: Tree = {}
    for prefix, route in routes.items():
        if route.next_hops:  # [U] leaf names: see fabconf.platform.cumulus.getters.route_paths
            hops = {
                str(i + 1): {"ip": h.address, "interface": h.interface, "flags": {"active": {}, "installed": {}}}
                for i, h in enumerate(route.next_hops)
            }
            flags = {"selected": {}, "installed": {}, "fib-selected": {}}
            table[prefix] = {"route-entry": {"1": {"protocol": "bgp", "distance": 20, "flags": flags, "nexthop": hops}}}
    return table


def _rib_asked(path: list[str]) -> str | bool:
    """What of the RIB a GET of ``path`` (under ``vrf``) needs: a prefix (only its route), False (none: a path
    beside the RIB) or True (all of it)."""
    below = path[2:] if path[1:2] == ["default"] else []
    if len(below) >= 5 and below[:4] == ["router", "rib", "ipv4", "route"]:
        return below[4]
    return not (len(below) >= 2 and below[0] == "router" and below[1] != "rib")


def _bgp_oper(out: Tree, sessions: list[BgpSession], world: World | None, name: str, rib: str | bool = True) -> None:
    """BGP neighbours' session state and the RIB, into ``out["vrf"]``; ``rib``: the whole RIB (True), none (False)
    or one prefix's route."""
    if sessions:
        neighbors = (
            out.setdefault("vrf", {})
            .setdefault("default", {})
            .setdefault("router", {})
            .setdefault("bgp", {})
            .setdefault("neighbor", {})
        )
        for s in sessions:
            node = neighbors.setdefault(s.peer, {})
            node["session-state"] = s.state.lower()
            if s.remote_device:
                node["peer-hostname"] = s.remote_device
            if s.remote_as is not None:
                node["remote-as-operational"] = s.remote_as
            node.setdefault("address-family", {}).setdefault("ipv4-unicast", {})["rx-prefix"] = s.prefixes_received
        if rib is False:
            return
        table = _rib_table(name, world.routes(name) if world is not None else {})
        if isinstance(rib, str):  # verify's ECMP check asks each remote leaf's route, again until they converge
            table = {rib: table[rib]} if rib in table else {}
        node = out["vrf"]["default"]["router"].setdefault("rib", {}).setdefault("ipv4", {})
        node["route"] = {**node["route"], **table} if node.get("route") else table
    elif (((out.get("vrf", {}) or {}).get("default", {}) or {}).get("router", {}) or {}).get("bgp"):
        for node in (out["vrf"]["default"]["router"]["bgp"].get("neighbor", {}) or {}).values():
            if isinstance(node, dict):
                node["session-state"] = "idle"
