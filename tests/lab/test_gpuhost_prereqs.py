"""The platform prerequisites of a lab GPU host that preflight reads (issue 33): the GPUs' BARs in ``lspci``, the
IOMMU in ``/sys/class/iommu``, SR-IOV in ``mlxconfig`` and ``sriov_numvfs``, and the faults that break each, all
through the host's own commands and parsed by preflight's parsers."""

from __future__ import annotations

import pytest

from fabconf.platform.linux.parse import parse_mlxconfig_query
from fabconf.preflight import hostparse as hp
from fabconf_lab.host.sim import GpuHostSim
from fabconf_lab.orchestrator import HOST_FAULTS

IF0, IF1 = "ens1f0np0", "ens1f1np1"
NUMVFS = f"/sys/class/net/{IF0}/device/sriov_numvfs"


def _host() -> GpuHostSim:
    return GpuHostSim("gpu4", "127.12.2.4", ports=[IF0, IF1], username="u", password="p", port=0)


def test_lspci_shows_eight_gpus_with_bar1_above_4gib_until_above4g_is_off() -> None:
    host = _host()
    brief = host.run("lspci").stdout.splitlines()
    assert sum("3D controller: NVIDIA Corporation GH100" in line for line in brief) == 8
    assert host.run("lspci -d 10de:").stdout.splitlines()[0].startswith("18:00.0 3D controller: NVIDIA")
    bars = hp.parse_gpu_bars(host.run("lspci -vvv").stdout)
    assert sorted(bars) == [f"0000:{b}:00.0" for b in ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")]
    bar1 = bars["0000:18:00.0"][1]
    assert (bar1.region, bar1.bits, bar1.prefetchable, bar1.size) == (1, 64, True, 128 << 30)
    assert bar1.address is not None and bar1.address >= hp.FOUR_GIB
    HOST_FAULTS["above4g"](host, "off")
    text = host.run("lspci -vvv").stdout
    assert "\tRegion 1: Memory at <unassigned> (64-bit, prefetchable) [size=128G]\n" in text
    off = hp.parse_gpu_bars(text)["0000:18:00.0"]
    assert off[1].address is None and off[2].address is not None and off[2].address < hp.FOUR_GIB
    with pytest.raises(ValueError, match="on or off"):
        HOST_FAULTS["above4g"](host, "maybe")


def test_iommu_units_follow_the_kernel_command_line() -> None:
    host = _host()
    assert hp.parse_dir_listing(host.run("ls /sys/class/iommu").stdout) == ["dmar0", "dmar1", "dmar2", "dmar3"]
    HOST_FAULTS["iommu"](host, "off")
    assert "intel_iommu=on" not in host.run("cat /proc/cmdline").stdout
    listing = host.run("ls /sys/class/iommu")
    assert listing.status == 0 and hp.parse_dir_listing(listing.stdout) == []
    HOST_FAULTS["iommu"](host, "on")
    assert host.run("cat /proc/cmdline").stdout.split()[-2:] == ["intel_iommu=on", "iommu=pt"]


def test_sriov_vfs_need_the_firmware_and_go_through_zero() -> None:
    host = _host()
    assert host.run(f"cat {NUMVFS}").stdout == "0\n"
    refused = host.run(f"echo 8 > {NUMVFS}")  # SR-IOV is off in the factory firmware: no VFs to give
    assert refused.status == 1 and "Numerical result out of range" in refused.stderr
    pci = host.state.nics[0].pci  # MFT's -d takes a PCI address (the lab refuses mlx5_0, as MFT documents)
    assert host.run(f"mlxconfig -d {pci} -y set SRIOV_EN=1 NUM_OF_VFS=8").status == 0
    pending = parse_mlxconfig_query(host.run(f"mlxconfig -d {pci} -e q SRIOV_EN NUM_OF_VFS").stdout)
    assert (pending["SRIOV_EN"].current, pending["SRIOV_EN"].next_boot) == ("False(0)", "True(1)")
    assert host.run(f"mlxfwreset -d {pci} -y reset").status == 0
    assert host.run(f"cat /sys/class/net/{IF0}/device/sriov_totalvfs").stdout == "8\n"
    assert host.run(f"echo 8 > {NUMVFS}").status == 0 and host.run(f"cat {NUMVFS}").stdout == "8\n"
    busy = host.run(f"echo 4 > {NUMVFS}")
    assert busy.status == 1 and "Device or resource busy" in busy.stderr
    assert host.run(f"echo 0 > {NUMVFS}").status == 0 and host.run(f"echo 4 > {NUMVFS}").status == 0
    HOST_FAULTS["sriov"](host, f"{IF0}:0")  # a driver reload dropped the VFs
    assert hp.parse_sysfs_int(host.run(f"cat {NUMVFS}").stdout) == 0
    with pytest.raises(ValueError, match="NETDEV:N"):
        HOST_FAULTS["sriov"](host, f"{IF0}:many")


def test_version_fault_changes_what_the_tools_report() -> None:
    host = _host()
    HOST_FAULTS["version"](host, "nvidia_driver=535.104.05")
    HOST_FAULTS["version"](host, "ofed=23.10-1.1.9.0")
    HOST_FAULTS["version"](host, "nccl=2.18.5-1+cuda12.2")
    assert hp.parse_nvidia_version(host.run("cat /proc/driver/nvidia/version").stdout) == "535.104.05"
    assert hp.parse_ofed(host.run("ofed_info -s").stdout) == "23.10-1.1.9.0"
    nccl = hp.parse_package_version(host.run("dpkg-query -W -f='${Version}' libnccl2").stdout)
    assert nccl == "2.18.5-1+cuda12.2" and hp.nccl_cuda(nccl) == "12.2"
    with pytest.raises(ValueError, match="COMPONENT=VERSION"):
        HOST_FAULTS["version"](host, "gcc=12")
