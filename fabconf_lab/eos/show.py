"""EOS ``show`` command outputs (eAPI JSON and text) built from a simulator's running config and the World.

JSON shapes follow what the unmodified napalm ``eos`` driver reads (see the module docstring of ``eos.py``);
extra fields are included where real EOS has them so other clients see a familiar structure.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from fabconf_lab.cliconf import EOS, Node, render
from fabconf_lab.eos import config as ec
from fabconf_lab.world import World

VERSION = "4.32.2F"  # >= 4.23.0 as napalm requires; >= 4.32 selects the new commit-timer output form
MODEL = "DCS-7060DX5-64S"


class EosState(Protocol):
    name: str
    ports: list[str]
    world: World | None
    version: str
    model: str
    boot_time: float
    serial: str
    system_mac: str
    negotiated: dict[str, int]  # port -> Gb/s its link came up at (a cable or optic fault), else the port speed
    error_ratio: dict[str, float]  # port -> share of received frames in error (a cable or optic fault)

    @property
    def running(self) -> Node: ...


@dataclass
class BgpClock:
    """Remembers when each peer was first seen Established, for uptimes."""

    since: dict[str, float] = field(default_factory=dict)

    def mark(self, peer: str, up: bool) -> float:
        if not up:
            self.since.pop(peer, None)
            return 0.0
        return self.since.setdefault(peer, time.time())


def uptime(state: EosState) -> float:
    return time.time() - state.boot_time


def hostname(state: EosState) -> tuple[str, str]:
    root = state.running
    host = next((c.text.split()[1] for c in root.children if c.text.startswith("hostname ")), "localhost")
    domain = next((c.text.split()[2] for c in root.children if c.text.startswith("dns domain ")), None)
    return host, f"{host}.{domain}" if domain else host


# -- show version / hostname -------------------------------------------------------------------------------------


def show_version(state: EosState) -> dict[str, Any]:
    build = state.version.replace(".", "").rstrip("FM")
    return {
        "mfgName": "Arista",
        "modelName": state.model,
        "hardwareRevision": "11.00",
        "serialNumber": state.serial,
        "systemMacAddress": state.system_mac,
        "hwMacAddress": state.system_mac,
        "configMacAddress": "00:00:00:00:00:00",
        "version": state.version,
        "architecture": "x86_64",
        "internalVersion": f"{state.version}-38195967.{build}F",
        "internalBuildId": "f00d1e55-0000-4000-8000-00000000eos0",
        "imageFormatVersion": "3.0",
        "imageOptimization": "Default",
        "bootupTimestamp": state.boot_time,
        "uptime": uptime(state),
        "memTotal": 32596340,
        "memFree": 27155780,
        "isIntlVersion": False,
    }


def show_version_text(state: EosState) -> str:
    v = show_version(state)
    up = int(v["uptime"])
    return (
        f"Arista {MODEL}\nHardware version: {v['hardwareRevision']}\nSerial number: {v['serialNumber']}\n"
        f"Hardware MAC address: {v['systemMacAddress']}\nSystem MAC address: {v['systemMacAddress']}\n\n"
        f"Software image version: {v['version']}\nArchitecture: {v['architecture']}\n"
        f"Internal build version: {v['internalVersion']}\nInternal build ID: {v['internalBuildId']}\n"
        f"Image format version: 3.0\nImage optimization: Default\n\n"
        f"Uptime: {up // 86400} days, {up % 86400 // 3600} hours and {up % 3600 // 60} minutes\n"
        f"Total memory: {v['memTotal']} kB\nFree memory: {v['memFree']} kB\n\n"
    )


def show_hostname(state: EosState) -> dict[str, Any]:
    host, fqdn = hostname(state)
    return {"hostname": host, "fqdn": fqdn}


def show_hostname_text(state: EosState) -> str:
    host, fqdn = hostname(state)
    return f"Hostname: {host}\nFQDN:     {fqdn}\n"


# -- interfaces ----------------------------------------------------------------------------------------------------


def _mac(state: EosState, index: int) -> str:
    base = state.system_mac.split(":")
    last = (int(base[-1], 16) + index) % 256
    return ":".join([*base[:-1], f"{last:02x}"])


def _ports_up(state: EosState) -> set[str] | None:
    """The ports cabled to a far end whose both ends are not shut (None outside a World: every port is up).
    Asked once per ``show interfaces``, not once per port (a spine has 64)."""
    if state.world is None:
        return None
    return {local for local, _dev, _rport in state.world.lldp_neighbors(state.name)}


def interface_rows(state: EosState) -> dict[str, dict[str, Any]]:
    root = state.running
    ifs = ec.interfaces(root)
    names = list(dict.fromkeys([*state.ports, *ifs, "Management1"]))
    names.sort(key=ec.interface_sort_key)
    out: dict[str, dict[str, Any]] = {}
    up = _ports_up(state)
    for index, name in enumerate(names):
        section = ifs.get(name)
        physical = name.startswith(("Ethernet", "Management"))
        shut = ec.is_shutdown(section)
        if shut:
            line, status = "down", "disabled"
        elif name.startswith("Ethernet") and up is not None and name not in up:
            line, status = "down", "notconnect"
        else:
            line, status = "up", "connected"
        routed = ec.is_routed(section, name)
        addr = ec.ip_address(section) if routed else None
        row: dict[str, Any] = {
            "name": name,
            "forwardingModel": "routed" if routed else "bridged",
            "lineProtocolStatus": line,
            "interfaceStatus": status,
            "hardware": "ethernet" if physical else ("loopback" if name.startswith("Loopback") else "vlan"),
            "interfaceAddress": [],
            "description": _desc(section),
            "bandwidth": _bandwidth(state, name, section) if physical else 0,
            "mtu": ec.port_mtu(section) if routed or physical else ec.DEFAULT_MTU,
            "l3MtuConfigured": section is not None and any(x.startswith("mtu ") for x in section.leaves()),
            "l2Mru": 0,
            "lastStatusChangeTimestamp": state.boot_time + 30.0,
        }
        if addr:
            ip, _, plen = addr.partition("/")
            row["interfaceAddress"] = [
                {
                    "primaryIp": {"address": ip, "maskLen": int(plen or 32)},
                    "secondaryIps": {},
                    "secondaryIpsOrderedList": [],
                    "virtualIp": {"address": "0.0.0.0", "maskLen": 0},
                    "virtualSecondaryIps": {},
                    "virtualSecondaryIpsOrderedList": [],
                    "broadcastAddress": "255.255.255.255",
                    "dhcp": False,
                }
            ]
        if physical:
            row.update(
                physicalAddress=_mac(state, index + 1),
                burnedInAddress=_mac(state, index + 1),
                duplex="duplexFull",
                autoNegotiate="off" if name.startswith("Ethernet") else "success",
                loopbackMode="loopbackNone",
                lanes=0,
                interfaceCounters={
                    **_counters(state, name, line == "up"),
                    "linkStatusChanges": 1,
                    "counterRefreshTime": time.time(),
                },
            )
        out[name] = row
    return out


def _desc(section: Node | None) -> str:
    if section is None:
        return ""
    return next((x[len("description ") :] for x in section.leaves() if x.startswith("description ")), "")


def show_interfaces(state: EosState, only: str | None = None) -> dict[str, Any]:
    rows = interface_rows(state)
    if only is not None:
        rows = {k: v for k, v in rows.items() if k.lower() == only.lower()}
    return {"interfaces": rows}


def show_interfaces_text(state: EosState) -> str:
    out = []
    for name, row in interface_rows(state).items():
        out.append(f"{name} is {row['lineProtocolStatus']}, line protocol is {row['lineProtocolStatus']}")
        if row.get("physicalAddress"):
            out.append(f"  Hardware is Ethernet, address is {row['physicalAddress']}")
        if row["description"]:
            out.append(f"  Description: {row['description']}")
        for a in row["interfaceAddress"]:
            out.append(f"  Internet address is {a['primaryIp']['address']}/{a['primaryIp']['maskLen']}")
        out.append(f"  IP MTU {row['mtu']} bytes, BW {row['bandwidth'] // 1000} kbit")
    return "\n".join(out) + "\n"


# -- lldp ------------------------------------------------------------------------------------------------------------


def show_lldp_neighbors(state: EosState) -> dict[str, Any]:
    rows = state.world.lldp_neighbors(state.name) if state.world is not None else []
    return {
        "tablesLastChangeTime": state.boot_time + 60.0,
        "tablesAgeOuts": 0,
        "tablesInserts": len(rows),
        "tablesDeletes": 0,
        "tablesDrops": 0,
        "lldpNeighbors": [{"port": p, "neighborDevice": dev, "neighborPort": rp, "ttl": 120} for p, dev, rp in rows],
    }


def show_lldp_neighbors_text(state: EosState) -> str:
    data = show_lldp_neighbors(state)
    lines = [
        "Last table change time   : 0:01:00 ago",
        f"Number of table inserts  : {data['tablesInserts']}",
        "Number of table deletes  : 0",
        "Number of table drops    : 0",
        "Number of table age-outs : 0",
        "",
        "Port          Neighbor Device ID       Neighbor Port ID    TTL",
        "------------- ------------------------ ------------------- ---",
    ]
    for n in data["lldpNeighbors"]:
        lines.append(f"{n['port']:<13} {n['neighborDevice']:<24} {n['neighborPort']:<19} {n['ttl']}")
    return "\n".join(lines) + "\n"


# -- bgp ---------------------------------------------------------------------------------------------------------------


def _peer_address(state: EosState, peer: str, remote_address: str | None) -> str:
    """EOS shows an interface (unnumbered) peer by the far end's link-local address."""
    if peer in state.ports or peer.startswith("Ethernet"):
        short = peer.replace("Ethernet", "Et")
        return f"fe80::{zlib.crc32(f'{state.name}/{peer}'.encode()) % 0xFFFF:x}%{short}"
    return peer


