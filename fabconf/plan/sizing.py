"""Sizing a non-blocking Clos for a GPU cluster: ``fabconf plan``.

From the cluster (nodes, RoCE NICs per node and their speed, nodes per rack, rail-optimised or dual-homed) and
the switches (ports and port speed), the plan is derived from port counts, not from a fixed node count:

- every NIC port takes one leaf port at the NIC's speed (dual-homed: two, one on each leaf of a pair); [U] no
  breakout cables are planned, so the NIC speed must not exceed the leaf port speed; rail-optimised, each leaf
  serves one rail (as many leaves per rail as the nodes need host ports);
- a leaf splits its ports half down (hosts) and half up (spines): 1:1, non-blocking for GPU traffic;
- **two tiers** while one spine layer can reach every leaf: a leaf's uplinks are spread evenly over the fewest
  spines that have ports for all leaves (a divisor of the uplink count, so every leaf-spine pair has the same
  number of links);
- **three tiers** beyond: a pod is as many leaves as a spine has downlinks (half its ports), each leaf with one
  link to each of its pod's spines (as many spines as a leaf has uplinks), each spine's other half up to the
  super-spines; super-spines are as many as needed for every spine uplink, and a super-spine needs a port for
  every pod, so the pods are at most a super-spine's port count. Beyond that the plan is refused, with the
  largest size these switches can build.

ECMP widths follow: a leaf's uplinks; a spine's super-spine uplinks; a super-spine's links into one pod.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict, dataclass
from typing import Any

from fabconf.errors import FabconfError


class PlanError(FabconfError):
    """The cluster cannot be built non-blocking from these switches."""


@dataclass(frozen=True)
class ClusterSpec:
    nodes: int
    nics_per_node: int = 8
    gpus_per_node: int = 8
    nic_gbps: int = 400
    nodes_per_rack: int = 4
    attachment: str = "rail_optimised"  # or "dual_homed": two leaf ports per NIC
    leaf_ports: int = 64
    spine_ports: int = 64
    port_gbps: int = 400


@dataclass
class ClusterPlan:
    tiers: int
    nodes: int
    gpus: int
    racks: int
    host_ports: int
    leaves: int
    spines: int
    super_spines: int
    pods: int
    leaves_per_pod: int
    spines_per_pod: int
    links_per_leaf_spine_pair: int
    oversubscription: str
    ecmp_leaf: int
    ecmp_spine: int
    ecmp_super_spine: int
    host_cables: int
    leaf_spine_links: int
    spine_super_spine_links: int
    optics: int
    warnings: list[str]


def _largest(spec: ClusterSpec) -> int:
    """The most nodes these switches can connect non-blocking (three tiers, pods at most a super-spine's ports)."""
    down = spec.leaf_ports // 2
    leaves = spec.spine_ports * (spec.spine_ports // 2)
    ports_per_node = spec.nics_per_node * (2 if spec.attachment == "dual_homed" else 1)
    return leaves * down // ports_per_node


def plan(spec: ClusterSpec) -> ClusterPlan:
    if spec.nodes < 1 or spec.nics_per_node < 1 or spec.leaf_ports < 2 or spec.spine_ports < 2:
        raise PlanError("nodes, NICs per node and switch ports must be positive (switches at least 2 ports)")
    if spec.nic_gbps > spec.port_gbps:
        raise PlanError(f"{spec.nic_gbps}G NICs on {spec.port_gbps}G leaf ports: breakouts are not planned")
    warnings: list[str] = []
    ports_per_node = spec.nics_per_node * (2 if spec.attachment == "dual_homed" else 1)
    host_ports = spec.nodes * ports_per_node
    down, up = spec.leaf_ports // 2, spec.leaf_ports // 2
    if spec.attachment == "rail_optimised":  # each leaf serves one rail: NIC n of every node on a rail-n leaf
        leaves = spec.nics_per_node * math.ceil(spec.nodes / down)
    else:
        leaves = math.ceil(host_ports / down)
        leaves += leaves % 2  # leaf pairs
    if spec.nic_gbps < spec.port_gbps:
        warnings.append(f"{spec.nic_gbps}G NICs on {spec.port_gbps}G ports: 1:1 by port count, spare bandwidth up")
    common: dict[str, Any] = {
        "nodes": spec.nodes,
        "gpus": spec.nodes * spec.gpus_per_node,
        "racks": math.ceil(spec.nodes / spec.nodes_per_rack),
        "host_ports": host_ports,
        "leaves": leaves,
        "oversubscription": "1:1",
        "ecmp_leaf": up,
        "host_cables": host_ports,
        "leaf_spine_links": leaves * up,  # in three tiers the last pod may be partial: its leaves, all its spines
        "warnings": warnings,
    }
    if leaves <= spec.spine_ports:  # two tiers: every leaf reaches every spine
        needed = math.ceil(leaves * up / spec.spine_ports)
        spines = next(d for d in range(needed, up + 1) if up % d == 0)
        return ClusterPlan(
            tiers=2,
            spines=spines,
            super_spines=0,
            pods=1,
            leaves_per_pod=leaves,
            spines_per_pod=spines,
            links_per_leaf_spine_pair=up // spines,
            ecmp_spine=0,
            ecmp_super_spine=0,
            spine_super_spine_links=0,
            optics=2 * leaves * up,
            **common,
        )
    spine_up = spec.spine_ports // 2
    leaves_per_pod = spec.spine_ports // 2  # a spine's downlinks
    spines_per_pod = up  # one link from each leaf to each spine of its pod
    pods = math.ceil(leaves / leaves_per_pod)
    if pods > spec.spine_ports:
        largest = _largest(spec)
        raise PlanError(
            f"{spec.nodes} nodes need {pods} pods, but a {spec.spine_ports}-port super-spine reaches at most "
            f"{spec.spine_ports}: these switches build at most {largest} nodes non-blocking in three tiers "
            f"(nearest sizes that work: {largest} nodes, or larger switches)"
        )
    spine_uplinks = pods * spines_per_pod * spine_up
    # every super-spine takes the same number of links from each pod: the fewest super-spines that have the ports
    # for all spine uplinks and divide a pod's uplinks evenly
    super_spines = math.ceil(spine_uplinks / spec.spine_ports)
    while (spines_per_pod * spine_up) % super_spines:
        super_spines += 1
    return ClusterPlan(
        tiers=3,
        spines=pods * spines_per_pod,
        super_spines=super_spines,
        pods=pods,
        leaves_per_pod=leaves_per_pod,
        spines_per_pod=spines_per_pod,
        links_per_leaf_spine_pair=1,
        ecmp_spine=spine_up,
        ecmp_super_spine=math.ceil(spines_per_pod * spine_up / super_spines),  # its links into one pod
        spine_super_spine_links=spine_uplinks,
        optics=2 * (leaves * up + spine_uplinks),
        **common,
    )


def as_json(result: ClusterPlan) -> str:
    return json.dumps(asdict(result), indent=2) + "\n"


def as_csv(result: ClusterPlan) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["item", "value"])
    for key, value in asdict(result).items():
        writer.writerow([key, "; ".join(value) if isinstance(value, list) else value])
    return out.getvalue()


def as_table(result: ClusterPlan) -> str:
    rows = [(k.replace("_", " "), "; ".join(v) if isinstance(v, list) else str(v)) for k, v in asdict(result).items()]
    width = max(len(k) for k, _v in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows if v != "") + "\n"
