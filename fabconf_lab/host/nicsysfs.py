"""Virtual sysfs/configfs files of a lab GPU host, computed from (and written into) ``HostState``.

Files (``IF`` a NIC netdev, ``DEV`` its RDMA device, ``N`` a priority 0-7):

- ``/sys/class/net/IF/ecn/roce_np/enable/N``, ``/sys/class/net/IF/ecn/roce_rp/enable/N``: ``0``/``1``
- ``/sys/class/net/IF/ecn/roce_np/cnp_dscp`` (0-63), ``.../roce_np/cnp_802p_prio`` (0-7),
  ``.../roce_np/min_time_between_cnps``
- ``/sys/class/net/IF/mtu`` (read/write), ``operstate``, ``address``, ``speed`` (Mb/s, -1 when down), ``carrier``
- ``/sys/class/infiniband/DEV/tc/1/traffic_class``: write a ToS (0-255); reads ``Global tclass=N``
  ([U] read-back format reported, not verified; an unset value reads as an empty file).
- ``/sys/kernel/config/rdma_cm/DEV/ports/1/default_roce_tos`` (what ``cma_roce_tos`` writes)

Reads print ``"%u\\n"``-style values; a bad write fails with "Invalid argument" (bash prints
``echo: write error: Invalid argument``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from fabconf_lab.host.nicstate import HostState, NicPort, card_of
from fabconf_lab.host.shell import FsError

MAX_MTU = 9978
MIN_MTU = 68


@dataclass
class NicContext:
    """What the NIC tools need besides the state: link carrier, the garbled-output fault and a PFC storm (``fabconf
    lab fault HOST pfc-storm``: pause frames received so far on each storming priority, and the storms the NIC's
    watchdog acted on)."""

    state: HostState
    carrier: Callable[[NicPort], bool]
    garbled: Callable[[], bool]
    storm: Callable[[], tuple[int, int]] = lambda: (0, 0)

    def oper_up(self, nic: NicPort) -> bool:
        return nic.admin_up and self.carrier(nic)


def garble(text: str) -> str:
    """The host's "garbled" fault: output cut to two thirds, with characters dropped and replaced throughout
    (a flaky console or a tool crashing mid-write). Parsers must notice rather than read wrong values."""
    if not text:
        return "\x00\ufffd"
    kept = text[: max(1, len(text) * 2 // 3)]
    out = []
    for i, ch in enumerate(kept):
        if i % 11 == 5:
            out.append("\ufffd")
        elif i % 7 != 3:
            out.append(ch)
    return "".join(out) + "\x00"


def _int(data: str, low: int, high: int) -> int:
    text = data.strip()
    try:
        value = int(text, 0) if text else -1
    except ValueError:
        raise FsError("Invalid argument") from None
    if not low <= value <= high:
        raise FsError("Invalid argument")
    return value


HW_COUNTERS = ("local_ack_timeout_err", "np_cnp_sent", "np_ecn_marked_roce_packets", "out_of_sequence")
_EPOCH = time.monotonic()


def frames(ctx: NicContext, nic: NicPort) -> tuple[int, int]:
    """(frames, errored frames) a NIC port received so far: frames grow with time while the link is up, errors in
    proportion to ``error_ratio`` (a ``link PORT:errors=R`` fault)."""
    count = int(nic.frames_per_s * (time.monotonic() - _EPOCH)) if ctx.oper_up(nic) else 0
    return count, int(count * nic.error_ratio)


def hw_counters(ctx: NicContext, nic: NicPort) -> dict[str, int]:
    """``/sys/class/infiniband/DEV/ports/1/hw_counters``: errored frames cost RoCE retransmissions, seen as
    out-of-sequence packets at the receiver and ACK timeouts at the sender [U: a lab model, the proportions made up]."""
    _count, errors = frames(ctx, nic)
    return {
        "local_ack_timeout_err": errors // 4,
        "np_cnp_sent": 0,
        "np_ecn_marked_roce_packets": 0,
        "out_of_sequence": errors // 8,
    }


IOMMU_UNITS = 4  # DMAR units a two-socket server shows (/sys/class/iommu/dmar0..) [U: a lab model]


def iommu_units(state: HostState) -> list[str]:
    """``/sys/class/iommu``: one entry per IOMMU unit while the kernel runs the IOMMU (``intel_iommu=on``, with or
    without ``iommu=pt``); empty when it is off [V: Linux Documentation/ABI/testing/sysfs-class-iommu for the class;
    3P that it is empty with the IOMMU off]."""
    words = state.kernel_cmdline.split()
    on = any(w in words for w in ("intel_iommu=on", "amd_iommu=on")) and "intel_iommu=off" not in words
    return [f"dmar{i}" for i in range(IOMMU_UNITS)] if on else []


def total_vfs(state: HostState, nic: NicPort) -> int:
    """``sriov_totalvfs``: the VFs the firmware exposes (mlxconfig NUM_OF_VFS in effect with SRIOV_EN), read from
    the card's first function, which holds its firmware configuration."""
    holder = min((n for n in state.nics if card_of(n.pci) == card_of(nic.pci)), key=lambda n: n.pci)
    return holder.mlx_current.get("NUM_OF_VFS", 0) if holder.mlx_current.get("SRIOV_EN", 0) else 0


