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

    Every one of the eight traffic classes is scheduled (a class left out keeps the device's default DWRR
    share, and the shares would then add up past 100 %): the lossless classes their share, the CNP class
    strict, traffic class 0 the rest, every other class 0 %. Every switch priority maps to the traffic class of
    the same number, and the lossy pool lists every switch priority the lossless pool does not, so no priority
    is in both."""
    roce = fabric["roce"]
    cnp = roce["cnp"]
    ecn = roce["ecn"]
    share, rest = _ets(roce)
    sched: list[dict[str, Any]] = []
    for tc in range(8):
        if tc == cnp["priority"]:
            sched.append({"tc": tc, "mode": "strict", "bw_percent": None})
        else:
            sched.append({"tc": tc, "mode": "dwrr", "bw_percent": share.get(tc, rest if tc == 0 else 0)})
    wd = roce["pfc_watchdog"]
    lossless = sorted(roce["pfc_priorities"])
    return {
        "trust": "l3",
        "dscp_map": sorted([[roce["dscp"], roce["priority"]], [cnp["dscp"], cnp["priority"]]]),
        "queue_map": [[p, p] for p in range(8)],
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
        "scheduler": sched,
        "pool": {
            "lossless_percent": 50,
            "lossy_percent": 50,
            "priorities": list(lossless),  # a list of its own: device data never shares objects
            "lossy_priorities": [p for p in range(8) if p not in lossless],
        },
        "watchdog": {
            "enabled": wd["enabled"],
            "polling_interval": wd["polling_interval_ms"],
            "robustness": wd["robustness"],
        },
    }


def _threshold(value: int) -> tuple[int, str]:
    return (value // 1000, "kbytes") if value % 1000 == 0 else (value, "bytes")


# [3P] (docs/reference/roce-lossless.md §9) EOS's default DSCP -> traffic-class map puts DSCP 0-7 (best effort) in
# traffic class 1, and traffic class n leaves through tx-queue n: the best-effort share is scheduled on queue 1, not
# queue 0.
EOS_BEST_EFFORT_QUEUE = 1
EOS_QUEUE_COMMAND = {"strata": "uc-tx-queue", "sand": "tx-queue"}


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
    queues: list[dict[str, Any]] = [{"id": EOS_BEST_EFFORT_QUEUE, "strict": False, "bandwidth": rest, "ecn": None}]
    for p, s in sorted(share.items()):
        queues.append(
            {
                "id": p,
                "strict": False,
                "bandwidth": s,
                "ecn": {"min": lo, "max": hi, "units": units, "probability": ecn["probability"]},
            }
        )
    queues.append({"id": cnp["priority"], "strict": True, "bandwidth": None, "ecn": None})
    wd = roce["pfc_watchdog"]
    return {
        "profile": PROFILE,
        "trust": "dscp",
        "queue_command": EOS_QUEUE_COMMAND[hw["family"]],
        "dscp_map": sorted([[roce["dscp"], roce["priority"]], [cnp["dscp"], cnp["priority"]]]),
        "pfc_priorities": sorted(roce["pfc_priorities"]),
        "tx_queues": sorted(queues, key=lambda q: q["id"]),
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
            # [U] recalled from the Nexus 9000 QoS guide: interval 100-1000 ms, shutdown multiplier 1-10 intervals
            "interval": wd["polling_interval_ms"],
            "shutdown_multiplier": max(1, min(10, -(-wd["timeout_ms"] // wd["polling_interval_ms"]))),
        },
    }


QOS_BUILDERS = {"nvue": _qos_cumulus, "eos_cli": _qos_eos, "nxos_cli": _qos_nxos}
