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