def _bgp_rows(state: EosState, clock: BgpClock, remote_ids: dict[str, str]) -> list[dict[str, Any]]:
    bgp = ec.bgp_section(state.running)
    if bgp is None:
        return []
    local_as = bgp.text.split()[2]
    configured = {p: (asn, shut) for p, asn, shut in ec.bgp_neighbors(bgp)}
    sessions = {s.peer: s for s in state.world.bgp_sessions(state.name)} if state.world is not None else {}
    rows = []
    networks = len(ec.bgp_networks(bgp))
    for peer, (asn, shut) in configured.items():
        session = sessions.get(peer)
        up = session is not None and session.state == "Established" and not shut
        if shut:
            st = "Idle"
        elif session is not None:
            st = session.state
        else:
            st = "Active"
        since = clock.mark(peer, up)
        remote_dev = session.remote_device if session else None
        rows.append(
            {
                # unnumbered (interface) peers carry IPv4 routes: listed with the IPv4 neighbors [U]
                "_family": "ipv6" if ":" in peer else "ipv4",
                "peerAddress": _peer_address(state, peer, session.remote_address if session else None),
                "asn": str(asn),
                "localAsn": local_as,
                "routerId": remote_ids.get(remote_dev or "", "0.0.0.0") if up else "0.0.0.0",
                "state": st,
                "idleReason": "Administratively shut down" if shut else "",
                "prefixesReceived": session.prefixes_received if up and session else 0,
                "prefixesSent": networks if up else 0,
                "v6PrefixesReceived": 0,
                "v6PrefixesSent": 0,
                "establishedTime": int(time.time() - since) if up else 0,
                "updownTime": since if up else state.boot_time,
                "vrf": "default",
                "localAddress": session.local_address if session else None,
                "remoteAddress": session.remote_address if session else None,
                "description": _neighbor_desc(bgp, peer),
            }
        )
    return rows


