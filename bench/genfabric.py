"""Generate a synthetic rail-optimised GPU fabric inventory of any size, for benchmarks and scale tests.

    python bench/genfabric.py OUTDIR --hosts 4096 --rails 8

Every leaf has 64 ports (32 down to GPU NICs, 32 up); spines have 64 ports. Leaves cover one rail each;
spines form planes of 32, each plane serving 64 leaves. Platforms rotate cumulus/eos/nxos. 4096 hosts
with 8 rails = 32,768 GPUs, 1,024 leaves, 512 spines.
"""

from __future__ import annotations

import argparse
import ipaddress
from pathlib import Path

import yaml

PORTS = {"cumulus": "swp{}", "eos": "Ethernet{}/1", "nxos": "Ethernet1/{}"}
MODEL = {"cumulus": "sn5600", "eos": "dcs-7060x5", "nxos": "n9k-9364d"}
PLATFORMS = ("cumulus", "eos", "nxos")
DOWN = 32  # host ports per leaf
UP = 32  # uplinks per leaf
SPINE_PORTS = 64


def fabric_size(hosts: int, rails: int) -> dict[str, int]:
    """How many spines, leaves and hosts ``generate`` writes for ``hosts`` GPU hosts of ``rails`` rails."""
    n_leaves = -(-hosts // DOWN) * rails
    planes = -(-n_leaves // SPINE_PORTS)  # each spine reaches SPINE_PORTS leaves, one link each
    return {"spines": planes * UP, "leaves": n_leaves, "hosts": hosts}


def generate(out: Path, hosts: int, rails: int) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    size = fabric_size(hosts, rails)
    n_leaves, n_spines = size["leaves"], size["spines"]
    leaves_per_rail = n_leaves // rails
    leaves_per_plane = SPINE_PORTS  # each spine reaches this many leaves, one link each
    groups = {
        "spines": {"data": {"role": "spine"}},
        "leaves": {"data": {"role": "leaf"}},
        "gpu_hosts": {
            "platform": "linux",
            "data": {
                "role": "gpu_host",
                "nics": [
                    {"netdev": f"ens{r + 1}f0np0", "rdma": f"mlx5_{r}", "rail": r, "speed_gbps": 400}
                    for r in range(rails)
                ],
            },
        },
        "sn5600": {"platform": "cumulus", "data": {"model": "SN5600", "ports": ["swp{1-64}"]}},
        "dcs-7060x5": {"platform": "eos", "data": {"model": "DCS-7060X5-64PE", "ports": ["Ethernet{1-64}/1"]}},
        "n9k-9364d": {"platform": "nxos", "data": {"model": "N9K-C9364D-GX2A", "ports": ["Ethernet1/{1-64}"]}},
    }
    mgmt = iter(ipaddress.IPv4Network("100.64.0.0/10").hosts())
    hosts_doc: dict[str, dict] = {}
    plat: dict[str, str] = {}
    for s in range(1, n_spines + 1):
        p = PLATFORMS[s % 3]
        plat[f"spine{s}"] = p
        hosts_doc[f"spine{s}"] = {"hostname": str(next(mgmt)), "groups": ["spines", MODEL[p]], "data": {"id": s}}
    for leaf in range(1, n_leaves + 1):
        p = PLATFORMS[leaf % 3]
        plat[f"leaf{leaf}"] = p
        hosts_doc[f"leaf{leaf}"] = {"hostname": str(next(mgmt)), "groups": ["leaves", MODEL[p]], "data": {"id": leaf}}
    for h in range(1, hosts + 1):
        hosts_doc[f"gpu{h:05d}"] = {"hostname": str(next(mgmt)), "groups": ["gpu_hosts"], "data": {"id": h}}
    links = []
    for leaf in range(1, n_leaves + 1):
        plane = (leaf - 1) // leaves_per_plane
        slot = (leaf - 1) % leaves_per_plane + 1
        for u in range(UP):
            spine = plane * UP + u + 1
            links.append(
                [
                    f"leaf{leaf}:{PORTS[plat[f'leaf{leaf}']].format(DOWN + u + 1)}",
                    f"spine{spine}:{PORTS[plat[f'spine{spine}']].format(slot)}",
                ]
            )
    for h in range(1, hosts + 1):
        for r in range(rails):
            leaf = r * leaves_per_rail + (h - 1) // DOWN + 1
            port = (h - 1) % DOWN + 1
            links.append([f"gpu{h:05d}:ens{r + 1}f0np0", f"leaf{leaf}:{PORTS[plat[f'leaf{leaf}']].format(port)}"])
    fabric = {
        "name": "bench",
        "roce": {
            "dscp": 26,
            "priority": 3,
            "pfc_priorities": [3],
            "cnp": {"dscp": 48, "priority": 6},
            "ecn": {"min_threshold_bytes": 150000, "max_threshold_bytes": 1500000, "probability": 100},
        },
        "mtu": {"host": 9000, "switch": 9216},
        "vlans": [
            {
                "id": 100 + r,
                "name": f"TRAIN_RAIL{r}",
                "rail": r,
                "subnet_pool": f"10.{64 + 4 * r}.0.0/14",
                "prefix_length": 24,
            }
            for r in range(rails)
        ],
        "ecmp": {"max_paths": 64},
        "bgp": {"spine_asn": 4200000000, "leaf_asn_base": 4200000000},
        "addressing": {
            "loopbacks": {"spine": "10.250.0.0/20", "leaf": "10.251.0.0/20"},
            "p2p_pool": "10.0.0.0/13",
            "uplinks_per_leaf": UP,
        },
        "hosts": {"gid_index": 3},
    }
    dump = {"width": 200, "sort_keys": False, "Dumper": getattr(yaml, "CSafeDumper", yaml.SafeDumper)}
    (out / "groups.yaml").write_text(yaml.dump(groups, **dump))
    (out / "hosts.yaml").write_text(yaml.dump(hosts_doc, **dump))
    (out / "defaults.yaml").write_text("data: {site: bench}\n")
    (out / "fabric.yaml").write_text(yaml.dump(fabric, **dump))
    (out / "cabling.yaml").write_text(yaml.dump({"links": links}, default_flow_style=None, **dump))
    return {"spines": n_spines, "leaves": n_leaves, "hosts": hosts, "links": len(links), "gpus": hosts * rails}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out", type=Path)
    ap.add_argument("--hosts", type=int, default=4096)
    ap.add_argument("--rails", type=int, default=8)
    a = ap.parse_args()
    print(generate(a.out, a.hosts, a.rails))
