"""Benchmark: the lab World's cost on a genfabric-shaped fabric (``genfabric.py``'s planes of 32 spines and 64
leaves, one BGP session per leaf uplink, GPU hosts on the leaves' down ports), without starting a lab.

    python bench/bench_world.py --hosts 4096 --rails 8      # the 5,632-device fabric; --hosts 256: 1/16 of it

A lab worker works BGP sessions and routes out of every device's view (``fabconf_lab.world``) whenever a view
changed and its snapshot is older than ``world_max_age``; in a push that is all the time, in the worker that runs the
switches, whose HTTPS servers share its one core (GIL) with the derivation. On views shaped like the ones the
simulators publish after a push (leaves: their /31 uplinks, 32 neighbours, a loopback and their hosts' subnet;
spines: 64 neighbours and a loopback; GPU hosts: their NICs) this times a snapshot, the sessions and the routes
(twice: the second time as a running lab works them out, its address strings parsed before), and the questions a
verify asks (``bgp_sessions`` and ``routes`` of every switch); then it prints one JSON line.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from genfabric import DOWN, SPINE_PORTS, UP, fabric_size

from fabconf_lab.world import DeviceView, NeighborView, PortView, World


@dataclass
class Box:
    """A simulator as the World sees it: its view."""

    name: str
    view: DeviceView

    def lab_view(self) -> DeviceView:
        return self.view


def build(hosts: int, rails: int) -> tuple[World, list[str]]:
    """A World of genfabric's fabric for ``hosts`` GPU hosts of ``rails`` rails; returns it and the switches."""
    size = fabric_size(hosts, rails)
    n_leaves, n_spines = size["leaves"], size["spines"]
    spine_asn, leaf_asn = 4200000000, 4200000000
    ports: dict[str, dict[str, PortView]] = {}
    neighbors: dict[str, list[NeighborView]] = {}
    cables: list[tuple[str, str, str, str]] = []
    p2p = iter(ipaddress.IPv4Network("10.0.0.0/13").subnets(new_prefix=31))
    for leaf in range(1, n_leaves + 1):
        plane, slot = (leaf - 1) // SPINE_PORTS, (leaf - 1) % SPINE_PORTS + 1
        for u in range(UP):
            spine = f"spine{plane * UP + u + 1}"
            net = next(p2p)
            lp, sp = f"swp{DOWN + u + 1}", f"swp{slot}"
            cables.append((f"leaf{leaf}", lp, spine, sp))
            ports.setdefault(f"leaf{leaf}", {})[lp] = PortView(lp, True, 9216, f"{net[1]}/31")
            ports.setdefault(spine, {})[sp] = PortView(sp, True, 9216, f"{net[0]}/31")
            neighbors.setdefault(f"leaf{leaf}", []).append(NeighborView(str(net[0]), spine_asn))
            neighbors.setdefault(spine, []).append(NeighborView(str(net[1]), leaf_asn + leaf))
    leaves_per_rail = n_leaves // rails
    for h in range(1, hosts + 1):
        for r in range(rails):
            leaf = r * leaves_per_rail + (h - 1) // DOWN + 1
            cables.append((f"gpu{h:05d}", f"ens{r + 1}f0np0", f"leaf{leaf}", f"swp{(h - 1) % DOWN + 1}"))
            ports.setdefault(f"gpu{h:05d}", {})[f"ens{r + 1}f0np0"] = PortView(f"ens{r + 1}f0np0", True, 9000, None)
    world = World(cables, max_age=0.0)
    switches = []
    for s in range(1, n_spines + 1):
        name = f"spine{s}"
        view = DeviceView(
            name,
            ports[name],
            spine_asn,
            f"10.250.{s // 256}.{s % 256}",
            tuple(neighbors[name]),
            (f"10.250.{s // 256}.{s % 256}/32",),
            64,
        )
        world.register(Box(name, view))
        switches.append(name)
    for leaf in range(1, n_leaves + 1):
        name = f"leaf{leaf}"
        subnet = f"10.{64 + (leaf - 1) // 256}.{(leaf - 1) % 256}.0/24"
        view = DeviceView(
            name,
            ports[name],
            leaf_asn + leaf,
            f"10.251.{leaf // 256}.{leaf % 256}",
            tuple(neighbors[name]),
            (f"10.251.{leaf // 256}.{leaf % 256}/32", subnet),
            64,
        )
        world.register(Box(name, view))
        switches.append(name)
    for h in range(1, hosts + 1):
        world.register(Box(f"gpu{h:05d}", DeviceView(f"gpu{h:05d}", ports[f"gpu{h:05d}"])))
    return world, switches


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=4096)
    ap.add_argument("--rails", type=int, default=8)
    a = ap.parse_args()
    t = time.perf_counter()
    world, switches = build(a.hosts, a.rails)
    out: dict[str, float | int] = {"devices": sum(fabric_size(a.hosts, a.rails).values()), "switches": len(switches)}
    out["build_s"] = round(time.perf_counter() - t, 2)
    t = time.process_time()
    snap = world._take(None)
    out["snapshot_s"] = round(time.process_time() - t, 3)
    for run in ("first", "again"):  # again: a running lab's case (the same address strings, parsed before)
        t = time.process_time()
        established = world._work_out_sessions(snap.views)
        out[f"sessions_{run}_s"] = round(time.process_time() - t, 3)
        t = time.process_time()
        rib = world._work_out_routes(snap.views, established)
        out[f"routes_{run}_s"] = round(time.process_time() - t, 3)
    out["sessions"] = len(established)
    snap.established, snap.rib = established, rib
    world._snapshot, world.max_age = snap, 3600.0
    t = time.process_time()
    for name in switches:
        world.bgp_sessions(name)
        world.routes(name)
    out["questions_ms_per_switch"] = round(1000 * (time.process_time() - t) / len(switches), 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
