"""A switch's device data: interfaces, VLANs and SVIs, BGP and ECMP, the checks verify reads back, and its QoS."""

from __future__ import annotations

import ipaddress
from operator import itemgetter
from typing import Any

from fabconf.compile.design.qos import Hardware
from fabconf.compile.model import Device, Model, natural_key
from fabconf.compile.topology import SwitchFacts, Topology, dotted
from fabconf.platforms import PLATFORMS, design_hooks


def max_paths_for(dev: Device, fabric: dict[str, Any]) -> int:
    """ECMP width of a switch: its own ``data.ecmp_max_paths``, else ``ecmp.max_paths`` for its role and platform
    (a number for every switch; or a mapping per role, 64 for a role it leaves out, whose value is a number or a
    mapping per platform, 64 for a platform it leaves out)."""
    if dev.data.get("ecmp_max_paths"):
        return int(dev.data["ecmp_max_paths"])
    paths = fabric["ecmp"]["max_paths"]
    if isinstance(paths, dict):
        paths = paths.get(dev.role, DEFAULT_MAX_PATHS)
    if isinstance(paths, dict):
        paths = paths.get(dev.platform, DEFAULT_MAX_PATHS)
    return int(paths)


DEFAULT_MAX_PATHS = 64


def load_balancing_for(dev: Device, fabric: dict[str, Any]) -> str:
    """``ecmp`` or ``adaptive``: the switch's own ``data.load_balancing``, else ``load_balancing.mode``."""
    return str(dev.data.get("load_balancing") or fabric["load_balancing"]["mode"])


def telemetry_for(dev: Device, fabric: dict[str, Any]) -> bool:
    """Whether the switch runs a gNMI server: its own ``data.telemetry``, else ``monitoring.telemetry.enabled``."""
    own = dev.data.get("telemetry")
    return bool(fabric["monitoring"]["telemetry"]["enabled"] if own is None else own)


def _telemetry(dev: Device, fabric: dict[str, Any]) -> dict[str, Any] | None:
    """The gNMI server the templates render, or None."""
    if not telemetry_for(dev, fabric):
        return None
    intent = fabric["monitoring"]["telemetry"]
    try:  # the server listens on the management address (validate refuses a name where the platform needs one)
        listening: str | None = str(ipaddress.ip_address(dev.hostname))
    except ValueError:
        listening = None
    return {"port": int(intent["port"]), "tls_profile": intent.get("tls_profile"), "listening_address": listening}


