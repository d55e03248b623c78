"""The RoCE QoS intent in each switch platform's own terms (``QOS_BUILDERS``, chosen by the platform table's
``qos_dialect``), and the host ToS byte."""

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


def _qos_cumulus(fabric: dict[str, Any], mtu: int, hw: Hardware) -> dict[str, Any]:
    """Every key set explicitly rather than ``nv set qos roce`` plus overrides: the roce profile applies defaults
    NVIDIA may change between releases and that a diff cannot show, while explicit keys are what the other
    platforms render too, diff line by line, and are checked against each release's schema.

    Scheduled like NVIDIA's own RoCE profile [V: Cumulus Linux 5.14 "RDMA over Converged Ethernet" page]: the
    lossless switch priorities and the CNP priority keep traffic classes of their own number, every other
    switch priority maps to traffic class 0; TC 0 and the lossless classes share the port by DWRR, the CNP class
    is strict. The classes nothing maps to are left out of the scheduler: a DWRR class needs a share of 1-100 %
    and a ``bw_percent`` of 0 in ``qos_features.conf`` means strict priority [V: Cumulus Linux 5.x "Quality of
    Service" page], so a 0 % class would be served ahead of RoCE. NVIDIA's QoS page sets single classes the
    same way (``traffic-class 3 mode dwrr`` / ``bw-percent 50``, ``traffic-class 6 mode strict``). Every DSCP is
    mapped (``dscp_priorities``), and the lossy pool lists every switch priority the lossless pool does not."""
    roce = fabric["roce"]
    cnp = roce["cnp"]
    ecn = roce["ecn"]
    share, rest = _ets(roce)
    lossless = sorted(roce["pfc_priorities"])
    sched: list[dict[str, Any]] = [{"tc": 0, "mode": "dwrr", "bw_percent": rest}]
    sched += [{"tc": p, "mode": "dwrr", "bw_percent": s} for p, s in sorted(share.items())]
    sched.append({"tc": cnp["priority"], "mode": "strict", "bw_percent": None})
    own = {*lossless, cnp["priority"]}
    wd = roce["pfc_watchdog"]
    return {
        "trust": "l3",
        "dscp_map": [[d, p] for d, p in sorted(dscp_priorities(roce).items())],
        "queue_map": [[p, p if p in own else 0] for p in range(8)],
        "pfc": {"priorities": list(lossless), "cable_length": roce["cable_length_m"]},
        "ecn": [
            {
                "tc": p,
                "min": ecn["min_threshold_bytes"],
                "max": ecn["max_threshold_bytes"],
                "probability": ecn["probability"],
            }
            for p in lossless
        ],
        "scheduler": sorted(sched, key=lambda e: e["tc"]),
        "pool": {
            "lossless_percent": 50,
            "lossy_percent": 50,
            "priorities": list(lossless),  # a list of its own: device data never shares objects
            "lossy_priorities": [p for p in range(8) if p not in lossless],
        },
        "watchdog": {
            "enabled": wd["enabled"],
            "polling_interval": wd["polling_interval_ms"],
            # [V: nvueschema keys] the watchdog acts after robustness x polling-interval [semantics U]
            "robustness": watchdog_multiple(wd),
        },
    }


