"""Preflight's parsers of host tool output, on the tools' formats."""

from __future__ import annotations

from fabconf.preflight import hostparse as hp

BRIDGE = (
    "17:00.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0) (prog-if 00 [Normal decode])\n"
    "\tCapabilities: [100 v1] Access Control Services\n"
    "\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl+ DirectTrans+\n"
    "\t\tACSCtl:\t{ctl}\n\n"
    "18:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n\n"
)


def test_acs_counts_only_the_redirect_bits() -> None:
    """Source validation alone does not send peer-to-peer traffic through the root complex (issue 30)."""
    off = "SrcValid+ TransBlk- ReqRedir- CmpltRedir- UpstreamFwd+ EgressCtrl- DirectTrans-"
    assert hp.parse_acs_enabled(BRIDGE.format(ctl=off)) == []
    for on in ("ReqRedir+ CmpltRedir-", "ReqRedir- CmpltRedir+"):
        assert hp.parse_acs_enabled(BRIDGE.format(ctl=f"SrcValid- TransBlk- {on} UpstreamFwd-")) == ["17:00.0"]


IBV_DEVINFO = (
    "hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t28.39.1002\n\tphys_port_cnt:\t\t\t1\n"
    "\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n"
    "\t\t\tactive_mtu:\t\t{mtu}\n\t\t\tlink_layer:\t\tEthernet\n\n"
    "hca_id:\tmlx5_1\n\tfw_ver:\t\t\t\t28.39.1002\n\t\tport:\t1\n\t\t\tmax_mtu:\t\t4096 (5)\n"
    "\t\t\tactive_mtu:\t\t4096 (5)\n"
)


def test_active_mtu_per_rdma_device() -> None:
    assert hp.parse_ibv_active_mtu(IBV_DEVINFO.format(mtu="1024 (3)")) == {"mlx5_0": 1024, "mlx5_1": 4096}
    assert hp.parse_ibv_firmware(IBV_DEVINFO.format(mtu="4096 (5)")) == {"mlx5_0": "28.39.1002", "mlx5_1": "28.39.1002"}