def _numvfs(state: HostState, nic: NicPort, data: str) -> int:
    """A write to ``sriov_numvfs``: at most ``sriov_totalvfs`` (ERANGE), and from N VFs to another non-zero count
    only through 0 (EBUSY) [V: Linux drivers/pci/iov.c sriov_numvfs_store]."""
    value = _int(data, 0, 2**16 - 1)
    if value > total_vfs(state, nic):
        raise FsError("Numerical result out of range")
    if value and nic.sriov_numvfs and value != nic.sriov_numvfs:
        raise FsError("Device or resource busy")
    return value


# /sys/class/net/NETDEV/... files of one value: what each reads
_NET_FILES: dict[tuple[str, ...], Callable[[NicContext, NicPort], str]] = {
    ("mtu",): lambda ctx, nic: f"{nic.mtu}\n",
    ("address",): lambda ctx, nic: f"{nic.mac}\n",
    ("operstate",): lambda ctx, nic: "up\n" if ctx.oper_up(nic) else "down\n",
    ("carrier",): lambda ctx, nic: "1\n" if ctx.oper_up(nic) else "0\n",
    ("speed",): lambda ctx, nic: f"{nic.speed * 1000}\n" if ctx.oper_up(nic) else "-1\n",
    ("device", "sriov_numvfs"): lambda ctx, nic: f"{nic.sriov_numvfs}\n",
    ("device", "sriov_totalvfs"): lambda ctx, nic: f"{total_vfs(ctx.state, nic)}\n",
    ("ecn", "roce_np", "cnp_dscp"): lambda ctx, nic: f"{nic.cnp_dscp}\n",
    ("ecn", "roce_np", "cnp_802p_prio"): lambda ctx, nic: f"{nic.cnp_802p_prio}\n",
    ("ecn", "roce_np", "min_time_between_cnps"): lambda ctx, nic: f"{nic.min_time_between_cnps}\n",
}


