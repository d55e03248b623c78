"""SONiC: the RoCE intent as CONFIG_DB tables (issue #41 item 3; facts and sources in docs/reference/sonic.md).

``qos_sonic`` is the QoS builder for the ``sonic_configdb`` dialect (the signature of ``QOS_BUILDERS``): the global
QoS tables and what every lossless port refers to. ``templates/sonic/device.j2`` assembles the whole CONFIG_DB
document of a leaf from it and the common device data (ports, routed interfaces, loopback, VLANs, BGP neighbours).

``HOOKS`` is what compile asks the SONiC package for (the row's ``design``).
"""

from __future__ import annotations

from typing import Any, TypedDict

from fabconf.compile.design.qos import DEFAULT_PRIORITY, Hardware, _ets, dscp_priorities, recovery_ms
from fabconf.platforms import DesignHooks

MAP = "FABCONF_ROCE"  # every map table's one entry; [V] sonic-*-map.yang name pattern [a-zA-Z0-9][-a-zA-Z0-9_]{0,31}
WRED = "FABCONF_ROCE_ECN"
SCHEDULER_PREFIX = "FABCONF_Q"  # SCHEDULER|FABCONF_Q<queue>
# [V: sonic-buffer-pg.yang] BUFFER_PG profile "NULL": with SONiC's dynamic buffer model the lossless headroom of the
# priority group is computed by buffermgrd from the port's speed and cable length [3P: SONiC dynamic buffer
# calculation HLD]; the pool sizes stay the SKU's own (fabconf writes no BUFFER_POOL / BUFFER_PROFILE).
DYNAMIC_PROFILE = "NULL"
PORT_MTU = 9216  # [V: sonic-port.yang] PORT mtu range 68..9216


class SonicPortQos(TypedDict):
    pfc_enable: str  # "3" or "3,4": PORT_QOS_MAP pfc_enable
    pgs: str  # BUFFER_PG key suffix of the lossless priority groups ("3" or "3-4")
    queues: list[list[str]]  # [qindex, scheduler, wred profile or ""]


class SonicWatchdog(TypedDict):
    action: str  # PFC_WD per-port fields; "" each where the watchdog is off
    detection_time: str
    restoration_time: str


class SonicQos(TypedDict):
    tables: dict[str, dict[str, dict[str, str]]]  # the global QoS tables, CONFIG_DB form
    port: SonicPortQos
    watchdog: SonicWatchdog


def _csv(values: list[int]) -> str:
    return ",".join(str(v) for v in sorted(values))


def _range(values: list[int]) -> str:
    """BUFFER_PG priority-group key: one pg "3" or a contiguous range "3-4" ([V] pattern [0-7]((-)[0-7])?)."""
    lo, hi = min(values), max(values)
    if sorted(values) != list(range(lo, hi + 1)):
        raise ValueError(f"lossless priorities {values} are not contiguous: SONiC keys BUFFER_PG by one range")
    return str(lo) if lo == hi else f"{lo}-{hi}"


def qos_sonic(fabric: dict[str, Any], mtu: int, hw: Hardware) -> dict[str, Any]:
    """The same scheduling as every other platform: the one DSCP map (RoCE DSCP on the RoCE priority, CNP on its
    own, every other DSCP on 0), traffic class = priority, the lossless classes and the CNP class in queues of their
    own number and everything else in queue 0; the lossless queues and queue 0 share the port by DWRR with the
    intent's ETS split, the CNP queue is strict; ECN (WRED profile, ECN marking on green, no drop) on the lossless
    queues; PFC on the lossless priorities; the PFC watchdog on every PFC port."""
    roce = fabric["roce"]
    cnp = roce["cnp"]
    ecn = roce["ecn"]
    lossless = sorted(int(p) for p in roce["pfc_priorities"])
    own = {*lossless, int(cnp["priority"])}
    share, rest = _ets(roce)
    tables: dict[str, dict[str, dict[str, Any]]] = {
        "DSCP_TO_TC_MAP": {MAP: {str(d): str(p) for d, p in sorted(dscp_priorities(roce).items())}},
        "TC_TO_QUEUE_MAP": {MAP: {str(tc): str(tc if tc in own else DEFAULT_PRIORITY) for tc in range(8)}},
        "TC_TO_PRIORITY_GROUP_MAP": {MAP: {str(tc): str(tc if tc in lossless else 0) for tc in range(8)}},
        "MAP_PFC_PRIORITY_TO_QUEUE": {MAP: {str(p): str(p) for p in range(8)}},
        "WRED_PROFILE": {
            WRED: {
                "ecn": "ecn_green",  # [V: sonic-wred-profile.yang enum] mark, on green (all RoCE traffic)
                "wred_green_enable": "true",
                "green_min_threshold": str(ecn["min_threshold_bytes"]),
                "green_max_threshold": str(ecn["max_threshold_bytes"]),
                "green_drop_probability": str(ecn["probability"]),
            }
        },
        "SCHEDULER": {f"{SCHEDULER_PREFIX}0": {"type": "DWRR", "weight": str(rest)}},
    }
    for p, s in sorted(share.items()):
        tables["SCHEDULER"][f"{SCHEDULER_PREFIX}{p}"] = {"type": "DWRR", "weight": str(s)}
    tables["SCHEDULER"][f"{SCHEDULER_PREFIX}{cnp['priority']}"] = {"type": "STRICT"}
    queues = [[str(q), f"{SCHEDULER_PREFIX}{q}", WRED if q in share else ""] for q in sorted({0, *own})]
    wd = roce["pfc_watchdog"]
    watchdog = {"action": "", "detection_time": "", "restoration_time": ""}
    if wd["enabled"]:
        tables["PFC_WD"] = {"GLOBAL": {"POLL_INTERVAL": str(wd["polling_interval_ms"])}}
        watchdog = {
            "action": str(wd["action"]),
            "detection_time": str(wd["timeout_ms"]),
            "restoration_time": str(recovery_ms(wd)),
        }
    return {
        "tables": tables,
        "port": {"pfc_enable": _csv(lossless), "pgs": _range(lossless), "queues": queues},
        "watchdog": watchdog,
    }


def read_chain(q: dict[str, Any], dscp: int) -> tuple[int | None, set[int], str | None]:
    """What the priority-chain check reads back from the designed QoS: the traffic class of ``dscp`` and the
    lossless priorities. SONiC has no trust setting: the DSCP map classifies a port once ``PORT_QOS_MAP`` binds
    it, which every PFC port's row does, so there is no trust problem to report (None)."""
    tc = q["tables"]["DSCP_TO_TC_MAP"][MAP].get(str(dscp))
    lossless = {int(p) for p in q["port"]["pfc_enable"].split(",") if p}
    return (int(tc) if tc is not None else None), lossless, None


HOOKS = DesignHooks(build_qos=qos_sonic, qos_type=SonicQos, read_chain=read_chain)
