"""The platform tools of a lab GPU host that ``fabconf preflight`` reads: ``ethtool``, ``mst``, ``lspci``,
``lsmod``, ``ofed_info``, ``dpkg-query`` and the files ``/proc/cmdline`` and ``/proc/driver/nvidia/version``.

Formats are the real tools' as far as preflight reads them; [U] where marked, they are recalled from the tools'
usual output rather than checked against a manual:

- ``ethtool IF``: ``Settings for IF:`` ... ``Speed: 400000Mb/s`` (``Unknown!`` when down) ... ``Link detected:
  yes|no``. ``ethtool -S IF``: ``NIC statistics:`` then ``     name: value`` lines; the mlx5 names
  ``rx_packets_phy``, ``rx_crc_errors_phy``, ``rx_symbol_err_phy``, ``rx_discards_phy``, ``rx_prioN_pause``,
  ``tx_prioN_pause`` [U: mlx5 counter names as documented in NVIDIA's "Understanding mlx5 ethtool Counters"],
  ``rx_out_of_buffer``, ``rx_prioN_buf_discard`` and ``tx_pause_storm_error_events`` [V: Linux
  ``drivers/net/ethernet/mellanox/mlx5/core/en_stats.c``].
  Counters grow with time while the link is up (``frames_per_s``), errors in proportion (``error_ratio``), so
  two reads give rates. ``ethtool -i IF``: the driver information in the order ethtool's ``dump_drvinfo`` prints
  it [V: ethtool source], ``bus-info`` the port's PCI address (what fabconf passes to ``mlxconfig -d``).
- ``mst status -v``: the PCI devices table (DEVICE_TYPE, MST, PCI, RDMA, NET, NUMA) [U].
- ``lspci`` also lists the host's NVIDIA GPUs (an HGX H100 board: ``3D controller``, 10de:2330, at the bus numbers
  of a DGX H100 [3P]); ``lspci -vv`` shows their memory regions as pciutils prints them (``Region N: Memory at ADDR
  (64-bit, prefetchable) [size=128G]``, ``<unassigned>`` for a BAR the BIOS gave no address) [V: pciutils
  ``lspci.c`` ``show_bases``]: BAR0 16M below 4 GiB, BAR1 128G and BAR3 32M above it [U: an H100 SXM5's BAR sizes
  as recalled]. With Above 4G Decoding off (``fabconf lab fault HOST above4g off``) BAR1 stays unassigned, and the
  small BAR3 is placed below 4 GiB.
- ``lspci -vvv``: per NIC its PCIe switch downstream port, with ``ACSCtl:`` (``+`` = enabled) [U], and the NIC;
  plain ``lspci`` (and ``-D``, ``-s SLOT``, ``-d VENDOR:``): one ``BB:DD.F Class: Vendor Device`` line each.
- ``lsmod``: ``Module Size Used by`` table. ``ofed_info -s``: ``MLNX_OFED_LINUX-24.04-0.6.6.0:``.
  ``dpkg-query -W -f=${Version} libnccl2``: the version. ``/proc/driver/nvidia/version``: ``NVRM version: NVIDIA
  UNIX x86_64 Kernel Module  550.90.07  ...`` (the open modules: ``NVIDIA UNIX Open Kernel Module for x86_64
  550.90.07``) [U].
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fabconf_lab.host import mlx5stats
from fabconf_lab.host.nicstate import PRIOS, HostState, NicPort
from fabconf_lab.host.nicsysfs import NicContext, frames, garble
from fabconf_lab.host.shell import Invocation, Result

Tool = Callable[[NicContext, Invocation], Result]


def _out(ctx: NicContext, text: str) -> Result:
    return Result(garble(text) if ctx.garbled() and text else text)


def _nic(ctx: NicContext, netdev: str) -> NicPort | None:
    return next((n for n in ctx.state.nics if n.netdev == netdev), None)


def counters(ctx: NicContext, nic: NicPort) -> dict[str, int]:
    """mlx5 physical-port counters at this moment: frames while the link has been up, errors in proportion, pause
    frames and the PFC watchdog's storm events of a ``pfc-storm`` fault (on the PFC priorities, else 3)."""
    received, errors = frames(ctx, nic)
    pauses, storms = ctx.storm()
    storming = [p for p in range(PRIOS) if nic.pfc[p]] or [3]
    out = {
        "rx_packets_phy": received,
        "tx_packets_phy": received,
        "rx_crc_errors_phy": errors,
        "rx_symbol_err_phy": errors // 2,
        "rx_discards_phy": 0,
        "rx_out_of_buffer": 0,
    }
    for prio in range(PRIOS):
        out[f"rx_prio{prio}_pause"] = pauses if prio in storming else 0
        out[f"tx_prio{prio}_pause"] = 0
        out[f"rx_prio{prio}_buf_discard"] = 0
    out["tx_pause_storm_error_events"] = storms
    return out