def _threshold(value: int) -> tuple[int, str]:
    return (value // 1000, "kbytes") if value % 1000 == 0 else (value, "bytes")


# [3P] (docs/reference/roce-lossless.md §9) EOS's default DSCP -> traffic-class map puts DSCP 0-7 (best effort) in
# traffic class 1, and traffic class n leaves through tx-queue n: the best-effort share is scheduled on queue 1, not
# queue 0.
EOS_BEST_EFFORT_QUEUE = 1
EOS_QUEUE_COMMAND = {"strata": "uc-tx-queue", "sand": "tx-queue"}
# [V: Arista TOI "tx-queue 7" (arista.com/support/toi): on Sand switches queue 7 is always traffic class 7, reserved
# for control-plane traffic, and not user-configurable before EOS 4.33.0F] Queue 7 keeps its default strict
# priority unless the intent puts a priority there: validate refuses priority 7 (lossless or CNP) when a Sand switch
# is in the fabric (``checks.check_eos_classes``); on Strata switches queue 7 is scheduled like any other. Every
# other queue is scheduled explicitly.
EOS_CONTROL_QUEUE = 7


def _seconds(ms: int) -> str:
    """Milliseconds as the seconds EOS writes (at most two decimals: the checks refuse finer timers)."""
    return f"{ms / 1000:.2f}".rstrip("0").rstrip(".")


def _qos_eos(fabric: dict[str, Any], mtu: int, hw: Hardware) -> dict[str, Any]:
    roce = fabric["roce"]
    cnp = roce["cnp"]
    ecn = roce["ecn"]
    share, rest = _ets(roce)
    lo, units = _threshold(ecn["min_threshold_bytes"])
    hi, hi_units = _threshold(ecn["max_threshold_bytes"])
    if hi_units != units:  # both thresholds must use one unit
        lo, hi, units = ecn["min_threshold_bytes"], ecn["max_threshold_bytes"], "bytes"
    ecn_line = {"min": lo, "max": hi, "units": units, "probability": ecn["probability"]}
    queues: dict[int, dict[str, Any]] = {
        # queues nothing is mapped to: round-robin without a share rather than EOS's default strict priority
        q: {"id": q, "strict": False, "bandwidth": None, "ecn": None}
        for q in range(EOS_CONTROL_QUEUE)
    }
    queues[EOS_BEST_EFFORT_QUEUE].update(bandwidth=rest)
    for p, s in share.items():  # a lossless priority 7 schedules queue 7 (Strata; refused on Sand by validate)
        queues[p] = {"id": p, "strict": False, "bandwidth": s, "ecn": dict(ecn_line)}
    queues[cnp["priority"]] = {"id": cnp["priority"], "strict": True, "bandwidth": None, "ecn": None}
    if hw["family"] == "sand":
        # not configurable there before 4.33.0F; strict by default as the control-plane queue (see above)
        queues.pop(EOS_CONTROL_QUEUE, None)
    tc_of = {p: EOS_BEST_EFFORT_QUEUE if p == DEFAULT_PRIORITY else p for p in range(8)}
    wd = roce["pfc_watchdog"]
    return {
        "profile": PROFILE,
        "trust": "dscp",
        "queue_command": EOS_QUEUE_COMMAND[hw["family"]],
        "dscp_map": [
            {"dscps": dscps, "tc": tc}
            for dscps, tc in _grouped({d: tc_of[p] for d, p in dscp_priorities(roce).items()})
        ],
        "pfc_priorities": sorted(roce["pfc_priorities"]),
        "tx_queues": [queues[q] for q in sorted(queues)],
        "watchdog": {
            "enabled": wd["enabled"],
            "timeout": _seconds(wd["timeout_ms"]),
            "polling_interval": _seconds(wd["polling_interval_ms"]),
            "recovery_time": _seconds(recovery_ms(wd)),
            "action": wd["action"],
        },
    }


def recovery_ms(watchdog: dict[str, Any]) -> int:
    """How long a queue the watchdog shut stays shut: ``recovery_ms``, else twice the timeout [U: fabconf's
    default; EOS and NX-OS document the knob, not a RoCE value]."""
    return int(watchdog.get("recovery_ms") or 2 * watchdog["timeout_ms"])


def _qos_nxos(fabric: dict[str, Any], mtu: int, hw: Hardware) -> dict[str, Any]:
    """All eight queuing classes explicitly (c-out-8q-q-default is queue 0): the lossless queues with their
    shares and ECN, the CNP queue strict (``priority level 1``), the default queue with the rest, every other
    queue at 0% (traffic there is unexpected in a training fabric and gets only what is left over).

    The CNP class matches the CNP DSCP (48 = CS6), which routing protocols also use: BGP and other CS6 control
    traffic then shares the strict CNP queue. That is deliberate: both are small and latency-sensitive, and
    strict priority keeps BGP keepalives ahead of a congested RoCE queue. Every network-qos class that can
    carry jumbo frames (all of them in a RoCE fabric) gets the fabric MTU."""
    roce = fabric["roce"]
    cnp = roce["cnp"]
    ecn = roce["ecn"]
    share, rest = _ets(roce)
    queuing: list[dict[str, Any]] = []
    for q in range(8):
        name = "c-out-8q-q-default" if q == 0 else f"c-out-8q-q{q}"
        entry: dict[str, Any] = {"class": name, "priority_level": None, "bandwidth": 0, "ecn": None}
        if q == cnp["priority"]:
            entry.update(priority_level=1, bandwidth=None)
        elif q in share:
            entry.update(
                bandwidth=share[q],
                ecn={
                    "min": ecn["min_threshold_bytes"] // 1000,
                    "max": ecn["max_threshold_bytes"] // 1000,
                    "probability": ecn["probability"],
                },
            )
        elif q == 0:
            entry["bandwidth"] = rest
        queuing.append(entry)
    wd = roce["pfc_watchdog"]
    lossless = set(roce["pfc_priorities"])
    return {
        "classes": [
            {"name": "FABCONF_ROCE", "dscp": roce["dscp"], "qos_group": roce["priority"]},
            {"name": "FABCONF_CNP", "dscp": cnp["dscp"], "qos_group": cnp["priority"]},
        ],
        # class-default (every DSCP the two classes do not match) explicitly in qos-group 0, the default queue
        "default_qos_group": DEFAULT_PRIORITY,
        "input_policy": "FABCONF_QOS_IN",
        "network_qos": {
            "name": "FABCONF_NQ",
            "mtu": mtu,
            "classes": [
                {"class": "c-8q-nq-default" if q == 0 else f"c-8q-nq{q}", "pause_cos": q if q in lossless else None}
                for q in range(8)
            ],
        },
        "queuing": {"name": "FABCONF_QUEUING", "classes": queuing},
        "watchdog": {
            "enabled": wd["enabled"],
            # the queue is shut after interval x shutdown-multiplier; the checks keep the multiple whole and in the
            # platform's range (platforms.py ``watchdog_multiple``), so NX-OS acts at the intent's timeout
            "interval": wd["polling_interval_ms"],
            "shutdown_multiplier": watchdog_multiple(wd),
        },
    }


QOS_BUILDERS = {"nvue": _qos_cumulus, "eos_cli": _qos_eos, "nxos_cli": _qos_nxos}
