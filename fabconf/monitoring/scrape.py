"""The Prometheus scrape configuration fabconf's rules expect (the label convention of
``fabconf.monitoring.names``), as data: ``contrib/prometheus/prometheus.yml`` is this configuration with comments
(a test keeps the two equal), and ``fabconf monitoring --lab`` writes it for a running lab.

- job ``fabconf``: fabconf's own series from the textfile directory of a node_exporter, ``honor_labels`` so their
  ``device`` label is kept; only ``fabconf_*`` series are kept;
- job ``fabconf-hosts``: node_exporter on every GPU host (``fabconf-targets-hosts.json``); node_exporter's own
  ``device`` label, renamed ``exported_device`` by Prometheus because the target carries ``device``, becomes
  ``port`` (a netdev) or ``hca`` (an RDMA device);
- job ``fabconf-switches``: snmp_exporter for every switch (``fabconf-targets-switches.json``), ``ifName`` copied
  to ``port``.
"""

from __future__ import annotations

from typing import Any

TEXTFILE_TARGET = "localhost:9100"
SNMP_EXPORTER = "snmp-exporter.example.net:9116"


def config(
    *,
    textfile_target: str = TEXTFILE_TARGET,
    snmp_exporter: str = SNMP_EXPORTER,
    interval: str = "30s",
) -> dict[str, Any]:
    """``snmp_exporter``: HOST:PORT of the one snmp_exporter, or ``{target}:PORT`` for an exporter on every switch's
    own address (the lab)."""
    if "{target}" in snmp_exporter:
        to_exporter = {
            "source_labels": ["__param_target"],
            "regex": "(.+)",
            "target_label": "__address__",
            "replacement": snmp_exporter.replace("{target}", "${1}"),
        }
    else:
        to_exporter = {"target_label": "__address__", "replacement": snmp_exporter}
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
        ],
    }
