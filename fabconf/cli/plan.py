"""``fabconf plan``: size a non-blocking Clos for a cluster from its nodes and the switches' ports."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fabconf.compile.pipeline import compile_inventory
from fabconf.plan import sizing as plan
from fabconf.plan import write as plan_write


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plan",
        help="size the Clos for a cluster: tiers, leaves, spines, super-spines, pods, ECMP, cables and optics",
        description="Derive a non-blocking leaf-spine (or three-tier) fabric from port counts. An impossible "
        "cluster is refused with the largest size these switches can build.",
    )
    p.add_argument("--nodes", type=int, required=True, help="GPU nodes")
    p.add_argument("--gpus-per-node", type=int, default=8)
    p.add_argument("--nics-per-node", type=int, default=8, help="RoCE NICs (ports) per node")
    p.add_argument("--nic-gbps", type=int, default=400)
    p.add_argument("--nodes-per-rack", type=int, default=4)
    p.add_argument("--attachment", choices=["rail_optimised", "dual_homed"], default="rail_optimised")
    p.add_argument("--leaf-ports", type=int, default=64)
    p.add_argument("--spine-ports", type=int, default=64, help="ports of a spine (and of a super-spine)")
    p.add_argument("--port-gbps", type=int, default=400)
    p.add_argument("--format", choices=["table", "json", "csv"], default="table")
    p.add_argument("--write", metavar="DIR", help="also write a complete inventory for the plan to DIR (validated)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    spec = plan.ClusterSpec(
        nodes=args.nodes,
        nics_per_node=args.nics_per_node,
        gpus_per_node=args.gpus_per_node,
        nic_gbps=args.nic_gbps,
        nodes_per_rack=args.nodes_per_rack,
        attachment=args.attachment,
        leaf_ports=args.leaf_ports,
        spine_ports=args.spine_ports,
        port_gbps=args.port_gbps,
    )
    result = plan.plan(spec)
    render = {"table": plan.as_table, "json": plan.as_json, "csv": plan.as_csv}[args.format]
    sys.stdout.write(render(result))
    for warning in result.warnings:
        print(f"fabconf plan: warning: {warning}", file=sys.stderr)
    if args.write:
        directory = Path(args.write)
        plan_write.write(spec, result, directory)
        compiled = compile_inventory(directory)  # an invalid result is reported like any inventory's problems
        print(f"fabconf plan: wrote {directory}/ ({len(compiled.data)} devices); it validates", file=sys.stderr)
    return 0
