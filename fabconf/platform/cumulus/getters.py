"""NVUE operational trees -> NAPALM getter shapes (pure functions, no I/O).

The inputs are what ``GET /nvue_v1/<path>`` (no ``rev``: applied config plus operational state) answers.
Operational leaf names follow the lab simulator (``fabconf_lab.nvue.oper``), which imitates ``nv show``;
they are marked [U] where they were not checked against a real switch. Unknown numbers are ``-1`` (as
NAPALM drivers do), unknown text is ``""``.
"""

from __future__ import annotations

import re
from typing import Any

from fabconf.platform.cumulus.plan import natural_key

Tree = dict[str, Any]
VENDOR = "NVIDIA"


def _dict(value: Any) -> Tree:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _num(value: Any, default: int = -1) -> int:
    number = _int(value)
    return default if number is None else number


def speed_mbps(value: Any) -> float:
    """``"100G"`` -> 100000.0, ``"10M"`` -> 10.0, ``25000`` (Mb/s) -> 25000.0; unknown -> -1.0.  [U] units."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:b(?:ps|/s)?)?\s*", str(value or ""), re.IGNORECASE)
    if not match:
        return -1.0
    scale = {"": 1.0, "K": 0.001, "M": 1.0, "G": 1000.0, "T": 1_000_000.0}[match.group(2).upper()]
    return float(match.group(1)) * scale


def uptime_seconds(value: Any) -> float:
    """Seconds as a number, or ``"2 days, 3:04:05"`` [U] (what a real ``nv show system`` may print)."""
    number = _int(value)
    if number is not None:
        return float(number)
    if isinstance(value, float):
        return value
    match = re.fullmatch(r"\s*(?:(\d+)\s+days?,?\s*)?(\d+):(\d{2}):(\d{2})\s*", str(value or ""))
    if not match:
        return -1.0
    days, hours, minutes, seconds = (int(g or 0) for g in match.groups())
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)


def facts(system: Tree, platform: Tree, interfaces: Tree) -> dict[str, Any]:
    hostname = str(system.get("hostname") or "")
    release = system.get("product-release") or system.get("build") or ""
    return {
        "uptime": uptime_seconds(system.get("uptime")),
        "vendor": str(platform.get("manufacturer") or VENDOR),
        "os_version": str(release),
        "serial_number": str(platform.get("serial-number") or ""),
        "model": str(platform.get("product-name") or platform.get("part-number") or ""),
        "hostname": hostname,
        "fqdn": hostname,  # [U] NVUE keeps no domain name under system; the hostname is what it has
        "interface_list": sorted(interfaces, key=natural_key),
    }


def interfaces_counters(tree: Tree) -> dict[str, dict[str, int]]:
    """NAPALM's ``get_interfaces_counters`` shape from ``interface`` with ``link stats``; ports without stats are
    left out. The leaf names ``in-pkts``, ``in-errors``, ``out-pkts``, ``out-errors`` are NVIDIA's [V: Cumulus
    Linux user guide, "Interface Configuration and Management", Statistics: ``nv show interface swp1 counters``];
    that they sit under ``link stats`` in the REST tree is [3P: NVIDIA's Cumulus Linux 5.1 user guide, "NVUE API",
    ``GET /cue_v1/interface``, and a published 5.11+ ``GET /nvue_v1/interface`` reply: tests/captures/nvue-interface].
    A counter that is missing or not a number is refused, never read as 0."""
    out: dict[str, dict[str, int]] = {}
    for name, iface in sorted(_dict(tree).items()):
        stats = _dict(_dict(_dict(iface).get("link")).get("stats"))
        if stats:
            where = f"interface {name} link stats"
            out[str(name)] = {
                "rx_unicast_packets": _counter(stats, "in-pkts", where),
                "rx_errors": _counter(stats, "in-errors", where),
                "tx_unicast_packets": _counter(stats, "out-pkts", where),
                "tx_errors": _counter(stats, "out-errors", where),
            }
    return out


def _counter(node: Tree, leaf: str, where: str) -> int:
    """A counter leaf; one that is missing or not a count (NVUE prints ``n/a`` where a port has no such counter)
    is refused naming the path and the leaf, never read as 0."""
    number = _int(node.get(leaf))
    if number is None or number < 0:
        shown = "missing" if leaf not in node else f"not a counter ({node[leaf]!r})"
        raise ValueError(f"NVUE {where}: {leaf} is {shown}")
    return number


def pfc_counters(stats: Tree, port: str = "IF") -> dict[str, int]:
    """Switch priority -> PFC frames received, from ``GET /interface/<IF>/counters/qos/pfc-stats`` (Cumulus Linux
    5.5 and later): the ``switch-priority`` rows' ``rx-pause-frames`` [V: NVIDIA's NVUE command reference, ``nv
    show interface <interface-id> counters qos pfc-stats``; U: the JSON layout, a map keyed by the table's first
    column]."""
    rows = _dict(stats.get("switch-priority"))
    where = f"interface {port} counters qos pfc-stats switch-priority"
    return {str(prio): _counter(_dict(row), "rx-pause-frames", f"{where} {prio}") for prio, row in rows.items()}


def interfaces(tree: Tree) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(tree, key=natural_key):
        iface = _dict(tree[name])
        link = _dict(iface.get("link"))
        state = _dict(link.get("state"))
        admin = link.get("admin-status")
        enabled = admin == "up" if admin is not None else "down" not in state
        out[name] = {
            "is_up": link.get("oper-status") == "up",
            "is_enabled": enabled,
            "description": str(iface.get("description") or ""),
            "last_flapped": -1.0,
            "mtu": _num(link.get("mtu")),
            "speed": speed_mbps(link.get("speed")),
            "mac_address": str(link.get("mac") or link.get("mac-address") or ""),  # [3P] mac-address: captures
        }
    return out


def lldp_neighbors(tree: Tree) -> dict[str, list[dict[str, str]]]:
    """``interface <x> lldp neighbor <id> chassis system-name`` / ``port name`` [U] -> NAPALM shape."""
    out: dict[str, list[dict[str, str]]] = {}
    for name in sorted(tree, key=natural_key):
        neighbors = _dict(_dict(_dict(tree[name]).get("lldp")).get("neighbor"))
        found = []
        for key in sorted(neighbors, key=natural_key):
            nb = _dict(neighbors[key])
            chassis, port = _dict(nb.get("chassis")), _dict(nb.get("port"))
            found.append(
                {
                    "hostname": str(chassis.get("system-name") or key),
                    "port": str(port.get("name") or port.get("description") or ""),
                }
            )
        if found:
            out[name] = found
    return out


def _router_id(vrf_bgp: Tree, global_bgp: Tree) -> str:
    rid = vrf_bgp.get("router-id")
    if rid in (None, "", "auto"):
        rid = global_bgp.get("router-id")
    return "" if rid in (None, "auto") else str(rid)


def _remote_as(nb: Tree, groups: Tree) -> int:
    """The peer's AS: the session's (``remote-as-operational`` [U]) when up, else the configured number;
    ``external``/``internal``/``auto`` without a session give 0 (NAPALM wants an int)."""
    for value in (nb.get("remote-as-operational"), nb.get("remote-as")):
        number = _int(value)
        if number is not None:
            return number
    group = _dict(groups.get(str(nb.get("peer-group"))))
    return _int(group.get("remote-as")) or 0


def _off(node: Tree) -> bool:
    """Turned off: ``enable: off`` before Cumulus 5.15, ``state: disabled`` from 5.15 on."""
    return node.get("enable") == "off" or node.get("state") == "disabled"


def bgp_neighbors(global_bgp: Tree, vrfs: Tree) -> dict[str, dict[str, Any]]:
    """NAPALM ``get_bgp_neighbors``: NVUE's ``default`` VRF is NAPALM's ``global``."""
    out: dict[str, dict[str, Any]] = {}
    global_on = not _off(global_bgp)
    for vname in sorted(vrfs, key=natural_key):
        bgp = _dict(_dict(_dict(vrfs[vname]).get("router")).get("bgp"))
        if not bgp and vname != "default":
            continue
        local_as = _int(bgp.get("autonomous-system")) or _int(global_bgp.get("autonomous-system")) or 0
        groups = _dict(bgp.get("peer-group"))
        enabled = global_on and not _off(bgp)
        peers: dict[str, Any] = {}
        for peer in sorted(_dict(bgp.get("neighbor")), key=natural_key):
            nb = _dict(bgp["neighbor"][peer])
            af = _dict(_dict(nb.get("address-family")).get("ipv4-unicast"))
            received = _num(af.get("rx-prefix"))
            peers[peer] = {
                "local_as": local_as,
                "remote_as": _remote_as(nb, groups),
                "remote_id": str(nb.get("remote-router-id") or ""),  # [U] leaf name
                "is_up": nb.get("session-state") == "established",
                "is_enabled": enabled and nb.get("shutdown") not in ("on", "enabled") and not _off(nb),
                "description": str(nb.get("description") or ""),
                "uptime": _num(nb.get("uptime")),
                "address_family": {
                    "ipv4": {
                        "received_prefixes": received,
                        "accepted_prefixes": received,  # [U] NVUE shows no separate accepted count here
                        "sent_prefixes": _num(af.get("tx-prefix")),
                    }
                },
            }
        out["global" if vname == "default" else vname] = {"router_id": _router_id(bgp, global_bgp), "peers": peers}
    return out or {"global": {"router_id": _router_id({}, global_bgp), "peers": {}}}


def route_paths(route: Tree) -> list[str]:
    """Next hops of the selected route in ``GET /vrf/default/router/rib/ipv4/route/<prefix>``.
    A route holds ``route-entry`` entries keyed by entry index, and "selected" is one of a route's flags [V:
    Cumulus Linux user guide, "Routing Tables": ``nv show vrf default router rib ipv4 route PREFIX`` prints a
    ``route-entry`` table, and the route list's flag legend has ``* - selected``]. The JSON leaves under an entry
    (``flags: {selected: {}}``, ``nexthop: {N: {ip, interface}}``, as the lab answers) are [U: leaf names]."""
    hops: list[str] = []
    for entry in _dict(route.get("route-entry")).values():
        entry = _dict(entry)
        if "selected" not in _dict(entry.get("flags")):
            continue
        hops += [str(_dict(h).get("ip")) for h in _dict(entry.get("nexthop")).values() if _dict(h).get("ip")]
    return sorted(hops)


def _ar_on(node: Any) -> bool:
    """``enable: on`` (5.14 and earlier) or ``state: enabled`` (5.15) [V: NVUE reference, "Adaptive Routing"]."""
    node = _dict(node)
    return node.get("enable") == "on" or node.get("state") == "enabled"


def adaptive_ports(applied: Tree) -> list[str]:
    """The ports of an applied tree with adaptive routing on, where it is on globally too (``router
    adaptive-routing``); [] when the global switch is off."""
    if not _ar_on(_dict(_dict(applied.get("router")).get("adaptive-routing"))):
        return []
    ports = [
        str(name)
        for name, itf in _dict(applied.get("interface")).items()
        if _ar_on(_dict(_dict(_dict(itf).get("router")).get("adaptive-routing")))
    ]
    return sorted(ports, key=natural_key)