def _neighbor_desc(bgp: Node, peer: str) -> str:
    prefix = f"neighbor {peer} description "
    return next((x[len(prefix) :] for x in bgp.leaves() if x.startswith(prefix)), "")


def _router_id(state: EosState) -> str:
    bgp = ec.bgp_section(state.running)
    if bgp is None:
        return "0.0.0.0"
    rid = next((x.split()[1] for x in bgp.leaves() if x.startswith("router-id ")), None)
    return rid or "0.0.0.0"


def show_bgp_summary(state: EosState, clock: BgpClock, remote_ids: dict[str, str], v6: bool) -> dict[str, Any]:
    bgp = ec.bgp_section(state.running)
    if bgp is None:
        return {"vrfs": {}}
    peers = {}
    for row in _bgp_rows(state, clock, remote_ids):
        if v6 != (row["_family"] == "ipv6"):
            continue
        peers[row["peerAddress"]] = {
            "description": row["description"],
            "version": 4,
            "msgReceived": 10,
            "msgSent": 10,
            "inMsgQueue": 0,
            "outMsgQueue": 0,
            "asn": row["asn"],
            "prefixAccepted": row["prefixesReceived"],
            "prefixReceived": row["prefixesReceived"],
            "upDownTime": row["updownTime"],
            "underMaintenance": False,
            "peerState": row["state"],
        }
    return {
        "vrfs": {
            "default": {"vrf": "default", "routerId": _router_id(state), "asn": bgp.text.split()[2], "peers": peers}
        }
    }


