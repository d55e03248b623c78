"""The fabric's Grafana dashboard, built with Grafana's own Foundation SDK (``grafana-foundation-sdk``): port
errors and packets, port speed against intent, RoCE retransmissions, PFC pauses and the watchdog, ECN marks and
CNPs, BGP sessions, drift and scrape health, with a ``device`` variable; every query uses
``fabconf.monitoring.names``."""

from __future__ import annotations

import json

from grafana_foundation_sdk.builders import dashboard, prometheus, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import DataSourceRef

from fabconf.monitoring.names import Names

DATASOURCE = DataSourceRef(type_val="prometheus", uid="${datasource}")
SELECT = 'device=~"$device"'


def _panel(title: str, unit: str, *queries: tuple[str, str]) -> timeseries.Panel:
    panel = timeseries.Panel().title(title).unit(unit).datasource(DATASOURCE).height(8).span(12)
    for expr, legend in queries:
        panel = panel.with_target(prometheus.Dataquery().expr(expr).legend_format(legend))
    return panel


def _share(errors: str, packets: str, window: str) -> str:
    return f"rate({errors}{{{SELECT}}}[{window}]) / clamp_min(rate({packets}{{{SELECT}}}[{window}]), 1)"


def _per_priority(template: str, prio: int, window: str) -> str:
    return f"rate({template.format(prio=prio)}{{{SELECT}}}[{window}])"


def build(names: Names, title: str, roce_priorities: list[int], window: str = "5m", gnmi: tuple[str, ...] = ()) -> str:
    """The Grafana dashboard, as JSON: a device picker, then ``_panels`` (and the gNMI panels of the paths in
    ``gnmi``, ``monitoring.telemetry.paths`` where a switch streams them)."""
    board = (
        dashboard.Dashboard(title)
        .uid("fabconf-fabric")
        .tags(["fabconf", "roce"])
        .refresh("1m")
        .time("now-6h", "now")
        .with_variable(dashboard.DatasourceVariable("datasource").label("Data source").type("prometheus"))
        .with_variable(
            dashboard.QueryVariable("device")
            .label("Device")
            .datasource(DATASOURCE)
            .query(f"label_values({names.device_info}, device)")
            .multi(True)
            .include_all(True)
        )
    )
    for panel in _panels(names, roce_priorities, window) + _gnmi_panels(names, window, gnmi):
        board = board.with_panel(panel)
    return json.dumps(board.build(), cls=JSONEncoder, indent=2, sort_keys=True) + "\n"


