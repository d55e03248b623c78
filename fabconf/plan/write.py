"""``fabconf plan --write DIR``: a complete, valid inventory for a plan.

The switches are one generic model per port count on Cumulus (``swp1``.. ``swpN``) [U: the plan is
vendor-neutral; change ``platform`` and ``model`` in groups.yaml for other switches, keeping the port names
the platform uses]. Leaves use their first half of ports for hosts and the second half for uplinks; a spine its
first half down and (three tiers) its second half up. Rail-optimised: NIC *n* of a node goes to a rail-*n*
leaf, in node order. Pools are sized from the plan: a /26 per leaf in each rail's VLAN pool (32 hosts), /31s for
every fabric link, loopbacks per tier; management addresses come from 100.64.0.0/10 [U: replace with yours].
"""

from __future__ import annotations

import ipaddress
import math
from pathlib import Path
from typing import Any

import yaml

from fabconf.plan.sizing import ClusterPlan, ClusterSpec
from fabconf.private import write_file

MGMT = ipaddress.IPv4Network("100.64.0.0/10")
HOST_PREFIX = 26  # a leaf's subnet in its rail's VLAN: 61 addresses for 32 hosts


def _pool(start: int, size: int) -> tuple[ipaddress.IPv4Network, int]:
    """The smallest aligned network of at least ``size`` addresses at or after ``start``; and where the next
    pool may start."""
    bits = max(0, math.ceil(math.log2(max(size, 1))))
    block = 1 << bits
    base = -(-start // block) * block
    return ipaddress.IPv4Network((base, 32 - bits)), base + block


def inventory(spec: ClusterSpec, plan: ClusterPlan) -> dict[str, Any]:
    """The five files as documents (hosts, groups, defaults, fabric, cabling)."""
    down = spec.leaf_ports // 2
    rails = spec.nics_per_node
    hosts: dict[str, Any] = {}
    links: list[list[str]] = []
    mgmt = iter(MGMT.hosts())
    pods = [f"pod{p + 1}" for p in range(plan.pods)]
    three = plan.tiers == 3

    def add(name: str, groups: list[str], data: dict[str, Any]) -> None:
        hosts[name] = {"hostname": str(next(mgmt)), "groups": groups, "data": data}

    for i in range(plan.super_spines):
        add(f"ss{i + 1}", ["super_spines", "spine_model"], {"id": i + 1})
    spines_of: dict[str, list[str]] = {}
    for p, pod in enumerate(pods):
        for j in range(plan.spines_per_pod):
            sid = p * plan.spines_per_pod + j + 1
            name = f"spine{sid}"
            add(name, ["spines", "spine_model"], {"id": sid, "pod": pod})
            spines_of.setdefault(pod, []).append(name)
    leaves_per_rail = plan.leaves // rails
    for lid in range(1, plan.leaves + 1):
        pod = pods[(lid - 1) // plan.leaves_per_pod] if three else pods[0]
        add(f"leaf{lid}", ["leaves", "leaf_model"], {"id": lid, "pod": pod})
        spines = spines_of[pod]
        index_in_pod = (lid - 1) % plan.leaves_per_pod
        for u in range(down):  # uplink u -> spine u // links_per_pair, that pair's (u % links_per_pair)-th link
            spine = spines[u // plan.links_per_leaf_spine_pair]
            spine_port = index_in_pod * plan.links_per_leaf_spine_pair + u % plan.links_per_leaf_spine_pair + 1
            links.append([f"leaf{lid}:swp{down + u + 1}", f"{spine}:swp{spine_port}"])
    if three:
        spine_up = spec.spine_ports // 2
        per_pod = plan.spines_per_pod * spine_up // plan.super_spines  # a super-spine's ports into one pod
        for p, pod in enumerate(pods):
            for j, spine in enumerate(spines_of[pod]):
                for u in range(spine_up):
                    g = j * spine_up + u
                    ss, port = g % plan.super_spines + 1, p * per_pod + g // plan.super_spines + 1
                    links.append([f"{spine}:swp{spine_up + u + 1}", f"ss{ss}:swp{port}"])
    for n in range(spec.nodes):
        name = f"gpu{n + 1:05d}"
        add(name, ["gpu_hosts"], {"id": n + 1, "rack": f"rack{n // spec.nodes_per_rack + 1}"})
        for r in range(rails):  # rail r's leaves are leaf r*leaves_per_rail+1 .. (r+1)*leaves_per_rail
            leaf = r * leaves_per_rail + n // down + 1
            links.append([f"{name}:ens{r + 1}f0np0", f"leaf{leaf}:swp{n % down + 1}"])
    groups = {
        "super_spines": {"data": {"role": "super_spine"}},
        "spines": {"data": {"role": "spine"}},
        "leaves": {"data": {"role": "leaf"}},
        "gpu_hosts": {
            "platform": "linux",
            "data": {
                "role": "gpu_host",
                "nics": [
                    {"netdev": f"ens{r + 1}f0np0", "rdma": f"mlx5_{r}", "rail": r, "speed_gbps": spec.nic_gbps}
                    for r in range(rails)
                ],
            },
        },
        "leaf_model": {"platform": "cumulus", "data": {"model": "SN5600", "ports": [f"swp{{1-{spec.leaf_ports}}}"]}},
        "spine_model": {"platform": "cumulus", "data": {"model": "SN5600", "ports": [f"swp{{1-{spec.spine_ports}}}"]}},
    }
    if not three:
        del groups["super_spines"]
    return {
        "hosts.yaml": hosts,
        "groups.yaml": groups,
        "defaults.yaml": {"data": {"site": "planned"}},
        "fabric.yaml": _fabric(spec, plan, pods),
        "cabling.yaml": {"links": links},
    }


def _fabric(spec: ClusterSpec, plan: ClusterPlan, pods: list[str]) -> dict[str, Any]:
    down = spec.leaf_ports // 2
    start = int(ipaddress.IPv4Address("10.0.0.0"))
    vlans = []
    for r in range(spec.nics_per_node):
        # leaf ids index the pool (fabric-wide ids): room for every leaf's /26
        pool, start = _pool(start, plan.leaves * (1 << (32 - HOST_PREFIX)))
        vlans.append(
            {"id": 101 + r, "name": f"TRAIN_RAIL{r}", "rail": r, "subnet_pool": str(pool), "prefix_length": HOST_PREFIX}
        )
    p2p, start = _pool(start, plan.leaves * down * 2)
    spine_p2p, start = _pool(start, plan.spines * (spec.spine_ports // 2) * 2)
    fabric: dict[str, Any] = {
        "name": "planned",
        "roce": {
            "dscp": 26,
            "priority": 3,
            "pfc_priorities": [3],
            "cnp": {"dscp": 48, "priority": 6},
            "ecn": {"min_threshold_bytes": 150000, "max_threshold_bytes": 1500000, "probability": 100},
        },
        "mtu": {"host": 9000, "switch": 9216},
        "vlans": vlans,
        "ecmp": {
            "max_paths": {
                "leaf": plan.ecmp_leaf,
                "spine": max(plan.ecmp_spine, 1),
                "super_spine": max(plan.ecmp_super_spine, 1),
            }
        },
        "bgp": {"spine_asn": 65100, "leaf_asn_base": 4200000000},
        "addressing": {
            "loopbacks": {"spine": "10.255.0.0/19", "leaf": "10.255.32.0/19"},
            "p2p_pool": str(p2p),
            "uplinks_per_leaf": down,
        },
    }
    if plan.tiers == 3:
        fabric["pods"] = {pod: {"id": i + 1} for i, pod in enumerate(pods)}
        fabric["bgp"]["super_spine_asn"] = 65000
        fabric["addressing"]["loopbacks"]["super_spine"] = "10.255.64.0/19"
        fabric["addressing"]["spine_p2p_pool"] = str(spine_p2p)
        fabric["addressing"]["uplinks_per_spine"] = spec.spine_ports // 2
    return fabric


def write(spec: ClusterSpec, plan: ClusterPlan, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, doc in inventory(spec, plan).items():
        path = directory / name
        text = f"# written by `fabconf plan --write` for {spec.nodes} nodes\n" + yaml.safe_dump(doc, sort_keys=False)
        write_file(path, text)  # final mode, never through a symbolic link (Unwritable: file and why)
        written.append(path)
    return written