def ethtool(ctx: NicContext, inv: Invocation) -> Result:
    args = inv.argv[1:]
    stats, info = args[:1] == ["-S"], args[:1] in (["-i"], ["--driver"])
    names = args[1:] if stats or info else args
    if len(names) != 1 or names[0].startswith("-"):
        return Result(err="ethtool: the lab models `ethtool IF`, `ethtool -i IF` and `ethtool -S IF`\n", status=1)
    nic = _nic(ctx, names[0])
    if nic is None:
        return Result(err=f"netlink error: no device matches name ({names[0]})\n", status=1)
    if info:  # [V: ethtool's dump_drvinfo] the driver's identity; bus-info is the port's PCI address
        return _out(
            ctx,
            f"driver: mlx5_core\nversion: 24.10-1.1.4\nfirmware-version: {nic.fw_version}\n"
            f"expansion-rom-version: \nbus-info: {nic.pci}\nsupports-statistics: yes\nsupports-test: yes\n"
            "supports-eeprom-access: no\nsupports-register-dump: no\nsupports-priv-flags: yes\n",
        )
    if stats:  # every name a real mlx5 port prints (mlx5stats), the modelled ones with their values, the rest 0
        modelled = counters(ctx, nic)
        rows = {name: modelled.get(name, 0) for name in mlx5stats.names()} | modelled
        return _out(ctx, "NIC statistics:\n" + "".join(f"     {k}: {v}\n" for k, v in rows.items()))
    up = ctx.oper_up(nic)
    return _out(
        ctx,
        f"Settings for {nic.netdev}:\n"
        "\tSupported ports: [ FIBRE ]\n"
        f"\tSpeed: {f'{nic.speed * 1000}Mb/s' if up else 'Unknown!'}\n"
        f"\tDuplex: {'Full' if up else 'Unknown! (255)'}\n"
        "\tAuto-negotiation: on\n"
        "\tPort: Direct Attach Copper\n"
        f"\tLink detected: {'yes' if up else 'no'}\n",
    )


def mst(ctx: NicContext, inv: Invocation) -> Result:
    if inv.argv[1:] not in (["status", "-v"], ["status"]):
        return Result(err="mst: the lab models `mst status [-v]`\n", status=1)
    if not inv.root:
        return Result(err="-E- You must be root to use mst tool\n", status=1)
    rows = "".join(
        f"{n.device_type}(rev:0)        /dev/mst/mt{n.ca_type[2:]}_pciconf{i}      "
        f"{n.pci.removeprefix('0000:')}   {n.rdma}          net-{n.netdev}                           0\n"
        for i, n in enumerate(ctx.state.nics)
    )
    return _out(
        ctx,
        "MST modules:\n------------\n    MST PCI module is not loaded\n    MST PCI configuration module loaded\n"
        "PCI devices:\n------------\n"
        "DEVICE_TYPE             MST                           PCI       RDMA            NET"
        "                                     NUMA\n" + rows,
    )


def _bridge(nic: NicPort) -> str:
    """The PCIe switch port above a NIC: the bus below the card's, in its domain (``0000:16:00.0``)."""
    domain, bus, _ = nic.pci.split(":")
    return f"{domain}:{int(bus, 16) - 1:02x}:00.0"


PCIE_CAP = (32.0, 16)  # a ConnectX-7 card: PCIe Gen5 x16
GPU_BUSES = ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")  # an 8-GPU HGX H100 board (DGX H100) [3P]
GPU_NAME = "NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)"
GIB = 1 << 30


def gpu_slots(state: HostState) -> list[str]:
    """The GPUs' PCI addresses (``bus:dev.fn``), as many as the host has (beyond 8: buses e0, e1, ...)."""
    return [GPU_BUSES[g] if g < len(GPU_BUSES) else f"{0xE0 + g - len(GPU_BUSES):02x}" for g in range(state.gpus)]


