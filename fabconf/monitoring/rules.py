"""Prometheus alerting rules for the fabric (``promtool check rules`` accepts them; ``promtool test rules`` shows
each firing in the tests). Every alert carries the device's inventory name (``device``), its ``role`` and ``pod``
(joined from the inventory textfile's ``fabconf_device_info``) and only fires for devices of the inventory. The
metric names and the label convention are in ``fabconf.monitoring.names``; rate windows and ``for:`` delays come
from the intent (``Timing``)."""

from __future__ import annotations

from typing import Any

from fabconf.monitoring.names import Names
from fabconf.monitoring.thresholds import Thresholds, Timing


def _join(expr: str, names: Names) -> str:
    return f"({expr}) * on(device) group_left(role, pod) {names.device_info}"


def _band(rate: str, band: tuple[float, float]) -> str:
    low, high = band
    return f"({rate} > {high:g})" + (f" or ({rate} < {low:g})" if low > 0 else "")


def _alert(name: str, expr: str, summary: str, hold: str, severity: str = "warning") -> dict[str, Any]:
    alert: dict[str, Any] = {"alert": name, "expr": expr}
    if hold not in ("0s", ""):
        alert["for"] = hold
    alert["labels"] = {"severity": severity, "source": "fabconf"}
    alert["annotations"] = {"summary": summary}
    return alert


def _per_priority(template: str, priorities: list[int], window: str) -> str:
    """The rate of a counter whose name carries the priority, with the priority as a ``priority`` label."""
    return " or ".join(
        f'label_replace(rate({template.format(prio=p)}[{window}]), "priority", "{p}", "", "")' for p in priorities
    )


def rule_groups(
    names: Names, th: Thresholds, roce_priorities: list[int], timing: Timing, gnmi: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The alerting rules: the ports' and NICs' (``_port_alerts``), then the devices' (``_device_alerts``).
    ``gnmi``: the ``monitoring.telemetry.paths`` the switches stream (empty: none runs a gNMI server)."""
    alerts = _port_alerts(names, th, roce_priorities, timing, gnmi) + _device_alerts(names, timing)
    return {"groups": [{"name": "fabconf-fabric", "rules": alerts}]}


def _port_alerts(
    names: Names, th: Thresholds, roce_priorities: list[int], timing: Timing, gnmi: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """Errors (SNMP, and gNMI where the switches stream them), RoCE retransmissions, PFC storms and the watchdog,
    ECN marks and CNPs, speed below intent."""
    w, hold = timing.window, timing.for_duration
    prios = sorted(roce_priorities) or [3]
    switch_errors = f"rate({names.switch_in_errors}[{w}]) / clamp_min(rate({names.switch_in_packets}[{w}]), 1)"
    if "port_errors" in gnmi and "port_packets" in gnmi:
        gnmi_errors = f"rate({names.gnmi_in_errors}[{w}]) / clamp_min(rate({names.gnmi_in_packets}[{w}]), 1)"
        switch_errors = f"({switch_errors}) or ({gnmi_errors})"
    host_errors = f"rate({names.host_in_errors}[{w}]) / clamp_min(rate({names.host_in_packets}[{w}]), 1)"
    retransmits = (
        f"rate({names.host_rdma_timeouts}[{w}]) / on(device, hca, port) clamp_min(rate({names.host_rdma_sent}[{w}]), 1)"
    )
    pauses = (
        f"({_per_priority(names.switch_pfc_pauses, prios, w)}) or ({_per_priority(names.host_pfc_pauses, prios, w)})"
    )
    slow_switch = f"{names.switch_speed_mbps} * 1e6 < on(device, port) {names.intended_speed}"
    slow_host = f"{names.host_speed_bytes} * 8 < on(device, port) {names.intended_speed}"
    port = "{{ $labels.device }} {{ $labels.port }}"
    rdma = "{{ $labels.device }} {{ $labels.hca }} port {{ $labels.port }}"
    return [
        _alert(
            "FabconfPortErrorRate",
            _join(f"({switch_errors} > {th.port_error_rate:g}) or ({host_errors} > {th.port_error_rate:g})", names),
            f"{port}: more than {100 * th.port_error_rate:g} % of received frames in error",
            hold,
        ),
        _alert(
            "FabconfRoceRetransmits",
            _join(f"{retransmits} > {th.retransmit_rate:g}", names),
            f"{rdma}: RoCE retransmission timeouts above {100 * th.retransmit_rate:g} % of packets sent",
            hold,
        ),
        _alert(
            "FabconfPfcPauseStorm",
            _join(f"({pauses}) > {th.pfc_pause_storm_per_s:g}", names),
            f"{port}: PFC pause storm on priority {{{{ $labels.priority }}}}",
            hold,
            "critical",
        ),
        # one event is enough: no ``for:``, and the increase stays above 0 for one window after the event
        _alert(
            "FabconfPfcWatchdogTriggered",
            _join(f"increase({names.host_pfc_watchdog}[{w}]) > 0", names),
            f"{port}: the NIC's PFC storm watchdog stopped sending pause frames (drops are possible)",
            "0s",
            "critical",
        ),
        _alert(
            "FabconfEcnMarkRate",
            _join(_band(f"rate({names.host_ecn_marked}[{w}])", th.ecn_marked_per_s), names),
            f"{rdma}: ECN-marked RoCE packets received per second outside the expected band",
            hold,
        ),
        _alert(
            "FabconfCnpRate",
            _join(_band(f"rate({names.host_cnp_sent}[{w}])", th.cnp_per_s), names),
            f"{rdma}: CNPs sent per second outside the expected band",
            hold,
        ),
        _alert(
            "FabconfPortBelowIntendedSpeed",
            _join(f"({slow_switch}) or ({slow_host})", names),
            f"{port}: running below its intended speed",
            hold,
        ),
    ]


def _device_alerts(names: Names, timing: Timing) -> list[dict[str, Any]]:
    """A BGP session down, a device that cannot be scraped, drift, and a drift report that stopped coming."""
    hold = timing.for_duration
    bgp = f'label_replace({names.switch_bgp_peer_state} != 6, "peer", "$1", "{names.switch_bgp_peer_label}", "(.+)")'
    stale = (
        f"({names.device_info} unless on(device) {names.drift_state}) or on(device) ({names.device_info} and on() "
        f"((time() - {names.drift_last_run}) > {timing.drift_max_age_s}))"
    )
    return [
        _alert(
            "FabconfBgpSessionDown",
            _join(bgp, names),
            "{{ $labels.device }}: BGP session to {{ $labels.peer }} is not established",
            hold,
            "critical",
        ),
        _alert(
            "FabconfDeviceUnreachable",
            _join(f"{names.up} == 0", names),
            "{{ $labels.device }}: its exporter cannot be scraped (job {{ $labels.job }})",
            hold,
            "critical",
        ),
        _alert(
            "FabconfDrift",
            _join(f"{names.drift} == 1", names),
            "{{ $labels.device }}: its configuration drifted from intent (fabconf drift)",
            hold,
        ),
        _alert(
            "FabconfDriftReportStale",
            stale,
            f"{{{{ $labels.device }}}}: no fabconf drift report for it newer than {timing.drift_max_age_s:d} s",
            hold,
        ),
    ]
