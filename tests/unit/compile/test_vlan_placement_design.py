"""VLANs placed on all leaves, on named pods or on named leaves (a storage VLAN), rendered on each switch platform:
the VLAN, its SVI with the leaf's gateway from the VLAN's pool (the leaf's ``data.id``-th subnet) and the BGP network,
on the leaves chosen and on no other switch; GPU hosts route to its pool through their fabric NICs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.render import render

ROOT = Path(__file__).resolve().parents[3]
STORAGE = {"id": 300, "name": "STORAGE", "leaves": ["leaf1", "leaf3", "leaf4"], "subnet_pool": "10.30.0.0/16"}
SERVICE = {"id": 301, "name": "SERVICE", "leaves": "all", "subnet_pool": "10.31.0.0/16", "prefix_length": 26}


def _with_vlans(tmp_path: Path, base: str, *vlans: dict) -> Path:
    inv = tmp_path / "inventory"
    shutil.copytree(ROOT / base, inv)
    fabric = yaml.safe_load((inv / "fabric.yaml").read_text())
    fabric["vlans"] += list(vlans)
    (inv / "fabric.yaml").write_text(yaml.safe_dump(fabric, sort_keys=False))
    return inv


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    compiled = compile_inventory(_with_vlans(tmp_path_factory.mktemp("placed"), "inventory", STORAGE, SERVICE))
    assert not compiled.problems.warnings
    return {name: render(data) for name, data in compiled.data.items()}


def test_cumulus_renders_a_placed_vlan_with_its_svi(example: dict[str, str]) -> None:
    text = example["leaf1"]  # Cumulus, data.id 1: the first /24 of the pool
    assert '"vlan300":\n        type: "svi"\n        vlan: 300\n' in text
    assert '"10.30.0.1/24": {}' in text and '"300": {}' in text
    assert '"10.31.0.1/26": {}' in text and '"301": {}' in text
    assert "10.30.0.0/24" in text  # announced in BGP


def test_eos_renders_a_placed_vlan_with_its_svi(example: dict[str, str]) -> None:
    text = example["leaf3"]  # EOS, data.id 3
    assert "vlan 300\n   name STORAGE\n!" in text
    assert "interface Vlan300\n   mtu 9214\n   ip address 10.30.2.1/24\n" in text
    assert "interface Vlan301\n   mtu 9214\n   ip address 10.31.0.129/26\n" in text
    assert "   network 10.30.2.0/24\n" in text and "   network 10.31.0.128/26\n" in text


def test_nxos_renders_a_placed_vlan_with_its_svi(example: dict[str, str]) -> None:
    text = example["leaf4"]  # NX-OS, data.id 4
    assert "vlan 300\n  name STORAGE\n" in text
    assert "interface Vlan300\n  mtu 9216\n  ip address 10.30.3.1/24\n  no shutdown\n" in text
    assert "interface Vlan301\n  mtu 9216\n  ip address 10.31.0.193/26\n" in text
    assert "network 10.30.3.0/24" in text


def test_a_placed_vlan_is_on_the_leaves_chosen_and_nowhere_else(example: dict[str, str]) -> None:
    assert "300" not in example["leaf2"].replace("65300", "")  # not named
    assert '"301": {}' in example["leaf2"]  # every leaf
    for other in ("spine1", "spine2"):
        assert "10.30." not in example[other] and "STORAGE" not in example[other]
    # a GPU host reaches the pool through each fabric NIC's own table, as it reaches the rails' pools
    assert '"10.30.0.0/16 via 10.101.0.1 dev ens1f0np0 table 100"' in example["gpu01"]


def test_a_vlan_on_a_pod_lands_on_that_pods_leaves_only(tmp_path: Path) -> None:
    vlan = {"id": 300, "name": "STORAGE", "pods": ["pod2"], "subnet_pool": "10.30.0.0/16"}
    compiled = compile_inventory(_with_vlans(tmp_path, "examples/two-pods", vlan))
    assert not compiled.problems.errors, compiled.problems.errors
    placed = {n for n, d in compiled.data.items() if any(v["id"] == 300 for v in d.get("vlans", []))}
    leaves = {n for n, d in compiled.data.items() if d["role"] == "leaf"}
    assert placed == {n for n in leaves if n.startswith("p2-")} and placed
