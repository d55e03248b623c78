"""EOS configuration knowledge for the eAPI simulator: the brownfield startup config, the running-config
normalisation EOS applies (every physical port is listed, interfaces in canonical order), and reading a
running config into the lab's ``DeviceView``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from fabconf_lab.cliconf import EOS, CliError, Node, load, parse
from fabconf_lab.world import DeviceView, NeighborView, PortView

DEFAULT_MTU = 1500  # EOS L3 MTU default; [U] some platforms report 9214 for switched ports


def default_eos_config(hostname: str, ports: list[str]) -> str:
    """A plausible brownfield EOS startup config: factory defaults plus some old, unmanaged leftovers."""
    first = ports[0] if ports else None
    second = ports[1] if len(ports) > 1 else None
    lines = [
        f"! device: {hostname} (DCS-7060DX5-64S, EOS-4.32.2F)",
        "!",
        "no aaa root",
        "!",
        "username admin privilege 15 role network-admin secret sha512 $6$lab$notarealhash",
        "!",
        "transceiver qsfp default-mode 4x10G",
        "!",
        "service routing protocols model multi-agent",
        "!",
        f"hostname {hostname}",
        "ip name-server vrf default 192.0.2.53",
        "dns domain lab.example",
        "!",
        "spanning-tree mode mstp",
        "!",
        "qos map dscp 24 to traffic-class 2",
        "!",
        "vlan 10",
        "   name OLD_SERVERS",
        "!",
        "vlan 99",
        "   name STALE",
        "!",
    ]
    for port in ports:
        lines.append(f"interface {port}")
        if port == first:
            lines += ["   description old-uplink (decommissioned)", "   mtu 9000"]
        elif port == second:
            lines += ["   switchport access vlan 10"]
        lines.append("!")
    lines += [
        "interface Management1",
        "   ip address 192.0.2.10/24",
        "!",
        "ip routing",
        "!",
        "snmp-server community lab-ro ro",  # the operator's SNMP agent (the lab's switch metrics need it)
        "!",
        "management api http-commands",
        "   no shutdown",
        "!",
        "end",
    ]
    return "\n".join(lines) + "\n"


_IF_ORDER = ("Ethernet", "Loopback", "Management", "Port-Channel", "Tunnel", "Vlan", "Vxlan")


@lru_cache(maxsize=1 << 14)  # the same names sorted on every show: remembered, as it depends on the name alone
def interface_sort_key(name: str) -> tuple:
    m = re.match(r"([A-Za-z-]+)(.*)", name)
    kind, rest = (m.group(1), m.group(2)) if m else (name, "")
    rank = _IF_ORDER.index(kind) if kind in _IF_ORDER else len(_IF_ORDER)
    nums = tuple(int(n) for n in re.findall(r"\d+", rest))
    return (rank, kind, nums, rest)


def normalize(root: Node, ports: list[str]) -> Node:
    """List every physical port (an absent section means defaults) and keep interface sections together, in
    EOS's order, where the first one stood. Mutates and returns ``root``."""
    existing = {c.text for c in root.children}
    for port in ports:
        if f"interface {port}" not in existing:
            root.children.append(Node(f"interface {port}"))
    first = next((i for i, c in enumerate(root.children) if c.text.startswith("interface ")), None)
    if first is None:
        return root
    ifaces = [c for c in root.children if c.text.startswith("interface ")]
    others = [c for c in root.children if not c.text.startswith("interface ")]
    ifaces.sort(key=lambda c: interface_sort_key(c.text.split(" ", 1)[1]))
    before = [c for c in root.children[:first] if not c.text.startswith("interface ")]
    after = others[len(before) :]
    root.children = before + ifaces + after
    return root


def interfaces(root: Node) -> dict[str, Node]:
    return {c.text.split(" ", 1)[1]: c for c in root.children if c.text.startswith("interface ")}


def _value(section: Node | None, prefix: str) -> str | None:
    if section is None:
        return None
    for line in section.leaves():
        if line.startswith(prefix + " "):
            return line[len(prefix) + 1 :]
    return None


def port_mtu(section: Node | None) -> int:
    value = _value(section, "mtu")
    return int(value) if value and value.isdigit() else DEFAULT_MTU


def is_shutdown(section: Node | None) -> bool:
    return section is not None and "shutdown" in section.leaves()


def is_routed(section: Node | None, name: str) -> bool:
    if not name.startswith("Ethernet"):
        return True  # Management, Loopback, Vlan interfaces are L3
    return section is not None and "no switchport" in section.leaves()


def ip_address(section: Node | None) -> str | None:
    value = _value(section, "ip address")
    if value is None:
        return None
    return value.split()[0]


def port_speed_bps(section: Node | None, default: int = 100_000_000_000) -> int:
    value = _value(section, "speed")
    if value:
        m = re.search(r"(\d+)g", value)
        if m:
            return int(m.group(1)) * 1_000_000_000
        m = re.search(r"(\d+)m", value)
        if m:
            return int(m.group(1)) * 1_000_000
    return default


