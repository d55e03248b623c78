"""The ib_send_bw pair matrix's plan (fabconf.preflight.bandwidth), on both example fabrics: every NIC sends and
receives, same-rail and cross-rail pairs, rounds where a host is in one pair at most and a leaf carries no more
cross-leaf flows than it has uplinks; and which links the bad pairs share."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from pristine import EXAMPLE

from fabconf.compile.pipeline import compile_inventory
from fabconf.preflight.bandwidth import Matrix, Measured, endpoints, plan_pairs, plan_rounds

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("inventory", ["inventory", "examples/two-pods"])
def test_pairs_and_rounds(inventory: str) -> None:
    compiled = compile_inventory(EXAMPLE if inventory == "inventory" else ROOT / inventory)
    hosts = {n: d for n, d in compiled.data.items() if d.get("role") == "gpu_host"}
    uplinks = {
        n: sum(1 for i in d.get("interfaces", []) if i.get("kind") == "uplink") for n, d in compiled.data.items()
    }
    eps = endpoints(hosts)
    pairs = plan_pairs(eps)
    sends, receives = Counter(p.client for p in pairs), Counter(p.server for p in pairs)
    assert set(sends) == set(eps) and set(receives) == set(eps)  # every NIC sends and receives
    assert {p.kind for p in pairs} == {"same-rail", "cross-rail"}
    rounds = plan_rounds(pairs, uplinks)
    assert sorted(map(id, (p for r in rounds for p in r))) == sorted(map(id, pairs))  # each pair exactly once
    for this in rounds:
        hosts_in = [h for p in this for h in (p.client.host, p.server.host)]
        assert len(hosts_in) == len(set(hosts_in))
        flows = Counter(leaf for p in this if p.client.leaf != p.server.leaf for leaf in (p.client.leaf, p.server.leaf))
        assert all(n <= max(1, uplinks[leaf]) for leaf, n in flows.items())


def test_suspects_are_the_links_every_bad_pair_shares() -> None:
    eps = endpoints({n: d for n, d in compile_inventory(EXAMPLE).data.items() if d.get("role") == "gpu_host"})
    pairs = plan_pairs(eps)
    slow = next(e for e in eps if e.host == "gpu03" and e.rail == 0)
    results = [Measured(p, 190.0 if slow in (p.client, p.server) else 385.0) for p in pairs]
    matrix = Matrix(results)
    assert {m.pair for m in matrix.bad()} == {p for p in pairs if slow in (p.client, p.server)}
    assert matrix.suspects() == [slow.link]
    assert Matrix([Measured(p, 385.0) for p in pairs]).suspects() == []