def show_bgp_neighbors(state: EosState, clock: BgpClock, remote_ids: dict[str, str], v6: bool) -> dict[str, Any]:
    bgp = ec.bgp_section(state.running)
    if bgp is None:
        return {"vrfs": {}}
    rows = [r for r in _bgp_rows(state, clock, remote_ids) if v6 == (r.pop("_family") == "ipv6")]
    return {"vrfs": {"default": {"peerList": rows}}}


def show_bgp_summary_text(state: EosState, clock: BgpClock, remote_ids: dict[str, str]) -> str:
    data = show_bgp_summary(state, clock, remote_ids, v6=False)
    vrf = data["vrfs"].get("default")
    if vrf is None:
        return "% BGP inactive\n"
    lines = [
        "BGP summary information for VRF default",
        f"Router identifier {vrf['routerId']}, local AS number {vrf['asn']}",
        "Neighbor Status Codes: m - Under maintenance",
        "  Neighbor         V AS           MsgRcvd   MsgSent  InQ OutQ  Up/Down State   PfxRcd PfxAcc",
    ]
    for addr, p in vrf["peers"].items():
        lines.append(
            f"  {addr:<16} 4 {p['asn']:<12} {p['msgReceived']:>7} {p['msgSent']:>9} {0:>4} {0:>4} {'-':>8} "
            f"{p['peerState']:<7} {p['prefixReceived']:>6} {p['prefixAccepted']:>6}"
        )
    return "\n".join(lines) + "\n"


# -- configuration ---------------------------------------------------------------------------------------------------


def running_header(state: EosState) -> str:
    return f"! Command: show running-config\n! device: {state.name} ({state.model}, EOS-{state.version})\n!\n"


def running_text(state: EosState, tree: Node) -> str:
    return running_header(state) + render(tree, EOS)


def section_text(tree: Node, pattern: str) -> str:
    """``show running-config section X``: top-level sections (or lines) whose text or any sub-line contains X."""
    rx = re.compile(pattern)
    keep = Node("")
    for child in tree.children:
        if rx.search(child.text) or any(rx.search(n.text) for _d, n in child.walk()):
            keep.children.append(child)
    text = render(keep, EOS)
    lines = text.splitlines()
    while lines and lines[-1] in ("!", "end"):
        lines.pop()
    return "\n".join(lines) + ("\n" if lines else "")


def cmds_json(node: Node) -> dict[str, Any]:
    """eAPI JSON form of a config tree: ``{"cmds": {line: null | {"cmds": ..., "comments": []}}}``."""
    cmds: dict[str, Any] = {}
    for child in node.children:
        cmds[child.text] = cmds_json(child) | {"comments": []} if child.children else None
    return {"cmds": cmds}


_SECRETS = (
    re.compile(r"(\b(?:secret|password)(?: sha512| \d)?) \S+"),
    re.compile(r"(\bsnmp-server community) \S+"),
    re.compile(r"(\bkey(?: \d)?) \S+"),
)


def sanitize(text: str) -> str:
    """``show running-config sanitized``: secrets replaced by ``<removed>``."""
    for rx in _SECRETS:
        text = rx.sub(r"\1 <removed>", text)
    return text


def sessions_text(data: dict[str, Any]) -> str:
    lines = [
        f"Maximum number of completed sessions: {data['maxSavedSessions']}",
        f"Maximum number of pending sessions: {data['maxOpenSessions']}",
        "",
        "  Name              State                 User    Terminal",
        "  ----------------- --------------------- ------- --------",
    ]
    for name, s in data["sessions"].items():
        lines.append(f"  {name:<17} {s['state']:<21} {s['commitUser']:<7}")
    if "commitTimerSessionName" in data:
        expire = dt.timedelta(seconds=int(data["commitTimerExpireTime"]))
        lines.append(f"\nCommit timer for session {data['commitTimerSessionName']} expires at uptime {expire}")
    return "\n".join(lines) + "\n"


# -- routes (what napalm's get_route_to reads) ---------------------------------------------------------------------


def show_vrf(state: EosState) -> dict[str, Any]:
    """``show vrf``: the default VRF only (fabconf renders no other). [U] field set as napalm's eos driver reads it."""
    return {
        "vrfs": {"default": {"routeDistinguisher": "", "interfaces": [], "protocols": {"ipv4": {"routingState": "up"}}}}
    }