def _fabric_ports(facts: SwitchFacts, topo: Topology, wd: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The switch's fabric interfaces (uplinks and downlinks, a /31 each) and its BGP neighbour on each, the
    neighbours by address."""
    interfaces: list[dict[str, Any]] = []
    keyed: list[tuple[int, dict[str, Any]]] = []  # (the peer's address as an integer, neighbour): their order
    links = [(up, True) for up in facts.uplinks] + [(down, False) for down in facts.downlinks]
    for link, lower in links:
        # addresses as integers, written once each (an ``ipaddress`` object per end cost 0.3 s at 32k GPUs)
        if lower:
            port, mine, peer = link.lower_port, link.network + 1, f"{link.upper}:{link.upper_port}"
            far, far_ip = link.upper, link.network
        else:
            port, mine, peer = link.upper_port, link.network, f"{link.lower}:{link.lower_port}"
            far, far_ip = link.lower, link.network + 1
        neighbor = {
            "address": dotted(far_ip),
            "remote_as": topo.switches[far].asn,
            "description": peer,
            "peer_device": far,
        }
        keyed.append((far_ip, neighbor))
        interfaces.append(
            {
                "name": port,
                "description": peer,
                "mtu": link.mtu,
                "kind": "uplink" if lower else "downlink",
                "address": f"{dotted(mine)}/31",
                "vlan": None,
                "pfc": True,
                "pfc_watchdog": wd,
                "peer": peer,
            }
        )
    keyed.sort(key=itemgetter(0))
    neighbors = [n for _, n in keyed]
    return interfaces, neighbors


def _host_facing(facts: SwitchFacts, mtu: int, wd: bool) -> list[dict[str, Any]]:
    """A leaf's ports that face GPU hosts: access ports in the rail's VLAN."""
    return [
        {
            "name": hp.leaf_port,
            "description": f"{hp.host}:{hp.nic.netdev}",
            "mtu": mtu,
            "kind": "host",
            "address": None,
            "vlan": hp.vlan,
            "pfc": True,
            "pfc_watchdog": wd,
            "peer": f"{hp.host}:{hp.nic.netdev}",
        }
        for hp in facts.host_ports
    ]


def switch_data(dev: Device, model: Model, topo: Topology) -> dict[str, Any]:
    """A switch's device data (``fabconf.compile.devicedata.Switch``)."""
    fabric = model.fabric
    facts = topo.switches[dev.name]
    plat = PLATFORMS[dev.platform]
    mtu = min(facts.mtu, plat.max_mtu)
    wd = bool(fabric["roce"]["pfc_watchdog"]["enabled"])
    interfaces, neighbors = _fabric_ports(facts, topo, wd)
    interfaces += _host_facing(facts, mtu, wd)
    interfaces.sort(key=lambda i: natural_key(i["name"]))
    vlans = []
    vlan_names = {v["id"]: v["name"] for v in fabric["vlans"]}
    networks = [f"{facts.loopback}/32"] if facts.loopback else []
    for vid, gw in sorted(facts.svis.items()):
        vlans.append({"id": vid, "name": vlan_names[vid], "gateway": str(gw), "mtu": mtu})
        networks.append(str(gw.network))
    max_paths = max_paths_for(dev, fabric)
    hw: Hardware = {
        "family": plat.hardware_family(dev.data.get("model")),
        "line": plat.release_line(dev.data.get("os_version"), dev.data.get("assume_release")),
    }
    ecmp_checks = _ecmp_checks(dev, topo, max_paths) if dev.role == "leaf" else []
    mode = load_balancing_for(dev, fabric)
    # adaptive routing acts on routed fabric ports only (not on host-facing bridge members) [V: NVUE reference]
    for itf in interfaces:
        itf["adaptive_routing"] = mode == "adaptive" and itf["kind"] in ("uplink", "downlink")
    adaptive_ports = [i["name"] for i in interfaces if i["adaptive_routing"]]
    return {
        "hostname": dev.name,
        "platform": dev.platform,
        "role": dev.role,
        "model": dev.data.get("model", ""),
        "asn": facts.asn,
        "router_id": str(facts.loopback) if facts.loopback else None,
        "loopback": f"{facts.loopback}/32" if facts.loopback else None,
        "mtu": mtu,
        "interfaces": interfaces,
        "vlans": vlans,
        "bgp": {
            "asn": facts.asn,
            "router_id": str(facts.loopback) if facts.loopback else None,
            "max_paths": max_paths,
            "neighbors": neighbors,
            "networks": networks,
        },
        "os_version": str(dev.data.get("os_version") or plat.default_version),
        "release_line": hw["line"],
        "hardware_family": hw["family"],
        "qos": design_hooks(plat.name).build_qos(fabric, mtu, hw),
        "load_balancing": {"mode": mode, "ports": adaptive_ports},
        "telemetry": _telemetry(dev, fabric),
        "verify": {"ecmp": ecmp_checks, "adaptive_ports": list(adaptive_ports)},
    }


def _ecmp_checks(dev: Device, topo: Topology, max_paths: int) -> list[dict[str, Any]]:
    """What ``fabconf verify`` expects of a leaf's routing table: the ECMP width to another leaf of its pod
    (one path per spine that reaches that leaf) and to the first leaf of every other pod (one path per spine
    with a super-spine uplink). One target per pod keeps verify cheap at any size."""
    facts = topo.switches[dev.name]
    checks = []
    for pod, leaves in sorted(topo.leaves_by_pod.items(), key=lambda kv: str(kv[0])):
        target = next((n for n in leaves if n != dev.name), None)
        if target is None:
            continue
        remote = topo.switches[target]
        if pod == facts.pod:
            reaching = {down.upper for down in remote.uplinks}
            paths = sum(1 for up in facts.uplinks if up.upper in reaching)
        else:
            paths = sum(1 for up in facts.uplinks if topo.switches[up.upper].uplinks)
        if paths:
            checks.append({"prefix": f"{remote.loopback}/32", "paths": min(paths, max_paths), "target": target})
    return checks
