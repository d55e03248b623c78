"""The fabric's Grafana dashboard, built with Grafana's own Foundation SDK (``grafana-foundation-sdk``): port
utilisation, errors, RoCE retransmissions, PFC pauses, ECN marks and CNPs, and drift, with a ``role`` and a
``device`` variable; every query uses ``fabconf.monitoring.names``."""

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


def _share(errors: str, packets: str) -> str:
    return f"rate({errors}{{{SELECT}}}[5m]) / clamp_min(rate({packets}{{{SELECT}}}[5m]), 1)"


def build(names: Names, title: str, roce_priorities: list[int]) -> str:
    prio = roce_priorities[0] if roce_priorities else 3
    timeouts = f'rate({names.host_rdma_counter}{{counter="local_ack_timeout_err",{SELECT}}}[5m])'
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
        .with_panel(
            _panel(
                "Port errors (share of received frames)",
                "percentunit",
                (_share(names.switch_in_errors, names.switch_in_packets), "{{device}} {{port}}"),
                (_share(names.host_in_errors, names.host_in_packets), "{{device}} {{port}}"),
            )
        )
        .with_panel(
            _panel(
                "Port packets per second",
                "pps",
                (f"rate({names.switch_in_packets}{{{SELECT}}}[5m])", "{{device}} {{port}}"),
                (f"rate({names.host_in_packets}{{{SELECT}}}[5m])", "{{device}} {{port}}"),
            )
        )
        .with_panel(
            _panel(
                "RoCE retransmission timeouts per second",
                "ops",
                (timeouts, "{{device}} {{port}}"),
            )
        )
        .with_panel(
            _panel(
                "PFC pause frames received per second (RoCE priority)",
                "ops",
                (f'rate({names.switch_pfc_pauses}{{priority="{prio}",{SELECT}}}[1m])', "{{device}} {{port}}"),
                (f"rate({names.host_pfc_pauses.format(prio=prio)}{{{SELECT}}}[1m])", "{{device}} {{port}}"),
            )
        )
        .with_panel(
            _panel(
                "ECN-marked packets and CNPs per second",
                "ops",
                (f"rate({names.switch_ecn_marked}{{{SELECT}}}[5m])", "ECN {{device}} {{port}}"),
                (f'rate({names.host_rdma_counter}{{counter="np_cnp_sent",{SELECT}}}[5m])', "CNP {{device}} {{port}}"),
            )
        )
        .with_panel(_panel("Drift (1 = drifted)", "none", (f"{names.drift}{{{SELECT}}}", "{{device}}")))
    )
    return json.dumps(board.build(), cls=JSONEncoder, indent=2, sort_keys=True) + "\n"
