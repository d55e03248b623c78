"""``fabconf preflight --bandwidth``: an ``ib_send_bw`` pair matrix over the RoCE GID and traffic class.

Pairs: for each lane (a rail; a dual-homed host has two NICs, two lanes, per rail), every host's NIC with the
next host's NIC in the same lane (a ring, so every NIC sends and receives), and every host's lane-k NIC with the
next host's lane-(k+1) NIC (cross-rail, or across the leaf pair: through the spines). Rounds: a host is in at
most one pair per round, and a leaf carries at most as many cross-leaf flows per round as it has uplinks (with
ECMP the uplink a flow takes is the switch's hash, so this is the bound that can be kept without steering).

A pair below ``threshold`` x its line rate (the slower NIC's speed) is bad. The links of each bad pair are
counted (its two host links exactly; between leaves "an uplink of LEAF"); the links every bad pair shares, or
else the most common ones, are named as the suspects.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from fabconf.platform.linux.plan import sh

DEFAULT_THRESHOLD = 0.9
DEFAULT_SECONDS = 2


@dataclass(frozen=True)
class Endpoint:
    host: str
    netdev: str
    rdma: str
    address: str
    rail: int
    leaf: str
    speed: int
    gid_index: int
    tclass: int

    @property
    def link(self) -> str:
        return f"{self.host}:{self.netdev}--{self.leaf}"


@dataclass(frozen=True)
class Pair:
    client: Endpoint
    server: Endpoint

    @property
    def kind(self) -> str:
        return "same-rail" if self.client.rail == self.server.rail else "cross-rail"

    @property
    def line_rate(self) -> int:
        return min(self.client.speed, self.server.speed)

    def links(self) -> list[str]:
        out = [self.client.link, self.server.link]
        if self.client.leaf != self.server.leaf:
            out += [f"an uplink of {self.client.leaf}", f"an uplink of {self.server.leaf}"]
        return out


@dataclass
class Measured:
    pair: Pair
    gbps: float | None  # None: the run failed
    error: str = ""


@dataclass
class Matrix:
    results: list[Measured] = field(default_factory=list)
    rounds: int = 0
    threshold: float = DEFAULT_THRESHOLD

    def bad(self) -> list[Measured]:
        return [m for m in self.results if m.gbps is None or m.gbps < self.threshold * m.pair.line_rate]

    def suspects(self) -> list[str]:
        bad = self.bad()
        if not bad:
            return []
        counts = Counter(link for m in bad for link in set(m.pair.links()))
        shared = sorted(link for link, n in counts.items() if n == len(bad))
        if shared:
            return shared
        top = max(counts.values())
        return sorted(link for link, n in counts.items() if n == top)


def endpoints(data: dict[str, dict[str, Any]]) -> list[Endpoint]:
    out = []
    for host, d in sorted(data.items()):
        nccl = d.get("nccl") or {}
        for nic in d.get("nics", []):
            out.append(
                Endpoint(
                    host,
                    nic["netdev"],
                    nic["rdma"],
                    str(nic.get("address") or "").split("/")[0],
                    int(nic.get("rail", 0)),
                    str(nic.get("leaf", "")),
                    int(nic.get("speed_gbps") or 400),
                    int(nccl.get("NCCL_IB_GID_INDEX", 3)),
                    int(nccl.get("NCCL_IB_TC", 0)),
                )
            )
    return out


def _lanes(eps: list[Endpoint]) -> dict[tuple[int, int], list[Endpoint]]:
    """NICs grouped by (rail, k): the k-th NIC of a host on that rail (dual-homed hosts have two per rail)."""
    lanes: dict[tuple[int, int], list[Endpoint]] = {}
    seen: Counter[tuple[str, int]] = Counter()
    for ep in sorted(eps, key=lambda e: (e.host, e.rail, e.netdev)):
        lanes.setdefault((ep.rail, seen[(ep.host, ep.rail)]), []).append(ep)
        seen[(ep.host, ep.rail)] += 1
    return lanes


def plan_pairs(eps: list[Endpoint]) -> list[Pair]:
    lanes = _lanes(eps)
    keys = sorted(lanes)
    pairs: list[Pair] = []
    for key in keys:
        ring = lanes[key]
        if len(ring) > 1:
            pairs += [Pair(ring[i], ring[(i + 1) % len(ring)]) for i in range(len(ring))]
    if len(keys) > 1:  # each host's NIC of one lane to the next host's NIC of the next lane
        hosts = sorted({e.host for e in eps})
        at = {(e.host, key): e for key in keys for e in lanes[key]}
        for i, host in enumerate(hosts):
            nxt = hosts[(i + 1) % len(hosts)]
            for k, key in enumerate(keys):
                a, b = at.get((host, key)), at.get((nxt, keys[(k + 1) % len(keys)]))
                if a is not None and b is not None and a.host != b.host:
                    pairs.append(Pair(a, b))
    return pairs


def plan_rounds(pairs: list[Pair], uplinks: dict[str, int]) -> list[list[Pair]]:
    left, rounds = list(pairs), []
    while left:
        busy: set[str] = set()
        flows: Counter[str] = Counter()
        this, rest = [], []
        for p in left:
            crossing = p.client.leaf != p.server.leaf
            leaves = (p.client.leaf, p.server.leaf) if crossing else ()
            fits = all(flows[leaf] < max(1, uplinks.get(leaf, 1)) for leaf in leaves)
            if p.client.host in busy or p.server.host in busy or not fits:
                rest.append(p)
                continue
            busy |= {p.client.host, p.server.host}
            flows.update(leaves)
            this.append(p)
        rounds.append(this)
        left = rest
    return rounds


class Runner(Protocol):
    def read_tools(self, commands: list[str], *, root: bool = False) -> dict[str, tuple[int, str]]: ...

    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, str]: ...


NOT_LISTENING = "Couldn't connect to"  # perftest's client, when nothing listens at the server's port
SERVER_WAIT_S = 10.0  # how long a client waits for its server to listen
RETRY_PAUSE_S = 0.2
_AVERAGE = re.compile(r"^\s*\d+\s+\d+\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s*$", re.M)


def _base(ep: Endpoint, seconds: int) -> list[str]:
    return ["ib_send_bw", "-d", ep.rdma, "-x", str(ep.gid_index), "--tclass", str(ep.tclass), "-D", str(seconds)]


def measure(pair: Pair, drivers: dict[str, Runner], seconds: int) -> Measured:
    server = sh(*_base(pair.server, seconds), "--report_gbits", "-F") + " >/dev/null 2>&1 &"
    client = sh(*_base(pair.client, seconds), "--report_gbits", "-F", pair.server.address)
    try:
        drivers[pair.server.host].cli([server])  # its own exec: the server goes to the background
        # the server opens its device before it listens: the client waits for it, connecting again while refused
        deadline = time.monotonic() + SERVER_WAIT_S
        while True:
            status, text = drivers[pair.client.host].read_tools([client])[client]
            if status == 0 or NOT_LISTENING not in text or time.monotonic() >= deadline:
                break
            time.sleep(RETRY_PAUSE_S)
    except Exception as exc:
        return Measured(pair, None, f"{type(exc).__name__}: {exc}")
    found = _AVERAGE.findall(text)
    if status != 0 or not found:
        return Measured(pair, None, text.strip().splitlines()[-1] if text.strip() else f"exit {status}")
    return Measured(pair, float(found[-1]))


def run_matrix(
    eps: list[Endpoint],
    drivers: dict[str, Runner],
    uplinks: dict[str, int],
    threshold: float = DEFAULT_THRESHOLD,
    seconds: int = DEFAULT_SECONDS,
    progress: Callable[[str], None] | None = None,
) -> Matrix:
    rounds = plan_rounds(plan_pairs(eps), uplinks)
    matrix = Matrix(rounds=len(rounds), threshold=threshold)
    for number, pairs in enumerate(rounds, start=1):
        if progress is not None:
            progress(f"round {number}/{len(rounds)}: {len(pairs)} pair(s)")
        with ThreadPoolExecutor(max_workers=max(1, len(pairs))) as pool:
            matrix.results += list(pool.map(lambda p: measure(p, drivers, seconds), pairs))
    return matrix


def as_dict(matrix: Matrix) -> dict[str, Any]:
    return {
        "rounds": matrix.rounds,
        "threshold": matrix.threshold,
        "pairs": [
            {
                "client": f"{m.pair.client.host}:{m.pair.client.netdev}",
                "server": f"{m.pair.server.host}:{m.pair.server.netdev}",
                "kind": m.pair.kind,
                "line_rate_gbps": m.pair.line_rate,
                "gbps": m.gbps,
                "ok": m not in matrix.bad(),
                "error": m.error,
            }
            for m in matrix.results
        ],
        "bad": len(matrix.bad()),
        "suspects": matrix.suspects(),
    }