def _gpu_block(state: HostState, index: int, slot: str) -> str:
    """One GPU in ``lspci -vvv``: its regions as the BIOS assigned them, its PCIe link (an idle GPU has lowered its
    speed to 2.5GT/s; its width stays x16)."""
    bar0 = 0xA0000000 + index * 0x2000000
    if state.above4g:
        bar1 = f"{0x200000000000 + index * 0x4000000000:x}"
        bar3 = f"{0x202000000000 + index * 0x4000000000:x}"
    else:  # no room for 128G below 4 GiB; the small BAR3 fits there
        bar1, bar3 = "<unassigned>", f"{0xB0000000 + index * 0x2000000:x}"
    return (
        f"{slot}:00.0 3D controller: {GPU_NAME}\n"
        f"\tSubsystem: NVIDIA Corporation Device 17a6\n"
        "\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- FastB2B- DisINTx+\n"
        f"\tRegion 0: Memory at {bar0:x} (32-bit, non-prefetchable) [size=16M]\n"
        f"\tRegion 1: Memory at {bar1} (64-bit, prefetchable) [size=128G]\n"
        f"\tRegion 3: Memory at {bar3} (64-bit, prefetchable) [size=32M]\n"
        "\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n"
        "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported\n"
        "\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16 (ok)\n"
        + ("\tKernel driver in use: nvidia\n" if state.above4g else "")  # without BAR1 the driver cannot probe
        + "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n\n"
    )


def _express(nic: NicPort) -> str:
    """The PCI Express capability's link lines as lspci prints them: capability, then the trained link with
    ``(ok)`` or ``(downgraded)`` after each value [U: recalled from pciutils' output]."""
    cap_speed, cap_width = PCIE_CAP
    speed = "ok" if nic.pcie_speed >= cap_speed else "downgraded"
    width = "ok" if nic.pcie_width >= cap_width else "downgraded"
    return (
        "\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n"
        f"\t\tLnkCap:\tPort #0, Speed {cap_speed:g}GT/s, Width x{cap_width}, ASPM not supported\n"
        "\t\t\tClockPM- Surprise- LLActRep- BwNot- ASPMOptComp+\n"
        f"\t\tLnkSta:\tSpeed {nic.pcie_speed:g}GT/s ({speed}), Width x{nic.pcie_width} ({width})\n"
        "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-\n"
    )


_LSPCI_HELP = "Usage: lspci [<switches>]\n\nBasic display modes:\n-mm\t\tProduce machine-readable output\n"


def _lspci_args(argv: list[str]) -> tuple[dict[str, str], str | None]:
    """lspci's switches the lab knows: -v/-vv/-vvv, -D (domains), -n/-nn, -k, -s SLOT, -d VENDOR:[DEVICE]
    [V: lspci(8)]; another switch is getopt's "invalid option" and the usage, exit 2 [U: the status]."""
    opts: dict[str, str] = {}
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-s", "-d"):
            if i + 1 >= len(argv):
                return opts, f"lspci: option requires an argument -- '{arg[1]}'\n"
            opts[arg] = argv[i + 1]
            i += 2
            continue
        if not re.fullmatch(r"-(v{1,3}|D|nn?|k|vvvD|Dvvv)", arg):
            return opts, f"lspci: invalid option -- '{arg.lstrip('-')[:1] or arg}'\n"
        for ch in arg[1:]:
            opts[f"-{ch}"] = opts.get(f"-{ch}", "") + ch
        i += 1
    return opts, None


def _slot(pci: str, domain: bool) -> str:
    return pci if domain else pci[5:]


def _domains(ctx: NicContext, opts: dict[str, str]) -> bool:
    """Whether lspci prints domains: with ``-D``, or once any device is outside domain 0 [V: pciutils ``lspci.c``
    ``scan_device`` sets ``opt_domains`` for a non-zero domain; ``show_slot_name``]."""
    return "-D" in opts or any(not n.pci.startswith("0000:") for n in ctx.state.nics)


def _lspci_brief(ctx: NicContext, opts: dict[str, str]) -> Result:
    """One line per function, bridges included, as plain ``lspci`` prints them; ``-s``/``-d`` filter."""
    domain = _domains(ctx, opts)
    rows: list[tuple[str, str, str]] = []  # (full address, vendor:device, text)
    for nic in ctx.state.nics:
        rows.append((_bridge(nic), "1000:c030", "PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0)"))
        rows.append((nic.pci, "15b3:1021", "Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]"))
    for slot in gpu_slots(ctx.state):
        rows.append((f"0000:{slot}:00.0", "10de:2330", f"3D controller: {GPU_NAME}"))
    slot = opts.get("-s")
    ids = opts.get("-d")
    out = []
    for full, vendev, text in sorted(set(rows)):
        if slot and not (full.endswith(slot) or full[5:].startswith(slot)):
            continue
        if ids:
            want_v, _, want_d = ids.partition(":")
            have_v, have_d = vendev.split(":")
            if (want_v and want_v != have_v) or (want_d and want_d != have_d):
                continue
        out.append(f"{_slot(full, domain)} {text}\n")
    return _out(ctx, "".join(out))


