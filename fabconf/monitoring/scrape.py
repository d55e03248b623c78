"""The Prometheus scrape configuration fabconf's rules expect (the label convention of
``fabconf.monitoring.names``), as data: ``contrib/prometheus/prometheus.yml`` is this configuration with comments
(a test keeps the two equal), and ``fabconf monitoring --lab`` writes it for a running lab.

- job ``fabconf``: fabconf's own series from the textfile directory of a node_exporter, ``honor_labels`` so their
  ``device`` label is kept; only ``fabconf_*`` series are kept;
- job ``fabconf-hosts``: node_exporter on every GPU host (``fabconf-targets-hosts.json``); node_exporter's own
  ``device`` label, renamed ``exported_device`` by Prometheus because the target carries ``device``, becomes
  ``port`` (a netdev) or ``hca`` (an RDMA device);
- job ``fabconf-switches``: snmp_exporter for every switch (``fabconf-targets-switches.json``), ``ifName`` copied
  to ``port``;
- job ``fabconf-gnmi``: gnmic (``fabconf-gnmic.yml``, ``fabconf.monitoring.gnmic``): its Prometheus output
  (``GNMIC_OUTPUT``, gnmic's default ``:9804``) and its API server's own metrics (``GNMIC_API``, ``:7890``, with
  ``gnmic_target_up``). gnmic's ``source`` (the target's name, the inventory name) becomes ``device``, and
  ``gnmic_target_up``'s ``name`` too; ``interface_name`` becomes ``port``.
"""

from __future__ import annotations

from typing import Any

TEXTFILE_TARGET = "localhost:9100"
SNMP_EXPORTER = "snmp-exporter.example.net:9116"
# gnmic's defaults: the Prometheus output's ``listen: :9804`` and the API server's ``address: :7890`` [V:
# openconfig/gnmic user guide ``outputs/prometheus_output.md`` and user guide ``api/api_intro.md``]
GNMIC_OUTPUT = "gnmic.example.net:9804"
GNMIC_API = "gnmic.example.net:7890"
GNMI_RELABEL: list[dict[str, Any]] = [
    {"source_labels": ["source"], "regex": "(.+)", "target_label": "device"},
    {"source_labels": ["__name__", "name"], "regex": "gnmic_target_up;(.+)", "target_label": "device"},
    {"source_labels": ["interface_name"], "regex": "(.+)", "target_label": "port"},
]


def config(
    *,
    textfile_target: str = TEXTFILE_TARGET,
    snmp_exporter: str = SNMP_EXPORTER,
    interval: str = "30s",
    gnmic: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``snmp_exporter``: HOST:PORT of the one snmp_exporter, or ``{target}:PORT`` for an exporter on every switch's
    own address (the lab). ``gnmic``: the ``static_configs`` of the ``fabconf-gnmi`` job (default: the one gnmic's
    output and API server; the lab: each switch's gnmic-shaped endpoint); an empty list: no such job."""
    gnmic = [{"targets": [GNMIC_OUTPUT, GNMIC_API]}] if gnmic is None else gnmic
    if "{target}" in snmp_exporter:
        to_exporter = {
            "source_labels": ["__param_target"],
            "regex": "(.+)",
            "target_label": "__address__",
            "replacement": snmp_exporter.replace("{target}", "${1}"),
        }
    else:
        to_exporter = {"target_label": "__address__", "replacement": snmp_exporter}
    jobs = [{"job_name": "fabconf-gnmi", "static_configs": gnmic, "metric_relabel_configs": GNMI_RELABEL}]
    return {
        "global": {"scrape_interval": interval, "evaluation_interval": interval},
        "rule_files": ["fabconf-rules.yml"],
        "scrape_configs": [
            {
                "job_name": "fabconf",
                "honor_labels": True,
                "static_configs": [{"targets": [textfile_target]}],
                "metric_relabel_configs": [{"source_labels": ["__name__"], "regex": "fabconf_.+", "action": "keep"}],
            },
            {
                "job_name": "fabconf-hosts",
                "file_sd_configs": [{"files": ["fabconf-targets-hosts.json"]}],
                "metric_relabel_configs": [
                    {
                        "source_labels": ["__name__", "exported_device"],
                        "regex": "node_(?:network|ethtool)_.+;(.+)",
                        "target_label": "port",
                    },
                    {
                        "source_labels": ["__name__", "exported_device"],
                        "regex": "node_infiniband_.+;(.+)",
                        "target_label": "hca",
                    },
                    {
                        "source_labels": ["__name__"],
                        "regex": "node_(?:network|ethtool|infiniband)_.+",
                        "target_label": "exported_device",
                        "replacement": "",
                    },
                ],
            },
            {
                "job_name": "fabconf-switches",
                "metrics_path": "/snmp",
                "file_sd_configs": [{"files": ["fabconf-targets-switches.json"]}],
                "relabel_configs": [
                    {"source_labels": ["__address__"], "target_label": "__param_target"},
                    {"source_labels": ["__param_target"], "target_label": "instance"},
                    to_exporter,
                ],
                "metric_relabel_configs": [{"source_labels": ["ifName"], "regex": "(.+)", "target_label": "port"}],
            },
        ]
        + (jobs if gnmic else []),
    }
