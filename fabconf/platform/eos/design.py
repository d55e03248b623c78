"""Arista EOS: how fabconf designs the RoCE QoS in this platform's terms (the device data's ``qos``, its
TypedDict and the builder, moved from compile/design/qos.py and compile/devicedata.py), how the priority-chain
check reads it back (from compile/checks.py) and the platform's own checks. Compile asks for them through the
registry (``fabconf.platforms.design_hooks``), never by name."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from fabconf.compile.checks import ChainView, _ffile
from fabconf.compile.design.qos import DEFAULT_PRIORITY, PROFILE, Hardware, _ets, _grouped, dscp_priorities, recovery_ms
from fabconf.compile.model import Model
from fabconf.compile.problems import Problems
from fabconf.compile.topology import Topology
from fabconf.platforms import PLATFORMS, DesignHooks

# -- the device data's qos ----------------------------------------------------------------------------------------


class EosEcn(TypedDict):
    min: int
    max: int
    units: Literal["bytes", "kbytes"]
    probability: int


class EosTxQueue(TypedDict):
    id: int
    strict: bool
    bandwidth: int | None
    ecn: EosEcn | None


class EosDscpLine(TypedDict):
    dscps: list[int]
    tc: int


class EosWatchdog(TypedDict):
    enabled: bool
    timeout: str  # seconds, as EOS writes them (at most two decimals)
    polling_interval: str
    recovery_time: str
    action: str


class EosQos(TypedDict):
    profile: str
    trust: str
    queue_command: Literal["uc-tx-queue", "tx-queue"]  # by hardware family: Strata / Sand
    dscp_map: list[EosDscpLine]  # every DSCP, one line per traffic class
    pfc_priorities: list[int]
    tx_queues: list[EosTxQueue]
    watchdog: EosWatchdog


# -- the builder --------------------------------------------------------------------------------------------------


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
# is in the fabric (``check_eos_classes``); on Strata switches queue 7 is scheduled like any other. Every
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


# -- read back and checked ----------------------------------------------------------------------------------------


def _chain_eos(q: dict[str, Any], dscp: int) -> ChainView:
    tc = next((line["tc"] for line in q["dscp_map"] if dscp in line["dscps"]), None)
    return tc, set(q["pfc_priorities"]), None if q.get("trust") == "dscp" else ""


def check_eos_classes(model: Model, topo: Topology, problems: Problems) -> None:
    """On EOS priority 0 (every DSCP the intent does not name) is traffic class 1, EOS's best-effort class
    (docs/reference/roce-lossless.md §9): a lossless or CNP priority 1 would share that class and its queue."""
    f, roce = _ffile(model), model.fabric["roce"]
    why = f"priority {EOS_BEST_EFFORT_QUEUE} is EOS's best-effort traffic class, where every other DSCP goes"
    if EOS_BEST_EFFORT_QUEUE in roce["pfc_priorities"]:
        problems.add(f, "roce.pfc_priorities", f"{why}; use another lossless priority")
    if roce["cnp"]["priority"] == EOS_BEST_EFFORT_QUEUE:
        problems.add(f, "roce.cnp.priority", f"{why}; use another CNP priority such as 6")
    sand = sorted(n for n in topo.switches if model.devices[n].platform == "eos" and _eos_family(model, n) == "sand")
    if not sand:
        return
    why = (
        f"priority {EOS_CONTROL_QUEUE} is traffic class {EOS_CONTROL_QUEUE} on EOS, the control-plane class of Sand "
        f"switches ({', '.join(sand[:3])}{', ...' if len(sand) > 3 else ''}), whose queue {EOS_CONTROL_QUEUE} is not "
        "configurable before EOS 4.33.0F [Arista TOI tx-queue 7; docs/reference/roce-lossless.md]"
    )
    if EOS_CONTROL_QUEUE in roce["pfc_priorities"]:
        problems.add(f, "roce.pfc_priorities", f"{why}; use another lossless priority")
    if roce["cnp"]["priority"] == EOS_CONTROL_QUEUE:
        problems.add(f, "roce.cnp.priority", f"{why}: CNPs would go unscheduled; use another CNP priority such as 6")


def _eos_family(model: Model, name: str) -> str:
    """The EOS hardware family of switch ``name`` ("" when its model is in none: check_releases says so)."""
    try:
        return PLATFORMS["eos"].hardware_family(model.devices[name].data.get("model"))
    except ValueError:
        return ""


HOOKS = DesignHooks(build_qos=_qos_eos, qos_type=EosQos, read_chain=_chain_eos, checks=(check_eos_classes,))
