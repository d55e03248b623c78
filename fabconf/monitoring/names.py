"""The metric names the rules and the dashboard expect, in one place, and the label convention they rely on.

Convention: every series carries ``device`` (the fabconf inventory name) and, for a port, ``port`` (its
interface name). The exporters label differently, so the scrape configs relabel (docs/operations/monitoring.md): for
node_exporter, ``instance`` -> ``device`` and its own ``device`` (the interface) -> ``port``; for snmp_exporter,
``ifName`` -> ``port`` and the target -> ``device``. fabconf's own metrics (``fabconf drift``, and the inventory
textfile ``fabconf monitoring`` writes) already use ``device``.

Sources ([U] where the name is recalled, not checked against the exporter's documentation):
- switches through snmp_exporter's ``if_mib`` module: ``ifInErrors``, ``ifHCInUcastPkts``, ``ifHighSpeed``
  (Mb/s), ``ifOperStatus``; BGP through its ``bgp4_mib`` module: ``bgpPeerState`` (6 = established) [U];
- switch PFC and ECN counters through a gNMI exporter (gnmic's Prometheus output) [U]:
  ``interface_pfc_rx_pause_frames_total{priority}``, ``interface_pfc_watchdog_storm_detected_total``,
  ``interface_ecn_marked_packets_total``;
- GPU hosts through node_exporter: ``node_network_receive_errs_total``, ``node_network_receive_packets_total``,
  ``node_network_speed_bytes``; its ethtool collector for the NIC's per-priority pause counters
  (``node_ethtool_rx_prio3_pause`` style names, ``{prio}`` below) [U];
- RoCE transport counters (``/sys/class/infiniband/*/ports/1/hw_counters``: ``local_ack_timeout_err``,
  ``np_cnp_sent``) through a textfile or RDMA exporter as ``rdma_hw_counter_total{counter}`` and sent packets as
  ``node_infiniband_port_packets_transmitted_total`` [U].
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Names:
    switch_in_errors: str = "ifInErrors"
    switch_in_packets: str = "ifHCInUcastPkts"
    switch_speed_mbps: str = "ifHighSpeed"
    switch_bgp_peer_state: str = "bgpPeerState"
    switch_pfc_pauses: str = "interface_pfc_rx_pause_frames_total"
    switch_pfc_watchdog: str = "interface_pfc_watchdog_storm_detected_total"
    switch_ecn_marked: str = "interface_ecn_marked_packets_total"
    host_in_errors: str = "node_network_receive_errs_total"
    host_in_packets: str = "node_network_receive_packets_total"
    host_speed_bytes: str = "node_network_speed_bytes"
    host_pfc_pauses: str = "node_ethtool_rx_prio{prio}_pause"
    host_rdma_counter: str = "rdma_hw_counter_total"
    host_rdma_sent: str = "node_infiniband_port_packets_transmitted_total"
    drift: str = "fabconf_drift_drifted"
    device_info: str = "fabconf_device_info"
    intended_speed: str = "fabconf_port_intended_speed_bits"
