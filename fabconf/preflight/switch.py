"""Preflight of one switch through its getters (not screen scraping): the source article's audit script that
flags ports negotiated below their speed, and its error budget.

- ``[ports]`` every cabled port up at its intended speed (``get_interfaces``: ``is_up``, ``speed`` in Mb/s; a
  driver that reports no speed (0) is not judged on it);
- ``[counters]`` received errors per unicast frame between two ``get_interfaces_counters`` reads below
  ``preflight.max_error_rate`` (0.001 %), where the driver has the getter (NAPALM's EOS driver; on NX-OS
  ``show interface | json`` through NAPALM's ``cli()``; fabconf's NVUE driver from ``link stats``);
- ``[pfc]`` PFC frames received per second on the RoCE (lossless) priorities between the same two reads above
  ``PAUSE_STORM_PER_S``, the hosts' storm threshold: a pause storm (NX-OS ``show interface
  priority-flow-control``, whose RxPPP counts the port's PFC frames of every priority; NVUE ``counters qos
  pfc-stats`` per switch priority; EOS: not read, see docs/operations/preflight.md).

Not checked here, and why: the PFC watchdog and every other configured setting are what ``verify``/``drift``
compare against intent.
"""

from __future__ import annotations

from typing import Any

from fabconf.platforms import design_hooks
from fabconf.preflight.host import PAUSE_STORM_PER_S

ALL_PRIORITIES = "all"  # a count of every priority's PFC frames (NX-OS's RxPPP)


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


def lossless_priorities(platform: str, qos: dict[str, Any]) -> list[int]:
    """The PFC (lossless) priorities of a switch's compiled ``qos``, as its platform's chain reader reads them back
    (each QoS dialect keeps them in its own shape; the platform package knows it, preflight does not)."""
    if not qos:
        return []
    return sorted(design_hooks(platform).read_chain(qos, 0)[1])


def pfc_rates(
    lossless: list[int], first: dict[str, dict[str, int]], second: dict[str, dict[str, int]], seconds: float
) -> dict[str, dict[str, float]]:
    """port -> priority (or ``all``) -> PFC frames received per second between two reads, on the lossless
    priorities (a port's total where the switch counts no single priority)."""
    wanted = {str(p) for p in lossless} | {ALL_PRIORITIES}
    out: dict[str, dict[str, float]] = {}
    for port in sorted(set(first) & set(second)):
        a, b = first[port], second[port]
        rates = {k: (int(b[k]) - int(a[k])) / max(seconds, 0.001) for k in sorted(wanted & set(a) & set(b))}
        if rates:
            out[port] = rates
    return out


def check_pfc(
    interfaces_intent: list[dict[str, Any]],
    lossless: list[int],
    first: dict[str, dict[str, int]],
    second: dict[str, dict[str, int]],
    seconds: float,
) -> list[str]:
    failed = []
    rates = pfc_rates(lossless, first, second, seconds)
    for itf in sorted(interfaces_intent, key=lambda i: i["name"]):
        for prio, rate in rates.get(itf["name"], {}).items():
            if rate > PAUSE_STORM_PER_S:
                where = "all priorities" if prio == ALL_PRIORITIES else f"priority {prio}"
                failed.append(
                    f"[pfc] {itf['name']} (to {itf.get('peer', '')}): {rate:.0f} PFC pause frames/s received "
                    f"({where}) between two reads, above {PAUSE_STORM_PER_S}/s: a pause storm"
                )
    return failed
