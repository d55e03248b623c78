"""The GPU host's comparable documents printed without PyYAML's emitter: byte for byte what yaml.dump prints."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fabconf.platform.linux import fastyaml
from fabconf.platform.linux.state import _block_yaml, comparable_documents

WORDS = [
    "",
    "dscp",
    "pcp",
    "0,0,0,1,0,0,0,0",
    "True",
    "False",
    "true",
    "yes",
    "no",
    "off",
    "null",
    "~",
    "0",
    "1",
    "010",
    "0x1f",
    "1.5",
    "1e3",
    ".inf",
    "2026-12-05",
    "12:30",
    "10.0.0.1/31",
    "ens1f0np0",
    "mlx5_0",
    "leaf1:Ethernet1",
    "a: b",
    "a #b",
    "#c",
    "- x",
    "-x",
    "? q",
    ":x",
    "x:",
    "[a]",
    "{a}",
    "a,b",
    "*ref",
    "&anchor",
    "!tag",
    "|",
    ">",
    "'quoted'",
    '"dq"',
    "it's",
    "back\\slash",
    "%pct",
    "@at",
    "`tick",
    " lead",
    "trail ",
    "two  spaces",
    "tab\there",
    "é unicode",
    "日本",
    "\u2028sep",
    "bell\x07",
    "NCCL_IB_HCA=mlx5_0,mlx5_1\nNCCL_IB_TC=106\n",
    "one\n",
    "no trailing\nbreak",
    "two breaks\n\n",
    "\nleading break\n",
    "  indented\nblock\n",
    "trailing space \nline\n",
    "empty\n\nline\n",
    "10.0.0.0/8 via 10.1.0.1 dev ens1f0np0 table 101",
    "32765: from 10.1.0.2 lookup 101",
    "net.ipv4.conf.ens1f0np0.arp_announce",
    "x" * 90,
    "word " * 30,
    "y" * 130,
]
KEYS = [w for w in WORDS if "\n" not in w][:40] + ["hostname", "nics", "qos", "mlxconfig", "ADVANCED_PCI_SETTINGS"]


def _scalar(rng: random.Random) -> Any:
    kind = rng.random()
    if kind < 0.55:
        return rng.choice(WORDS[:-3] if rng.random() < 0.95 else WORDS)
    if kind < 0.75:
        return rng.choice([0, 1, -1, 7, 9000, 4096, 10**12])
    if kind < 0.85:
        return rng.choice([True, False])
    if kind < 0.995:
        return None
    return rng.choice([1.5, 0.0])  # outside the fast path's shapes: printed by PyYAML


def _doc(rng: random.Random, depth: int) -> Any:
    kind = rng.random()
    if depth > 3 or kind < 0.4:
        return _scalar(rng)
    if kind < 0.7:
        return {rng.choice(KEYS): _doc(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    if kind < 0.85:
        return [_scalar(rng) for _ in range(rng.randint(0, 5))]  # mostly flow
    return [_doc(rng, depth + 1) for _ in range(rng.randint(0, 4))]


@pytest.mark.parametrize("seed", range(8))
def test_block_dump_prints_what_yaml_dump_prints(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(400):
        doc = {rng.choice(KEYS): _doc(rng, 0) for _ in range(rng.randint(0, 6))}
        assert fastyaml.block_dump(doc, _block_yaml) == _block_yaml(doc), doc


def test_block_dump_takes_the_fast_path_for_a_host_document() -> None:
    doc = {
        "hostname": "gpu-001",
        "nics": [
            {"netdev": "ens1f0np0", "rdma": "mlx5_0", "mtu": 9000, "address": "10.1.0.2/31"},
            {"netdev": "ens2f0np0", "rdma": "mlx5_1", "mtu": 9000, "address": None, "mlxconfig": {}},
        ],
        "qos": {"trust": "dscp", "pfc": "0,0,0,1,0,0,0,0", "dscp2prio": [[d, d >> 3] for d in range(64)]},
        "ecn": {"roce_np_enable": [3], "roce_rp_enable": [], "cnp_dscp": 48},
        "roce_tos": {"cma_roce_tos": 106, "traffic_class": 0},
        "mlxconfig": {"ROCE_CC_PRIO_MASK_P1": "255", "LINK_TYPE_P1": "ETH(2)", "ADVANCED_PCI_SETTINGS": "True"},
        "nccl_conf": "NCCL_IB_HCA=mlx5_0,mlx5_1\nNCCL_IB_TC=106\n",
        "routing": {"rules": ["32765: from 10.1.0.2 lookup 101"], "routes": []},
        "sysctl": {"net.ipv4.conf.ens1f0np0.arp_announce": 2},
    }
    calls: list[Any] = []

    def dump(value: Any) -> str:
        calls.append(value)
        return _block_yaml(value)

    assert fastyaml.block_dump(doc, dump) == _block_yaml(doc)
    assert doc not in calls  # each scalar asked once, never the whole document
    again = len(calls)
    assert fastyaml.block_dump(doc, dump) == _block_yaml(doc)
    assert len(calls) == again  # the second host's document asks nothing


def test_comparable_documents_unchanged() -> None:
    running = {"hostname": "h", "qos": {"trust": "pcp", "pfc": "0,0,0,0,0,0,0,0"}, "roce_tos": 0, "extra": 1}
    desired = {"hostname": "h", "qos": {"trust": "dscp", "pfc": "0,0,0,1,0,0,0,0"}, "roce_tos": 106}
    before, after = comparable_documents(running, desired)
    assert before == "hostname: h\nqos:\n  trust: pcp\n  pfc: 0,0,0,0,0,0,0,0\nroce_tos: 0\n"
    assert after == "hostname: h\nqos:\n  trust: dscp\n  pfc: 0,0,0,1,0,0,0,0\nroce_tos: 106\n"