def as_number(text: str) -> int | str:
    """'65001' -> 65001, asdot '1.10' -> 65546; anything else is returned as text."""
    if text.isdigit():
        return int(text)
    m = re.fullmatch(r"(\d+)\.(\d+)", text)
    if m:
        return int(m.group(1)) * 65536 + int(m.group(2))
    return text


def bgp_section(root: Node) -> Node | None:
    return next((c for c in root.children if c.text.startswith("router bgp ")), None)


def _add(order: list[str], peer: str) -> None:
    if peer not in order:
        order.append(peer)


def bgp_neighbors(bgp: Node) -> list[tuple[str, int | str, bool]]:
    """(peer, remote-as, shutdown) for each neighbor of the default VRF, peer groups resolved.

    Forms read: ``neighbor G peer group`` (and legacy ``peer-group``), ``neighbor A peer group G``,
    ``neighbor A remote-as N``, ``neighbor interface EthernetN peer-group G remote-as N``, ``neighbor A shutdown``.
    """
    groups: set[str] = set()
    remote_as: dict[str, int | str] = {}
    member_of: dict[str, str] = {}
    shut: set[str] = set()
    order: list[str] = []
    for line in bgp.leaves():
        w = line.split()
        if w[0] != "neighbor" or len(w) < 3:
            continue
        if w[1] == "interface":
            iface, rest = w[2], w[3:]
            _add(order, iface)
            i = 0
            while i < len(rest):
                if rest[i] == "peer-group" and i + 1 < len(rest):
                    member_of[iface] = rest[i + 1]
                    i += 2
                elif rest[i] == "peer" and rest[i + 1 : i + 2] == ["group"] and i + 2 < len(rest):
                    member_of[iface] = rest[i + 2]
                    i += 3
                elif rest[i] == "remote-as" and i + 1 < len(rest):
                    remote_as[iface] = as_number(rest[i + 1])
                    i += 2
                else:
                    i += 1
            continue
        peer, rest = w[1], w[2:]
        if rest in (["peer", "group"], ["peer-group"]):
            groups.add(peer)
        elif (rest[0] == "peer-group" and len(rest) == 2) or (rest[:2] == ["peer", "group"] and len(rest) == 3):
            member_of[peer] = rest[-1]
            _add(order, peer)
        elif rest[0] == "remote-as" and len(rest) >= 2:
            remote_as[peer] = as_number(rest[1])
            _add(order, peer)
        elif rest[0] == "shutdown":
            shut.add(peer)
    out = []
    for peer in order:
        if peer in groups:
            continue
        group = member_of.get(peer)
        asn = remote_as.get(peer, remote_as.get(group) if group else None)
        if asn is None:
            continue
        out.append((peer, asn, peer in shut or (group is not None and group in shut)))
    return out


def bgp_networks(bgp: Node) -> list[str]:
    """Networks of the default VRF: under ``router bgp`` and its ``address-family ipv4`` sections."""
    nets: list[str] = []
    lines = list(bgp.leaves())
    for section in bgp.children:
        if section.text.startswith("address-family ipv4"):
            lines += section.leaves()
    for line in lines:
        w = line.split()
        if w[0] == "network" and len(w) >= 2 and "/" in w[1] and w[1] not in nets:
            nets.append(w[1])
    return nets


def maximum_paths(bgp: Node) -> int:
    value = _value(bgp, "maximum-paths")
    if value:
        return int(value.split()[0])
    return 1


def lab_view(root: Node, hostname_default: str, ports: list[str]) -> DeviceView:
    """What a running config says about the device, for the lab's World."""
    hostname = _value(root, "hostname") or hostname_default
    ifs = interfaces(root)
    views: dict[str, PortView] = {}
    for name in list(ports) + [n for n in ifs if n not in ports and n.startswith(("Ethernet", "Loopback"))]:
        section = ifs.get(name)
        address = ip_address(section) if is_routed(section, name) else None
        views[name] = PortView(name, enabled=not is_shutdown(section), mtu=port_mtu(section), address=address)
    bgp = bgp_section(root)
    if bgp is None:
        return DeviceView(hostname, views)
    asn = as_number(bgp.text.split()[2])
    neighbors = tuple(NeighborView(peer, asn_) for peer, asn_, shut in bgp_neighbors(bgp) if not shut)
    return DeviceView(
        hostname,
        views,
        asn=asn if isinstance(asn, int) else None,
        router_id=_value(bgp, "router-id"),
        neighbors=neighbors,
        networks=tuple(bgp_networks(bgp)),
        maximum_paths=maximum_paths(bgp),
    )


def load_startup(text: str, ports: list[str]) -> Node:
    """Boot: run the startup config's commands (as ``configure replace`` does, so the line order is the same
    either way); a file with lines the simulator does not know is parsed as it stands instead."""
    try:
        tree = load(text, EOS)
    except CliError:
        tree = parse(text, EOS)
    return normalize(tree, ports)
