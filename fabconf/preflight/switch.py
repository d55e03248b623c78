"""Preflight of one switch through its getters (not screen scraping): the source article's audit script that
flags ports negotiated below their speed. ``[ports]`` every cabled port up at its intended speed
(``get_interfaces``: ``is_up``, ``speed`` in Mb/s; a driver that reports no speed (0) is not judged on it).

Not checked here, and why: the PFC watchdog and every other configured setting are what ``verify``/``drift``
compare against intent; FEC and error counters and PFC storms need ``get_interfaces_counters`` and per-priority
counters, which the lab's simulators do not model yet (a follow-up, see the README).
"""

from __future__ import annotations

from typing import Any


def check_switch(
    interfaces_intent: list[dict[str, Any]], speeds: dict[str, int], reported: dict[str, Any]
) -> list[str]:
    failed = []
    for itf in sorted(interfaces_intent, key=lambda i: i["name"]):
        name, peer = itf["name"], itf.get("peer", "")
        got = reported.get(name)
        if got is None:
            failed.append(f"[ports] {name} (to {peer}): not reported by the switch")
            continue
        if not got.get("is_up"):
            failed.append(f"[ports] {name} (to {peer}): down")
            continue
        mbps = float(got.get("speed") or 0)
        want = speeds.get(name)
        if want and mbps > 0 and int(mbps) != want * 1000:
            failed.append(f"[ports] {name} (to {peer}): {mbps / 1000:g} Gb/s, intended {want} Gb/s")
    return failed
