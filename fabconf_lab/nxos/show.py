"""NX-OS ``show`` output for the lab simulator: the JSON bodies NX-API returns for ``cli`` and the text for
``cli_ascii`` / SSH, in the shapes the NAPALM ``nxos`` driver and netmiko parse.

Shapes follow NX-OS 9.x/10.x NX-API output: ``TABLE_x``/``ROW_x`` with a one-row table given as a dict
(not a list), numbers where NX-OS gives numbers and strings where it gives strings.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import ipaddress
import time
from dataclasses import dataclass
from typing import Any

from fabconf_lab.cliconf import Node
from fabconf_lab.nxos.config import NXOS_VERSION, interface_sort_key
from fabconf_lab.world import BgpSession

CHASSIS = "Nexus9000 C9332D-GX2B Chassis"
PRODUCT_ID = "N9K-C9332D-GX2B"
DEFAULT_SPEED_MBPS = 400_000
BOOTFLASH_TOTAL = 116_526_366_720
BOOTFLASH_BASE_USED = 6_211_682_304


def table(rows: list[dict[str, Any]]) -> list[dict[str, Any]] | dict[str, Any]:
    """NX-API gives a one-row table as the row itself."""
    return rows[0] if len(rows) == 1 else rows


def mac_for(seed: str, index: int = 0) -> str:
    """A stable MAC in NX-OS dotted form (``xxxx.xxxx.xxxx``), locally administered."""
    digest = bytearray(hashlib.sha256(seed.encode()).digest()[:6])
    digest[0] = (digest[0] | 0x02) & 0xFE
    value = int.from_bytes(digest, "big") + index
    h = f"{value & 0xFFFFFFFFFFFF:012x}"
    return f"{h[0:4]}.{h[4:8]}.{h[8:12]}"


def serial_for(seed: str) -> str:
    return "FDO" + hashlib.sha256(seed.encode()).hexdigest()[:8].upper()


def uptime_parts(seconds: float) -> tuple[int, int, int, int]:
    s = int(seconds)
    return s // 86400, (s % 86400) // 3600, (s % 3600) // 60, s % 60


def nxos_time(when: float) -> str:
    return time.ctime(when)


def flapped(seconds: float | None) -> str:
    """``eth_link_flapped``: ``never``, ``HH:MM:SS`` under a day, else ``XdYYh``/``XwYd``."""
    if seconds is None:
        return "never"
    days, hrs, mins, secs = uptime_parts(seconds)
    if days == 0:
        return f"{hrs:02d}:{mins:02d}:{secs:02d}"
    if days < 7:
        return f"{days}d{hrs:02d}h"
    return f"{days // 7}w{days % 7}d"


# -----------------------------------------------------------------------------------------------------------
# system


def show_hostname(hostname: str) -> dict[str, Any]:
    return {"hostname": hostname}


def show_version(
    hostname: str, serial: str, uptime: float, version: str = NXOS_VERSION, model: str | None = None
) -> dict[str, Any]:
    """``show version``; ``model`` (a Nexus part number such as N9K-C9364D-GX2A) names the chassis."""
    days, hrs, mins, secs = uptime_parts(uptime)
    image = f"bootflash:///nxos64-cs.{version.replace('(', '.').replace(')', '')}.M.bin"
    chassis = f"Nexus9000 {model.removeprefix('N9K-')} Chassis" if model else CHASSIS
    return {
        "header_str": "Cisco Nexus Operating System (NX-OS) Software\nTAC support: http://www.cisco.com/tac\n"
        "Copyright (C) 2002-2023, Cisco and/or its affiliates.\nAll rights reserved.\n"
        "This is a fabconf lab simulation, not Cisco software.\n",
        "bios_ver_str": "01.08",
        "nxos_ver_str": version,
        "bios_cmpl_time": "04/12/2023",
        "nxos_file_name": image,
        "nxos_cmpl_time": "10/25/2023 12:00:00",
        "nxos_tmstmp": "10/26/2023 01:02:03",
        "chassis_id": chassis,
        "cpu_name": "Intel(R) Xeon(R) CPU D-1633N @ 2.50GHz",
        "memory": 32823784,
        "mem_type": "kB",
        "proc_board_id": serial,
        "host_name": hostname,
        "bootflash_size": 115343360,
        "kern_uptm_days": days,
        "kern_uptm_hrs": hrs,
        "kern_uptm_mins": mins,
        "kern_uptm_secs": secs,
        "rr_reason": "Reset Requested by CLI command reload",
        "rr_sys_ver": version,
        "rr_service": None,
        "plugins": "Core Plugin, Ethernet Plugin",
        "manufacturer": "Cisco Systems, Inc.",
        # older releases report these two; the napalm driver falls back to kickstart_ver_str
        "sys_ver_str": version,
        "kickstart_ver_str": NXOS_VERSION,
    }


def show_version_text(body: dict[str, Any]) -> str:
    return (
        body["header_str"]
        + "\nSoftware\n"
        + f"  BIOS: version {body['bios_ver_str']}\n  NXOS: version {body['nxos_ver_str']}\n"
        + f"  NXOS image file is: {body['nxos_file_name']}\n\nHardware\n"
        + f"  cisco {body['chassis_id']}\n  Processor Board ID {body['proc_board_id']}\n\n"
        + f"  Device name: {body['host_name']}\n"
        + f"Kernel uptime is {body['kern_uptm_days']} day(s), {body['kern_uptm_hrs']} hour(s), "
        + f"{body['kern_uptm_mins']} minute(s), {body['kern_uptm_secs']} second(s)\n"
    )


def show_inventory(serial: str, n_ports: int) -> dict[str, Any]:
    rows = [
        {"name": "Chassis", "desc": CHASSIS, "productid": PRODUCT_ID, "vendorid": "V01", "serialnum": serial},
        {
            "name": "Slot 1",
            "desc": f"{n_ports}x400G QSFP-DD Ethernet Module",
            "productid": PRODUCT_ID,
            "vendorid": "V01",
            "serialnum": serial,
        },
        {
            "name": "Power Supply 1",
            "desc": "Nexus9000 PS 1400W",
            "productid": "NXA-PAC-1400W-PE",
            "vendorid": "V01",
            "serialnum": "ART" + serial[3:],
        },
        {
            "name": "Fan 1",
            "desc": "Nexus9000 Fan Module",
            "productid": "NXA-FAN-35CFM-PE",
            "vendorid": "V01",
            "serialnum": "N/A",
        },
    ]
    return {"TABLE_inv": {"ROW_inv": table(rows)}}


def show_inventory_text(body: dict[str, Any]) -> str:
    rows = body["TABLE_inv"]["ROW_inv"]
    rows = rows if isinstance(rows, list) else [rows]
    out = []
    for r in rows:
        out.append(f'NAME: "{r["name"]}",  DESCR: "{r["desc"]}"')
        out.append(f"PID: {r['productid']:<20}, VID: {r['vendorid']:<5}, SN: {r['serialnum']}\n")
    return "\n".join(out) + "\n"


# -----------------------------------------------------------------------------------------------------------
# interfaces


@dataclass
class IfState:
    """What ``show interface`` needs about one interface, resolved by the device."""

    name: str
    admin_up: bool
    oper_up: bool
    mtu: int
    description: str | None
    mac: str
    routed: bool
    address: str | None  # "10.0.0.1/31"
    speed_mbps: int
    flapped_ago: float | None
    in_frames: int = 0  # unicast frames received so far (a lab model: they grow with time while the link is up)
    in_errors: int = 0  # of them in error (``fabconf lab fault DEV link PORT:errors=R``)


def interface_row(s: IfState) -> dict[str, Any]:
    if s.name.startswith("Vlan"):
        row: dict[str, Any] = {
            "interface": s.name,
            "svi_admin_state": "up" if s.admin_up else "down",
            "svi_line_proto": "up" if s.oper_up else "down",
            "svi_hw_desc": "EtherSVI",
            "svi_mac": s.mac,
            "svi_mtu": s.mtu,
            "svi_bw": 1000000,
            "svi_delay": 10,
        }
        if s.description:
            row["svi_desc"] = s.description
        return row
    kind = "Loopback" if s.name.startswith("loopback") else ("GigabitEthernet" if s.name == "mgmt0" else None)
    row = {"interface": s.name, "state": "up" if s.oper_up else "down"}
    if not s.oper_up:
        row["state_rsn_desc"] = "Administratively down" if not s.admin_up else "Link not connected"
    row["admin_state"] = "up" if s.admin_up else "down"
    if kind != "Loopback":
        row["share_state"] = "Dedicated"
        row["eth_hw_desc"] = kind or "100/200/400 Ethernet"
        row["eth_hw_addr"] = s.mac
        row["eth_bia_addr"] = s.mac
    else:
        row["eth_hw_desc"] = "Loopback"
    if s.description:
        row["desc"] = s.description
    if s.address:
        addr, _, plen = s.address.partition("/")
        row["eth_ip_addr"] = addr
        row["eth_ip_mask"] = int(plen)
        row["eth_ip_prefix"] = _network(s.address)
    row["eth_mtu"] = str(s.mtu)
    row["eth_bw"] = s.speed_mbps * 1000
    row["eth_dly"] = 5000 if kind == "Loopback" else 10
    row["eth_reliability"] = "255"
    row["eth_txload"] = "1"
    row["eth_rxload"] = "1"
    if kind == "Loopback":
        return row
    row["medium"] = "broadcast"
    if not s.routed:  # a routed port has no eth_mode [3P: tests/captures/nxos-show-interface-json]
        row["eth_mode"] = "access"
    row["eth_duplex"] = "full"
    row["eth_speed"] = f"{s.speed_mbps // 1000} Gb/s" if s.oper_up else "auto-speed"
    row["eth_autoneg"] = "off"
    row["eth_in_flowctrl"] = "off"
    row["eth_out_flowctrl"] = "off"
    row["eth_mdix"] = "off"
    row["eth_ethertype"] = "0x8100"
    row["eth_eee_state"] = "n/a"
    row["eth_link_flapped"] = flapped(s.flapped_ago)
    row["eth_clear_counters"] = "never"
    row["eth_reset_cntr"] = 0
    row.update(_rx_counters(s))
    return row


def _rx_counters(s: IfState) -> dict[str, Any]:
    """The receive counters of an Ethernet row. Key names and types as NX-API returns them [3P: greenpau's
    go-cisco-nx-api ``client/interface.go``, a struct of the ``show interface`` JSON: ``eth_inucast``,
    ``eth_inpkts``, ``eth_outucast`` numbers; ``eth_inerr``, ``eth_crc``, ``eth_outerr`` strings holding a
    number]. The lab counts every received frame as unicast and every errored one as a CRC error."""
    return {
        "eth_inucast": s.in_frames,
        "eth_inmcast": 0,
        "eth_inbcast": 0,
        "eth_inpkts": s.in_frames,
        "eth_inbytes": s.in_frames * 4096,
        "eth_crc": str(s.in_errors),
        "eth_inerr": str(s.in_errors),
        "eth_indiscard": "0",
        "eth_outucast": s.in_frames,
        "eth_outpkts": s.in_frames,
        "eth_outbytes": s.in_frames * 4096,
        "eth_outerr": "0",
        "eth_outdiscard": "0",
    }


def _network(address: str) -> str:
    return str(ipaddress.IPv4Interface(address).network.network_address)


def show_interface(states: list[IfState]) -> dict[str, Any]:
    rows = [interface_row(s) for s in sorted(states, key=lambda s: interface_sort_key(s.name))]
    return {"TABLE_interface": {"ROW_interface": table(rows)}}


def show_interface_text(states: list[IfState]) -> str:
    out = []
    for s in sorted(states, key=lambda s: interface_sort_key(s.name)):
        state = "up" if s.oper_up else "down"
        reason = "" if s.oper_up else (" (Administratively down)" if not s.admin_up else " (Link not connected)")
        out.append(f"{s.name} is {state}{reason}")
        out.append(f"admin state is {'up' if s.admin_up else 'down'}, Dedicated Interface")
        out.append(f"  Hardware: 100/200/400 Ethernet, address: {s.mac} (bia {s.mac})")
        if s.description:
            out.append(f"  Description: {s.description}")
        if s.address:
            out.append(f"  Internet Address is {s.address}")
        out.append(f"  MTU {s.mtu} bytes, BW {s.speed_mbps * 1000} Kbit , DLY 10 usec")
        out.append(f"  Last link flapped {flapped(s.flapped_ago)}")
        out.append("")
    return "\n".join(out) + "\n"


# -----------------------------------------------------------------------------------------------------------
# LLDP


def show_lldp_neighbors_detail(neighbors: list[tuple[str, str, str]], ttl_left: int = 101) -> str:
    """Text that napalm's ``show_lldp_neighbors_detail`` TextFSM template parses (``Chassis id:`` ...
    ``Enabled Capabilities:``). ``neighbors`` are (local port, remote system name, remote port)."""
    out = [
        "Capability codes:",
        "  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device",
        "  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other",
        "Device ID            Local Intf      Hold-time  Capability  Port ID  ",
        "",
    ]
    for local, rname, rport in neighbors:
        out += [
            f"Chassis id: {mac_for(rname)}",
            f"Port id: {rport}",
            f"Local Port id: {_short_if(local)}",
            f"Port Description: {rport}",
            f"System Name: {rname}",
            "System Description: fabconf lab device",
            f"Time remaining: {ttl_left} seconds",
            "System Capabilities: B, R",
            "Enabled Capabilities: B, R",
            "Management Address: not advertised",
            "Management Address IPV6: not advertised",
            "Vlan ID: not advertised",
            "",
        ]
    out.append(f"Total entries displayed: {len(neighbors)}")
    return "\n".join(out) + "\n"


def show_lldp_neighbors(neighbors: list[tuple[str, str, str]]) -> str:
    out = [
        "Capability codes:",
        "  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device",
        "  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other",
        "Device ID            Local Intf      Hold-time  Capability  Port ID  ",
    ]
    for local, rname, rport in neighbors:
        out.append(f"{rname:<20} {_short_if(local):<15} {120:<10} {'BR':<11} {rport}")
    out += ["", f"Total entries displayed: {len(neighbors)}"]
    return "\n".join(out) + "\n"


def _short_if(name: str) -> str:
    return "Eth" + name[len("Ethernet") :] if name.startswith("Ethernet") else name


# -----------------------------------------------------------------------------------------------------------
# BGP


@dataclass
class BgpPeerRow:
    peer: str
    remote_as: str
    state: str  # Established | Active | Idle | Shutdown
    prefixes: int
    up_for: float | None


def show_bgp_summary(asn: str, router_id: str, peers: list[BgpPeerRow], networks: int) -> dict[str, Any]:
    """``show bgp all summary vrf all``: TABLE_vrf -> TABLE_af -> TABLE_saf -> TABLE_neighbor."""
    rows = []
    for p in peers:
        up = p.state == "Established"
        rows.append(
            {
                "neighborid": p.peer,
                "neighborversion": 4,
                "msgrecvd": 120 if up else 0,
                "msgsent": 118 if up else 0,
                "neighbortableversion": 12 if up else 0,
                "inq": 0,
                "outq": 0,
                "neighboras": p.remote_as,
                "time": flapped(p.up_for) if up else "never",
                "state": p.state,
                "prefixreceived": str(p.prefixes) if up else "0",
            }
        )
    saf: dict[str, Any] = {
        "safi": 1,
        "af-name": "IPv4 Unicast",
        "tableversion": 12,
        "configuredpeers": len(peers),
        "capablepeers": sum(1 for p in peers if p.state == "Established"),
        "totalnetworks": networks,
        "totalpaths": networks + sum(p.prefixes for p in peers if p.state == "Established"),
        "memoryused": 4096,
        "numberattrs": 2,
        "bytesattrs": 312,
        "numberpaths": 2,
        "bytespaths": 36,
        "numbercommunities": 0,
        "bytescommunities": 0,
        "numberclusterlist": 0,
        "bytesclusterlist": 0,
        "dampening": "false",
    }
    if rows:
        saf["TABLE_neighbor"] = {"ROW_neighbor": table(rows)}
    vrf = {
        "vrf-name-out": "default",
        "vrf-router-id": router_id,
        "vrf-local-as": asn,
        "TABLE_af": {"ROW_af": {"af-id": 1, "TABLE_saf": {"ROW_saf": saf}}},
    }
    return {"TABLE_vrf": {"ROW_vrf": vrf}}


def show_bgp_summary_text(asn: str, router_id: str, peers: list[BgpPeerRow]) -> str:
    out = [
        "BGP summary information for VRF default, address family IPv4 Unicast",
        f"BGP router identifier {router_id}, local AS number {asn}",
        "",
        "Neighbor        V    AS    MsgRcvd    MsgSent   TblVer  InQ OutQ Up/Down  State/PfxRcd",
    ]
    for p in peers:
        tail = str(p.prefixes) if p.state == "Established" else p.state
        up = flapped(p.up_for) if p.state == "Established" else "never"
        out.append(f"{p.peer:<15} 4 {p.remote_as:>5} {0:>10} {0:>10} {0:>8} {0:>4} {0:>4} {up:<8} {tail}")
    return "\n".join(out) + "\n"


def peer_rows(sessions: list[BgpSession], configured: dict[str, tuple[str, bool]], now: float, since: dict) -> list:
    """Rows for the IP neighbors configured (interface peers are left out: napalm parses neighborid as an IP)."""
    by_peer = {s.peer: s for s in sessions}
    rows = []
    for peer, (remote_as, shut) in configured.items():
        if not _is_ip(peer):
            continue
        s = by_peer.get(peer)
        state = "Shutdown" if shut else (s.state if s else "Idle")
        prefixes = s.prefixes_received if s and state == "Established" else 0
        if state == "Established":
            since.setdefault(peer, now)
        else:
            since.pop(peer, None)
        up_for = now - since[peer] if peer in since else None
        rows.append(BgpPeerRow(peer, remote_as, state, prefixes, up_for))
    return rows


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


# -----------------------------------------------------------------------------------------------------------
# files


def dir_listing(files: dict[str, tuple[int, float]], names: list[str] | None = None) -> str:
    """``dir bootflash:`` (all files) or ``dir NAME``; ends with the 'Usage for' block netmiko parses."""
    shown = sorted(files) if names is None else names
    out = []
    for name in shown:
        size, mtime = files[name]
        stamp = dt.datetime.fromtimestamp(mtime).strftime("%b %d %H:%M:%S %Y")
        out.append(f"{size:>12}    {stamp}  {name}")
    used = BOOTFLASH_BASE_USED + sum(size for size, _ in files.values())
    out += [
        "",
        "Usage for bootflash://sup-local",
        f"{used:>12} bytes used",
        f"{BOOTFLASH_TOTAL - used:>12} bytes free",
        f"{BOOTFLASH_TOTAL:>12} bytes total",
    ]
    return "\n".join(out) + "\n"


def config_header(command: str, now: float, last_change: float | None = None, saved: float | None = None) -> str:
    lines = [f"!Command: {command}"]
    if last_change is not None:
        lines.append(f"!Running configuration last done at: {nxos_time(last_change)}")
    lines.append(f"!Time: {nxos_time(now)}")
    if saved is not None:
        lines.append(f"!Startup config saved at: {nxos_time(saved)}")
    return "\n".join(lines) + "\n\n"


def interface_node_texts(node: Node | None) -> list[str]:
    return [c.text for c in node.children] if node is not None else []


# -----------------------------------------------------------------------------------------------------------
# priority flow control


@dataclass
class PfcState:
    name: str
    mode: str  # on | off | auto (config; NX-OS default auto)
    oper: bool
    cos_bitmap: int  # bit N set: pause pfc-cos N in the active network-qos policy
    rx_pauses: int = 0  # PFC frames received so far (RxPPP; ``fabconf lab fault DEV pfc-storm`` moves it)


def show_pfc(rows: list[PfcState]) -> dict[str, Any]:
    """``show interface priority-flow-control`` body: TABLE_module > ROW_module > TABLE_pfc_interface >
    ROW_pfc_interface with ``if_name_str``, ``admin``, ``oper``, ``rx-stats``, ``tx-stats``.

    [3P] key names as read by third-party NX-API exporters; [U] the value spelling (``On``/``Off``/``Auto``
    as the CLI table prints them) and the absence of a VL bitmap key are assumed.
    """
    out = [
        {
            "if_name_str": r.name,
            "admin": r.mode.capitalize(),
            "oper": "On" if r.oper else "Off",
            "rx-stats": r.rx_pauses,
            "tx-stats": 0,
        }
        for r in sorted(rows, key=lambda r: interface_sort_key(r.name))
    ]
    return {"TABLE_module": {"ROW_module": {"TABLE_pfc_interface": {"ROW_pfc_interface": table(out)}}}}


def show_pfc_text(rows: list[PfcState]) -> str:
    bar = "=" * 60
    out = ["slot  1", "=======", "", bar, "Port               Mode Oper(VL bmap)  RxPPP      TxPPP", bar, ""]
    for r in sorted(rows, key=lambda r: interface_sort_key(r.name)):
        oper = f"On  ({r.cos_bitmap:x})" if r.oper else "Off"
        out.append(f"{r.name:<18} {r.mode.capitalize():<4} {oper:<14} {r.rx_pauses:<10} {0:<10}")
    return "\n".join(out) + "\n"


def show_ip_route(asn: str, routes: list[Any]) -> tuple[dict[str, Any], str]:
    """``show ip route PREFIX`` as NX-API JSON (TABLE_vrf -> TABLE_addrf -> TABLE_prefix -> TABLE_path) and as
    CLI text. eBGP routes have distance 20 [V: NX-OS default eBGP administrative distance]."""
    rows = []
    text = [
        'IP Route Table for VRF "default"',
        "'*' denotes best ucast next-hop",
        "'**' denotes best mcast next-hop",
        "'[x/y]' denotes [preference/metric]",
        "'%<string>' in via output denotes VRF <string>",
        "",
    ]
    for route in routes:
        paths = [
            {
                "ipnexthop": hop.address,
                "ifname": _short_if(hop.interface),
                "uptime": "P1D",
                "pref": "20",
                "metric": "0",
                "clientname": f"bgp-{asn}",
                "type": "external",
                "tag": str(route.as_path[0]) if route.as_path else asn,
                "ubest": "true",
            }
            for hop in route.next_hops
        ]
        rows.append(
            {
                "ipprefix": route.prefix,
                "ucast-nhops": str(len(paths)),
                "mcast-nhops": "0",
                "attached": "false",
                "TABLE_path": {"ROW_path": table(paths)},
            }
        )
        text.append(f"{route.prefix}, ubest/mbest: {len(paths)}/0")
        text += [
            f"    *via {p['ipnexthop']}, {p['ifname']}, [20/0], 1d00h, bgp-{asn}, external, tag {p['tag']}"
            for p in paths
        ]
    addrf = {"addrf": "ipv4"}
    if rows:
        addrf["TABLE_prefix"] = {"ROW_prefix": table(rows)}  # type: ignore[assignment]
    body = {"TABLE_vrf": {"ROW_vrf": {"vrf-name-out": "default", "TABLE_addrf": {"ROW_addrf": addrf}}}}
    if not rows:
        text.append("Route not found")
    return body, "\n".join(text) + "\n"
