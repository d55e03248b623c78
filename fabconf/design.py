"""Intent -> device-shaped data: one plain dict per device, the only thing templates ever see.

Shape (every list already sorted; typed in ``fabconf.devicedata``, checked on every golden in
tests/golden/design/*.yaml; see README "Device data"):

switch (cumulus | eos | nxos)::

    hostname, platform, role, model, asn, router_id, loopback, mtu
    interfaces: [{name, description, mtu, kind: uplink|host, address|None, vlan|None,
                  pfc: bool, pfc_watchdog: bool, peer: "DEVICE:PORT" from the cabling}]
    vlans:      [{id, name, gateway: "A.B.C.D/M", mtu}]
    bgp:        {asn, router_id, max_paths, neighbors: [{address, remote_as, description, peer_device}],
                 networks: [...]}
    qos:        the RoCE profile in that platform's own terms (see _qos_cumulus/_qos_eos/_qos_nxos)

gpu host (linux)::

    hostname, platform, role, mtu
    nics:     [{netdev, rdma, rail, speed_gbps, mtu, address, gateway, vlan, leaf, leaf_port, adapter}]
    qos:      {trust, pfc: [8 x 0|1], dscp2prio: [[dscp, prio]...]}
    ecn:      {np_enable: [prio...], rp_enable: [prio...], cnp_dscp, cnp_802p_prio}
    roce_tos, mlxconfig: {KEY: value}, nccl: {NCCL_*: value}
"""

from __future__ import annotations

import ipaddress
from functools import cache
from typing import Any, TypedDict

from fabconf.drivers.linux_routing import MAIN as MAIN_TABLE
from fabconf.drivers.linux_routing import NIC_SYSCTLS, ROUTE_TABLE_BASE, RULE_BASE
from fabconf.model import Device, Model, natural_key
from fabconf.platforms import PLATFORMS
from fabconf.topology import Topology

PROFILE = "FABCONF_ROCE"


class Hardware(TypedDict):
    family: str  # the platform's hardware family ("" where the configuration does not differ by family)
    line: str  # the release line the configuration is rendered for


ECT0 = 0b10


def roce_tos(fabric: dict[str, Any]) -> int:
    """The host ToS byte: explicit ``hosts.tos`` or DSCP << 2 | ECT(0)."""
    tos = fabric["hosts"].get("tos")
    return int(tos) if tos is not None else (int(fabric["roce"]["dscp"]) << 2) | ECT0