def _lookup(state: EosState, destination: str) -> list[Any]:
    """The routes napalm asks for: the exact prefix, or the longest prefix holding an address."""
    routes = state.world.routes(state.name) if state.world is not None else {}
    if destination in routes:
        return [routes[destination]]
    try:
        target = ipaddress.ip_network(destination, strict=False)
    except ValueError:
        return []
    holding = [r for p, r in routes.items() if target.subnet_of(ipaddress.ip_network(p))]  # type: ignore[arg-type]
    return sorted(holding, key=lambda r: ipaddress.ip_network(r.prefix).prefixlen)[-1:]


def show_ip_route(state: EosState, destination: str) -> dict[str, Any]:
    """``show ip route vrf default PREFIX detail`` (JSON): each route with its next hops ("vias"). eBGP
    routes have preference 200 on EOS [U: EOS default eBGP distance 200]."""
    out: dict[str, Any] = {}
    for route in _lookup(state, destination):
        if not route.next_hops:
            continue  # originated here: shown as connected/static by a real device, not asked for by fabconf
        out[route.prefix] = {
            "routeType": "eBGP",
            "preference": 200,
            "metric": 0,
            "hardwareProgrammed": True,
            "kernelProgrammed": True,
            "directlyConnected": False,
            "vias": [{"nexthopAddr": h.address, "interface": h.interface} for h in route.next_hops],
        }
    return {"vrfs": {"default": {"routes": out, "allRoutesProgrammedHardware": True}}}


def show_ip_bgp(state: EosState, destination: str) -> dict[str, Any]:
    """``show ip bgp PREFIX vrf default`` (JSON): every installed path, marked active (multipath)."""
    bgp = ec.bgp_section(state.running)
    local_as = bgp.text.split()[2] if bgp is not None else "0"
    entries: dict[str, Any] = {}
    for route in _lookup(state, destination):
        paths = []
        for hop in route.next_hops:
            paths.append(
                {
                    "nextHop": hop.address,
                    "asPathEntry": {"asPath": " ".join(map(str, route.as_path)) + " i", "asPathType": "External"},
                    "localPreference": 100,
                    "weight": 0,
                    "routeType": {"active": True, "valid": True, "ecmp": len(route.next_hops) > 1},
                    "peerEntry": {"peerAddr": hop.address},
                    "routeDetail": {"peerEntry": {"peerAddr": hop.address}, "communityList": []},
                    "reasonNotBestpath": "",
                }
            )
        if paths:
            entries[route.prefix] = {"bgpRoutePaths": paths, "address": route.prefix.split("/")[0]}
    return {"vrfs": {"default": {"asn": local_as, "routerId": _router_id(state), "bgpRouteEntries": entries}}}


PORT_SPEED_BPS = 400_000_000_000  # [U] front-panel ports of the modelled 7060X5 / 7280R3 run 400G (OSFP/QSFP-DD)


FRAMES_PER_S = 1_000_000  # a busy fabric port, for counters that grow with time (two reads give rates)
_EPOCH = time.monotonic()


def _counters(state: EosState, name: str, up: bool) -> dict[str, int]:
    """``interfaceCounters`` of ``show interfaces``: frames since the lab started while the port is up, errors
    in proportion to the port's ``error_ratio`` (a cable or optic fault: ``fabconf lab fault DEV link
    PORT:errors=R``)."""
    frames = int(FRAMES_PER_S * (time.monotonic() - _EPOCH)) if up else 0
    errors = int(frames * state.error_ratio.get(name, 0.0))
    zero = ("inMulticastPkts", "outMulticastPkts", "inBroadcastPkts", "outBroadcastPkts", "inDiscards", "outDiscards")
    return {
        "inOctets": frames * 4096,
        "inTotalPkts": frames,
        "outOctets": frames * 4096,
        "inUcastPkts": frames,
        "outUcastPkts": frames,
        "totalInErrors": errors,
        "totalOutErrors": 0,
        **dict.fromkeys(zero, 0),
    }


def _bandwidth(state: EosState, name: str, section: Node | None) -> int:
    """A port's speed: what its link negotiated when a fault says so, else the configured speed, else the
    platform's (1G management, 400G front panel)."""
    if name in state.negotiated:
        return state.negotiated[name] * 1_000_000_000
    return ec.port_speed_bps(section, 1_000_000_000 if name.startswith("Management") else PORT_SPEED_BPS)
