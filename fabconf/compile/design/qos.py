"""What every platform's QoS design shares (the DSCP map, the ETS shares, the watchdog multiple), and the host ToS
byte. Each switch platform's builder, in its own terms, is in its package (``fabconf/platform/<name>/design.py``,
asked through ``fabconf.platforms.design_hooks``)."""

from __future__ import annotations

from typing import Any, TypedDict

PROFILE = "FABCONF_ROCE"


class Hardware(TypedDict):
    family: str  # the platform's hardware family ("" where the configuration does not differ by family)
    line: str  # the release line the configuration is rendered for


ECT0 = 0b10


def roce_tos(fabric: dict[str, Any]) -> int:
    """The host ToS byte: explicit ``hosts.tos`` or DSCP << 2 | ECT(0)."""
    tos = fabric["hosts"].get("tos")
    return int(tos) if tos is not None else (int(fabric["roce"]["dscp"]) << 2) | ECT0


DEFAULT_PRIORITY = 0  # the lossy default priority every DSCP the intent does not name lands on


def dscp_priorities(roce: dict[str, Any]) -> dict[int, int]:
    """The one DSCP -> priority map every platform renders in full (its own terms, all 64 code points): the RoCE
    DSCP on the RoCE priority, the CNP DSCP on the CNP priority, every other DSCP on priority 0. Nothing is left
    to a vendor default: Cumulus's default table puts DSCP 24-31 on priority 3 [V: Cumulus Linux 5.12 QoS page]
    and EOS maps DSCP / 8 to the traffic class [3P], so without it DSCP 24-31 would be lossless on some hops
    only (docs/reference/roce-lossless.md §10)."""
    table = dict.fromkeys(range(64), DEFAULT_PRIORITY)
    table[int(roce["cnp"]["dscp"])] = int(roce["cnp"]["priority"])
    table[int(roce["dscp"])] = int(roce["priority"])
    return table


def _grouped(table: dict[int, int]) -> list[tuple[list[int], int]]:
    """``{dscp: x}`` as ``[(dscps, x)]``, one entry per value, ordered by value."""
    out: dict[int, list[int]] = {}
    for dscp, value in sorted(table.items()):
        out.setdefault(value, []).append(dscp)
    return sorted(((dscps, value) for value, dscps in out.items()), key=lambda e: e[1])


def watchdog_multiple(watchdog: dict[str, Any]) -> int:
    """How many polling intervals make the intent's timeout: Cumulus's ``robustness`` and NX-OS's
    ``shutdown-multiplier``, so that every platform acts at ``timeout_ms`` (the checks refuse a timeout that is
    not a whole number of intervals in the platform's range)."""
    return max(1, int(watchdog["timeout_ms"]) // int(watchdog["polling_interval_ms"]))


def _ets(roce: dict[str, Any]) -> tuple[dict[int, int], int]:
    """Bandwidth share per lossless priority, and what remains for the default queue."""
    lossless = sorted(roce["pfc_priorities"])
    total = int(roce["ets"]["roce_percent"])
    share = {p: total // len(lossless) for p in lossless}
    share[lossless[0]] += total - sum(share.values())
    return share, 100 - total


def recovery_ms(watchdog: dict[str, Any]) -> int:
    """How long a queue the watchdog shut stays shut: ``recovery_ms``, else twice the timeout [U: fabconf's
    default; EOS and NX-OS document the knob, not a RoCE value]."""
    return int(watchdog.get("recovery_ms") or 2 * watchdog["timeout_ms"])