def _ets(roce: dict[str, Any]) -> tuple[dict[int, int], int]:
    """Bandwidth share per lossless priority, and what remains for the default queue."""
    lossless = sorted(roce["pfc_priorities"])
    total = int(roce["ets"]["roce_percent"])
    share = {p: total // len(lossless) for p in lossless}
    share[lossless[0]] += total - sum(share.values())
    return share, 100 - total


def _qos_cumulus(fabric: dict[str, Any], mtu: int, hw: Hardware) -> dict[str, Any]:
    """Every key set explicitly rather than ``nv set qos roce`` plus overrides: the roce profile applies defaults
    NVIDIA may change between releases and that a diff cannot show, while explicit keys are what the other
    platforms render too, diff line by line, and are checked against each release's schema.

    Every one of the eight traffic classes is scheduled (a class left out keeps the device's default DWRR
    share, and the shares would then add up past 100 %): the lossless classes their share, the CNP class
    strict, traffic class 0 the rest, every other class 0 %. Every switch priority maps to the traffic class of
    the same number, and the lossy pool lists every switch priority the lossless pool does not, so no priority
    is in both."""
    roce = fabric["roce"]
    cnp = roce["cnp"]
    ecn = roce["ecn"]
    share, rest = _ets(roce)
    sched: list[dict[str, Any]] = []
    for tc in range(8):
        if tc == cnp["priority"]:
            sched.append({"tc": tc, "mode": "strict", "bw_percent": None})
        else:
            sched.append({"tc": tc, "mode": "dwrr", "bw_percent": share.get(tc, rest if tc == 0 else 0)})
    wd = roce["pfc_watchdog"]
    lossless = sorted(roce["pfc_priorities"])
    return {
        "trust": "l3",
        "dscp_map": sorted([[roce["dscp"], roce["priority"]], [cnp["dscp"], cnp["priority"]]]),
        "queue_map": [[p, p] for p in range(8)],
        "pfc": {"priorities": list(lossless), "cable_length": roce["cable_length_m"]},
        "ecn": [
            {
                "tc": p,
                "min": ecn["min_threshold_bytes"],
                "max": ecn["max_threshold_bytes"],
                "probability": ecn["probability"],
            }
            for p in lossless
        ],
        "scheduler": sched,
        "pool": {
            "lossless_percent": 50,
            "lossy_percent": 50,
            "priorities": list(lossless),  # a list of its own: device data never shares objects
            "lossy_priorities": [p for p in range(8) if p not in lossless],
        },
        "watchdog": {
            "enabled": wd["enabled"],
            "polling_interval": wd["polling_interval_ms"],
            "robustness": wd["robustness"],
        },
    }


def _threshold(value: int) -> tuple[int, str]:
    return (value // 1000, "kbytes") if value % 1000 == 0 else (value, "bytes")


# [3P] (roce-lossless.md §9) EOS's default DSCP -> traffic-class map puts DSCP 0-7 (best effort) in traffic class 1,
# and traffic class n leaves through tx-queue n: the best-effort share is scheduled on queue 1, not queue 0.
EOS_BEST_EFFORT_QUEUE = 1
EOS_QUEUE_COMMAND = {"strata": "uc-tx-queue", "sand": "tx-queue"}


def _seconds(ms: int) -> str:
    """Milliseconds as the seconds EOS writes (at most two decimals: the checks refuse finer timers)."""
    return f"{ms / 1000:.2f}".rstrip("0").rstrip(".")


def _qos_eos(fabric: dict[str, Any], mtu: int, hw: Hardware) -> dict[str, Any]:
    roce = fabric["roce"]
    cnp = roce["cnp"]
    ecn = roce["ecn"]
    share, rest = _ets(roce)
    lo, units = _threshold(ecn["min_threshold_bytes"])
    hi, hi_units = _threshold(ecn["max_threshold_bytes"])
    if hi_units != units:  # both thresholds must use one unit
        lo, hi, units = ecn["min_threshold_bytes"], ecn["max_threshold_bytes"], "bytes"
    queues: list[dict[str, Any]] = [{"id": EOS_BEST_EFFORT_QUEUE, "strict": False, "bandwidth": rest, "ecn": None}]
    for p, s in sorted(share.items()):
        queues.append(
            {
                "id": p,
                "strict": False,
                "bandwidth": s,
                "ecn": {"min": lo, "max": hi, "units": units, "probability": ecn["probability"]},
            }
        )
    queues.append({"id": cnp["priority"], "strict": True, "bandwidth": None, "ecn": None})
    wd = roce["pfc_watchdog"]
    return {
        "profile": PROFILE,
        "trust": "dscp",
        "queue_command": EOS_QUEUE_COMMAND[hw["family"]],
        "dscp_map": sorted([[roce["dscp"], roce["priority"]], [cnp["dscp"], cnp["priority"]]]),
        "pfc_priorities": sorted(roce["pfc_priorities"]),
        "tx_queues": sorted(queues, key=lambda q: q["id"]),
        "watchdog": {
            "enabled": wd["enabled"],
            "timeout": _seconds(wd["timeout_ms"]),
            "polling_interval": _seconds(wd["polling_interval_ms"]),
            "recovery_time": _seconds(recovery_ms(wd)),
            "action": wd["action"],
        },
    }


def recovery_ms(watchdog: dict[str, Any]) -> int:
    """How long a queue the watchdog shut stays shut: ``recovery_ms``, else twice the timeout [U: fabconf's
    default; EOS and NX-OS document the knob, not a RoCE value]."""
    return int(watchdog.get("recovery_ms") or 2 * watchdog["timeout_ms"])


def _qos_nxos(fabric: dict[str, Any], mtu: int, hw: Hardware) -> dict[str, Any]:
    """All eight queuing classes explicitly (c-out-8q-q-default is queue 0): the lossless queues with their
    shares and ECN, the CNP queue strict (``priority level 1``), the default queue with the rest, every other
    queue at 0% (traffic there is unexpected in a training fabric and gets only what is left over).

    The CNP class matches the CNP DSCP (48 = CS6), which routing protocols also use: BGP and other CS6 control
    traffic then shares the strict CNP queue. That is deliberate: both are small and latency-sensitive, and
    strict priority keeps BGP keepalives ahead of a congested RoCE queue. Every network-qos class that can
    carry jumbo frames (all of them in a RoCE fabric) gets the fabric MTU."""
    roce = fabric["roce"]
    cnp = roce["cnp"]
    ecn = roce["ecn"]
    share, rest = _ets(roce)
    queuing: list[dict[str, Any]] = []
    for q in range(8):
        name = "c-out-8q-q-default" if q == 0 else f"c-out-8q-q{q}"
        entry: dict[str, Any] = {"class": name, "priority_level": None, "bandwidth": 0, "ecn": None}
        if q == cnp["priority"]:
            entry.update(priority_level=1, bandwidth=None)
        elif q in share:
            entry.update(
                bandwidth=share[q],
                ecn={
                    "min": ecn["min_threshold_bytes"] // 1000,
                    "max": ecn["max_threshold_bytes"] // 1000,
                    "probability": ecn["probability"],
                },
            )
        elif q == 0:
            entry["bandwidth"] = rest
        queuing.append(entry)
    wd = roce["pfc_watchdog"]
    lossless = set(roce["pfc_priorities"])
    return {
        "classes": [
            {"name": "FABCONF_ROCE", "dscp": roce["dscp"], "qos_group": roce["priority"]},
            {"name": "FABCONF_CNP", "dscp": cnp["dscp"], "qos_group": cnp["priority"]},
        ],
        "input_policy": "FABCONF_QOS_IN",
        "network_qos": {
            "name": "FABCONF_NQ",
            "mtu": mtu,
            "classes": [
                {"class": "c-8q-nq-default" if q == 0 else f"c-8q-nq{q}", "pause_cos": q if q in lossless else None}
                for q in range(8)
            ],
        },
        "queuing": {"name": "FABCONF_QUEUING", "classes": queuing},
        "watchdog": {
            "enabled": wd["enabled"],
            # [U] recalled from the Nexus 9000 QoS guide: interval 100-1000 ms, shutdown multiplier 1-10 intervals
            "interval": wd["polling_interval_ms"],
            "shutdown_multiplier": max(1, min(10, -(-wd["timeout_ms"] // wd["polling_interval_ms"]))),
        },
    }


def max_paths_for(dev: Device, fabric: dict[str, Any]) -> int:
    """ECMP width of a switch: its own ``data.ecmp_max_paths``, else ``ecmp.max_paths`` for its role (a number
    for every role, or a mapping per role with 64 for a role it leaves out)."""
    if dev.data.get("ecmp_max_paths"):
        return int(dev.data["ecmp_max_paths"])
    paths = fabric["ecmp"]["max_paths"]
    return int(paths.get(dev.role, DEFAULT_MAX_PATHS) if isinstance(paths, dict) else paths)


DEFAULT_MAX_PATHS = 64

# keyed by the platform table's ``qos_dialect``
QOS_BUILDERS = {"nvue": _qos_cumulus, "eos_cli": _qos_eos, "nxos_cli": _qos_nxos}


def _switch(dev: Device, model: Model, topo: Topology) -> dict[str, Any]:
    fabric = model.fabric
    facts = topo.switches[dev.name]
    plat = PLATFORMS[dev.platform]
    mtu = min(facts.mtu, plat.max_mtu)
    wd = bool(fabric["roce"]["pfc_watchdog"]["enabled"])
    interfaces: list[dict[str, Any]] = []
    neighbors: list[dict[str, Any]] = []
    links = [(up, True) for up in facts.uplinks] + [(down, False) for down in facts.downlinks]
    for link, lower in links:
        if lower:
            port, address, peer = link.lower_port, f"{link.lower_ip}/31", f"{link.upper}:{link.upper_port}"
            far, far_ip = link.upper, link.upper_ip
        else:
            port, address, peer = link.upper_port, f"{link.upper_ip}/31", f"{link.lower}:{link.lower_port}"
            far, far_ip = link.lower, link.lower_ip
        neighbors.append(
            {"address": str(far_ip), "remote_as": topo.switches[far].asn, "description": peer, "peer_device": far}
        )
        interfaces.append(
            {
                "name": port,
                "description": peer,
                "mtu": link.mtu,
                "kind": "uplink" if lower else "downlink",
                "address": address,
                "vlan": None,
                "pfc": True,
                "pfc_watchdog": wd,
                "peer": peer,
            }
        )
    for hp in facts.host_ports:
        interfaces.append(
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
        )
    interfaces.sort(key=lambda i: natural_key(i["name"]))
    neighbors.sort(key=lambda n: tuple(int(x) for x in n["address"].split(".")))
    vlans = []
    vlan_names = {v["id"]: v["name"] for v in fabric["vlans"]}
    networks = [f"{facts.loopback}/32"] if facts.loopback else []
    for vid, gw in sorted(facts.svis.items()):
        vlans.append({"id": vid, "name": vlan_names[vid], "gateway": str(gw), "mtu": mtu})
        networks.append(str(gw.network))
    max_paths = max_paths_for(dev, fabric)
    hw: Hardware = {
        "family": plat.hardware_family(dev.data.get("model")),
        "line": plat.release_line(dev.data.get("os_version")),
    }
    ecmp_checks = _ecmp_checks(dev, topo, max_paths) if dev.role == "leaf" else []
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
        "qos": QOS_BUILDERS[plat.qos_dialect](fabric, mtu, hw),
        "verify": {"ecmp": ecmp_checks},
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


def _mlx_for_port(mlxconfig: dict[str, Any], port: int) -> dict[str, Any]:
    """The card-level ``_P1`` keys repeated for port ``port`` (``LINK_TYPE_P1`` -> ``LINK_TYPE_P2``)."""
    if port == 1:
        return {}
    return {f"{k[:-3]}_P{port}": v for k, v in sorted(mlxconfig.items()) if k.endswith("_P1")}


@cache
def _prefix_key(prefix: str) -> tuple[int, int]:
    """Sort key of a prefix: its address, then its length (cached: a fabric has few distinct prefixes)."""
    net = ipaddress.IPv4Network(prefix)
    return int(net.network_address), net.prefixlen


def _routing(fabric: dict[str, Any], ports: list[Any]) -> dict[str, Any]:
    """Per-NIC tables and rules so RoCE traffic from a NIC's address leaves through that NIC towards every
    fabric RoCE prefix, and a main-table route to each prefix through the NIC that lives in it."""
    prefixes = sorted({v["subnet_pool"] for v in fabric["vlans"]}, key=lambda n: natural_key(n))
    pool_of = {v["id"]: v["subnet_pool"] for v in fabric["vlans"]}
    rules: list[dict[str, Any]] = []
    routes: list[dict[str, Any]] = []
    main: dict[str | None, Any] = {}
    for i, hp in enumerate(ports):
        table = ROUTE_TABLE_BASE + i
        rules.append({"priority": RULE_BASE + i, "source": str(hp.address.ip), "table": table})
        subnet = str(hp.address.network)
        routes.append(
            {
                "destination": subnet,
                "gateway": None,
                "device": hp.nic.netdev,
                "source": str(hp.address.ip),
                "table": table,
            }
        )
        for prefix in prefixes:
            routes.append(
                {
                    "destination": prefix,
                    "gateway": str(hp.gateway),
                    "device": hp.nic.netdev,
                    "source": None,
                    "table": table,
                }
            )
        main.setdefault(pool_of.get(hp.vlan), hp)
    for prefix in prefixes:
        hp = main.get(prefix)
        if hp is not None:
            routes.append(
                {
                    "destination": prefix,
                    "gateway": str(hp.gateway),
                    "device": hp.nic.netdev,
                    "source": None,
                    "table": None,
                }
            )
    # the order ``ip route show table all`` lists them in (by table, main last; then by destination), so the
    # running and the intended document line up
    routes.sort(key=lambda r: (r["table"] or MAIN_TABLE, _prefix_key(r["destination"]), r["gateway"] or ""))
    return {"rules": rules, "routes": routes}


def _host(dev: Device, model: Model, topo: Topology) -> dict[str, Any]:
    fabric = model.fabric
    roce = fabric["roce"]
    cnp = roce["cnp"]
    host_mtu = int(fabric["mtu"]["host"])
    tos = roce_tos(fabric)
    ports = topo.host_ports.get(dev.name, [])
    mlxconfig = {"CNP_DSCP_P1": cnp["dscp"], "CNP_802P_PRIO_P1": cnp["priority"]}
    mlxconfig.update(fabric["hosts"]["mlxconfig"])
    nics = [
        {
            "netdev": hp.nic.netdev,
            "rdma": hp.nic.rdma,
            "rail": hp.nic.rail,
            "speed_gbps": hp.nic.speed_gbps,
            "mtu": host_mtu,
            "address": str(hp.address),
            "gateway": str(hp.gateway),
            "vlan": hp.vlan,
            "leaf": hp.leaf,
            "leaf_port": hp.leaf_port,
            # the card and this port's number on it: ports of one card share its firmware settings, and a
            # second port needs the card's _P1 settings as _P2 as well
            "adapter": hp.nic.card[0],
            "port": hp.nic.card[1],
            "mlxconfig": _mlx_for_port(mlxconfig, hp.nic.card[1]),
            **({"gpu": hp.nic.gpu} if hp.nic.gpu is not None else {}),
        }
        for hp in ports
    ]
    pfc = [1 if p in roce["pfc_priorities"] else 0 for p in range(8)]
    # mlx5 default dscp2prio maps DSCP 8n..8n+7 to priority n; add an entry only where that differs.
    dscp2prio = sorted(
        [d, p] for d, p in ((roce["dscp"], roce["priority"]), (cnp["dscp"], cnp["priority"])) if d >> 3 != p
    )
    nccl: dict[str, Any] = {
        "NCCL_IB_HCA": "=" + ",".join(f"{n['rdma']}:1" for n in nics),
        "NCCL_IB_GID_INDEX": fabric["hosts"]["gid_index"],
        "NCCL_IB_TC": tos,
        "NCCL_SOCKET_IFNAME": f"={nics[0]['netdev']}" if nics else "",
    }
    nccl.update(fabric["hosts"]["nccl"])
    sysctl = {f"net.ipv4.conf.{n['netdev']}.{key}": value for n in nics for key, value in sorted(NIC_SYSCTLS.items())}
    return {
        "hostname": dev.name,
        "platform": dev.platform,
        "role": dev.role,
        "mtu": host_mtu,
        "nics": nics,
        "qos": {"trust": "dscp", "pfc": pfc, "dscp2prio": dscp2prio},
        "ecn": {
            "np_enable": sorted(roce["pfc_priorities"]),
            "rp_enable": sorted(roce["pfc_priorities"]),
            "cnp_dscp": cnp["dscp"],
            "cnp_802p_prio": cnp["priority"],
        },
        "roce_tos": tos,
        "mlxconfig": dict(sorted(mlxconfig.items())),
        "nccl": dict(sorted(nccl.items())),
        "routing": _routing(fabric, ports),
        "sysctl": dict(sorted(sysctl.items())),
    }


def device_data(dev: Device, model: Model, topo: Topology) -> dict[str, Any]:
    """One device's data, of the shape ``fabconf.devicedata.Switch`` or ``Host`` (checked by the tests; the
    templates and checks read it as a plain mapping)."""
    return _host(dev, model, topo) if dev.is_host else _switch(dev, model, topo)


def design(model: Model, topo: Topology, names: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Device data for ``names`` (default: every device that resolved), keyed and ordered by name."""
    selected = sorted(names if names is not None else model.devices)
    return {
        n: device_data(model.devices[n], model, topo)
        for n in selected
        if n in model.devices and (model.devices[n].is_host or n in topo.switches)
    }
