"""The names ``ethtool -S`` prints for an mlx5 port, in its order, so the lab's output has a real one's size and
shape [3P: tests/captures/ethtool-S, an mlx5 port with one channel]. The lab models a few of them (platcmds.counters);
the others read 0. Per priority the traffic counters (``rx_prioN_bytes``...) come where the capture has prio 0's,
and the buffer counters (``rx_prioN_buf_discard``...) at the end, for all eight priorities; the capture shows prio
0's only, and the PFC pause counters (``rx_prioN_pause``...) not at all (its port had no PFC): printing them for
every priority, after the traffic ones, is the lab's choice [U]."""

from __future__ import annotations


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


HEAD = _words(
    """
rx_packets rx_bytes tx_packets tx_bytes tx_tso_packets tx_tso_bytes tx_tso_inner_packets tx_tso_inner_bytes
tx_added_vlan_packets tx_nop tx_mpwqe_blks tx_mpwqe_pkts rx_lro_packets rx_lro_bytes rx_ecn_mark
rx_removed_vlan_packets rx_csum_unnecessary rx_csum_none rx_csum_complete rx_csum_complete_tail
rx_csum_complete_tail_slow rx_csum_unnecessary_inner rx_xdp_drop rx_xdp_redirect rx_xdp_tx_xmit
rx_xdp_tx_mpwqe rx_xdp_tx_inlnw rx_xdp_tx_nops rx_xdp_tx_full rx_xdp_tx_err rx_xdp_tx_cqe tx_csum_none
tx_csum_partial tx_csum_partial_inner tx_queue_stopped tx_queue_dropped tx_xmit_more tx_recover tx_cqes
tx_queue_wake tx_cqe_err tx_xdp_xmit tx_xdp_mpwqe tx_xdp_inlnw tx_xdp_nops tx_xdp_full tx_xdp_err tx_xdp_cqes
tx_cqe_compress_blks tx_cqe_compress_pkts rx_wqe_err rx_mpwqe_filler_cqes rx_mpwqe_filler_strides
rx_oversize_pkts_sw_drop rx_buff_alloc_err rx_cqe_compress_blks rx_cqe_compress_pkts rx_cache_reuse
rx_cache_full rx_cache_empty rx_cache_busy rx_cache_ext rx_cache_rdc rx_cache_alloc rx_cache_waive
rx_congst_umr rx_arfs_err rx_recover rx_pet_hdr_lookup_drop rx_pet_mdata_lookup_drop ch_events ch_poll ch_arm
ch_aff_change ch_force_irq ch_eq_rearm rx_xsk_packets rx_xsk_bytes rx_xsk_csum_complete
rx_xsk_csum_unnecessary rx_xsk_csum_unnecessary_inner rx_xsk_csum_none rx_xsk_ecn_mark
rx_xsk_removed_vlan_packets rx_xsk_xdp_drop rx_xsk_xdp_redirect rx_xsk_wqe_err rx_xsk_mpwqe_filler_cqes
rx_xsk_mpwqe_filler_strides rx_xsk_oversize_pkts_sw_drop rx_xsk_buff_alloc_err rx_xsk_cqe_compress_blks
rx_xsk_cqe_compress_pkts rx_xsk_congst_umr rx_xsk_arfs_err tx_xsk_xmit tx_xsk_mpwqe tx_xsk_inlnw tx_xsk_full
tx_xsk_err tx_xsk_cqes rx_out_of_buffer rx_if_down_packets rx_steer_missed_packets dev_internal_queue_oob
rx_vport_unicast_packets rx_vport_unicast_bytes tx_vport_unicast_packets tx_vport_unicast_bytes
rx_vport_multicast_packets rx_vport_multicast_bytes tx_vport_multicast_packets tx_vport_multicast_bytes
rx_vport_broadcast_packets rx_vport_broadcast_bytes tx_vport_broadcast_packets tx_vport_broadcast_bytes
rx_vport_rdma_unicast_packets rx_vport_rdma_unicast_bytes tx_vport_rdma_unicast_packets
tx_vport_rdma_unicast_bytes rx_vport_rdma_multicast_packets rx_vport_rdma_multicast_bytes
tx_vport_rdma_multicast_packets tx_vport_rdma_multicast_bytes tx_packets_phy rx_packets_phy rx_crc_errors_phy
tx_bytes_phy rx_bytes_phy tx_multicast_phy tx_broadcast_phy rx_multicast_phy rx_broadcast_phy
rx_in_range_len_errors_phy rx_out_of_range_len_phy rx_oversize_pkts_phy rx_symbol_err_phy tx_mac_control_phy
rx_mac_control_phy rx_unsupported_op_phy rx_pause_ctrl_phy tx_pause_ctrl_phy rx_discards_phy tx_discards_phy
tx_errors_phy rx_undersize_pkts_phy rx_fragments_phy rx_jabbers_phy rx_64_bytes_phy rx_65_to_127_bytes_phy
rx_128_to_255_bytes_phy rx_256_to_511_bytes_phy rx_512_to_1023_bytes_phy rx_1024_to_1518_bytes_phy
rx_1519_to_2047_bytes_phy rx_2048_to_4095_bytes_phy rx_4096_to_8191_bytes_phy rx_8192_to_10239_bytes_phy
link_down_events_phy rx_pcs_symbol_err_phy rx_corrected_bits_phy rx_err_lane_0_phy rx_err_lane_1_phy
rx_err_lane_2_phy rx_err_lane_3_phy rx_buffer_passed_thres_phy rx_pci_signal_integrity
tx_pci_signal_integrity outbound_pci_stalled_rd outbound_pci_stalled_wr outbound_pci_stalled_rd_events
outbound_pci_stalled_wr_events
"""
)
CHANNEL_AND_MODULE = _words(
    """
tx_pause_storm_warning_events tx_pause_storm_error_events module_unplug module_bus_stuck module_high_temp
module_bad_shorted ch0_events ch0_poll ch0_arm ch0_aff_change ch0_force_irq ch0_eq_rearm rx0_packets
rx0_bytes rx0_csum_complete rx0_csum_complete_tail rx0_csum_complete_tail_slow rx0_csum_unnecessary
rx0_csum_unnecessary_inner rx0_csum_none rx0_xdp_drop rx0_xdp_redirect rx0_lro_packets rx0_lro_bytes
rx0_ecn_mark rx0_removed_vlan_packets rx0_wqe_err rx0_mpwqe_filler_cqes rx0_mpwqe_filler_strides
rx0_oversize_pkts_sw_drop rx0_buff_alloc_err rx0_cqe_compress_blks rx0_cqe_compress_pkts rx0_cache_reuse
rx0_cache_full rx0_cache_empty rx0_cache_busy rx0_cache_waive rx0_cache_ext rx0_cache_rdc rx0_cache_alloc
rx0_congst_umr rx0_arfs_err rx0_recover rx0_pet_hdr_lookup_drop rx0_pet_mdata_lookup_drop rx0_xdp_tx_xmit
rx0_xdp_tx_mpwqe rx0_xdp_tx_inlnw rx0_xdp_tx_nops rx0_xdp_tx_full rx0_xdp_tx_err rx0_xdp_tx_cqes tx0_packets
tx0_bytes tx0_tso_packets tx0_tso_bytes tx0_tso_inner_packets tx0_tso_inner_bytes tx0_csum_partial
tx0_csum_partial_inner tx0_added_vlan_packets tx0_nop tx0_mpwqe_blks tx0_mpwqe_pkts tx0_csum_none tx0_stopped
tx0_dropped tx0_xmit_more tx0_recover tx0_cqes tx0_cqe_compress_blks tx0_cqe_compress_pkts tx0_wake
tx0_cqe_err tx0_xdp_xmit tx0_xdp_mpwqe tx0_xdp_inlnw tx0_xdp_nops tx0_xdp_full tx0_xdp_err tx0_xdp_cqes
"""
)
PRIO_TRAFFIC = (
    "rx_prio{p}_bytes",
    "rx_prio{p}_packets",
    "rx_prio{p}_discards",
    "tx_prio{p}_bytes",
    "tx_prio{p}_packets",
)
PRIO_PAUSE = (
    "rx_prio{p}_pause",
    "rx_prio{p}_pause_duration",
    "tx_prio{p}_pause",
    "tx_prio{p}_pause_duration",
    "rx_prio{p}_pause_transition",
)
PRIO_BUFFER = ("rx_prio{p}_buf_discard", "rx_prio{p}_cong_discard", "rx_prio{p}_marked")
PRIOS = 8


def names() -> list[str]:
    """Every counter name, in the order ethtool prints them."""
    out = list(HEAD)
    for prio in range(PRIOS):
        out += [name.format(p=prio) for name in PRIO_TRAFFIC + PRIO_PAUSE]
    out += CHANNEL_AND_MODULE
    for prio in range(PRIOS):
        out += [name.format(p=prio) for name in PRIO_BUFFER]
    return out
