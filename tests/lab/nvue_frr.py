"""Translate a simulated Cumulus switch's APPLIED NVUE tree into what NVUE would write for FRR and ifupdown2.

``frr_conf(tree)`` gives ``/etc/frr/frr.conf`` text and ``interfaces_conf(tree, ports)`` gives
``/etc/network/interfaces`` text, so a lab can run a real FRR (``zebra`` + ``bgpd``) per switch in a
network namespace (docs/reference/roce-lossless.md §12) and get real BGP sessions and ECMP routes from the same
configuration the simulator applied.

Covered (what fabconf renders): hostname, interface MTU / admin state / IPv4 addresses / description,
``router bgp`` ASN and router-id, default-VRF neighbors (numbered by address, unnumbered by interface),
peer-groups with remote-as, ipv4-unicast networks and ``multipaths ebgp``, ``path-selection multipath
aspath-ignore`` (``bgp bestpath as-path multipath-relax``). Bridges, VLANs, QoS/PFC/ECN are not
translated: the namespace kernel cannot do VLAN-aware bridges or DCB (docs/reference/roce-lossless.md §12), so that
state stays simulated; the interfaces file says so in a comment.

Choices [U] (what NVUE itself writes is not copied): ``frr defaults datacenter``; ``no bgp
ebgp-requires-policy`` so eBGP exchanges routes without route-maps; unnumbered interfaces get
``ipv6 nd ra-interval 10`` / ``no ipv6 nd suppress-ra`` (needed for RFC 5549 neighbor discovery);
``no zebra nexthop kernel enable`` works around the FRR 8.4.4 ECMP-after-flap bug (docs/reference/roce-lossless.md §12).
"""

from __future__ import annotations

from typing import Any

from fabconf_lab.nvue.oper import admin_up, mtu_of
from fabconf_lab.nvue.tree import Tree


def _bgp(tree: Tree) -> tuple[Tree, Tree]:
    glob = (tree.get("router", {}) or {}).get("bgp", {}) or {}
    vrf = (((tree.get("vrf", {}) or {}).get("default", {}) or {}).get("router", {}) or {}).get("bgp", {}) or {}
    return glob, vrf


def _remote_as(value: Any) -> str:
    return "external" if value == "auto" else str(value)


