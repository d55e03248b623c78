"""Prometheus alerting rules for the fabric (``promtool check rules`` accepts them; ``promtool test rules`` shows
each firing in the tests). Every alert carries the device's ``role`` and ``pod`` (joined from the inventory
textfile's ``fabconf_device_info``) and only fires for devices of the inventory."""

from __future__ import annotations

from typing import Any

from fabconf.monitoring.names import Names
from fabconf.monitoring.thresholds import Thresholds


def _join(expr: str, names: Names) -> str:
    return f"({expr}) * on(device) group_left(role, pod) {names.device_info}"


def _band(rate: str, band: tuple[float, float]) -> str:
    low, high = band
    return f"({rate} > {high:g})" + (f" or ({rate} < {low:g})" if low > 0 else "")


def _alert(name: str, expr: str, summary: str, th: Thresholds, severity: str = "warning") -> dict[str, Any]:
    return {
        "alert": name,
        "expr": expr,
        "for": th.for_duration,
        "labels": {"severity": severity, "source": "fabconf"},
        "annotations": {"summary": summary},
    }


def rule_groups(names: Names, th: Thresholds, roce_priorities: list[int]) -> dict[str, Any]:
    prios = "|".join(str(p) for p in sorted(roce_priorities))
    host_pauses = " or ".join(f"rate({names.host_pfc_pauses.format(prio=p)}[1m])" for p in sorted(roce_priorities))
    switch_errors = f"rate({names.switch_in_errors}[5m]) / clamp_min(rate({names.switch_in_packets}[5m]), 1)"
    host_errors = f"rate({names.host_in_errors}[5m]) / clamp_min(rate({names.host_in_packets}[5m]), 1)"
    retransmits = (
        f'rate({names.host_rdma_counter}{{counter="local_ack_timeout_err"}}[5m]) '
        f"/ on(device, port) clamp_min(rate({names.host_rdma_sent}[5m]), 1)"
    )
    cnp = f'rate({names.host_rdma_counter}{{counter="np_cnp_sent"}}[5m])'
    ecn = f"rate({names.switch_ecn_marked}[5m])"
    slow_switch = f"{names.switch_speed_mbps} * 1e6 < on(device, port) {names.intended_speed}"
    slow_host = f"{names.host_speed_bytes} * 8 < on(device, port) {names.intended_speed}"
    alerts = [
        _alert(
            "FabconfPortErrorRate",
            _join(f"({switch_errors} > {th.port_error_rate:g}) or ({host_errors} > {th.port_error_rate:g})", names),
            f"{{{{ $labels.device }}}} {{{{ $labels.port }}}}: more than {100 * th.port_error_rate:g} % of received "
            "frames in error",
            th,
        ),
        _alert(
            "FabconfRoceRetransmits",
            _join(f"{retransmits} > {th.retransmit_rate:g}", names),
            "{{ $labels.device }} {{ $labels.port }}: RoCE retransmissions above " + f"{100 * th.retransmit_rate:g} %",
            th,
        ),
        _alert(
            "FabconfPfcPauseStorm",
            _join(
                f'(rate({names.switch_pfc_pauses}{{priority=~"{prios}"}}[1m]) > {th.pfc_pause_storm_per_s:g}) '
                f"or (({host_pauses}) > {th.pfc_pause_storm_per_s:g})",
                names,
            ),
            "{{ $labels.device }} {{ $labels.port }}: PFC pause storm on the RoCE priority",
            th,
            "critical",
        ),
        _alert(
            "FabconfPfcWatchdogTriggered",
            _join(f"increase({names.switch_pfc_watchdog}[5m]) > 0", names),
            "{{ $labels.device }} {{ $labels.port }}: the PFC watchdog found a storm and acted",
            th,
            "critical",
        ),
        _alert(
            "FabconfEcnMarkRate",
            _join(_band(ecn, th.ecn_marked_per_s), names),
            "{{ $labels.device }} {{ $labels.port }}: ECN-marked packets per second outside the expected band",
            th,
        ),
        _alert(
            "FabconfCnpRate",
            _join(_band(cnp, th.cnp_per_s), names),
            "{{ $labels.device }} {{ $labels.port }}: CNPs per second outside the expected band",
            th,
        ),
        _alert(
            "FabconfPortBelowIntendedSpeed",
            _join(f"({slow_switch}) or ({slow_host})", names),
            "{{ $labels.device }} {{ $labels.port }}: running below its intended speed",
            th,
        ),
        _alert(
            "FabconfBgpSessionDown",
            _join(f"{names.switch_bgp_peer_state} != 6", names),
            "{{ $labels.device }}: BGP session to {{ $labels.peer }} is not established",
            th,
            "critical",
        ),
        _alert(
            "FabconfDrift",
            _join(f"{names.drift} == 1", names),
            "{{ $labels.device }}: its configuration drifted from intent (fabconf drift)",
            th,
        ),
    ]
    return {"groups": [{"name": "fabconf-fabric", "rules": alerts}]}