class NicSysfs:
    """A ``VirtualFiles`` tree for ``/sys`` (and ``/sys/kernel/config``)."""

    def __init__(self, ctx: NicContext) -> None:
        self.ctx = ctx

    # -- path resolution -------------------------------------------------------------------------
    def _split(self, path: str) -> tuple[NicPort | None, str, list[str]]:
        parts = path.strip("/").split("/")
        state = self.ctx.state
        if parts[:3] == ["sys", "class", "net"] and len(parts) >= 4:
            nic = next((n for n in state.nics if n.netdev == parts[3]), None)
            return nic, "net", parts[4:]
        if parts[:3] == ["sys", "class", "infiniband"] and len(parts) >= 4:
            nic = next((n for n in state.nics if n.rdma == parts[3]), None)
            return nic, "ib", parts[4:]
        if parts[:4] == ["sys", "kernel", "config", "rdma_cm"] and len(parts) >= 5:
            nic = next((n for n in state.nics if n.rdma == parts[4]), None)
            return nic, "cm", parts[5:]
        return None, "", parts

    def _dirs(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {
            "/sys": ["class", "kernel"],
            "/sys/class": ["infiniband", "iommu", "net"],
            "/sys/class/iommu": iommu_units(self.ctx.state),
            "/sys/class/net": sorted(["lo", self.ctx.state.mgmt_if, *(n.netdev for n in self.ctx.state.nics)]),
            "/sys/class/infiniband": [n.rdma for n in self.ctx.state.nics],
            "/sys/kernel": ["config"],
            "/sys/kernel/config": ["rdma_cm"],
            "/sys/kernel/config/rdma_cm": [n.rdma for n in self.ctx.state.nics],
        }
        prios = [str(p) for p in range(8)]
        for other in ("lo", self.ctx.state.mgmt_if):
            out[f"/sys/class/net/{other}"] = ["address", "mtu", "operstate"]
        for nic in self.ctx.state.nics:
            base = f"/sys/class/net/{nic.netdev}"
            out[base] = ["address", "carrier", "device", "ecn", "mtu", "operstate", "speed"]
            out[f"{base}/device"] = ["sriov_numvfs", "sriov_totalvfs"]
            out[f"{base}/ecn"] = ["roce_np", "roce_rp"]
            out[f"{base}/ecn/roce_np"] = ["cnp_802p_prio", "cnp_dscp", "enable", "min_time_between_cnps"]
            out[f"{base}/ecn/roce_rp"] = ["enable"]
            out[f"{base}/ecn/roce_np/enable"] = prios
            out[f"{base}/ecn/roce_rp/enable"] = prios
            ib = f"/sys/class/infiniband/{nic.rdma}"
            out[ib] = ["ports", "tc"]
            out[f"{ib}/ports"] = ["1"]
            out[f"{ib}/ports/1"] = ["hw_counters"]
            out[f"{ib}/ports/1/hw_counters"] = sorted(HW_COUNTERS)
            out[f"{ib}/tc"] = ["1"]
            out[f"{ib}/tc/1"] = ["traffic_class"]
            cm = f"/sys/kernel/config/rdma_cm/{nic.rdma}"
            out[cm] = ["ports"]
            out[f"{cm}/ports"] = ["1"]
            out[f"{cm}/ports/1"] = ["default_roce_tos"]
        return out

    def listdir(self, path: str) -> list[str] | None:
        return self._dirs().get(path.rstrip("/") or "/")

    # -- reads ----------------------------------------------------------------------------------------
    def read(self, path: str) -> str | None:
        value = self._read(path)
        if value is not None and self.ctx.garbled():
            value = garble(value)
        return value

    def _other_netdev(self, path: str) -> str | None:
        """lo and the management port: just mtu, operstate and address."""
        parts = path.strip("/").split("/")
        state = self.ctx.state
        if len(parts) != 5 or parts[:3] != ["sys", "class", "net"] or parts[3] not in ("lo", state.mgmt_if):
            return None
        lo = parts[3] == "lo"
        values = {
            "mtu": "65536\n" if lo else "1500\n",
            "operstate": "unknown\n" if lo else "up\n",
            "address": "00:00:00:00:00:00\n" if lo else f"{state.mgmt_mac}\n",
        }
        return values.get(parts[4])

    def _read(self, path: str) -> str | None:
        nic, tree, rest = self._split(path)
        if nic is None:
            return self._other_netdev(path)
        value: str | None = None
        if tree == "net":
            value = self._read_net(nic, rest)
        elif tree == "ib" and rest[:3] == ["ports", "1", "hw_counters"] and len(rest) == 4 and rest[3] in HW_COUNTERS:
            value = f"{hw_counters(self.ctx, nic)[rest[3]]}\n"
        elif tree == "ib" and rest == ["tc", "1", "traffic_class"]:
            value = "" if nic.traffic_class is None else f"Global tclass={nic.traffic_class}\n"
        elif tree == "cm" and rest == ["ports", "1", "default_roce_tos"]:
            value = f"{nic.roce_tos}\n"
        return value

    def _read_net(self, nic: NicPort, rest: list[str]) -> str | None:
        read = _NET_FILES.get(tuple(rest))  # each file worked out alone (a batched read asks for 18 per NIC)
        if read is not None:
            return read(self.ctx, nic)
        if len(rest) == 4 and rest[0] == "ecn" and rest[2] == "enable" and rest[3] in "01234567" and rest[3]:
            table = nic.ecn_np if rest[1] == "roce_np" else nic.ecn_rp if rest[1] == "roce_rp" else None
            if table is not None:
                return f"{table[int(rest[3])]}\n"
        return None

    # -- writes --------------------------------------------------------------------------------------
    def write(self, path: str, data: str) -> None:
        nic, tree, rest = self._split(path)
        if nic is None or self._read(path) is None:
            raise FsError("Permission denied" if self._other_netdev(path) else "No such file or directory")
        if tree == "ib":
            nic.traffic_class = _int(data, 0, 255)
        elif tree == "cm":
            nic.roce_tos = _int(data, 0, 255)
        elif rest == ["device", "sriov_numvfs"]:
            nic.sriov_numvfs = _numvfs(self.ctx.state, nic, data)
        elif rest == ["mtu"]:
            nic.mtu = _int(data, MIN_MTU, MAX_MTU)
        elif rest == ["ecn", "roce_np", "cnp_dscp"]:
            nic.cnp_dscp = _int(data, 0, 63)
        elif rest == ["ecn", "roce_np", "cnp_802p_prio"]:
            nic.cnp_802p_prio = _int(data, 0, 7)
        elif rest == ["ecn", "roce_np", "min_time_between_cnps"]:
            nic.min_time_between_cnps = _int(data, 0, 4095)
        elif len(rest) == 4 and rest[0] == "ecn" and rest[2] == "enable":
            table = nic.ecn_np if rest[1] == "roce_np" else nic.ecn_rp
            table[int(rest[3])] = _int(data, 0, 1)
        else:
            raise FsError("Permission denied")  # read-only attribute (operstate, address, ...)