def lspci(ctx: NicContext, inv: Invocation) -> Result:
    opts, bad = _lspci_args(inv.argv)
    if bad is not None:
        return Result(err=bad + _LSPCI_HELP, status=2)
    if "-v" not in opts:
        return _lspci_brief(ctx, opts)
    flag = "+" if ctx.state.acs_enabled else "-"
    acs = " ".join(f"{name}{flag}" for name in ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd"))
    blocks = []
    domain = _domains(ctx, opts)
    for nic in ctx.state.nics:
        blocks.append(
            f"{_slot(_bridge(nic), domain)} PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0)"
            " (prog-if 00 [Normal decode])\n"
            "\tCapabilities: [100 v1] Access Control Services\n"
            "\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl+ DirectTrans+\n"
            f"\t\tACSCtl:\t{acs} EgressCtrl- DirectTrans-\n\n"
            f"{_slot(nic.pci, domain)} Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n"
            f"\tSubsystem: Mellanox Technologies {nic.description}\n"
            + _express(nic)
            + "\tCapabilities: [480 v1] Address Translation Service (ATS)\n"
            "\t\tATSCap:\tInvalidate Queue Depth: 00\n"
            "\t\tATSCtl:\tEnable+, Smallest Translation Unit: 00\n\n"
        )
    blocks += [_gpu_block(ctx.state, i, _slot(f"0000:{slot}", domain)) for i, slot in enumerate(gpu_slots(ctx.state))]
    return _out(ctx, "".join(blocks))


def lsmod(ctx: NicContext, inv: Invocation) -> Result:
    rows = "".join(f"{name:<24}{16384:>8}  0\n" for name in ctx.state.modules)
    return _out(ctx, "Module                  Size  Used by\n" + rows)


def ofed_info(ctx: NicContext, inv: Invocation) -> Result:
    if inv.argv[1:] != ["-s"]:
        return Result(err="ofed_info: the lab models `ofed_info -s`\n", status=1)
    return _out(ctx, f"{ctx.state.ofed_version}:\n")


def dpkg_query(ctx: NicContext, inv: Invocation) -> Result:
    packages = {"libnccl2": ctx.state.nccl_version}
    args = inv.argv[1:]
    if len(args) != 3 or args[0] != "-W" or not args[1].startswith("-f="):
        return Result(err="dpkg-query: the lab models `dpkg-query -W -f=${Version} PACKAGE`\n", status=2)
    version = packages.get(args[2])
    if version is None:
        return Result(err=f"dpkg-query: no packages found matching {args[2]}\n", status=1)
    return _out(ctx, version)


def _topo_relation(state: HostState, gpu: int, nic_index: int) -> str:
    """GPU to NIC as ``nvidia-smi topo -m`` names it: PXB under one PCIe switch, NODE within a NUMA node, SYS across
    NUMA nodes [3P: nvidia-smi's legend]."""
    nic = state.nics[nic_index]
    gpu_numa = gpu * 2 // max(state.gpus, 1)
    if nic.numa < 0 and gpu == nic_index:
        return "PXB"
    nic_numa = nic.numa if nic.numa >= 0 else nic_index * 2 // max(state.gpus, 1)
    return "NODE" if nic_numa == gpu_numa else "SYS"


def nvidia_smi(ctx: NicContext, inv: Invocation) -> Result:
    """``nvidia-smi topo -m``: the GPU/NIC matrix, CPU and NUMA affinity, the legend and the NIC legend [3P: the
    layout of nvidia-smi's topology matrix; the GPUs' links to each other (NV18) as on an 8-GPU HGX board]."""
    if inv.argv[1:] != ["topo", "-m"]:
        return Result(err="nvidia-smi: the lab models `nvidia-smi topo -m`\n", status=1)
    state = ctx.state
    gpus = [f"GPU{g}" for g in range(state.gpus)]
    nics = [f"NIC{n}" for n in range(len(state.nics))]
    names = gpus + nics
    lines = ["\t" + "\t".join(names) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"]
    for row in names:
        cells = []
        for col in names:
            if row == col:
                cells.append(" X ")
            elif row.startswith("GPU") and col.startswith("GPU"):
                cells.append("NV18")
            elif row.startswith("NIC") and col.startswith("NIC"):
                cells.append("SYS")
            else:
                gpu, nic = (row, col) if row.startswith("GPU") else (col, row)
                cells.append(_topo_relation(state, int(gpu[3:]), int(nic[3:])))
        extra = ""
        if row.startswith("GPU"):
            numa = int(row[3:]) * 2 // max(state.gpus, 1)
            extra = f"\t{'0-55,112-167' if numa == 0 else '56-111,168-223'}\t{numa}\t\tN/A"
        lines.append(row + "\t" + "\t".join(cells) + extra)
    legend = (
        "\nLegend:\n\n  X    = Self\n"
        "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
        "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
        "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
        "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
        "  PIX  = Connection traversing at most a single PCIe bridge\n"
        "  NV#  = Connection traversing a bonded set of # NVLinks\n\nNIC Legend:\n\n"
        + "".join(f"  NIC{i}: {n.rdma}\n" for i, n in enumerate(state.nics))
    )
    return _out(ctx, "\n".join(lines) + "\n" + legend)


BASE_RAW_BER = 1e-10  # a healthy 400G PAM4 link's pre-FEC BER in the lab [U: a lab model]


def mlxlink(ctx: NicContext, inv: Invocation) -> Result:
    """``mlxlink -d PCI -c``: operational info (its ``FEC`` line) and physical counters with the pre-FEC (raw) and
    post-FEC (effective) BER [U: field names recalled from MFT's mlxlink output]. Errored frames (a ``link
    PORT:errors=R`` fault) raise the raw BER, and the ones FEC cannot correct show as effective errors."""
    args = inv.argv[1:]
    if "-d" not in args or args.index("-d") + 1 >= len(args) or "-c" not in args:
        return Result(err="mlxlink: the lab models `mlxlink -d DEVICE -c`\n", status=1)
    if not inv.root:
        return Result(err="-E- Permission denied: run mlxlink as root\n", status=1)
    device = args[args.index("-d") + 1]
    nic = next((n for n in ctx.state.nics if device in (n.pci, n.pci[5:], n.rdma)), None)
    if nic is None:
        return Result(err=f"-E- Failed to open device: {device}\n", status=1)
    up = ctx.oper_up(nic)
    raw = BASE_RAW_BER + nic.error_ratio * 1e-2
    effective = frames(ctx, nic)[1] // 1000 if nic.error_ratio > 0.0001 else 0
    rows = [
        ("State", "Active" if up else "Polling"),
        ("Physical state", "LinkUp" if up else "Polling"),
        ("Speed", f"{nic.speed}G" if up else "N/A"),
        ("Width", "4x" if up else "N/A"),
        # mstflint's names for the active FEC [V: mlxlink/modules/mlxlink_maps.cpp initFecAndLoopbackMapping]
        ("FEC", ("No FEC" if nic.fec_off else "Standard_RS-FEC - (544,514)") if up else "N/A"),
    ]
    counters = [
        ("Time Since Last Clear [Min]", "42.7"),
        ("Effective Physical Errors", str(effective)),
        ("Effective Physical BER", f"{max(effective, 1) * 1e-15:.0E}" if effective else "15E-255"),
        ("Raw Physical Errors Per Lane", ",".join([str(int(raw * 1e12))] * 4)),
        ("Raw Physical BER", f"{raw:.0E}"),
    ]

    def block(title: str, pairs: list[tuple[str, str]]) -> str:
        # keys padded to 32 columns, as mlxlink prints them [3P: tests/captures/mlxlink]
        return f"{title}\n{'-' * len(title)}\n" + "".join(f"{k:<32}: {v}\n" for k, v in pairs) + "\n"

    return _out(ctx, block("Operational Info", rows) + block("Physical Counters and BER Info", counters))


TOOLS: dict[str, Tool] = {
    "nvidia-smi": nvidia_smi,
    "mlxlink": mlxlink,
    "ethtool": ethtool,
    "mst": mst,
    "lspci": lspci,
    "lsmod": lsmod,
    "ofed_info": ofed_info,
    "dpkg-query": dpkg_query,
}


class PlatformFiles:
    """``/proc/cmdline`` and ``/proc/driver/nvidia/version`` from the host's state (read only)."""

    def __init__(self, state: HostState) -> None:
        self.state = state

    def read(self, path: str) -> str | None:
        if path == "/proc/cmdline":
            return self.state.kernel_cmdline + "\n"
        if path == "/proc/driver/nvidia/version":
            flavour = "Open Kernel Module for x86_64" if self.state.nvidia_open else "x86_64 Kernel Module"
            return (
                f"NVRM version: NVIDIA UNIX {flavour}  {self.state.nvidia_driver}  "
                "Fri May 31 09:35:42 UTC 2024\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n"
            )
        return None

    def write(self, path: str, data: str) -> None:
        from fabconf_lab.host.memfs import FsError

        raise FsError("Permission denied")

    def listdir(self, path: str) -> list[str] | None:
        return None
