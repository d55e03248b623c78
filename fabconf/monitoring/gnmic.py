"""The gnmic configuration that reads the switches' gNMI servers (``monitoring.telemetry``) for Prometheus:
``fabconf monitoring`` writes it as ``fabconf-gnmic.yml``. Targets are the switches that run a gNMI server, each
named as in the inventory (gnmic's ``source`` label, which the ``fabconf-gnmi`` scrape job turns into ``device``),
at its management address and the server's port; one subscription, ``fabconf``, streams
``monitoring.telemetry.paths`` sampled at the scrape interval; the Prometheus output listens on gnmic's default
``:9804`` and the API server on ``:7890`` with ``enable-metrics`` (``gnmic_target_up``).

Credentials never go into the file: gnmic reads ``GNMIC_USERNAME`` and ``GNMIC_PASSWORD`` (and ``GNMIC_TLS_CA``,
the CA that signed the switches' certificates) from its environment [V: openconfig/gnmic
user guide ``configuration_env.md``, commit 59775038]. TLS as the server is rendered: every target is
verified (no ``skip-verify``), except a server that speaks plain gRPC without ``tls_profile`` (the platform
table's ``plain_without_tls``: EOS), dialled ``insecure``.

Two of the paths are strings that the rules compare as numbers: gnmic's ``event-strings`` processor rewrites their
values with regular expressions (``replace``, Go ``regexp.ReplaceAllString``) [V: openconfig/gnmic
``pkg/formatters/event_strings/event_strings.go``, commit 59775038], and its Prometheus output exports a value
that parses as a number and drops any other (``toFloat``, ``strings-as-labels`` off) [V:
``pkg/outputs/prometheus_output/prometheus_common.go``]: ``port-speed`` (``SPEED_400GB``, with or without its
module prefix) becomes Mb/s (``400000``, as IF-MIB's ifHighSpeed), ``session-state`` becomes BGP4-MIB's
bgpPeerState number (``ESTABLISHED`` 6)."""

from __future__ import annotations

from typing import Any

from fabconf.compile.pipeline import Compiled
from fabconf.monitoring.names import TELEMETRY_PATHS
from fabconf.platforms import feature

OUTPUT_LISTEN = ":9804"
API_ADDRESS = ":7890"
# openconfig-bgp's session-state enumeration [V: openconfig/public ``release/models/bgp/openconfig-bgp-neighbor.yang``
# ``bgp-neighbor-state``, commit 032d2ae8] as BGP4-MIB's bgpPeerState numbers [V: RFC 4273]
BGP_STATES = {"IDLE": 1, "CONNECT": 2, "ACTIVE": 3, "OPENSENT": 4, "OPENCONFIRM": 5, "ESTABLISHED": 6}


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _processors(paths: list[str]) -> dict[str, Any]:
    processors: dict[str, Any] = {}
    if "port_speed" in paths:
        processors["fabconf-port-speed"] = {
            "event-strings": {
                "value-names": [f"{TELEMETRY_PATHS['port_speed']}$"],
                "transforms": [
                    {"replace": {"apply-on": "value", "old": r"^(?:.*:)?SPEED_([0-9]+)GB$", "new": "${1}000"}},
                    {"replace": {"apply-on": "value", "old": r"^(?:.*:)?SPEED_([0-9]+)MB$", "new": "${1}"}},
                ],
            }
        }
    if "bgp_state" in paths:
        processors["fabconf-bgp-state"] = {
            "event-strings": {
                "value-names": [f"{TELEMETRY_PATHS['bgp_state']}$"],
                "transforms": [
                    {"replace": {"apply-on": "value", "old": f"^(?:.*:)?{state}$", "new": str(number)}}
                    for state, number in BGP_STATES.items()
                ],
            }
        }
    return processors


def targets(compiled: Compiled, addresses: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """Every switch that runs a gNMI server, by inventory name. ``addresses``: where each answers instead of its
    management address (the lab's)."""
    out: dict[str, dict[str, Any]] = {}
    for name, device in sorted(compiled.model.devices.items()):
        telemetry = (compiled.data.get(name) or {}).get("telemetry") if device.is_switch else None
        if not telemetry:
            continue
        target: dict[str, Any] = {"address": _address((addresses or {}).get(name, device.hostname), telemetry["port"])}
        if feature("telemetry", device.platform).plain_without_tls and not telemetry.get("tls_profile"):
            target["insecure"] = True
        out[name] = target
    return out


def config(
    compiled: Compiled, paths: list[str], interval: str, addresses: dict[str, str] | None = None
) -> dict[str, Any]:
    processors = _processors(paths)
    output: dict[str, Any] = {"type": "prometheus", "listen": OUTPUT_LISTEN}
    if processors:
        output["event-processors"] = list(processors)
    config: dict[str, Any] = {
        "targets": targets(compiled, addresses),
        "subscriptions": {
            "fabconf": {
                "paths": [TELEMETRY_PATHS[p] for p in paths],
                "mode": "stream",
                "stream-mode": "sample",
                "sample-interval": interval,
            }
        },
        "outputs": {"fabconf": output},
        "api-server": {"address": API_ADDRESS, "enable-metrics": True},
    }
    if processors:
        config["processors"] = processors
    return config
