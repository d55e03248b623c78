"""Preflight's parsers of host tool output, on the tools' formats."""

from __future__ import annotations

from fabconf.preflight import host, nccl
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


LSPCI = (
    "0000:18:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n"
    "\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n"
    "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported\n"
    "\t\tLnkSta:\tSpeed 32GT/s (ok), Width x8 (downgraded)\n\n"
    "1b:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
    "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported\n"
    "\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16 (ok)\n\n"
    "2b:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
    "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported\n"
    "\t\tLnkSta:\tSpeed 32GT/s (ok), Width x4 (downgraded)\n"
)
MST = (
    "PCI devices:\n------------\nDEVICE_TYPE             MST                           PCI       RDMA            NET"
    "                                     NUMA\n"
    "ConnectX7(rev:0)        /dev/mst/mt4129_pciconf0      18:00.0   mlx5_0          net-ens1f0np0   0\n"
)


def test_pcie_links_against_their_capability() -> None:
    links = hp.parse_lspci_links(LSPCI)
    assert links["0000:18:00.0"] == hp.PcieLink(
        "Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]", 32.0, 16, 32.0, 8
    )
    assert (links["0000:1b:00.0"].speed, links["0000:1b:00.0"].width) == (2.5, 16)
    facts = host.HostFacts()
    reads = host._Reads({"lspci -vvv": (0, LSPCI), "mst status -v": (0, MST)}, facts)
    host._pcie([{"rdma": "mlx5_0", "netdev": "ens1f0np0"}], reads)
    assert facts.failed == [
        "[pcie] mlx5_0 (ens1f0np0) at 0000:18:00.0: PCIe link x8 at 32GT/s, capable of x16 at 32GT/s "
        "(lspci LnkSta/LnkCap); reseat the card or check the slot",
        "[pcie] GPU at 0000:2b:00.0: PCIe link x4, capable of x16 (lspci LnkSta/LnkCap)",  # idle: 2.5GT/s is fine
    ]


def test_nvidia_driver_versions_of_both_module_flavours() -> None:
    proprietary = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024\n"
    open_modules = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.90.07  Release Build  (dvs-builder)\n"
    assert hp.parse_nvidia_version(proprietary) == hp.parse_nvidia_version(open_modules) == "550.90.07"
    assert (hp.parse_nvidia_open(proprietary), hp.parse_nvidia_open(open_modules)) == (False, True)
    assert hp.parse_kernel_release("6.8.0-45-generic\n") == (6, 8)


MLXLINK = (
    "Operational Info\n----------------\nState                              : Active\n"
    "FEC                                : Standard_RS-FEC - (544,514)\n\n"
    "Physical Counters and BER Info\n------------------------------\n"
    "Time Since Last Clear [Min]        : 42.7\nEffective Physical Errors          : 0\n"
    "Effective Physical BER             : 15E-255\nRaw Physical BER                   : 3E-10\n"
)


def test_mlxlink_fec_and_ber() -> None:
    assert hp.parse_mlxlink(MLXLINK) == hp.LinkBer("Standard_RS-FEC - (544,514)", 3e-10, 0)


TOPO = (
    "\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tNV18\tPXB\tSYS\t0-55,112-167\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tSYS\tNODE\t56-111,168-223\t1\t\tN/A\n"
    "NIC0\tPXB\tSYS\t X \tSYS\n"
    "NIC1\tSYS\tNODE\tSYS\t X \n\n"
    "Legend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect\n\n"
    "NIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n"
)


def test_topology_matrix_gpu_to_nic() -> None:
    assert hp.parse_topo(TOPO) == {"0": {"mlx5_0": "PXB", "mlx5_1": "SYS"}, "1": {"mlx5_0": "SYS", "mlx5_1": "NODE"}}


NCCL_OUT = """# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    35.12    0.00    0.00      0    34.50    0.00    0.00      0
  8589934592    2147483648     float     sum      -1  93123.4   92.24  172.95      0  93011.2   92.35  173.16      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 86.4750
#
"""


def test_nccl_tests_output_and_threshold() -> None:
    run = nccl.parse(NCCL_OUT)
    assert (run.busbw, run.average, run.wrong, run.sizes[0]) == (172.95, 86.475, 0, (8, 0.0))
    assert nccl.judge(run, 150.0) == [] and nccl.judge(run, 180.0)[0].startswith("[nccl] all_reduce_perf bus")
    hosts = {"a": {"nics": [{"speed_gbps": 400}] * 8}, "b": {"nics": [{"speed_gbps": 400, "gpu": 7}]}}
    assert nccl.threshold(hosts) == 0.75 * 50 and nccl.gpus(hosts["b"]) == 8