def _panels(names: Names, roce_priorities: list[int], w: str) -> list[timeseries.Panel]:
    """Port errors and packets, speed against intent, RoCE retransmissions, PFC pauses and the watchdog, ECN
    marks and CNPs, BGP sessions, drift and scrape health; every query selects the chosen devices."""
    prio = roce_priorities[0] if roce_priorities else 3
    rdma = "{{device}} {{hca}} {{port}}"
    bgp_legend = "{{device}} {{" + names.switch_bgp_peer_label + "}}"
    return [
        _panel(
            "Port errors (share of received frames)",
            "percentunit",
            (_share(names.switch_in_errors, names.switch_in_packets, w), "{{device}} {{port}}"),
            (_share(names.host_in_errors, names.host_in_packets, w), "{{device}} {{port}}"),
        ),
        _panel(
            "Port packets per second",
            "pps",
            (f"rate({names.switch_in_packets}{{{SELECT}}}[{w}])", "{{device}} {{port}}"),
            (f"rate({names.host_in_packets}{{{SELECT}}}[{w}])", "{{device}} {{port}}"),
        ),
        _panel(
            "Port speed against intent (bits/s)",
            "bps",
            (f"{names.switch_speed_mbps}{{{SELECT}}} * 1e6", "{{device}} {{port}}"),
            (f"{names.host_speed_bytes}{{{SELECT}}} * 8", "{{device}} {{port}}"),
            (f"{names.intended_speed}{{{SELECT}}} * 8", "intended {{device}} {{port}}"),
        ),
        _panel(
            "RoCE retransmission timeouts per second",
            "ops",
            (f"rate({names.host_rdma_timeouts}{{{SELECT}}}[{w}])", rdma),
        ),
        _panel(
            f"PFC pause frames received per second (priority {prio})",
            "ops",
            (_per_priority(names.switch_pfc_pauses, prio, w), "{{device}} {{port}}"),
            (_per_priority(names.host_pfc_pauses, prio, w), "{{device}} {{port}}"),
            (f"increase({names.host_pfc_watchdog}{{{SELECT}}}[{w}])", "watchdog {{device}} {{port}}"),
        ),
        _panel(
            f"Share of the time a GPU NIC is held paused (priority {prio}; a storm holds it near 1)",
            "percentunit",
            (f"{_per_priority(names.host_pfc_pause_duration_us, prio, w)} / 1e6", "{{device}} {{port}}"),
        ),
        _panel(
            "ECN-marked RoCE packets and CNPs per second",
            "ops",
            (f"rate({names.host_ecn_marked}{{{SELECT}}}[{w}])", "ECN " + rdma),
            (f"rate({names.host_cnp_sent}{{{SELECT}}}[{w}])", "CNP " + rdma),
        ),
        _panel(
            "BGP sessions not established (6 = established)",
            "none",
            (f"{names.switch_bgp_peer_state}{{{SELECT}}} != 6", bgp_legend),
        ),
        _panel(
            "Drift (1 = drifted) and scrape health",
            "none",
            (f"{names.drift}{{{SELECT}}}", "drift {{device}}"),
            (f"{names.up}{{{SELECT}}}", "up {{device}} {{job}}"),
        ),
    ]


def _gnmi_panels(names: Names, w: str, gnmi: tuple[str, ...]) -> list[timeseries.Panel]:
    """The switches' gNMI series: port errors, the deepest egress queue, MAC (802.3x link) pause frames, port speed,
    BGP sessions, and whether gnmic is connected to each switch."""
    port = "{{device}} {{port}}"
    panels = []
    if "port_errors" in gnmi and "port_packets" in gnmi:
        share = _share(names.gnmi_in_errors, names.gnmi_in_packets, w)
        panels.append(_panel("Switch port errors over gNMI (share of received frames)", "percentunit", (share, port)))
    if "queue_depth" in gnmi:
        depth = f"{names.gnmi_queue_depth}{{{SELECT}}}"
        panels.append(_panel("Egress queue depth over gNMI (largest observed, bytes)", "bytes", (depth, port)))
    if "pfc_pauses" in gnmi:
        pauses = f"rate({names.gnmi_pause_frames}{{{SELECT}}}[{w}])"
        panels.append(_panel("Link (802.3x) pause frames received over gNMI per second", "ops", (pauses, port)))
    if "port_speed" in gnmi:  # Mb/s (fabconf-gnmic.yml's processor), against intent as the SNMP panel shows it
        speed = f"{names.gnmi_speed_mbps}{{{SELECT}}} * 1e6"
        intent = f"{names.intended_speed}{{{SELECT}}} * 8"
        panels.append(
            _panel(
                "Switch port speed over gNMI against intent (bits/s)",
                "bps",
                (speed, port),
                (intent, "intended " + port),
            )
        )
    if "bgp_state" in gnmi:
        down = f"{names.gnmi_bgp_state}{{{SELECT}}} != 6"
        legend = "{{device}} {{" + names.gnmi_bgp_peer_label + "}}"
        panels.append(_panel("BGP sessions over gNMI not established (6 = established)", "none", (down, legend)))
    panels.append(
        _panel(
            "gNMI targets up in gnmic (1 = connected)", "none", (f"{names.gnmi_target_up}{{{SELECT}}}", "{{device}}")
        )
    )
    return panels


def queries(board_json: str) -> list[str]:
    """Every panel query of a built dashboard (for a parser check)."""
    board = json.loads(board_json)
    return [t["expr"] for p in board.get("panels", []) for t in p.get("targets", [])]
