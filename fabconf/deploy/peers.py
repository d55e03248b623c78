"""Peers outside a run: which of them hold fabconf's intent, so that verify knows which sessions must be up.

A greenfield fabric is brought up in parts (super-spines, then each pod). When the super-spines are pushed, the
pod spines they peer with have never received fabconf's intent, so their sessions cannot be up yet; requiring
them rolled the super-spines back. Before a push or verify, every BGP peer and ECMP target of the selected
devices that is outside the run is read (``get_bgp_neighbors``, read only):

- a peer that has the session configured (its intended neighbour address for the selected device) holds intent:
  the session must come up, and a session that stays down fails the device, as before;
- a peer that lacks it has not received fabconf's intent for that session yet: the session is *pending*, named
  in the device's outcome, and is not a failure of this device;
- a peer that cannot be read counts as holding intent (a down session then fails loudly, never silently).

An ECMP target outside the run is pending when it has none of its intended BGP neighbours configured.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fabconf.deploy.job import Job

Configured = frozenset[str] | None  # the addresses of a device's configured BGP neighbours; None: not readable
Reader = Callable[[Job], frozenset[str]]
PEER_READERS = 16  # peers read at once


def _neighbors(job: Job) -> list[dict[str, Any]]:
    return list(job.data.get("bgp", {}).get("neighbors", []))


def outside_peers(jobs: Iterable[Job], ecmp: bool) -> set[str]:
    """The names of the BGP peers (and with ``ecmp``, which verify checks and a push does not, the ECMP
    targets) of ``jobs`` that are not themselves among ``jobs``."""
    chosen = list(jobs)
    names = {j.name for j in chosen}
    wanted = {n["peer_device"] for j in chosen for n in _neighbors(j) if n.get("peer_device")}
    if ecmp:
        wanted |= {c["target"] for j in chosen for c in j.data.get("verify", {}).get("ecmp", [])}
    return wanted - names


def configured(peers: Iterable[Job], read: Reader) -> dict[str, Configured]:
    """Each peer's configured BGP neighbour addresses, read concurrently; None where the read failed."""
    chosen = list(peers)

    def one(job: Job) -> Configured:
        try:
            return read(job)
        except Exception:  # unreadable: treated as holding intent, so a down session still fails
            return None

    with ThreadPoolExecutor(max_workers=max(1, min(PEER_READERS, len(chosen)))) as pool:
        return dict(zip((j.name for j in chosen), pool.map(one, chosen), strict=True))


def pending(jobs: Iterable[Job], peers: Iterable[Job], seen: dict[str, Configured]) -> dict[str, set[str]]:
    """Per selected device, the peers outside the run whose session (or ECMP target) is pending."""
    by_name = {p.name: p for p in peers}
    out: dict[str, set[str]] = {}
    for job in jobs:
        for n in _neighbors(job):
            peer = by_name.get(n.get("peer_device", ""))
            found = seen.get(peer.name) if peer is not None else None
            if peer is None or found is None:
                continue
            theirs = {p["address"] for p in _neighbors(peer) if p.get("peer_device") == job.name}
            if theirs and not theirs & found:
                out.setdefault(job.name, set()).add(peer.name)
        for check in job.data.get("verify", {}).get("ecmp", []):
            target = by_name.get(check["target"])
            found = seen.get(target.name) if target is not None else None
            if target is not None and found is not None and not {n["address"] for n in _neighbors(target)} & found:
                out.setdefault(job.name, set()).add(target.name)
    return out


def note(names: Iterable[str]) -> str:
    """The outcome's words for pending peers ("" when none)."""
    shown = sorted(names)
    if not shown:
        return ""
    return f"pending: {', '.join(shown)} (outside this run, without fabconf's intent yet): not checked"