def frr_conf(tree: Tree, *, nexthop_groups: bool = False) -> str:
    """``frr.conf`` for the applied tree (see the module docstring for what is covered)."""
    hostname = (tree.get("system", {}) or {}).get("hostname") or "cumulus"
    glob, vrf = _bgp(tree)
    asn = vrf.get("autonomous-system") or glob.get("autonomous-system")
    lines = ["frr defaults datacenter", f"hostname {hostname}", "service integrated-vtysh-config"]
    lines += ["ip forwarding", "ipv6 forwarding"]
    if not nexthop_groups:
        lines.append("no zebra nexthop kernel enable")
    lines.append("!")
    neighbors: dict[str, Tree] = {str(k): (v or {}) for k, v in (vrf.get("neighbor", {}) or {}).items()}
    interfaces = tree.get("interface", {}) or {}
    unnumbered = [n for n, nb in neighbors.items() if nb.get("type") == "unnumbered" or n in interfaces]
    for name in unnumbered:
        lines += [f"interface {name}", " ipv6 nd ra-interval 10", " no ipv6 nd suppress-ra", "exit", "!"]
    enabled = glob.get("enable", "on") != "off" and vrf.get("enable", "on") != "off"
    if asn is None or not enabled:
        return "\n".join(lines) + "\n"
    lines.append(f"router bgp {asn}")
    router_id = vrf.get("router-id") if vrf.get("router-id") not in (None, "auto") else glob.get("router-id")
    if router_id and router_id != "none":
        lines.append(f" bgp router-id {router_id}")
    lines.append(" no bgp ebgp-requires-policy")
    multipath = ((vrf.get("path-selection", {}) or {}).get("multipath", {}) or {}).get("aspath-ignore")
    if multipath in ("on", "enabled"):
        lines.append(" bgp bestpath as-path multipath-relax")
    for group, cfg in (vrf.get("peer-group", {}) or {}).items():
        lines.append(f" neighbor {group} peer-group")
        if (cfg or {}).get("remote-as") is not None:
            lines.append(f" neighbor {group} remote-as {_remote_as(cfg['remote-as'])}")
    for name, nb in neighbors.items():
        group = nb.get("peer-group") if nb.get("peer-group") not in (None, "none") else None
        remote = nb.get("remote-as")
        if name in unnumbered:
            head = f" neighbor {name} interface"
            if group:
                lines.append(f"{head} peer-group {group}")
                if remote is not None:
                    lines.append(f" neighbor {name} remote-as {_remote_as(remote)}")
            elif remote is not None:
                lines.append(f"{head} remote-as {_remote_as(remote)}")
        else:
            if remote is not None:
                lines.append(f" neighbor {name} remote-as {_remote_as(remote)}")
            if group:
                lines.append(f" neighbor {name} peer-group {group}")
        if nb.get("description"):
            lines.append(f" neighbor {name} description {nb['description']}")
        if nb.get("shutdown") == "on":
            lines.append(f" neighbor {name} shutdown")
    af = (vrf.get("address-family", {}) or {}).get("ipv4-unicast", {}) or {}
    lines += [" !", " address-family ipv4 unicast"]
    for prefix in af.get("network", {}) or {}:
        lines.append(f"  network {prefix}")
    ebgp = (af.get("multipaths", {}) or {}).get("ebgp")
    lines.append(f"  maximum-paths {ebgp if ebgp is not None else 64}")
    lines += [" exit-address-family", "exit", "!"]
    return "\n".join(lines) + "\n"


def interfaces_conf(tree: Tree, ports: list[str]) -> str:
    """ifupdown2 ``/etc/network/interfaces`` for the physical ports and configured L3 interfaces."""
    configured = tree.get("interface", {}) or {}
    names = list(dict.fromkeys([*ports, *configured]))
    out = [
        "# generated by fabconf lab from the applied NVUE tree",
        "# bridges, VLANs and QoS are simulated only (no VLAN-aware bridge or DCB in the lab kernel)",
    ]
    for name in names:
        iface = configured.get(name) or {}
        if not isinstance(iface, dict) or iface.get("type") == "eth" or name.startswith("eth"):
            continue  # management stays outside the lab namespace
        out.append("")
        out.append(f"auto {name}")
        out.append(f"iface {name}" + (" inet loopback" if name == "lo" else ""))
        addresses = [a for a in (iface.get("ip", {}) or {}).get("address", {}) or {} if "/" in str(a)]
        for addr in addresses:
            out.append(f"    address {addr}")
        if name != "lo":
            out.append(f"    mtu {mtu_of(name, iface)}")
            if not admin_up(iface):
                out.append("    link-down yes")
        if iface.get("description"):
            out.append(f'    alias "{iface["description"]}"')
    return "\n".join(out) + "\n"


def ip_commands(tree: Tree, ports: list[str]) -> list[list[str]]:
    """The same interface state as ``ip`` argv lists (for a namespace without ifupdown2)."""
    configured = tree.get("interface", {}) or {}
    cmds: list[list[str]] = []
    for name in dict.fromkeys([*ports, *configured]):
        iface = configured.get(name) or {}
        if not isinstance(iface, dict) or name.startswith("eth"):
            continue
        if name != "lo":
            cmds.append(["ip", "link", "set", "dev", name, "mtu", str(mtu_of(name, iface))])
        for addr in (iface.get("ip", {}) or {}).get("address", {}) or {}:
            if "/" in str(addr):
                cmds.append(["ip", "address", "replace", str(addr), "dev", name])
        cmds.append(["ip", "link", "set", "dev", name, "up" if admin_up(iface) else "down"])
    return cmds
