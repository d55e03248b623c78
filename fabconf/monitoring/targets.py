"""Prometheus file-based service discovery for the fabric (``file_sd_configs``), from the inventory: every device
as a scrape target whose ``device`` label is its inventory name, so the documented scrape configuration
(``contrib/prometheus/prometheus.yml``) gives every series the rules read that label without a hand-kept list.

- ``fabconf-targets-hosts.json``: GPU hosts at ``MGMT:9100`` (node_exporter's default port);
- ``fabconf-targets-switches.json``: switches as SNMP targets (``MGMT``) for snmp_exporter, each with the modules
  its platform needs in ``__param_module`` (the platform row's ``snmp_modules``; fabconf/monitoring/names.py).
  A switch that runs a gNMI server (``monitoring.telemetry``) is also a gnmic target (``fabconf.monitoring.gnmic``):
  fabconf renders its gNMI server, not its SNMP agent (the operator's, where there is one); the rules read either
  source, and call a switch unreachable only when neither answers.
"""

from __future__ import annotations

import json
from typing import Any

from fabconf.compile.pipeline import Compiled
from fabconf.platforms import platform

NODE_EXPORTER_PORT = 9100
SWITCH_MODULES = ("if_mib", "fabconf_bgp4")


def _address(host: str, port: int | None) -> str:
    return f"[{host}]:{port}" if ":" in host and port else f"{host}:{port}" if port else host


def groups(
    compiled: Compiled, addresses: dict[str, str] | None = None, host_port: int = NODE_EXPORTER_PORT
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``addresses``: where each device answers instead of its management address (the lab's)."""
    hosts: list[dict[str, Any]] = []
    switches: list[dict[str, Any]] = []
    for name, device in sorted(compiled.model.devices.items()):
        address = (addresses or {}).get(name, device.hostname)
        if device.is_switch:
            modules = ",".join(SWITCH_MODULES + platform(device.platform).snmp_modules)
            switches.append({"targets": [address], "labels": {"device": name, "__param_module": modules}})
        else:
            hosts.append({"targets": [_address(address, host_port)], "labels": {"device": name}})
    return hosts, switches


def as_text(
    compiled: Compiled, addresses: dict[str, str] | None = None, host_port: int = NODE_EXPORTER_PORT
) -> tuple[str, str]:
    hosts, switches = groups(compiled, addresses, host_port)
    return json.dumps(hosts, indent=2) + "\n", json.dumps(switches, indent=2) + "\n"
