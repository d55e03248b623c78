"""Prometheus alerting rules for the fabric (``promtool check rules`` accepts them; ``promtool test rules`` shows
each firing in the tests). Every alert carries the device's inventory name (``device``) and, where the inventory
textfile's ``fabconf_device_info`` is scraped, its ``role`` and ``pod``: those labels are extras, an alert fires
without them (``FabconfInventoryAbsent`` says when the inventory series is missing). The metric names and the
label convention are in ``fabconf.monitoring.names``; rate windows and ``for:`` delays come from the intent
(``Timing``)."""

from __future__ import annotations

from typing import Any

from fabconf.monitoring.names import Names
from fabconf.monitoring.thresholds import Thresholds, Timing


def _join(expr: str, names: Names) -> str:
    """``expr`` with the device's ``role`` and ``pod`` where the inventory series names the device, else ``expr``
    as it is: ``or on(device)`` adds the right side's series of the devices the left side has none of, so an alert
    never depends on the inventory textfile being scraped."""
    return f"(({expr}) * on(device) group_left(role, pod) {names.device_info}) or on(device) ({expr})"


def _any_above(ratios: list[str], threshold: float) -> str:
    """Each of ``ratios`` compared with ``threshold`` on its own (in PromQL ``>`` binds tighter than ``or``: the
    comparison is written inside each operand's parentheses, never after an ``or``)."""
    return " or ".join(f"(({ratio}) > {threshold:g})" for ratio in ratios)


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
    alerts = _port_alerts(names, th, roce_priorities, timing, gnmi) + _device_alerts(names, timing, gnmi)
    return {"groups": [{"name": "fabconf-fabric", "rules": alerts}]}


def _port_alerts(
    names: Names, th: Thresholds, roce_priorities: list[int], timing: Timing, gnmi: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """Errors (SNMP, and gNMI where the switches stream them), RoCE retransmissions, PFC storms and the watchdog,
    ECN marks and CNPs, speed below intent."""
    w, hold = timing.window, timing.for_duration
    prios = sorted(roce_priorities) or [3]
    error_ratios = [f"rate({names.switch_in_errors}[{w}]) / clamp_min(rate({names.switch_in_packets}[{w}]), 1)"]
    if "port_errors" in gnmi and "port_packets" in gnmi:
        error_ratios.append(f"rate({names.gnmi_in_errors}[{w}]) / clamp_min(rate({names.gnmi_in_packets}[{w}]), 1)")
    error_ratios.append(f"rate({names.host_in_errors}[{w}]) / clamp_min(rate({names.host_in_packets}[{w}]), 1)")
    retransmits = (
        f"rate({names.host_rdma_timeouts}[{w}]) / on(device, hca, port) clamp_min(rate({names.host_rdma_sent}[{w}]), 1)"
    )
    # a storm: the NIC is held paused most of the time on a RoCE priority (mlx5's pause duration, microseconds per
    # second), or a switch receives PFC frames at a rate only a storm sustains (see Thresholds)
    paused = f"({_per_priority(names.host_pfc_pause_duration_us, prios, w)}) / 1e6"
    storm = (
        f"(({paused}) > {th.pfc_paused_fraction:g})"
        f" or (({_per_priority(names.switch_pfc_pauses, prios, w)}) > {th.pfc_pause_storm_per_s:g})"
    )
    slow = [
        f"{names.switch_speed_mbps} * 1e6 / 8 < on(device, port) {names.intended_speed}",
        f"{names.host_speed_bytes} < on(device, port) {names.intended_speed}",
    ]
    if "port_speed" in gnmi:  # Mb/s, as ifHighSpeed (the gnmic configuration's processor)
        slow.insert(1, f"{names.gnmi_speed_mbps} * 1e6 / 8 < on(device, port) {names.intended_speed}")
    port = "{{ $labels.device }} {{ $labels.port }}"
    rdma = "{{ $labels.device }} {{ $labels.hca }} port {{ $labels.port }}"
    return [
        _alert(
            "FabconfPortErrorRate",
            _join(_any_above(error_ratios, th.port_error_rate), names),
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
            _join(storm, names),
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
            _join(" or ".join(f"({one})" for one in slow), names),
            f"{port}: running below its intended speed",
            hold,
        ),
    ]


def _device_alerts(names: Names, timing: Timing, gnmi: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """A BGP session down, a device that cannot be scraped (its exporter, or its gNMI target in gnmic), drift, a
    drift report that stopped coming, and the inventory series missing (the alerts still fire then, without
    ``role`` and ``pod``). ``gnmi``: the telemetry paths the switches stream (BGP over gNMI where ``bgp_state``)."""
    hold = timing.for_duration
    sessions = [(names.switch_bgp_peer_state, names.switch_bgp_peer_label)]
    if "bgp_state" in gnmi:  # BGP4-MIB numbering (the gnmic configuration's processor)
        sessions.append((names.gnmi_bgp_state, names.gnmi_bgp_peer_label))
    bgp = " or ".join(f'label_replace({state} != 6, "peer", "$1", "{peer}", "(.+)")' for state, peer in sessions)
    unreachable, why = f"{names.up} == 0", "its exporter cannot be scraped (job {{ $labels.job }})"
    if gnmi:  # a switch is read over SNMP, gNMI or both: unreachable when none of its sources answers
        unreachable = f"max by (device) ({names.up} or {names.gnmi_target_up}) == 0"
        why = "none of its metric sources answers (its exporter's scrape, its gNMI target in gnmic)"
    too_old = f"(time() - {names.drift_last_run}) > {timing.drift_max_age_s}"
    # per device where the inventory names the devices; without it, once for the whole report (old or absent)
    stale = (
        f"({names.device_info} unless on(device) {names.drift_state}) or on(device) ({names.device_info} and on() "
        f"({too_old})) or (({too_old}) unless on() {names.device_info}) "
        f"or (absent_over_time({names.drift_last_run}[{timing.window}]) unless on() {names.device_info})"
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
            _join(unreachable, names),
            "{{ $labels.device }}: " + why,
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
        # the textfile collector is not set up, or the file was removed: the other alerts still fire (without
        # role and pod), the speed alert cannot (the intended speeds are in the same file). Over a whole window:
        # one failed scrape of the textfile target marks its series stale at once, which is not the file missing
        _alert(
            "FabconfInventoryAbsent",
            f"absent_over_time({names.device_info}[{timing.window}])",
            f"no {names.device_info} series: the inventory textfile of fabconf monitoring is not scraped (alerts "
            "carry no role or pod, intended speeds are unknown, drift staleness is not per device)",
            hold,
        ),
    ]
