"""Cumulus Linux (NVUE): how fabconf designs the RoCE QoS in this platform's terms (the device data's ``qos``, its
TypedDict and the builder, moved from compile/design/qos.py and compile/devicedata.py), how the priority-chain
check reads it back (from compile/checks.py) and the platform's own checks. Compile asks for them through the
registry (``fabconf.platforms.design_hooks``), never by name."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from fabconf.compile.checks import ChainView
from fabconf.compile.design.qos import Hardware, _ets, dscp_priorities, watchdog_multiple
from fabconf.platforms import DesignHooks

# -- the device data's qos ----------------------------------------------------------------------------------------


class NvueEcn(TypedDict):
    tc: int
    min: int  # bytes
    max: int
    probability: int


class NvueScheduler(TypedDict):
    tc: int
    mode: Literal["dwrr", "strict"]
    bw_percent: int | None


class NvuePfc(TypedDict):
    priorities: list[int]
    cable_length: int


class NvuePool(TypedDict):
    lossless_percent: int
    lossy_percent: int
    priorities: list[int]  # the lossless pool's switch priorities
    lossy_priorities: list[int]  # every other one (the two lists are disjoint)


class NvueWatchdog(TypedDict):
    enabled: bool
    polling_interval: int  # ms
    robustness: int


class NvueQos(TypedDict):
    trust: str
    dscp_map: list[list[int]]  # [dscp, switch priority], all 64
    queue_map: list[list[int]]  # [switch priority, traffic class]
    pfc: NvuePfc
    ecn: list[NvueEcn]
    scheduler: list[NvueScheduler]
    pool: NvuePool
    watchdog: NvueWatchdog


# -- the builder --------------------------------------------------------------------------------------------------


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


# -- read back and checked ----------------------------------------------------------------------------------------


def _chain_nvue(q: dict[str, Any], dscp: int) -> ChainView:
    tc = dict(map(tuple, q["dscp_map"])).get(dscp)
    return tc, set(q["pfc"]["priorities"]), None if q.get("trust") in ("l3", "both") else " (l3 or both)"


HOOKS = DesignHooks(build_qos=_qos_cumulus, qos_type=NvueQos, read_chain=_chain_nvue)
