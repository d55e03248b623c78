"""The metric names the rules and the dashboard read, in one table, each with where it comes from, and the label
convention the rules rely on.

Label convention: every series the rules read carries ``device``, the fabconf inventory name, and a port's series
also ``port`` (its interface name) or, for an RDMA device's counters, ``hca`` (``mlx5_0``) and ``port`` (the port
number). The documented scrape configuration (``contrib/prometheus/prometheus.yml``, shown in
docs/operations/monitoring.md) produces it without touching fabconf's own series:

- fabconf's own series (the inventory textfile ``fabconf monitoring`` writes, the report ``fabconf drift`` writes)
  are scraped by the ``fabconf`` job with ``honor_labels: true``, so their ``device`` label is kept as written;
- every other target carries a ``device`` target label (its inventory name). Prometheus renames a scraped label
  that clashes with a target label to ``exported_<name>`` when ``honor_labels`` is false, and metric relabelling
  runs after that [V: Prometheus configuration documentation, ``honor_labels`` and ``metric_relabel_configs``]:
  node_exporter's own ``device`` (a netdev, or an RDMA device) arrives as ``exported_device`` and is moved to
  ``port`` or ``hca``; snmp_exporter's ``ifName`` is copied to ``port``.

Collectors that must be enabled on a GPU host's node_exporter: ``netdev`` and ``netclass`` (on by default),
``infiniband`` (on by default), ``ethtool`` (OFF by default: ``--collector.ethtool``) [V: prometheus/node_exporter
``collector/ethtool_linux.go``: ``registerCollector("ethtool", defaultDisabled, ...)``]. The RDMA hardware counters
(``/sys/class/infiniband/*/ports/*/hw_counters``) are exported by node_exporter 1.11.0 and later only [V:
prometheus/node_exporter commit f3154c97 "Add hw_counters metrics for infiniband device", first tagged v1.11.0];
Debian 12's ``prometheus-node-exporter`` (1.5.0) exports the ``counters`` directory but not ``hw_counters``.

Switches are read through snmp_exporter (one path for every platform) with the modules ``if_mib`` (in
snmp_exporter's own ``generator.yml``), ``fabconf_bgp4`` and, on Cumulus Linux, ``fabconf_cumulus_pfc`` (both in
``contrib/prometheus/snmp-generator.yml``); one scrape may name several modules (snmp_exporter's ``main.go``,
``parseModules``; older releases take one module per scrape: use one job per module there). snmp_exporter answers
HTTP 500 when the walk fails (promhttp's default
``HTTPErrorOnError``), so an unreachable switch shows as ``up == 0`` [V: prometheus/snmp_exporter ``main.go``,
``collector/collector.go``].
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

# Switch telemetry over gNMI (fabric.yaml ``monitoring.telemetry``): each key of ``monitoring.telemetry.paths`` is
# the OpenConfig path a gNMI collector subscribes to [V: openconfig/public ``release/models``:
# interfaces/openconfig-interfaces.yang (``in-errors``, ``in-unicast-pkts``), interfaces/openconfig-if-ethernet.yang
# (``in-mac-pause-frames``: MAC PAUSE frames, 802.3x link pause, not per-priority PFC: no alert reads it;
# a per-priority PFC counter over gNMI is not verified for any platform [U]),
# qos/openconfig-qos-interfaces.yang (``max-queue-len``, "Maximum observed queue length", in bytes),
# interfaces/openconfig-if-ethernet.yang (``port-speed``: an identity, ``SPEED_400GB``),
# bgp/openconfig-bgp-neighbor.yang under network-instance (``session-state``: an enumeration, ``ESTABLISHED``)].
# ``port_speed`` and ``bgp_state`` are strings: the gnmic configuration fabconf writes turns them into numbers
# (``fabconf.monitoring.gnmic``), Mb/s as IF-MIB's ifHighSpeed and BGP4-MIB's bgpPeerState numbering (6 =
# established), so the rules compare them as they compare the SNMP series.
TELEMETRY_PATHS: dict[str, str] = {
    "port_errors": "/interfaces/interface/state/counters/in-errors",
    "port_packets": "/interfaces/interface/state/counters/in-unicast-pkts",
    "queue_depth": "/qos/interfaces/interface/output/queues/queue/state/max-queue-len",
    "pfc_pauses": "/interfaces/interface/ethernet/state/counters/in-mac-pause-frames",
    "port_speed": "/interfaces/interface/ethernet/state/port-speed",
    "bgp_state": "/network-instances/network-instance/protocols/protocol/bgp/neighbors/neighbor/state/session-state",
}


def gnmi_metric(path: str) -> str:
    """The series gnmic's Prometheus output makes of a gNMI path when it adds no metric prefix and no
    subscription name: every run of characters outside ``[a-zA-Z0-9_]`` becomes ``_``, leading ``_`` dropped
    [V: openconfig/gnmic ``pkg/outputs/prometheus_output/prometheus_common.go``, ``MetricName``, commit 59775038].
    Its labels are the event's tags: ``source`` (the target's name: fabconf names each target as in the
    inventory), ``subscription_name``, and one per path key, ``<element>_<key>`` (``interface_name``,
    ``neighbor_neighbor_address``) [V: same commit, ``pkg/formatters/event.go`` ``tagsFromGNMIPath``, and
    ``pkg/app/gnmi_client_subscribe.go`` (``source`` is ``t.Config.Name``)]. The scrape job ``fabconf-gnmi``
    (``fabconf.monitoring.scrape``) copies ``source`` to ``device`` and ``interface_name`` to ``port``."""
    return re.sub(r"[^a-zA-Z0-9_]+", "_", path).lstrip("_")


@dataclass(frozen=True)
class Names:
    # switches, snmp_exporter ``if_mib``: IF-MIB objects, label ``ifName`` from the module's lookup
    # [V: prometheus/snmp_exporter ``generator/generator.yml`` (if_mib walks IF-MIB::interfaces and ifXTable, looks
    # up ifName)]; ifHighSpeed is in Mb/s [V: RFC 2863]
    switch_in_errors: str = "ifInErrors"
    switch_in_packets: str = "ifHCInUcastPkts"
    switch_speed_mbps: str = "ifHighSpeed"
    # switches, ``fabconf_bgp4`` module: BGP4-MIB bgpPeerTable, indexed by bgpPeerRemoteAddr, so snmp_exporter
    # labels each series ``bgpPeerRemoteAddr``; 6 = established [V: RFC 4273 BGP4-MIB; snmp_exporter names index
    # labels after the table's index: generator/README.md, "If the index of a table is bsnDot11EssIndex, usually
    # that'd be the label"]. The rule copies that label to ``peer``.
    switch_bgp_peer_state: str = "bgpPeerState"
    switch_bgp_peer_label: str = "bgpPeerRemoteAddr"
    # switches, Cumulus Linux, ``fabconf_cumulus_pfc`` module: CUMULUS-COUNTERS-MIB pfcClCountersTable (indexed by
    # ifIndex), PFC frames received per priority [V: NVIDIA, Cumulus Linux MIBs, ``Cumulus-Counters-MIB.txt``
    # (docs.nvidia.com/networking-ethernet-software/mibs/; revision 201711080000Z added pfcClCountersTable);
    # object names clIntInPfc0Pkt .. clIntInPfc7Pkt (1.3.6.1.4.1.40310.2.2.3.1.{4,6,...,18}) read from a pysnmp
    # compilation of that MIB]. EOS and NX-OS: no PFC counter path is
    # verified here [U]; their switch PFC counters are not read (the hosts' counters cover the links to them).
    switch_pfc_pauses: str = "clIntInPfc{prio}Pkt"
    # GPU hosts, node_exporter netdev and netclass collectors [V: prometheus/node_exporter
    # ``collector/netdev_common.go`` (``receive_errors`` -> ``receive_errs``, ``_total``), ``netclass_linux.go``]
    host_in_errors: str = "node_network_receive_errs_total"
    host_in_packets: str = "node_network_receive_packets_total"
    host_speed_bytes: str = "node_network_speed_bytes"
    # GPU hosts, node_exporter ethtool collector (``--collector.ethtool``): mlx5 names its per-priority pause
    # counter ``rx_prio{N}_pause`` and its PFC stall-prevention (watchdog) counter ``tx_pause_storm_error_events``
    # [V: Linux ``drivers/net/ethernet/mellanox/mlx5/core/en_stats.c``]; node_exporter lower-cases the name,
    # rewrites ``rx``/``tx`` words to ``received``/``transmitted``, adds no ``_total`` and labels ``device``
    # [V: prometheus/node_exporter ``collector/ethtool_linux.go``, ``buildEthtoolFQName``]
    host_pfc_pauses: str = "node_ethtool_received_prio{prio}_pause"
    # mlx5's ``rx_prio{N}_pause_duration``: how long the far end held the port paused on priority N, in
    # microseconds [3P: Linux Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst,
    # "rx_prio[i]_pause_duration"; the unit [U] until checked on a ConnectX]: its rate over a window, divided by
    # 1e6, is the fraction of the time the port was paused, which measures a storm directly
    host_pfc_pause_duration_us: str = "node_ethtool_received_prio{prio}_pause_duration"
    host_pfc_watchdog: str = "node_ethtool_transmitted_pause_storm_error_events"
    # GPU hosts, node_exporter infiniband collector, labels ``device`` (RDMA device) and ``port`` (number)
    # [V: prometheus/node_exporter ``collector/infiniband_linux.go``]: ``counters/port_xmit_packets`` (every version)
    # and ``hw_counters/local_ack_timeout_err``, ``np_cnp_sent``, ``np_ecn_marked_roce_packets`` (1.11.0 and later)
    host_rdma_sent: str = "node_infiniband_port_packets_transmitted_total"
    host_rdma_timeouts: str = "node_infiniband_local_ack_timeout_errors_total"
    host_cnp_sent: str = "node_infiniband_np_cnp_packets_sent_total"
    host_ecn_marked: str = "node_infiniband_np_ecn_marked_roce_packets_received_total"
    # every target: Prometheus's own scrape health series
    up: str = "up"
    # fabconf's own series: ``fabconf drift --format prometheus`` (fabconf/cli/drift_metrics.py) and
    # ``fabconf monitoring``'s inventory textfile (fabconf/monitoring/inventory.py)
    drift: str = "fabconf_drift_drifted"
    drift_state: str = "fabconf_drift_device_state"
    drift_last_run: str = "fabconf_drift_last_run_timestamp_seconds"
    device_info: str = "fabconf_device_info"
    intended_speed: str = "fabconf_port_intended_speed_bytes"
    # switches over gNMI (``monitoring.telemetry``): the series of TELEMETRY_PATHS, as gnmic exports them
    gnmi_in_errors: str = gnmi_metric(TELEMETRY_PATHS["port_errors"])
    gnmi_in_packets: str = gnmi_metric(TELEMETRY_PATHS["port_packets"])
    gnmi_queue_depth: str = gnmi_metric(TELEMETRY_PATHS["queue_depth"])
    gnmi_pause_frames: str = gnmi_metric(TELEMETRY_PATHS["pfc_pauses"])
    gnmi_speed_mbps: str = gnmi_metric(TELEMETRY_PATHS["port_speed"])  # Mb/s (gnmic's processor, fabconf's config)
    gnmi_bgp_state: str = gnmi_metric(TELEMETRY_PATHS["bgp_state"])  # BGP4-MIB numbering (6 = established)
    gnmi_bgp_peer_label: str = "neighbor_neighbor_address"  # the neighbor list's key, as gnmic tags it
    # gnmic's own series (its API server with ``enable-metrics``), label ``name`` (the target): 1 while the gNMI
    # connection is up, 0 otherwise [V: openconfig/gnmic ``pkg/app/metrics.go``, ``targetUPMetric``, commit
    # 59775038]; the scrape job copies ``name`` to ``device``
    gnmi_target_up: str = "gnmic_target_up"

    def per_priority(self, template: str, prio: int) -> str:
        return template.format(prio=prio)

    def all(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self)}
