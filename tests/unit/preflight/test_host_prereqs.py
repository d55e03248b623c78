"""Preflight's host prerequisites (issue 33): Above 4G Decoding from the GPUs' BARs, SR-IOV and the IOMMU, and
the OFED/driver/CUDA/NCCL compatibility table, on the tools' own output."""

from __future__ import annotations

from fabconf.preflight import host
from fabconf.preflight import hostparse as hp
from fabconf.preflight.policy import DEFAULT_COMPATIBILITY, Policy, compatible_row, matches

# lspci -vvv of two GPUs as pciutils prints their regions: one mapped above 4 GiB, one whose BIOS had Above 4G
# Decoding off (BAR1 without an address, the small BAR3 below 4 GiB)
GPUS = (
    "18:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
    "\tSubsystem: NVIDIA Corporation Device 17a6\n"
    "\tRegion 0: Memory at a0000000 (32-bit, non-prefetchable) [size=16M]\n"
    "\tRegion 1: Memory at 200000000000 (64-bit, prefetchable) [size=128G]\n"
    "\tRegion 3: Memory at 202000000000 (64-bit, prefetchable) [size=32M]\n\n"
    "2a:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
    "\tRegion 0: Memory at a2000000 (32-bit, non-prefetchable) [size=16M]\n"
    "\tRegion 1: Memory at <unassigned> (64-bit, prefetchable) [size=128G]\n"
    "\tRegion 3: Memory at b2000000 (64-bit, prefetchable) [size=32M]\n\n"
    "17:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n"
    "\tRegion 0: Memory at 23ffe000000 (64-bit, prefetchable) [size=32M]\n"
)


def _reads(results: dict[str, str]) -> host._Reads:
    return host._Reads({c: (0, t) for c, t in results.items()}, host.HostFacts())


def test_gpu_bars_as_lspci_prints_them() -> None:
    bars = hp.parse_gpu_bars(GPUS)
    assert sorted(bars) == ["0000:18:00.0", "0000:2a:00.0"]  # the NIC is not a GPU
    assert bars["0000:18:00.0"][1] == hp.BarRegion(1, 0x200000000000, 64, True, False, 128 << 30)
    assert bars["0000:18:00.0"][0] == hp.BarRegion(0, 0xA0000000, 32, False, False, 16 << 20)
    assert bars["0000:2a:00.0"][1].address is None
    disabled = "Region 1: Memory at 200000000000 (64-bit, prefetchable) [disabled] [size=64G]"
    assert hp.parse_gpu_bars(f"0000:3a:00.0 3D controller: NVIDIA Corporation X\n\t{disabled}\n")["0000:3a:00.0"][
        0
    ].disabled


def test_above4g_fails_a_gpu_without_its_large_bar_and_shows_the_mapped_ones() -> None:
    r = _reads({"lspci -vvv": GPUS})
    host._above4g(r)
    assert r.facts.failed == [
        "[above4g] GPU at 0000:2a:00.0: its 128G BAR (region 1) is unassigned (lspci -vvv): "
        "the BIOS found no room for it; enable Above 4G Decoding (and large or resizable BAR support) in the BIOS"
    ]
    assert r.facts.evidence["above4g"]["lspci -vvv"] == {
        "0000:18:00.0": {"region": 1, "address": "0x200000000000", "size": "128G", "disabled": False},
        "0000:2a:00.0": {"region": 1, "address": "unassigned", "size": "128G", "disabled": False},
    }
    low = GPUS.replace("Memory at 200000000000", "Memory at c0000000")
    r = _reads({"lspci -vvv": low.split("2a:00.0")[0]})
    host._above4g(r)
    assert r.facts.failed == [
        "[above4g] GPU at 0000:18:00.0: its 128G BAR (region 1) is mapped below 4 GiB at 0xc0000000 (lspci -vvv): "
        "enable Above 4G Decoding in the BIOS"
    ]
    r = _reads({"lspci -vvv": GPUS.split("17:00.0")[1]})
    host._above4g(r)
    assert r.facts.failed == ["[above4g] no NVIDIA GPU in lspci -vvv"]


NIC = {"netdev": "ens1f0np0", "rdma": "mlx5_0"}
MLXCONFIG = (
    "\nDevice #1:\n----------\n\nDevice type:        ConnectX7\nName:               MCX75310AAS-NEA_Ax\n"
    "Description:        NVIDIA ConnectX-7 adapter card\nDevice:             0000:17:00.0\n\n"
    "Configurations:                                      Default         Current         Next Boot\n"
    "{mark}        SRIOV_EN                            False(0)        {en:<16}{en}\n"
    "{mark}        NUM_OF_VFS                          0               {vfs:<16}{vfs}\n"
    "The '*' shows parameters with next value different from default/current value.\n"
)


MST = (
    "MST modules:\n------------\n    MST PCI module is not loaded\n    MST PCI configuration module loaded\n\n"
    "PCI devices:\n------------\nDEVICE_TYPE             MST                           PCI       RDMA            NET"
    "                                     NUMA\n"
    "ConnectX7(rev:0)        /dev/mst/mt4129_pciconf0      17:00.0   mlx5_0          net-ens1f0np0"
    "                           0\n"
)


