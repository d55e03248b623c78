"""A GPU host's device data: its RoCE NICs (addresses, MTU, QoS, DCQCN, ToS), mlxconfig, NCCL, routing, sysctls."""

from __future__ import annotations

import ipaddress
from functools import cache
from operator import itemgetter
from typing import Any

from fabconf.compile.design.hostnet import MAIN as MAIN_TABLE
from fabconf.compile.design.hostnet import NIC_SYSCTLS, ROUTE_TABLE_BASE, RULE_BASE
from fabconf.compile.design.qos import dscp_priorities, roce_tos
from fabconf.compile.model import Device, Model, natural_key
from fabconf.compile.topology import Topology, dotted


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
    fabric RoCE prefix, and a main-table route to each prefix through the NIC that lives in it. Addresses are
    worked out as integers (``ipaddress`` objects for 80 routes of each of 4,096 hosts cost a second)."""
    prefixes = [(p, _prefix_key(p)) for p in sorted({v["subnet_pool"] for v in fabric["vlans"]}, key=natural_key)]
    pool_of = {v["id"]: v["subnet_pool"] for v in fabric["vlans"]}
    rules: list[dict[str, Any]] = []
    # (sort key, route): the order ``ip route show table all`` lists them in (by table, main last; then by
    # destination, then gateway), so the running and the intended document line up
    keyed: list[tuple[tuple[int, tuple[int, int], str], dict[str, Any]]] = []
    main: dict[str | None, tuple[str, str]] = {}
    for i, hp in enumerate(ports):
        table = ROUTE_TABLE_BASE + i
        source, gateway, netdev = dotted(hp.ip), dotted(hp.gateway_ip), hp.nic.netdev
        rules.append({"priority": RULE_BASE + i, "source": source, "table": table})
        network = hp.ip & (0xFFFFFFFF << (32 - hp.prefix)) & 0xFFFFFFFF
        subnet = f"{dotted(network)}/{hp.prefix}"
        route = {"destination": subnet, "gateway": None, "device": netdev, "source": source, "table": table}
        keyed.append(((table, (network, hp.prefix), ""), route))
        for prefix, key in prefixes:
            route = {"destination": prefix, "gateway": gateway, "device": netdev, "source": None, "table": table}
            keyed.append(((table, key, gateway), route))
        main.setdefault(pool_of.get(hp.vlan), (gateway, netdev))
    for prefix, key in prefixes:
        if prefix in main:
            gateway, netdev = main[prefix]
            route = {"destination": prefix, "gateway": gateway, "device": netdev, "source": None, "table": None}
            keyed.append(((MAIN_TABLE, key, gateway), route))
    keyed.sort(key=itemgetter(0))
    return {"rules": rules, "routes": [route for _, route in keyed]}


def host_data(dev: Device, model: Model, topo: Topology) -> dict[str, Any]:
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
            "address": f"{dotted(hp.ip)}/{hp.prefix}",
            "gateway": dotted(hp.gateway_ip),
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
    # the fabric's one DSCP -> priority map, all 64 entries: the NIC classifies what it receives (and the PFC it
    # sends) exactly as every switch does, not by mlx5's default DSCP / 8
    dscp2prio = [[d, p] for d, p in sorted(dscp_priorities(roce).items())]
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
