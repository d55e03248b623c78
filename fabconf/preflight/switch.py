"""Preflight of one switch through its getters (not screen scraping): the source article's audit script that
flags ports negotiated below their speed, and its error budget.

- ``[ports]`` every cabled port up at its intended speed (``get_interfaces``: ``is_up``, ``speed`` in Mb/s; a
  driver that reports no speed (0) is not judged on it);
- ``[counters]`` received errors per unicast frame between two ``get_interfaces_counters`` reads below
  ``preflight.max_error_rate`` (0.001 %), where the driver has the getter (NAPALM's EOS driver; fabconf's NVUE
  driver from ``link stats``; NAPALM's NX-API driver has none yet, and the check is skipped there, as
  docs/operations/preflight.md says).

Not checked here, and why: the PFC watchdog and every other configured setting are what ``verify``/``drift``
compare against intent; PFC storms need per-priority pause counters, which no NAPALM getter returns.
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


def check_counters(
    interfaces_intent: list[dict[str, Any]], first: dict[str, Any], second: dict[str, Any], max_error_rate: float
) -> list[str]:
    failed = []
    for itf in sorted(interfaces_intent, key=lambda i: i["name"]):
        a, b = first.get(itf["name"]), second.get(itf["name"])
        if a is None or b is None:
            continue
        frames = int(b.get("rx_unicast_packets", 0)) - int(a.get("rx_unicast_packets", 0))
        errors = int(b.get("rx_errors", 0)) - int(a.get("rx_errors", 0))
        if frames > 0 and errors / frames > max_error_rate:
            failed.append(
                f"[counters] {itf['name']} (to {itf.get('peer', '')}): {errors} errored of {frames} frames "
                f"({100 * errors / frames:.4f} %) between two reads, above {100 * max_error_rate:.4f} %"
            )
    return failed