class _Firmware:
    """The second read: mlxconfig by the PCI address ``mst status -v`` gave (MFT refuses ``-d mlx5_0``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.asked: list[str] = []

    def read_tools(self, commands: list[str], *, root: bool = False) -> dict[str, tuple[int, str]]:
        self.asked += commands
        return {c: (0, self.text) for c in commands}

    def pending_firmware(self) -> dict[str, dict[str, dict[str, str]]]:
        return {}


def _sriov(iommu: str, en: str, vfs: int, created: int, want: int) -> list[str]:
    numvfs = host._numvfs_read(NIC)
    mark = "*" if en != "False(0)" else " "
    r = _reads({host.IOMMU_LS: iommu, "mst status -v": MST, numvfs: f"{created}\n"})
    reader = _Firmware(MLXCONFIG.format(mark=mark, en=en, vfs=vfs))
    host._sriov([NIC], r, reader, want)
    assert reader.asked == ["mlxconfig -d 0000:17:00.0 -e q SRIOV_EN NUM_OF_VFS"]
    if not r.facts.failed:
        assert set(r.facts.evidence["sriov"]) == {host.IOMMU_LS, "mst status -v", reader.asked[0], numvfs}
    return r.facts.failed


def test_sriov_wants_the_iommu_the_firmware_and_the_vfs() -> None:
    units = "dmar0\ndmar1\n"
    assert _sriov(units, "True(1)", 8, 8, 8) == []
    assert _sriov("", "True(1)", 8, 8, 8) == [
        "[sriov] the IOMMU is off (/sys/class/iommu is empty): VFs cannot be given to guests or containers; "
        "boot with intel_iommu=on (or amd_iommu=on) and iommu=pt"
    ]
    assert _sriov(units, "False(0)", 0, 0, 8) == [
        "[sriov] mlx5_0 (ens1f0np0): SR-IOV is disabled in the firmware (mlxconfig SRIOV_EN current False(0)); "
        "mlxconfig set SRIOV_EN=1 NUM_OF_VFS=8, then reset the firmware",
        "[sriov] mlx5_0 (ens1f0np0): 0 VFs (sriov_numvfs), the intent wants 8; "
        "echo 8 > /sys/class/net/ens1f0np0/device/sriov_numvfs (0 first when it has others)",
    ]
    assert _sriov(units, "True(1)", 4, 4, 8)[0] == (
        "[sriov] mlx5_0 (ens1f0np0): the firmware allows 4 VFs (mlxconfig NUM_OF_VFS), the intent wants 8"
    )
    no_vfs = host._Reads({host.IOMMU_LS: (0, ""), host._numvfs_read(NIC): (0, "0\n")}, host.HostFacts())
    untouched = _Firmware("")
    host._sriov([NIC], no_vfs, untouched, 0)  # the intent wants none: only the count is read
    assert no_vfs.facts.failed == [] and untouched.asked == []


def test_version_specs_and_rows() -> None:
    assert matches("550.90.07", ">=550.54.14") and not matches("535.104.05", ">=550.54.14")
    assert matches("570.26", ">=570.26") and matches("24.04-0.6.6.0", "24.04") and not matches("24.10-0.7", "24.04")
    found: dict[str, str | None] = {"nvidia_driver": "550.90.07", "cuda": "12.4"}
    assert compatible_row(found, DEFAULT_COMPATIBILITY) == {"cuda": ("12.4",), "nvidia_driver": (">=550.54.14",)}
    assert compatible_row({"nvidia_driver": "535.104.05", "cuda": "12.4"}, DEFAULT_COMPATIBILITY) is None
    assert compatible_row({"nvidia_driver": "550.90.07", "cuda": None}, DEFAULT_COMPATIBILITY) is None
    # CUDA 13.1 and 13.2 (issue 38): a host with them had no row at all
    assert compatible_row({"nvidia_driver": "590.44.01", "cuda": "13.1"}, DEFAULT_COMPATIBILITY) is not None
    assert compatible_row({"nvidia_driver": "595.45.04", "cuda": "13.2"}, DEFAULT_COMPATIBILITY) is not None
    assert compatible_row({"nvidia_driver": "590.44.01", "cuda": "13.2"}, DEFAULT_COMPATIBILITY) is None


NCCL_READ = host.VERSION_READS["nccl"][0]
DRIVER = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  {v}  Fri May 31 09:35:42 UTC 2024\n"


def _compat(policy: Policy, driver: str, nccl: str, ofed: str = "MLNX_OFED_LINUX-24.04-0.6.6.0:\n") -> host._Reads:
    r = _reads({"cat /proc/driver/nvidia/version": DRIVER.format(v=driver), NCCL_READ: nccl, "ofed_info -s": ofed})
    host._compatibility(r, policy)
    return r


def test_compatibility_against_the_default_table() -> None:
    ok = _compat(Policy(), "550.90.07", "2.21.5-1+cuda12.4")
    assert ok.facts.failed == []
    evidence = ok.facts.evidence["compatibility"]
    assert evidence["host"] == {"nvidia_driver": "550.90.07", "cuda": "12.4", "nccl": "2.21.5-1+cuda12.4"}
    assert evidence["row of the default table"] == {"cuda": ["12.4"], "nvidia_driver": [">=550.54.14"]}
    assert "ofed_info -s" not in evidence  # the default table has no OFED column: not read
    old = _compat(Policy(), "535.104.05", "2.21.5-1+cuda12.4")
    assert old.facts.failed == [
        "[compatibility] nvidia_driver 535.104.05, cuda 12.4, nccl 2.21.5-1+cuda12.4: no row of the default "
        "compatibility table (preflight.compatibility) allows this combination"
    ]


def test_compatibility_against_the_intents_table() -> None:
    policy = Policy.of(
        {
            "preflight": {
                "compatibility": [
                    {"ofed": ["24.04", "24.10"], "nvidia_driver": ">=550.54.14", "cuda": "12.4", "nccl": "2.21"},
                    {"ofed": "23.10", "nvidia_driver": "535", "cuda": "12.2", "nccl": ["2.18", "2.19"]},
                ]
            }
        }
    )
    assert policy.compatibility_source == "intent" and host._compat_reads(policy) == ["nccl", "nvidia_driver", "ofed"]
    assert _compat(policy, "550.90.07", "2.21.5-1+cuda12.4").facts.failed == []
    assert _compat(policy, "535.104.05", "2.18.5-1+cuda12.2", "MLNX_OFED_LINUX-23.10-1.1.9.0:\n").facts.failed == []
    mixed = _compat(policy, "550.90.07", "2.21.5-1+cuda12.4", "MLNX_OFED_LINUX-23.10-1.1.9.0:\n")
    assert mixed.facts.failed == [
        "[compatibility] ofed 23.10-1.1.9.0, nvidia_driver 550.90.07, cuda 12.4, nccl 2.21.5-1+cuda12.4: no row of "
        "the intent compatibility table (preflight.compatibility) allows this combination"
    ]


def test_policy_reads_the_prerequisites() -> None:
    policy = Policy.of({"preflight": {"above4g": False, "sriov": {"vfs": 8}}})
    assert (policy.above4g, policy.sriov_vfs, policy.compatibility_source) == (False, 8, "default")
    assert Policy.of({}).sriov_vfs is None and Policy.of({}).above4g


def test_the_default_table_notes_what_it_cannot_judge_and_an_intents_table_fails_it() -> None:
    driver = DRIVER.format(v="550.90.07")
    missing = {"cat /proc/driver/nvidia/version": (0, driver), NCCL_READ: (127, "bash: dpkg-query: command not found")}
    r = host._Reads(missing, host.HostFacts())  # a host without dpkg (RHEL): the default table cannot judge it
    host._compatibility(r, Policy())
    assert r.facts.failed == []
    assert r.facts.evidence["compatibility"]["not checked"] == ["`dpkg-query` is not installed on the host"]
    strict = Policy.of({"preflight": {"compatibility": [{"cuda": "12.4", "nvidia_driver": ">=550.54.14"}]}})
    r = host._Reads(missing, host.HostFacts())
    host._compatibility(r, strict)
    assert r.facts.failed == ["[compatibility] `dpkg-query` is not installed on the host"]
    newer = _compat(Policy(), "600.10.01", "2.30.1-1+cuda13.3")  # newer than the default table
    assert newer.facts.failed == []
    assert newer.facts.evidence["compatibility"]["not checked"] == ["CUDA 13.3: not in the default table"]
    assert _compat(strict, "600.10.01", "2.30.1-1+cuda13.3").facts.failed[0].startswith("[compatibility] nvidia_driver")
    garbled = _compat(Policy(), "550.90.07", "2.21\x005-1+cu")  # garbled output is a failure, even by default
    assert garbled.facts.failed and garbled.facts.failed[0].startswith("[compatibility] `dpkg-query")


def test_buffer_discards_are_not_link_errors() -> None:
    """mlx5's rx_discards_phy counts frames dropped for lack of receive buffers (congestion), not link errors: a
    busy port's discards do not fail [counters]; its CRC errors do (issue 38)."""
    policy = Policy()
    nic = {"netdev": "ens1f0np0"}
    command = host._stats("ens1f0np0")
    stats = "NIC statistics:\n     rx_packets_phy: {p}\n     rx_crc_errors_phy: {c}\n     rx_discards_phy: {d}\n"
    first = _reads({command: stats.format(p=0, c=0, d=0)})
    host._counters([nic], first, _reads({command: stats.format(p=1_000_000, c=0, d=5_000)}), policy)
    assert first.facts.failed == []
    crc = _reads({command: stats.format(p=0, c=0, d=0)})
    host._counters([nic], crc, _reads({command: stats.format(p=1_000_000, c=500, d=0)}), policy)
    assert crc.facts.failed and "500 errored of 1000000 frames" in crc.facts.failed[0]
