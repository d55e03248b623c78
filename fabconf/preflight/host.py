"""Preflight of one GPU host: what the source article checks by hand before a training job, from one batched
read (two for the counters), against the intent. Every failure is one line ``[check] what is wrong``.

Checks (and where each fact comes from):
- ``[rdma]`` every intended NIC's RDMA link ACTIVE / LINK_UP, paired with its netdev, at the intended rate
  (``rdma link show``, ``ibdev2netdev``, ``ibstat``: the same rules as the push preflight), and ``mst status -v``
  pairing the RDMA device with the same netdev;
- ``[firmware]`` ``ibv_devinfo`` fw_ver equal to ``preflight.firmware`` when the intent gives one (uniformity
  across the fleet is checked over all hosts: ``fleet``); ``[mlxconfig]`` no value set but not yet in effect;
- ``[pcie]`` every intended NIC's PCIe link trained at its capability, speed and width, and every NVIDIA GPU's at
  its width (``lspci -vvv`` LnkSta against LnkCap; the NIC found by its PCI address in ``mst status -v``). A GPU
  lowers its link speed when idle to save power, so only its width is compared [3P];
- ``[fec_ber]`` every intended NIC's link runs an FEC and its pre-FEC BER is at most ``preflight.max_pre_fec_ber``
  (1E-6 by default), with no errors FEC could not correct (``mlxlink -d PCI -c``);
- ``[affinity]`` every NIC the intent pairs with a GPU (``nics[].gpu``) sits under the same PCIe switch (PIX, PXB)
  or at least the same NUMA node (PHB, NODE) as that GPU, not across NUMA nodes (SYS) (``nvidia-smi topo -m``);
- ``[active_mtu]`` every intended NIC's RoCE active MTU is 4096 (``ibv_devinfo``; a smaller one follows from a
  netdev MTU below 4096 plus the RoCE headers, and cuts the message size of every RDMA transfer);
- ``[gid]`` the RoCE v2 GID of the NIC's IPv4 address at the intended index (``show_gids``, NCCL_IB_GID_INDEX);
- ``[counters]`` physical errors per frame received between two ``ethtool -S`` reads below
  ``preflight.max_error_rate`` (0.001 % by default);
- ``[nic_counters]`` between the same two reads no NIC counter that means loss or a storm moved: ``ethtool -S``
  ``rx_out_of_buffer`` (receive queues without buffers), ``rx_prioN_buf_discard`` on the lossless (PFC)
  priorities, ``tx_pause_storm_error_events`` (the NIC's PFC storm watchdog acted) [V: Linux mlx5
  ``en_stats.c``]; ``/sys/class/infiniband/DEV/ports/1/hw_counters`` ``out_of_sequence`` and
  ``local_ack_timeout_err`` (RoCE retransmissions). Before a job the fabric is quiet: any increase fails, and
  pause frames received on a lossless priority (``rx_prioN_pause``) faster than ``PAUSE_STORM_PER_S``;
- ``[lldpad]`` lldpad not running (it fights the OS DCB settings);
- ``[gpudirect]`` the IOMMU off or in passthrough (``/proc/cmdline``), no PCIe switch port with ACS redirect
  (``lspci -vvv``), ``nvidia_peermem`` loaded (``lsmod``) unless the dma-buf path is available (the open NVIDIA
  kernel modules, ``/proc/driver/nvidia/version``, on Linux 5.12 or later, ``uname -r``);
- ``[versions]`` MLNX_OFED/DOCA (``ofed_info -s``), the NVIDIA driver (``/proc/driver/nvidia/version``) and NCCL
  (``dpkg-query`` of libnccl2) in the intent's compatibility table, for each table the intent has;
- ``[above4g]`` every NVIDIA GPU's largest 64-bit prefetchable BAR (BAR1, the window through which a NIC reads and
  writes GPU memory for GPUDirect RDMA) assigned, and mapped above 4 GiB (``lspci -vvv`` ``Region N: Memory at``):
  a BAR larger than the space below 4 GiB can only be placed above it, which the BIOS does with Above 4G Decoding
  enabled; without it the BAR stays ``<unassigned>`` [V: pciutils ``lspci.c``; Intel FPGA KB 000078494];
- ``[sriov]`` where the intent asks (``preflight.sriov.vfs``): the IOMMU on (``ls /sys/class/iommu`` lists its
  units) [V: Linux ``Documentation/ABI/testing/sysfs-class-iommu``; empty while the IOMMU is off: 3P], SR-IOV
  enabled in every intended NIC's firmware with room for the VFs (``mlxconfig -e q SRIOV_EN NUM_OF_VFS``, Current
  column) and the VFs created (``/sys/class/net/IF/device/sriov_numvfs``) [V: NVIDIA MLNX_OFED "Single Root IO
  Virtualization (SR-IOV)"];
- ``[compatibility]`` MLNX_OFED/DOCA, the NVIDIA driver, CUDA (the one libnccl2 was built for, ``+cudaX.Y``) and
  NCCL together match a row of ``preflight.compatibility`` (by default: CUDA against its minimum driver).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from fabconf.platform.linux.parse import (
    ParseError,
    parse_ibdev2netdev,
    parse_ibstat,
    parse_mlxconfig_query,
    parse_rdma_link,
)
from fabconf.platform.linux.plan import link_problems, sh
from fabconf.preflight import hostparse as hp
from fabconf.preflight.policy import COMPONENTS, Policy, allowed, compatible_row, matches

T = TypeVar("T")
NOT_FOUND = 127
DMA_BUF_KERNEL = (5, 12)  # the first Linux whose RDMA stack imports dma-buf memory (ib_umem_dmabuf) [3P]
ROCE_MTU = 4096  # the RoCE active MTU a RoCE fabric runs at: the largest InfiniBand MTU


class ToolReader(Protocol):
    def read_tools(self, commands: list[str], *, root: bool = False) -> dict[str, tuple[int, str]]: ...

    def pending_firmware(self) -> dict[str, dict[str, dict[str, str]]]: ...


@dataclass
class HostFacts:
    failed: list[str] = field(default_factory=list)
    firmware: dict[str, str] = field(default_factory=dict)  # RDMA device -> fw_ver (for the fleet check)
    evidence: dict[str, dict[str, Any]] = field(default_factory=dict)  # check -> command -> what it read (parsed)


def plain(value: Any) -> Any:
    """A parsed reading as JSON values: dataclasses as objects, sets sorted, tuples as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, tuple) else "/".join(map(str, k)): plain(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted(plain(v) for v in value)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value if isinstance(value, str | int | float | bool | None) else str(value)


VERSION_READS = {
    "ofed": ("ofed_info -s", hp.parse_ofed),
    "nvidia_driver": ("cat /proc/driver/nvidia/version", hp.parse_nvidia_version),
    "nccl": (sh("dpkg-query", "-W", "-f=${Version}", "libnccl2"), hp.parse_package_version),
}
BASE_READS = [
    "rdma link show",
    "ibstat",
    "ibdev2netdev",
    "pgrep -x lldpad",
    "ibv_devinfo",
    "mst status -v",
    "show_gids",
    "lsmod",
    "lspci -vvv",
    "cat /proc/cmdline",
    "cat /proc/driver/nvidia/version",
    "uname -r",
]


def _stats(netdev: str) -> str:
    return sh("ethtool", "-S", netdev)


HW_COUNTERS = ("out_of_sequence", "local_ack_timeout_err")
TOPO = "nvidia-smi topo -m"
NEAR = ("PIX", "PXB", "PHB", "NODE")  # one PCIe switch, or one NUMA node
# pause frames per second received on a lossless priority: a storm, as the alerts' default (fabconf.monitoring.
# thresholds: a storm at 100G with the largest quanta sends about 3,000-6,000 frames/s; 100,000 was never reached)
PAUSE_STORM_PER_S = 2_500


def _hw(nic: dict[str, Any]) -> str:
    # Port 1 always: on ConnectX (mlx5) each port of a card is its own PCI function and RDMA device with one port
    # (mlx5_1:1, as NCCL_IB_HCA names it); the inventory's ``port`` is the card's port (mlxconfig _P2), not this.
    base = f"/sys/class/infiniband/{nic['rdma']}/ports/1/hw_counters"
    return sh("grep", "-H", ".", *(f"{base}/{name}" for name in HW_COUNTERS))


class _Reads:
    def __init__(self, results: dict[str, tuple[int, str]], facts: HostFacts, label: str = "") -> None:
        """``label``: how this read's values are told apart in the evidence (" (second read)")."""
        self.results, self.facts, self.label = results, facts, label

    def get(self, check: str, command: str, parser: Callable[[str], T], *, soft: bool = False) -> T | None:
        """The parsed output, or None after noting why it could not be read as a failure of ``check``. ``soft``: a
        tool that is not installed, or exits non-zero, is noted in the evidence (``not checked``) instead; output
        that does not parse still fails."""
        status, text = self.results[command]
        problem = ""
        if status == NOT_FOUND or "command not found" in text:
            problem = f"`{command.split()[0]}` is not installed on the host"
        elif status != 0:
            problem = f"`{command}` failed (exit {status}): {text.strip()[:120]}"
        if problem and soft:
            self.facts.evidence.setdefault(check, {}).setdefault("not checked", []).append(problem)
            return None
        if problem:
            self.facts.failed.append(f"[{check}] {problem}")
            return None
        try:
            value = parser(text)
        except ParseError as exc:
            self.facts.failed.append(f"[{check}] `{command}` printed unreadable output ({exc})")
            return None
        self.facts.evidence.setdefault(check, {})[command + self.label] = plain(value)
        return value


def check_host(data: dict[str, Any], reader: ToolReader, policy: Policy) -> HostFacts:
    facts = HostFacts()
    nics = list(data.get("nics", []))
    sampled = [_stats(n["netdev"]) for n in nics] + [_hw(n) for n in nics]
    reads = BASE_READS + [sh("ethtool", n["netdev"]) for n in nics] + sampled
    reads += [VERSION_READS[k][0] for k in sorted(policy.versions) if k in VERSION_READS]
    reads += [VERSION_READS[k][0] for k in _compat_reads(policy)]
    if policy.sriov_vfs is not None:
        reads += [IOMMU_LS] + [_numvfs_read(n) for n in nics]
    if any(n.get("gpu") is not None for n in nics):
        reads.append(TOPO)
    reads = list(dict.fromkeys(reads))  # each command once
    first = _Reads(reader.read_tools(reads, root=True), facts)
    started = time.monotonic()
    _links(nics, first)
    _firmware(first, policy)
    _active_mtu(nics, first)
    _pcie(nics, first)
    _fec_ber(nics, first, reader, policy)
    _affinity(nics, first)
    _gids(data, nics, first)
    _lldpad(first)
    if policy.gpudirect:
        _gpudirect(first)
    _versions(first, policy)
    if policy.above4g:
        _above4g(first)
    if policy.sriov_vfs is not None:
        _sriov(nics, first, reader, policy.sriov_vfs)
    _compatibility(first, policy)
    pending = reader.pending_firmware()
    facts.evidence["mlxconfig"] = {"mlxconfig -e q": plain(pending)}
    for dev, keys in sorted(pending.items()):
        for key, value in sorted(keys.items()):
            facts.failed.append(
                f"[mlxconfig] {dev} {key}: {value['next_boot']} is set but not in effect (current {value['current']}); "
                "reset the firmware or reboot"
            )
    time.sleep(max(0.0, policy.sample_seconds - (time.monotonic() - started)))
    second = _Reads(reader.read_tools(sampled, root=True), facts, " (second read)")
    _counters(nics, first, second, policy)
    _nic_counters(data, nics, first, second, max(time.monotonic() - started, policy.sample_seconds))
    return facts


def _links(nics: list[dict[str, Any]], r: _Reads) -> None:
    links = r.get("rdma", "rdma link show", parse_rdma_link)
    rates = r.get("rdma", "ibstat", parse_ibstat)
    pairs = r.get("rdma", "ibdev2netdev", parse_ibdev2netdev)
    if links is not None and rates is not None and pairs is not None:
        wanted = [(n["netdev"], n["rdma"], n.get("speed_gbps")) for n in nics]
        r.facts.failed += [f"[rdma] {p}" for p in link_problems(wanted, links, rates, pairs)]
    mst = r.get("rdma", "mst status -v", hp.parse_mst_status) or {}
    for nic in nics if mst else []:
        found = mst.get(nic["rdma"])
        if found is None:
            r.facts.failed.append(f"[rdma] {nic['rdma']}: not in `mst status -v`")
        elif nic["netdev"] not in found[1]:
            r.facts.failed.append(
                f"[rdma] {nic['rdma']}: mst pairs it with {', '.join(found[1]) or 'no netdev'}, "
                f"the inventory says {nic['netdev']}"
            )
    for nic in nics:
        link = r.get("rdma", sh("ethtool", nic["netdev"]), hp.parse_ethtool)
        want = nic.get("speed_gbps")
        if link is not None and link.detected and want and link.speed_gbps != want:
            r.facts.failed.append(
                f"[rdma] {nic['netdev']}: ethtool speed {link.speed_gbps} Gb/s, inventory {want} Gb/s"
            )


def _firmware(r: _Reads, policy: Policy) -> None:
    found = r.get("firmware", "ibv_devinfo", hp.parse_ibv_firmware)
    if found is None:
        return
    r.facts.firmware = found
    if policy.firmware:
        for dev, version in sorted(found.items()):
            if version != policy.firmware:
                r.facts.failed.append(f"[firmware] {dev}: firmware {version}, the intent says {policy.firmware}")


def _gids(data: dict[str, Any], nics: list[dict[str, Any]], r: _Reads) -> None:
    index = (data.get("nccl") or {}).get("NCCL_IB_GID_INDEX")
    gids = r.get("gid", "show_gids", hp.parse_gids)
    if gids is None or index is None:
        return
    for nic in nics:
        address = str(nic.get("address") or "").split("/")[0]
        entry = gids.get((nic["rdma"], int(index)))
        if entry is None:
            r.facts.failed.append(f"[gid] {nic['rdma']}: no GID at index {index} (NCCL_IB_GID_INDEX)")
        elif address and (entry[0] != address or entry[1].lower() != "v2"):
            r.facts.failed.append(
                f"[gid] {nic['rdma']}: GID index {index} is {entry[0] or 'not IPv4'} RoCE {entry[1]}, "
                f"expected {address} RoCE v2"
            )


def _pcie(nics: list[dict[str, Any]], r: _Reads) -> None:
    links = r.get("pcie", "lspci -vvv", hp.parse_lspci_links)
    mst = r.get("pcie", "mst status -v", hp.parse_mst_status)
    if links is None or mst is None:
        return
    for nic in nics:
        where = f"{nic['rdma']} ({nic['netdev']})"
        pci = (mst.get(nic["rdma"]) or ("", ""))[0]
        link = links.get(pci)
        if link is None:
            r.facts.failed.append(f"[pcie] {where}: no PCIe link for {pci or 'it'} in lspci -vvv")
        elif link.speed < link.cap_speed or link.width < link.cap_width:
            r.facts.failed.append(
                f"[pcie] {where} at {pci}: PCIe link x{link.width} at {link.speed:g}GT/s, capable of "
                f"x{link.cap_width} at {link.cap_speed:g}GT/s (lspci LnkSta/LnkCap); reseat the card or check the slot"
            )
    for pci, link in sorted(links.items()):
        if "NVIDIA" in link.description and "controller" in link.description and link.width < link.cap_width:
            r.facts.failed.append(
                f"[pcie] GPU at {pci}: PCIe link x{link.width}, capable of x{link.cap_width} (lspci LnkSta/LnkCap)"
            )


def _nic_counters(
    data: dict[str, Any], nics: list[dict[str, Any]], first: _Reads, second: _Reads, seconds: float
) -> None:
    lossless = [p for p, on in enumerate((data.get("qos") or {}).get("pfc") or []) if on]
    names = ["rx_out_of_buffer", *(f"rx_prio{p}_buf_discard" for p in lossless), "tx_pause_storm_error_events"]
    pauses = [f"rx_prio{p}_pause" for p in lossless]
    for nic in nics:
        moved: list[str] = []
        stats = (
            first.get("nic_counters", _stats(nic["netdev"]), hp.parse_ethtool_stats),
            second.get("nic_counters", _stats(nic["netdev"]), hp.parse_ethtool_stats),
        )
        hw = (
            first.get("nic_counters", _hw(nic), hp.parse_grep_values),
            second.get("nic_counters", _hw(nic), hp.parse_grep_values),
        )
        for (a, b), wanted in ((stats, names + pauses), (hw, list(HW_COUNTERS))):
            if a is None or b is None:
                continue
            moved += [f"{n} +{b[n] - a[n]}" for n in wanted if n in a and n in b and b[n] > a[n] and n not in pauses]
            absent = [n for n in wanted if n not in a or n not in b]
            if absent:  # mlx5 prints some counters only for some priorities: say so rather than pass silently
                first.facts.evidence.setdefault("nic_counters", {}).setdefault("not checked", []).append(
                    f"{nic['netdev']} ({nic['rdma']}): no {', '.join(absent)} in the output"
                )
        a, b = stats
        if a is not None and b is not None:
            rates = {n: (b[n] - a[n]) / max(seconds, 0.001) for n in pauses if n in a and n in b}
            moved += [f"{n} {rate:.0f}/s" for n, rate in rates.items() if rate > PAUSE_STORM_PER_S]
        if moved:
            first.facts.failed.append(
                f"[nic_counters] {nic['netdev']} ({nic['rdma']}): {', '.join(moved)} between two reads "
                "(loss, retransmissions or a pause storm on a quiet fabric)"
            )


def _fec_ber(nics: list[dict[str, Any]], r: _Reads, reader: ToolReader, policy: Policy) -> None:
    mst = r.get("fec_ber", "mst status -v", hp.parse_mst_status)
    if mst is None:
        return
    where = {n["rdma"]: (mst.get(n["rdma"]) or ("", ""))[0] for n in nics}
    commands = {rdma: sh("mlxlink", "-d", pci, "-c") for rdma, pci in where.items() if pci}
    reads = _Reads(reader.read_tools(list(commands.values()), root=True), r.facts) if commands else None
    for nic in nics:
        command = commands.get(nic["rdma"])
        if command is None or reads is None:
            r.facts.failed.append(f"[fec_ber] {nic['rdma']}: no PCI address in mst status -v for mlxlink")
            continue
        link = reads.get("fec_ber", command, hp.parse_mlxlink)
        if link is None:
            continue
        name = f"{nic['rdma']} ({nic['netdev']})"
        if link.fec in ("N/A", ""):
            continue  # no link: the rdma check says so
        if hp.fec_off(link.fec):
            r.facts.failed.append(f"[fec_ber] {name}: FEC {link.fec} (mlxlink): a 400G PAM4 link needs RS-FEC")
        if link.raw_ber > policy.max_pre_fec_ber:
            r.facts.failed.append(
                f"[fec_ber] {name}: pre-FEC BER {link.raw_ber:.1E} above {policy.max_pre_fec_ber:.0E} (mlxlink): "
                "clean or replace the cable or optic"
            )
        if link.effective_errors > 0:
            r.facts.failed.append(
                f"[fec_ber] {name}: {link.effective_errors} bit error(s) FEC could not correct (mlxlink)"
            )


def _affinity(nics: list[dict[str, Any]], r: _Reads) -> None:
    paired = [n for n in nics if n.get("gpu") is not None]
    topo = r.get("affinity", TOPO, hp.parse_topo) if paired else None
    if topo is None:
        return
    for nic in paired:
        link = (topo.get(str(nic["gpu"])) or {}).get(nic["rdma"])
        if link is None:
            r.facts.failed.append(f"[affinity] GPU{nic['gpu']} or {nic['rdma']} is not in nvidia-smi topo -m")
        elif link not in NEAR:
            r.facts.failed.append(
                f"[affinity] {nic['rdma']} ({nic['netdev']}) and its GPU{nic['gpu']} are {link} apart "
                "(nvidia-smi topo -m): across NUMA nodes; GPUDirect traffic crosses the CPU interconnect"
            )


def _active_mtu(nics: list[dict[str, Any]], r: _Reads) -> None:
    found = r.get("active_mtu", "ibv_devinfo", hp.parse_ibv_active_mtu)
    if found is None:
        return
    for nic in nics:
        mtu = found.get(nic["rdma"])
        if mtu is None:
            r.facts.failed.append(f"[active_mtu] {nic['rdma']} ({nic['netdev']}): not in ibv_devinfo")
        elif mtu < ROCE_MTU:
            r.facts.failed.append(
                f"[active_mtu] {nic['rdma']} ({nic['netdev']}): RoCE active MTU {mtu}, not {ROCE_MTU} (ibv_devinfo); "
                f"the netdev MTU must leave room for {ROCE_MTU} bytes plus the RoCE headers (9000 does)"
            )


def _lldpad(r: _Reads) -> None:
    status, _text = r.results["pgrep -x lldpad"]
    r.facts.evidence["lldpad"] = {"pgrep -x lldpad": {"running": status == 0}}
    if status == 0:
        r.facts.failed.append("[lldpad] lldpad is running: it fights the DCB (PFC/ETS) settings; stop and disable it")


def _gpudirect(r: _Reads) -> None:
    cmdline = r.get("gpudirect", "cat /proc/cmdline", lambda text: text)
    if cmdline is not None:
        words = cmdline.split()
        translated = any(w in words for w in ("intel_iommu=on", "amd_iommu=on")) and "iommu=pt" not in words
        if translated:
            r.facts.failed.append(
                "[gpudirect] the IOMMU translates DMA (intel_iommu=on without iommu=pt): peer-to-peer between GPU and "
                "NIC is slowed or blocked; boot with iommu=pt or the IOMMU off"
            )
    bridges = r.get("gpudirect", "lspci -vvv", hp.parse_acs_enabled)
    if bridges:
        r.facts.failed.append(
            f"[gpudirect] ACS redirect is enabled on PCIe bridge(s) {', '.join(bridges)}: GPU-NIC traffic detours via "
            "the root complex; disable ACS (setpci, or in the BIOS)"
        )
    modules = r.get("gpudirect", "lsmod", hp.parse_lsmod)
    if modules is not None and "nvidia_peermem" not in modules and not _dma_buf(r):
        r.facts.failed.append(
            "[gpudirect] nvidia_peermem is not loaded and the dma-buf path is not available (the open NVIDIA kernel "
            f"modules on Linux {DMA_BUF_KERNEL[0]}.{DMA_BUF_KERNEL[1]} or later): no GPUDirect RDMA "
            "(modprobe nvidia_peermem)"
        )


def _dma_buf(r: _Reads) -> bool:
    """GPUDirect RDMA without nvidia_peermem: the open NVIDIA kernel modules export GPU memory as dma-buf, which
    the RDMA stack imports since Linux 5.12 [3P: NVIDIA GPU Operator "GPUDirect RDMA" (DMA-BUF needs no
    nvidia-peermem, recommended where supported); Ubuntu's "NVIDIA GPUDirect over Infiniband Migration Paths"]."""
    open_modules = r.get("gpudirect", "cat /proc/driver/nvidia/version", hp.parse_nvidia_open)
    release = r.get("gpudirect", "uname -r", hp.parse_kernel_release)
    return bool(open_modules) and release is not None and release >= DMA_BUF_KERNEL


def _versions(r: _Reads, policy: Policy) -> None:
    for key in sorted(policy.versions):
        if key not in VERSION_READS:
            continue
        command, parser = VERSION_READS[key]
        version = r.get("versions", command, parser)
        if version is not None and not allowed(version, policy.versions[key]):
            r.facts.failed.append(
                f"[versions] {key} {version} is not in the compatibility table ({', '.join(policy.versions[key])})"
            )


IOMMU_LS = "ls /sys/class/iommu"


def _numvfs_read(nic: dict[str, Any]) -> str:
    return sh("cat", f"/sys/class/net/{nic['netdev']}/device/sriov_numvfs")


def _sriov_firmware_read(pci: str) -> str:
    """MFT's ``-d`` takes a PCI address or an mst device, not the RDMA device name [V: NVIDIA MFT "Examples of
    mlxconfig Usage"]; the address comes from ``mst status -v``, as for ``mlxlink``."""
    return sh("mlxconfig", "-d", pci, "-e", "q", "SRIOV_EN", "NUM_OF_VFS")


def _compat_reads(policy: Policy) -> list[str]:
    """The version reads the compatibility table's columns need (CUDA comes from the NCCL package's version)."""
    columns = {k for row in policy.compatibility for k in row}
    return sorted({"nccl" if k == "cuda" else k for k in columns} & set(VERSION_READS))


def _mlx_number(value: str | None) -> int | None:
    """``True(1)`` -> 1, ``8`` -> 8; None for ``N/A`` or no value."""
    match = re.fullmatch(r"(?:\w*\()?(\d+)\)?", value or "")
    return int(match.group(1)) if match else None


def _above4g(r: _Reads) -> None:
    gpus = r.get("above4g", "lspci -vvv", hp.parse_gpu_bars)
    if gpus is None:
        return
    if not gpus:
        r.facts.failed.append("[above4g] no NVIDIA GPU in lspci -vvv")
    shown: dict[str, Any] = {}  # the evidence: each GPU's large BAR (the other regions are not judged)
    r.facts.evidence["above4g"]["lspci -vvv"] = shown
    for pci, regions in sorted(gpus.items()):
        large = [b for b in regions if b.bits == 64 and b.prefetchable]
        if not large:
            shown[pci] = None
            r.facts.failed.append(f"[above4g] GPU at {pci}: no 64-bit prefetchable BAR in lspci -vvv")
            continue
        bar = max(large, key=lambda b: b.size)
        size = _human(bar.size)
        where = "unassigned" if bar.address is None else f"{bar.address:#x}"
        shown[pci] = {"region": bar.region, "address": where, "size": size, "disabled": bar.disabled}
        if bar.address is None or bar.disabled:
            r.facts.failed.append(
                f"[above4g] GPU at {pci}: its {size} BAR (region {bar.region}) is "
                f"{'unassigned' if bar.address is None else 'disabled'} (lspci -vvv): the BIOS found no room for it; "
                "enable Above 4G Decoding (and large or resizable BAR support) in the BIOS"
            )
        elif bar.address < hp.FOUR_GIB:
            r.facts.failed.append(
                f"[above4g] GPU at {pci}: its {size} BAR (region {bar.region}) is mapped below 4 GiB at "
                f"{bar.address:#x} (lspci -vvv): enable Above 4G Decoding in the BIOS"
            )


def _human(size: int) -> str:
    for unit, shift in (("T", 40), ("G", 30), ("M", 20), ("K", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return f"{size}B"


def _sriov(nics: list[dict[str, Any]], r: _Reads, reader: ToolReader, vfs: int) -> None:
    units = r.get("sriov", IOMMU_LS, hp.parse_dir_listing)
    if units is not None and not units and vfs > 0:
        r.facts.failed.append(
            "[sriov] the IOMMU is off (/sys/class/iommu is empty): VFs cannot be given to guests or containers; "
            "boot with intel_iommu=on (or amd_iommu=on) and iommu=pt"
        )
    mst = r.get("sriov", "mst status -v", hp.parse_mst_status) if vfs > 0 else None
    where = {n["rdma"]: (mst.get(n["rdma"]) or ("", ""))[0] for n in nics} if mst is not None else {}
    commands = {rdma: _sriov_firmware_read(pci) for rdma, pci in where.items() if pci}
    firmware_reads = _Reads(reader.read_tools(list(commands.values()), root=True), r.facts) if commands else None
    for nic in nics:
        numvfs_read = _numvfs_read(nic)
        name = f"{nic['rdma']} ({nic['netdev']})"
        firmware = None
        if mst is not None:
            command = commands.get(nic["rdma"])
            if command is None or firmware_reads is None:
                r.facts.failed.append(f"[sriov] {name}: no PCI address in mst status -v for mlxconfig")
            else:
                firmware = firmware_reads.get("sriov", command, parse_mlxconfig_query)
        if firmware is not None:
            enabled = _mlx_number(firmware["SRIOV_EN"].current if "SRIOV_EN" in firmware else None)
            room = _mlx_number(firmware["NUM_OF_VFS"].current if "NUM_OF_VFS" in firmware else None)
            if enabled != 1:
                r.facts.failed.append(
                    f"[sriov] {name}: SR-IOV is disabled in the firmware (mlxconfig SRIOV_EN current "
                    f"{firmware['SRIOV_EN'].current if 'SRIOV_EN' in firmware else 'not shown'}); "
                    f"mlxconfig set SRIOV_EN=1 NUM_OF_VFS={vfs}, then reset the firmware"
                )
            elif room is None or room < vfs:
                r.facts.failed.append(
                    f"[sriov] {name}: the firmware allows {room if room is not None else 'no'} VFs "
                    f"(mlxconfig NUM_OF_VFS), the intent wants {vfs}"
                )
        created = r.get("sriov", numvfs_read, hp.parse_sysfs_int)
        if created is not None and created != vfs:
            r.facts.failed.append(
                f"[sriov] {name}: {created} VFs (sriov_numvfs), the intent wants {vfs}; "
                f"echo {vfs} > /sys/class/net/{nic['netdev']}/device/sriov_numvfs (0 first when it has others)"
            )


def _compatibility(r: _Reads, policy: Policy) -> None:
    """The host's versions against the table. With the default table a version that cannot be read (no dpkg, no
    libnccl2 package, an NCCL without ``+cudaX.Y``) or a CUDA the table does not know is noted, not failed: the
    default only knows what it was written with; an intent's table is strict."""
    default = policy.compatibility_source == "default"
    found: dict[str, str | None] = {}
    for key in _compat_reads(policy):
        command, parser = VERSION_READS[key]
        found[key] = r.get("compatibility", command, parser, soft=default)
    nccl = found.get("nccl")
    found["cuda"] = hp.nccl_cuda(nccl) if nccl else None
    host = {k: found[k] for k in COMPONENTS if k in found}  # what was read, and the CUDA of NCCL's build
    evidence = r.facts.evidence.setdefault("compatibility", {})
    evidence["host"] = host
    if any(found.get(k) is None for k in _compat_reads(policy)):
        return  # a read failed: its check line (or, with the default table, the evidence) says why
    known = {s for row in policy.compatibility for s in row.get("cuda", ())}
    if default and (found["cuda"] is None or not any(matches(found["cuda"], s) for s in known)):
        what = f"CUDA {found['cuda']}" if found["cuda"] else f"no +cudaX.Y in NCCL's version {nccl}"
        evidence.setdefault("not checked", []).append(f"{what}: not in the default table")
        return
    row = compatible_row(host, policy.compatibility)
    evidence[f"row of the {policy.compatibility_source} table"] = plain(row)
    if row is None:
        shown = ", ".join(f"{k} {v or 'unknown'}" for k, v in host.items())
        r.facts.failed.append(
            f"[compatibility] {shown}: no row of the {policy.compatibility_source} compatibility table "
            "(preflight.compatibility) allows this combination"
        )


def _counters(nics: list[dict[str, Any]], first: _Reads, second: _Reads, policy: Policy) -> None:
    for nic in nics:
        command = _stats(nic["netdev"])
        a = first.get("counters", command, hp.parse_ethtool_stats)
        b = second.get("counters", command, hp.parse_ethtool_stats)
        if a is None or b is None:
            continue
        frames = b.get("rx_packets_phy", 0) - a.get("rx_packets_phy", 0)
        # link errors only: mlx5's rx_discards_phy counts frames dropped for lack of receive buffers (congestion),
        # not errors on the link [3P: Linux Documentation/networking/device_drivers/ethernet/mellanox/mlx5/
        # counters.rst, rx_discards_phy]
        errors = b.get("rx_crc_errors_phy", 0) - a.get("rx_crc_errors_phy", 0)
        if frames > 0 and errors / frames > policy.max_error_rate:
            first.facts.failed.append(
                f"[counters] {nic['netdev']}: {errors} errored of {frames} frames ({100 * errors / frames:.4f} %) "
                f"between two reads, above {100 * policy.max_error_rate:.4f} %"
            )
