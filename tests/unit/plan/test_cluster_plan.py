"""`fabconf plan` sizes a non-blocking Clos from port counts; the arithmetic is in the comments. Nodes of 8
GPUs with 8 x 400G RoCE NICs, 64 x 400G switches, 4 nodes per rack, unless a case says otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabconf.cli import main
from fabconf.compile.pipeline import compile_inventory
from fabconf.plan.sizing import ClusterSpec, PlanError, plan


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        # 64 nodes x 8 NICs = 512 host ports; a leaf has 32 down / 32 up -> 16 leaves, two tiers (16 <= 64 spine
        # ports); 16 x 32 = 512 uplinks over the fewest spines with room: ceil(512 / 64) = 8 spines (8 divides 32,
        # so 4 links per leaf-spine pair); optics 2 x 512.
        (
            64,
            {"tiers": 2, "leaves": 16, "spines": 8, "super_spines": 0, "links_per_leaf_spine_pair": 4, "optics": 1024},
        ),
        # 128 nodes: 1024 ports -> 32 leaves; 32 x 32 = 1024 uplinks / 64 = 16 spines, 2 links per pair.
        (128, {"tiers": 2, "leaves": 32, "spines": 16, "links_per_leaf_spine_pair": 2, "racks": 32}),
        # 1024 nodes: 8192 ports -> 256 leaves > 64: three tiers. A pod is 32 leaves (a spine's 32 downlinks) and
        # 32 spines (a leaf's 32 uplinks): 8 pods, 256 spines; 256 x 32 = 8192 spine uplinks / 64 = 128
        # super-spines, each with 64 / 8 = 8 links into a pod.
        (
            1024,
            {
                "tiers": 3,
                "leaves": 256,
                "pods": 8,
                "spines": 256,
                "super_spines": 128,
                "ecmp_super_spine": 8,
                "ecmp_spine": 32,
                "ecmp_leaf": 32,
                "optics": 2 * (8192 + 8192),
            },
        ),
        # 8192 nodes: 65536 ports -> 2048 leaves -> 64 pods (the most a 64-port super-spine reaches), 2048 spines,
        # 2048 x 32 / 64 = 1024 super-spines with one link into each pod.
        (8192, {"tiers": 3, "pods": 64, "spines": 2048, "super_spines": 1024, "ecmp_super_spine": 1, "gpus": 65536}),
    ],
)
def test_plan_sizes(nodes: int, expected: dict[str, int]) -> None:
    result = plan(ClusterSpec(nodes=nodes))
    assert {k: getattr(result, k) for k in expected} == expected
    assert result.oversubscription == "1:1"


def test_the_two_tier_limit_follows_the_ports_not_a_fixed_count() -> None:
    # 64-port spines reach 64 leaves = 64 x 32 / 8 = 256 nodes in two tiers; 32-port switches reach 32 leaves of
    # 16 host ports = 64 nodes (the article's line).
    assert plan(ClusterSpec(nodes=256)).tiers == 2 and plan(ClusterSpec(nodes=257)).tiers == 3
    small = ClusterSpec(nodes=64, leaf_ports=32, spine_ports=32)
    assert plan(small).tiers == 2 and plan(ClusterSpec(nodes=65, leaf_ports=32, spine_ports=32)).tiers == 3


def test_dual_homed_takes_two_leaf_ports_per_nic_and_pairs_of_leaves() -> None:
    # 10 nodes x 1 NIC x 2 ports = 20 ports -> ceil(20 / 32) = 1 leaf -> a pair: 2.
    result = plan(ClusterSpec(nodes=10, nics_per_node=1, attachment="dual_homed"))
    assert result.host_ports == 20 and result.leaves == 2


def test_an_impossible_cluster_is_refused_with_the_largest_that_works() -> None:
    with pytest.raises(PlanError, match="these switches build at most 8192 nodes"):
        plan(ClusterSpec(nodes=16384))
    with pytest.raises(PlanError, match="breakouts are not planned"):
        plan(ClusterSpec(nodes=8, nic_gbps=800))


def test_cli_formats_and_refusal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--nodes", "128", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["spines"] == 16
    assert main(["plan", "--nodes", "128", "--format", "csv"]) == 0
    assert "leaves,32" in capsys.readouterr().out
    assert main(["plan", "--nodes", "128"]) == 0
    assert "tiers" in capsys.readouterr().out
    assert main(["plan", "--nodes", "100000"]) == 1
    err = capsys.readouterr().err
    assert "nearest sizes that work" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "devices", "rail_leaf", "uplinks"),
    [
        # 64 nodes of 8 NICs, 64-port switches: 16 leaves (2 per rail), 8 spines; NIC 3 of node 1 on leaf 3*2+1
        (["--nodes", "64"], 16 + 8 + 64, ("ens4f0np0", "leaf7"), 32),
        # three tiers small enough for the unit layer: 72 nodes of 2 NICs on 16-port switches -> 2 x 9 = 18 leaves
        # (> 16), pods of 8 leaves -> 3 pods of 8 spines = 24; 3 x 8 x 8 = 192 spine uplinks need 12 super-spines,
        # but a pod's 64 uplinks must split evenly: 16 super-spines with 4 links into each pod; NIC 2 of node 1 on
        # leaf 9+1
        (
            ["--nodes", "72", "--nics-per-node", "2", "--leaf-ports", "16", "--spine-ports", "16"],
            18 + 24 + 16 + 72,
            ("ens2f0np0", "leaf10"),
            8,
        ),
    ],
)
def test_plan_write_is_a_valid_inventory_that_renders(
    tmp_path: Path, args: list[str], devices: int, rail_leaf: tuple[str, str], uplinks: int
) -> None:
    out = tmp_path / "planned"
    assert main(["plan", *args, "--format", "json", "--write", str(out)]) == 0
    compiled = compile_inventory(out)
    assert len(compiled.data) == devices
    leaf = compiled.data["leaf1"]
    # every leaf uplink to a spine of its pod, as many ECMP paths as uplinks; hosts on their rail's leaf
    assert len([i for i in leaf["interfaces"] if i["kind"] == "uplink"]) == uplinks
    assert leaf["bgp"]["max_paths"] == uplinks
    netdev, expected = rail_leaf
    assert next(n["leaf"] for n in compiled.data["gpu00001"]["nics"] if n["netdev"] == netdev) == expected
    if len(compiled.topology.pods) > 1:  # three tiers: a leaf expects one path per spine to a leaf of another pod
        assert {c["paths"] for c in leaf["verify"]["ecmp"]} == {uplinks}
    assert main(["render", "-i", str(out), "-o", str(tmp_path / "r"), "--limit", "leaf1,spine1,gpu00001"]) == 0


def test_plan_write_never_writes_through_a_symbolic_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A link planted at one of the inventory's file names is refused with the file and why, not followed."""
    out, victim = tmp_path / "planned", tmp_path / "victim"
    out.mkdir()
    victim.write_text("precious\n")
    (out / "fabric.yaml").symlink_to(victim)
    assert main(["plan", "--nodes", "128", "--write", str(out)]) == 1
    assert f"{out / 'fabric.yaml'}: cannot write: a symbolic link" in capsys.readouterr().err
    assert victim.read_text() == "precious\n"
