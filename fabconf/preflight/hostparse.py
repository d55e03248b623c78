"""The host tools preflight reads, parsed; formats as ``fabconf_lab.host.platcmds`` documents them (with its
[U] marks). Every parser raises ``ParseError`` on text it does not recognise: a garbled read is a failed
check, never a passing one."""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabconf.platform.linux.parse import ParseError, check_clean


@dataclass(frozen=True)
class EthLink:
    speed_gbps: int | None  # None: "Unknown!" (no link)
    detected: bool


def parse_ethtool(text: str) -> EthLink:
    check_clean(text)
    speed = re.search(r"^\s*Speed:\s*(\S+)", text, re.M)
    detected = re.search(r"^\s*Link detected:\s*(yes|no)\s*$", text, re.M)
    if speed is None or detected is None:
        raise ParseError("no Speed: or Link detected: line")
    match = re.fullmatch(r"(\d+)Mb/s", speed.group(1))
    return EthLink(int(match.group(1)) // 1000 if match else None, detected.group(1) == "yes")


def parse_ethtool_stats(text: str) -> dict[str, int]:
    check_clean(text)
    lines = text.splitlines()
    if not lines or lines[0].strip() != "NIC statistics:":
        raise ParseError("no 'NIC statistics:' header")
    out = {}
    for raw in lines[1:]:
        match = re.fullmatch(r"\s+([A-Za-z0-9_.\[\]-]+): (-?\d+)\s*", raw)
        if not match:
            raise ParseError(f"unexpected counter line {raw[:60]!r}")
        out[match.group(1)] = int(match.group(2))
    return out


def _ibv_field(text: str, field: str, value: str) -> dict[str, list[str]]:
    """``ibv_devinfo``: hca_id -> every value of ``field`` (one per port for a port field) matching ``value``."""
    check_clean(text)
    out: dict[str, list[str]] = {}
    hca: str | None = None
    line = re.compile(rf"\s+{field}:\s*({value})")
    for raw in text.splitlines():
        match = re.match(r"hca_id:\s*(\S+)", raw)
        if match:
            hca = match.group(1)
            continue
        match = line.match(raw)
        if match and hca is not None:
            out.setdefault(hca, []).append(match.group(1))
    if not out:
        raise ParseError(f"no hca_id with {field}")
    return out


def parse_ibv_firmware(text: str) -> dict[str, str]:
    """``ibv_devinfo``: hca_id -> fw_ver."""
    return {hca: values[-1] for hca, values in _ibv_field(text, "fw_ver", r"\S+").items()}


def parse_grep_values(text: str) -> dict[str, int]:
    """``grep -H . FILE...`` over counter files: file name (its last path element) -> value."""
    check_clean(text)
    out: dict[str, int] = {}
    for raw in text.splitlines():
        match = re.fullmatch(r"\S*/([^/:]+):(-?\d+)\s*", raw)
        if not match:
            raise ParseError(f"unexpected line {raw[:60]!r}")
        out[match.group(1)] = int(match.group(2))
    if not out:
        raise ParseError("no counter")
    return out


def full_pci(address: str) -> str:
    """A PCI address with its domain: ``17:00.0`` (what lspci and ``mst status`` print while every device is in
    domain 0) is ``0000:17:00.0``; ``0004:01:00.0`` stays as it is. Lower case, as lspci prints it."""
    text = address.strip().lower()
    return text if re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", text) else f"0000:{text}"


def parse_mst_status(text: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """``mst status -v``: RDMA device -> (PCI address, its netdevs) from the PCI devices table. The address is
    kept with its domain (``0000:`` added where mst printed none), as ``parse_lspci_links`` keys it. The NET
    column can name several netdevs (``net-p1,net-pf1hpf,net-en3f1pf1sf0`` on a BlueField-3 [3P:
    tests/captures/mst-status-v]); all are kept, none when the column is empty."""
    check_clean(text)
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    seen_header = False
    for raw in text.splitlines():
        cols = raw.split()
        if cols[:3] == ["DEVICE_TYPE", "MST", "PCI"]:
            seen_header = True
            continue
        if seen_header and len(cols) >= 5 and cols[1].startswith("/dev/mst/"):
            if not re.fullmatch(r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]", cols[2]):
                raise ParseError(f"mst status: {cols[3]}: not a PCI address {cols[2][:20]!r}")
            names = cols[4].split(",") if cols[4].startswith("net-") else []
            out[cols[3]] = (full_pci(cols[2]), tuple(name.removeprefix("net-") for name in names))
    if not seen_header:
        raise ParseError("no PCI devices table")
    return out


def parse_lsmod(text: str) -> set[str]:
    check_clean(text)
    lines = text.splitlines()
    if not lines or not lines[0].startswith("Module"):
        raise ParseError("no 'Module Size Used by' header")
    return {line.split()[0] for line in lines[1:] if line.strip()}


def parse_ibv_active_mtu(text: str) -> dict[str, int]:
    """``ibv_devinfo``: hca_id -> the smallest ``active_mtu`` of its ports, in bytes (``active_mtu: 4096 (5)``)."""
    return {hca: min(int(v) for v in values) for hca, values in _ibv_field(text, "active_mtu", r"\d+").items()}


@dataclass(frozen=True)
class PcieLink:
    description: str  # lspci's class and name ("Ethernet controller: Mellanox ...", "3D controller: NVIDIA ...")
    cap_speed: float  # GT/s
    cap_width: int
    speed: float  # as trained (LnkSta)
    width: int


_PCI_ADDRESS = r"((?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])"


def parse_lspci_links(text: str) -> dict[str, PcieLink]:
    """``lspci -vvv``: PCI address (``domain:bus:dev.fn``; ``0000:`` added where lspci printed no domain, as it
    does while every device is in domain 0 [V: pciutils ``lspci.c`` ``show_slot_name``]) -> its PCIe link,
    capability (``LnkCap: ... Speed 32GT/s, Width x16``) and as trained (``LnkSta: Speed 32GT/s (ok), Width x16
    (ok)``), for every device that shows both. Two functions in different domains are two keys; an address listed
    twice is refused (one link would hide the other)."""
    check_clean(text)
    out: dict[str, PcieLink] = {}
    seen: set[str] = set()
    address, description = "", ""
    cap: tuple[float, int] | None = None
    for raw in text.splitlines():
        match = re.match(_PCI_ADDRESS + r" (.+)$", raw)
        if match:
            address, description, cap = full_pci(match.group(1)), match.group(2), None
            if address in seen:
                raise ParseError(f"lspci: device {address} listed twice")
            seen.add(address)
            continue
        found = re.search(r"\bLnk(Cap|Sta):.*?Speed ([\d.]+)GT/s[^,]*, Width x(\d+)", raw)
        if found is None or not address:
            continue
        speed, width = float(found.group(2)), int(found.group(3))
        if found.group(1) == "Cap":
            cap = (speed, width)
        elif cap is not None:
            out[address] = PcieLink(description, cap[0], cap[1], speed, width)
    return out


@dataclass(frozen=True)
class LinkBer:
    fec: str  # the active FEC ("Standard_RS-FEC - (544,514)", "RS-FEC - (544,514) + PLR"; "No FEC")
    raw_ber: float  # pre-FEC
    effective_errors: int  # bits FEC could not correct since the counters were cleared


def fec_off(fec: str) -> bool:
    """Whether mlxlink's active FEC names no FEC. mlxlink prints ``No FEC`` [V: mstflint
    ``mlxlink/modules/mlxlink_maps.cpp`` ``initFecAndLoopbackMapping``, ``FEC_MODE_NO_FEC``, at b9d9e84];
    ``No-FEC`` and ``No_FEC`` (the register's own name) are read the same."""
    return re.sub(r"[\s_-]+", " ", fec.strip().lower()).startswith("no fec")


def parse_mlxlink(text: str) -> LinkBer:
    """``mlxlink -d DEV -c``: ``FEC : ...``, ``Raw Physical BER : 3E-10``, ``Effective Physical Errors : 0``
    [3P: the field names of published mlxlink output, tests/captures/mlxlink]."""
    check_clean(text)
    fields = dict(
        (m.group(1).strip(), m.group(2).strip()) for m in re.finditer(r"^(\S[^:\n]*?)\s*:\s*(.*)$", text, re.M)
    )
    try:
        return LinkBer(fields["FEC"], float(fields["Raw Physical BER"]), int(fields["Effective Physical Errors"]))
    except (KeyError, ValueError) as exc:
        raise ParseError(f"no FEC, Raw Physical BER or Effective Physical Errors ({exc})") from None


def parse_topo(text: str) -> dict[str, dict[str, str]]:
    """``nvidia-smi topo -m``: GPU index -> RDMA device -> how they connect (``PIX``, ``PXB``, ``PHB``, ``NODE``,
    ``SYS``), from the matrix and its ``NIC Legend`` (``NIC0: mlx5_0``)."""
    check_clean(text)
    lines = text.splitlines()
    header = next((line.split("\t") for line in lines if re.match(r"\s*GPU0\b", line.strip())), None)
    if header is None:
        raise ParseError("no GPU0 column header")
    columns = [c.strip() for c in header if c.strip()]
    legend = dict(re.findall(r"^\s*(NIC\d+):\s*(\S+)\s*$", text, re.M))
    out: dict[str, dict[str, str]] = {}
    for line in lines:
        cells = [c.strip() for c in line.split("\t")]
        if not cells or not re.fullmatch(r"GPU\d+", cells[0]):
            continue
        for name, cell in zip(columns, cells[1:], strict=False):
            if name in legend:
                out.setdefault(cells[0][3:], {})[legend[name]] = cell
    if not out:
        raise ParseError("no GPU rows with NIC columns")
    return out


def parse_acs_enabled(text: str) -> list[str]:
    """``lspci -vvv``: the bridges whose ACS redirects peer-to-peer traffic to the root complex, by address: only
    the redirect bits count (``ACSCtl:`` with ReqRedir+ or CmpltRedir+, P2P Request and Completion Redirect);
    SrcValid+ (source validation) and the other controls do not redirect."""
    check_clean(text)
    out, device = [], ""
    for raw in text.splitlines():
        match = re.match(r"([0-9a-f]{2,4}:[0-9a-f]{2}\.[0-9a-f]|[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]) ", raw)
        if match:
            device = match.group(1)
        elif "ACSCtl:" in raw and re.search(r"\b(ReqRedir|CmpltRedir)\+", raw):
            out.append(device)
    return out


def parse_ofed(text: str) -> str:
    check_clean(text)
    match = re.fullmatch(r"\s*(?:MLNX_OFED_LINUX-|OFED-internal-)?([0-9][\w.-]*):?\s*", text)
    if not match:
        raise ParseError("not an ofed_info -s line")
    return match.group(1)


def parse_nvidia_version(text: str) -> str:
    check_clean(text)
    match = re.search(r"Kernel Module(?: for \S+)?\s+([0-9]+(?:\.[0-9]+)+)", text)
    if not match:
        raise ParseError("no 'Kernel Module VERSION'")
    return match.group(1)


def parse_nvidia_open(text: str) -> bool:
    """``/proc/driver/nvidia/version``: whether the open kernel modules run (``NVIDIA UNIX Open Kernel Module``)."""
    parse_nvidia_version(text)
    return "Open Kernel Module" in text


def parse_kernel_release(text: str) -> tuple[int, int]:
    """``uname -r``: (major, minor)."""
    check_clean(text)
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\S*\s*", text)
    if not match:
        raise ParseError("not a kernel release")
    return int(match.group(1)), int(match.group(2))


def parse_package_version(text: str) -> str:
    check_clean(text)
    value = text.strip()
    if not re.fullmatch(r"[0-9][\w.+:~-]*", value):
        raise ParseError("not a package version")
    return value


def parse_gids(text: str) -> dict[tuple[str, int], tuple[str, str]]:
    """``show_gids``: (RDMA device, index) -> (IPv4 address or "", RoCE version) for port 1."""
    check_clean(text)
    out: dict[tuple[str, int], tuple[str, str]] = {}
    if "n_gids_found=" not in text:
        raise ParseError("no n_gids_found= line")
    for raw in text.splitlines():
        cols = raw.split()
        if len(cols) >= 5 and cols[1] == "1" and cols[2].isdigit():
            ipv4 = cols[4] if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", cols[4]) else ""
            version = cols[5] if ipv4 and len(cols) > 5 else cols[4]
            out[(cols[0], int(cols[2]))] = (ipv4, version)
    return out


FOUR_GIB = 1 << 32
_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


@dataclass(frozen=True)
class BarRegion:
    """One memory region (BAR) of a PCI function as ``lspci -vv`` prints it: ``Region 1: Memory at 3c000000000
    (64-bit, prefetchable) [size=128G]`` [V: pciutils ``lspci.c`` ``show_bases``: the address, or ``<unassigned>``
    (no address and no flags) or ``<ignored>`` (flags but no address); ``[disabled]`` when memory decoding is off
    in the command register; ``[size=N]`` with K/M/G/T in powers of 1024]."""

    region: int
    address: int | None  # None: <unassigned> or <ignored>
    bits: int  # 32 or 64
    prefetchable: bool
    disabled: bool
    size: int  # bytes; 0 when lspci printed no size


def _size(text: str | None) -> int:
    match = re.fullmatch(r"(\d+)([KMGT]?)", text or "")
    return int(match.group(1)) * _SIZE_UNITS[match.group(2)] if match else 0


def parse_gpu_bars(text: str) -> dict[str, list[BarRegion]]:
    """``lspci -vv``: every NVIDIA display or 3D controller (``domain:bus:dev.fn``, as ``parse_lspci_links``) ->
    its memory regions."""
    check_clean(text)
    out: dict[str, list[BarRegion]] = {}
    current: str | None = None
    region = re.compile(
        r"\s+Region (\d+): Memory at (\S+) \((32|64)-bit, (non-)?prefetchable\)( \[disabled\])?(?: \[size=(\w+)\])?\s*$"
    )
    for raw in text.splitlines():
        match = re.match(_PCI_ADDRESS + r" (.+)$", raw)
        if match:
            gpu = re.match(r"(3D|VGA compatible) controller: NVIDIA", match.group(2))
            current = full_pci(match.group(1)) if gpu else None
            if current is not None:
                out[current] = []
            continue
        found = region.match(raw) if current is not None else None
        if found is None or current is None:
            continue
        address = found.group(2)
        out[current].append(
            BarRegion(
                int(found.group(1)),
                int(address, 16) if re.fullmatch(r"[0-9a-f]+", address) else None,
                int(found.group(3)),
                found.group(4) is None,
                found.group(5) is not None,
                _size(found.group(6)),
            )
        )
    return out


def parse_dir_listing(text: str) -> list[str]:
    """``ls DIR``: the names, one a line (an empty directory prints nothing)."""
    check_clean(text)
    names = text.split()
    if any(not re.fullmatch(r"[\w.:+-]+", name) for name in names):
        raise ParseError("not a directory listing")
    return names


def parse_sysfs_int(text: str) -> int:
    """A sysfs attribute holding one decimal number (``sriov_numvfs``)."""
    check_clean(text)
    if not re.fullmatch(r"\s*\d+\s*", text):
        raise ParseError("not a number")
    return int(text)


def nccl_cuda(version: str) -> str | None:
    """The CUDA a libnccl2 package was built for, from its version: ``2.21.5-1+cuda12.4`` -> ``12.4`` [V: NVIDIA
    NCCL Installation Guide, packages named ``libnccl2=2.x.y-1+cudaX.Y``]."""
    match = re.search(r"\+cuda(\d+\.\d+)", version)
    return match.group(1) if match else None
