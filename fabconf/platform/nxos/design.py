"""Cisco NX-OS: how fabconf designs the RoCE QoS in this platform's terms (the device data's ``qos``, its
TypedDict and the builder, moved from compile/design/qos.py and compile/devicedata.py), how the priority-chain
check reads it back (from compile/checks.py) and the platform's own checks. Compile asks for them through the
registry (``fabconf.platforms.design_hooks``), never by name."""

from __future__ import annotations

from typing import Any, TypedDict

from fabconf.compile.checks import ChainView
from fabconf.compile.design.qos import DEFAULT_PRIORITY, Hardware, _ets, watchdog_multiple
from fabconf.platforms import DesignHooks

# -- the device data's qos ----------------------------------------------------------------------------------------


class NxosClass(TypedDict):
    name: str
    dscp: int
    qos_group: int


# "class" is a Python keyword: these are declared in TypedDict's functional form
NxosNetworkQosClass = TypedDict("NxosNetworkQosClass", {"class": str, "pause_cos": int | None})  # None: lossy


class NxosEcn(TypedDict):
    min: int
    max: int
    probability: int  # kbytes


NxosQueuingClass = TypedDict(
    "NxosQueuingClass",
    {"class": str, "priority_level": int | None, "bandwidth": int | None, "ecn": NxosEcn | None},
)


class NxosNetworkQos(TypedDict):
    name: str
    mtu: int  # on every class
    classes: list[NxosNetworkQosClass]  # all eight


class NxosQueuing(TypedDict):
    name: str
    classes: list[NxosQueuingClass]


class NxosWatchdog(TypedDict):
    enabled: bool
    interval: int  # ms
    shutdown_multiplier: int  # intervals


class NxosQos(TypedDict):
    classes: list[NxosClass]
    default_qos_group: int  # class-default: every DSCP the classes do not match
    input_policy: str
    network_qos: NxosNetworkQos
    queuing: NxosQueuing  # all eight queuing classes
    watchdog: NxosWatchdog


# -- the builder --------------------------------------------------------------------------------------------------


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


# -- read back and checked ----------------------------------------------------------------------------------------


def _chain_nxos(q: dict[str, Any], dscp: int) -> ChainView:
    tc = next((c["qos_group"] for c in q["classes"] if c["dscp"] == dscp), None)
    return tc, {x["pause_cos"] for x in q["network_qos"]["classes"] if x["pause_cos"] is not None}, None


HOOKS = DesignHooks(build_qos=_qos_nxos, qos_type=NxosQos, read_chain=_chain_nxos)
