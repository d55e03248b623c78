"""The plain state model of a lab GPU host with ConnectX NICs (no parsing, no I/O).

``HostState`` is what the GPU host simulator's tools read and change; a driver's tests may read (or
prepare) it directly. It splits into:

- runtime state per NIC port (``NicPort``): MTU, admin state, mlnx_qos trust/PFC/dscp2prio/ETS/cable length,
  sysfs DCQCN/ECN (``roce_np``/``roce_rp`` enables, CNP DSCP and priority), RDMA-CM ToS and the OFED
  ``tc/1/traffic_class``. All of it is lost on reboot (``reset_runtime``).
- firmware configuration per NIC (``mlxconfig``): Default / Current / Next Boot values; ``set`` changes
  only Next Boot until a firmware reset or reboot (``apply_pending``).
- persistent host state: files (``/etc`` and anything else written), systemd units enabled, lldpad.

``default_host_state(hostname, ports)`` builds the plausible brownfield start used when a simulator gets
no ``startup_config``.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

PRIOS = 8

# mlxconfig parameters a ConnectX-7 shows, with their kinds and defaults. A kind is "int", "bool" or an
# enum {NAME: number}; values are stored as numbers. Defaults: docs/reference/roce-lossless.md §4.4 and §0.
LINK_TYPES = {"IB": 1, "ETH": 2, "VPI": 3}
ROCE_CONTROL = {"ROCE_DISABLE": 0, "ROCE_ENABLE": 2}
PCI_WR_ORDERING = {"per_mkey": 0, "force_relax": 1}
# [U] ROCE_CC_ALGORITHM enum names are assumed (ECN = DCQCN is the documented default algorithm).
ROCE_CC_ALGORITHM = {"ECN": 0, "QCN": 1}

MLXCONFIG_SPEC: dict[str, tuple[str | dict[str, int], int]] = {
    "NUM_OF_VFS": ("int", 0),
    "SRIOV_EN": ("bool", 0),
    "LINK_TYPE_P1": (LINK_TYPES, 2),
    "ROCE_CONTROL": (ROCE_CONTROL, 2),
    "ROCE_CC_PRIO_MASK_P1": ("int", 255),
    "ROCE_CC_ALGORITHM_P1": (ROCE_CC_ALGORITHM, 0),
    "CLAMP_TGT_RATE_P1": ("bool", 0),
    "RPG_TIME_RESET_P1": ("int", 300),
    "RPG_AI_RATE_P1": ("int", 5),
    "RPG_HAI_RATE_P1": ("int", 50),
    "MIN_TIME_BETWEEN_CNPS_P1": ("int", 4),
    "CNP_802P_PRIO_P1": ("int", 6),
    "CNP_DSCP_P1": ("int", 48),
    "DCBX_WILLING_P1": ("bool", 1),
    "LLDP_NB_DCBX_P1": ("bool", 0),
    "ATS_ENABLED": ("bool", 0),
    "ADVANCED_PCI_SETTINGS": ("bool", 0),
    "MAX_ACC_OUT_READ": ("int", 0),
    "PCI_WR_ORDERING": (PCI_WR_ORDERING, 0),
}


MGMT_ADDRESS = "192.168.100.10/24"
MGMT_GATEWAY = "192.168.100.1"


def spec_of(key: str) -> tuple[str | dict[str, int], int] | None:
    """The kind and default of an mlxconfig key; a second port's key (``_P2``) is its ``_P1`` twin."""
    if key in MLXCONFIG_SPEC:
        return MLXCONFIG_SPEC[key]
    base, _, port = key.rpartition("_P")
    return MLXCONFIG_SPEC.get(f"{base}_P1") if port.isdigit() and int(port) > 1 else None


def card_of(pci: str) -> str:
    return pci.rsplit(".", 1)[0]


def add_port_keys(nics: list[NicPort]) -> None:
    """A card with several PCI functions (ports) shows its per-port keys once per port: the firmware
    configuration lives with its first function, which gains ``_P2`` (…) twins of every ``_P1`` key."""
    cards: dict[str, list[NicPort]] = {}
    for nic in nics:
        cards.setdefault(card_of(nic.pci), []).append(nic)
    for members in cards.values():
        members.sort(key=lambda n: n.pci)
        holder = members[0]
        for port in range(2, len(members) + 1):
            for table in (holder.mlx_default, holder.mlx_current, holder.mlx_next):
                for key in [k for k in table if k.endswith("_P1")]:
                    table.setdefault(f"{key[:-3]}_P{port}", table[key])


def mlxconfig_defaults() -> dict[str, int]:
    return {key: default for key, (_kind, default) in MLXCONFIG_SPEC.items()}


def default_dscp2prio() -> list[int]:
    """mlx5 default DSCP → priority map: DSCP d goes to priority d >> 3."""
    return [d >> 3 for d in range(64)]


def default_prio_tc() -> list[int]:
    """mlx5 default priority → TC map: prio0→tc1, prio1→tc0, identity for the rest."""
    return [1, 0, 2, 3, 4, 5, 6, 7]


def _mac(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return "b8:3f:d2:" + ":".join(f"{b:02x}" for b in digest[:3])


@dataclass
class NicPort:
    """One ConnectX port: its identity (fixed), its firmware config and its runtime state."""

    netdev: str
    rdma: str
    pci: str
    speed: int = 400  # Gb/s
    mac: str = ""
    address: str | None = None  # IPv4 interface address "10.0.0.1/31", shown by show_gids
    fw_version: str = "28.39.1002"
    device_type: str = "ConnectX7"
    ca_type: str = "MT4129"
    part: str = "MCX75310AAS-NEA_Ax"
    description: str = "NVIDIA ConnectX-7 adapter card; 400GbE / NDR IB; single-port OSFP; PCIe 5.0 x16"
    psid: str = "MT_0000000838"
    # firmware configuration
    mlx_default: dict[str, int] = field(default_factory=mlxconfig_defaults)
    mlx_current: dict[str, int] = field(default_factory=mlxconfig_defaults)
    mlx_next: dict[str, int] = field(default_factory=mlxconfig_defaults)
    # runtime (lost on reboot / firmware reset)
    mtu: int = 1500
    admin_up: bool = True
    dcbx: str = "os"  # "os" | "fw"
    trust: str = "pcp"  # "pcp" | "dscp"
    pfc: list[int] = field(default_factory=lambda: [0] * PRIOS)
    dscp2prio: list[int] = field(default_factory=default_dscp2prio)
    prio_tc: list[int] = field(default_factory=default_prio_tc)
    # [U] mlx5 initialises every TC as "vendor" TSA with no bandwidth share; assumed from the driver's ETS init.
    tc_tsa: list[str] = field(default_factory=lambda: ["vendor"] * PRIOS)
    tc_bw: list[int] = field(default_factory=lambda: [0] * PRIOS)
    ratelimit: list[float] = field(default_factory=lambda: [0.0] * PRIOS)  # Gb/s per TC, 0 = unlimited
    cable_len: int = 7
    prio2buffer: list[int] | None = None  # None: automatic (lossless priorities in buffer 1)
    buffer_size: list[int] | None = None  # None: automatic
    ecn_np: list[int] = field(default_factory=lambda: [0] * PRIOS)
    ecn_rp: list[int] = field(default_factory=lambda: [0] * PRIOS)
    cnp_dscp: int = 48
    cnp_802p_prio: int = 6
    min_time_between_cnps: int = 4
    roce_tos: int = 0  # configfs rdma_cm default_roce_tos (cma_roce_tos); 0 = unset
    traffic_class: int | None = None  # OFED /sys/class/infiniband/DEV/tc/1/traffic_class; None = unset
    # the link as the cable and optic make it (`fabconf lab fault HOST link ...`): frames in error per frame
    # received (the article's bound is 0.001 %), and frames per second while up (counters grow with time)
    error_ratio: float = 0.0
    link_down: bool = False  # the cable or optic failed: no carrier though cabled
    frames_per_s: float = 1_000_000.0
    # the PCIe link as trained (`fabconf lab fault HOST pcie NETDEV:x8`); the card is capable of 32GT/s x16
    pcie_speed: float = 32.0
    pcie_width: int = 16
    numa: int = -1  # -1: in the slot under the PCIe switch of the GPU with its index; N: moved to NUMA node N
    sriov_numvfs: int = 0  # SR-IOV virtual functions created (/sys/class/net/IF/device/sriov_numvfs; runtime)

    def __post_init__(self) -> None:
        if not self.mac:
            self.mac = _mac(self.pci + self.netdev)

    @property
    def guid(self) -> str:
        """EUI-64 from the MAC (U/L bit flipped, ff:fe inserted), as 16 hex digits."""
        octets = [int(x, 16) for x in self.mac.split(":")]
        octets[0] ^= 0x02
        eui = [*octets[:3], 0xFF, 0xFE, *octets[3:]]
        return "".join(f"{b:02x}" for b in eui)

    def reset_runtime(self) -> None:
        """What a driver restart leaves: defaults, with the CNP values taken from the current firmware config."""
        fresh = NicPort(self.netdev, self.rdma, self.pci)
        for name in (
            "mtu",
            "admin_up",
            "dcbx",
            "trust",
            "pfc",
            "dscp2prio",
            "prio_tc",
            "tc_tsa",
            "tc_bw",
            "ratelimit",
            "cable_len",
            "prio2buffer",
            "buffer_size",
            "ecn_np",
            "ecn_rp",
            "roce_tos",
            "traffic_class",
            "sriov_numvfs",
        ):
            setattr(self, name, getattr(fresh, name))
        self.cnp_dscp = self.mlx_current.get("CNP_DSCP_P1", 48)
        self.cnp_802p_prio = self.mlx_current.get("CNP_802P_PRIO_P1", 6)
        self.min_time_between_cnps = self.mlx_current.get("MIN_TIME_BETWEEN_CNPS_P1", 4)

    def apply_pending(self) -> bool:
        """Firmware reset: Next Boot becomes Current. Returns True when anything changed."""
        changed = self.mlx_next != self.mlx_current
        self.mlx_current = dict(self.mlx_next)
        return changed

    def effective_prio2buffer(self) -> list[int]:
        if self.prio2buffer is not None:
            return list(self.prio2buffer)
        return [1 if on else 0 for on in self.pfc]

    def effective_buffer_size(self) -> list[int]:
        # [U] illustrative sizes (docs/reference/roce-lossless.md §4.1 says the sample numbers are illustrative)
        if self.buffer_size is not None:
            return list(self.buffer_size)
        if any(self.pfc):
            return [130944, 130944, 0, 0, 0, 0, 0, 0]
        return [262016, 0, 0, 0, 0, 0, 0, 0]


@dataclass
class Unit:
    """A systemd unit as loaded (the content of its file at the last daemon-reload or boot)."""

    name: str
    content: str


@dataclass
class HostState:
    hostname: str
    nics: list[NicPort]
    files: dict[str, str] = field(default_factory=dict)
    units_enabled: set[str] = field(default_factory=set)  # unit names with ".service"
    units_loaded: dict[str, str] = field(default_factory=dict)  # name -> unit file content when loaded
    units_active: dict[str, str] = field(default_factory=dict)  # name -> "active" | "inactive" | "failed"
    lldpad_running: bool = False
    lldpd_running: bool = True  # lldpd (not lldpad) runs on the lab hosts: `lldpctl` shows the leaf ports
    kernel: str = "5.15.0-119-generic"
    os_name: str = "Ubuntu 22.04.4 LTS"
    mgmt_if: str = "eno1"
    mgmt_mac: str = "3c:ec:ef:10:20:30"
    boots: int = 1
    boot_log: list[str] = field(default_factory=list)
    # IP configuration (runtime: a reboot puts back the initial NIC addresses and the defaults; see
    # ``fabconf_lab.host.iproute``). Addresses per interface; routes and rules as added with ``ip``.
    addresses: dict[str, list[str]] = field(default_factory=dict)
    routes: list[dict[str, Any]] = field(default_factory=list)
    rules: list[dict[str, Any]] = field(default_factory=list)
    sysctls: dict[str, int] = field(default_factory=dict)
    # the platform under the NICs (what GPUDirect RDMA needs, and the versions a compatibility table checks)
    kernel_cmdline: str = "BOOT_IMAGE=/vmlinuz-5.15.0-119-generic root=/dev/nvme0n1p2 ro intel_iommu=on iommu=pt"
    modules: list[str] = field(
        default_factory=lambda: ["nvidia_peermem", "nvidia_uvm", "nvidia", "mlx5_ib", "mlx5_core", "ib_core"]
    )
    acs_enabled: bool = False  # ACS redirect on the PCIe switch ports between GPU and NIC (P2P via the root)
    ofed_version: str = "MLNX_OFED_LINUX-24.04-0.6.6.0"
    nvidia_driver: str = "550.90.07"
    nvidia_open: bool = False  # the open NVIDIA kernel modules (they export GPU memory as dma-buf)
    gpus: int = 8  # GPUs 0..3 on NUMA node 0, 4..7 on node 1; GPU i shares a PCIe switch with NIC i
    nccl_version: str = "2.21.5-1+cuda12.4"
    above4g: bool = True  # the BIOS's Above 4G Decoding: the GPUs' 128G BAR1 mapped above 4 GiB (else unassigned)

    def __post_init__(self) -> None:
        if not self.sysctls:  # a new state, or one saved before the lab modelled IP configuration
            self.reset_network()

    def reset_network(self) -> None:
        """What a boot leaves: each NIC's initial address (``NicPort.address``), the management addresses, no
        routes or rules beyond the defaults, and Ubuntu 22.04's sysctl defaults."""
        self.addresses = {"lo": ["127.0.0.1/8"], self.mgmt_if: [MGMT_ADDRESS]}
        self.addresses.update({nic.netdev: [nic.address] if nic.address else [] for nic in self.nics})
        self.routes = [
            {"table": 254, "dst": "default", "gateway": MGMT_GATEWAY, "dev": self.mgmt_if, "protocol": 4},
        ]
        self.rules = [
            {"priority": 0, "src": "all", "srclen": 0, "table": 255},
            {"priority": 32766, "src": "all", "srclen": 0, "table": 254},
            {"priority": 32767, "src": "all", "srclen": 0, "table": 253},
        ]
        # [U] Ubuntu 22.04: rp_filter 2 (loose) from /usr/lib/sysctl.d/50-default.conf, ARP settings 0
        self.sysctls = {"net.ipv4.ip_forward": 0}
        for ifname in ("all", "default", "lo", self.mgmt_if, *(nic.netdev for nic in self.nics)):
            for key, value in (("arp_announce", 0), ("arp_ignore", 0), ("rp_filter", 0 if ifname == "lo" else 2)):
                self.sysctls[f"net.ipv4.conf.{ifname}.{key}"] = value

    def nic(self, name: str) -> NicPort | None:
        """Find a port by netdev, RDMA device (``mlx5_0``), PCI address (with or without domain) or mst path."""
        for nic in self.nics:
            short_pci = nic.pci.split(":", 1)[1] if nic.pci.count(":") == 2 else nic.pci
            if name in (nic.netdev, nic.rdma, nic.pci, short_pci):
                return nic
        if name.startswith("/dev/mst/"):
            # /dev/mst/mt4129_pciconf0 → first function, ..._pciconf0.1 → second, etc.
            tail = name.rsplit("pciconf", 1)[-1]
            base, _, func = tail.partition(".")
            index = int(base or 0) + int(func or 0) if (base + func).isdigit() else -1
            if 0 <= index < len(self.nics):
                return self.nics[index]
        return None

    def copy(self) -> HostState:
        return copy.deepcopy(self)

    def to_json(self) -> str:
        """The whole state as JSON, keys and sets sorted: deterministic (a running configuration for tests)
        and what the lab keeps across ``lab down``/``lab up``."""
        doc = dataclasses.asdict(self)
        for key in ("units_enabled",):
            doc[key] = sorted(doc[key])
        return json.dumps(doc, sort_keys=True, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> HostState:
        doc = json.loads(text)
        doc["nics"] = [NicPort(**nic) for nic in doc["nics"]]
        doc["units_enabled"] = set(doc["units_enabled"])
        return cls(**doc)


def nic_from_dict(spec: dict[str, Any], index: int) -> NicPort:
    """Build a port from a constructor dict: netdev, rdma, pci, speed (or speed_gbps), mac, address, fw_version, part,
    description, psid, device_type, ca_type, mlxconfig (overrides of the firmware defaults)."""
    netdev = str(spec.get("netdev") or f"ens{index + 1}f0np0")
    nic = NicPort(
        netdev=netdev,
        rdma=str(spec.get("rdma") or f"mlx5_{index}"),
        pci=str(spec.get("pci") or f"0000:{0x17 + 0x10 * index:02x}:00.0"),
        speed=int(spec.get("speed", spec.get("speed_gbps", 400))),
        mac=str(spec.get("mac") or ""),
        address=spec.get("address"),
    )
    for key in ("fw_version", "part", "description", "psid", "device_type", "ca_type"):
        if key in spec:
            setattr(nic, key, str(spec[key]))
    for key, value in dict(spec.get("mlxconfig") or {}).items():
        nic.mlx_default[key] = nic.mlx_current[key] = nic.mlx_next[key] = int(value)
    nic.reset_runtime()
    return nic


def default_nics(ports: list[str] | None = None) -> list[NicPort]:
    """One single-port ConnectX-7 400G card per port name (PCI 0000:17:00.0, 0000:27:00.0, ...); by default two,
    ``ens1f0np0``/``mlx5_0`` and ``ens1f1np1``/``mlx5_1``."""
    names = list(ports) if ports else ["ens1f0np0", "ens1f1np1"]
    return [nic_from_dict({"netdev": name, "rdma": f"mlx5_{i}"}, i) for i, name in enumerate(names)]


def default_address(hostname: str, index: int) -> str:
    """A stable /31 for a host's NIC port when none is given (GIDs at index 2/3 and the lab view need one)."""
    h = int(hashlib.sha256(hostname.encode()).hexdigest()[:4], 16)
    return f"10.{200 + index}.{h >> 8}.{(h & 0x7F) * 2 + 1}/31"


NETPLAN_BROWNFIELD = """\
network:
  version: 2
  ethernets:
    {mgmt}:
      dhcp4: true
"""

NCCL_BROWNFIELD = """\
# left over from an earlier cluster bring-up
NCCL_IB_HCA=mlx5
NCCL_SOCKET_IFNAME=eno1
NCCL_IB_GID_INDEX=0
"""

LLDPAD_UNIT = """\
[Unit]
Description=Link Layer Discovery Protocol Agent Daemon.
After=syslog.target network.target

[Service]
Type=simple
ExecStart=/usr/sbin/lldpad -t

[Install]
WantedBy=multi-user.target
"""


OS_RELEASE = """\
PRETTY_NAME="Ubuntu 22.04.4 LTS"
NAME="Ubuntu"
VERSION_ID="22.04"
VERSION="22.04.4 LTS (Jammy Jellyfish)"
ID=ubuntu
ID_LIKE=debian
"""


def default_host_state(
    hostname: str, ports: list[str] | None = None, nics: list[dict[str, Any]] | None = None
) -> HostState:
    """A plausible brownfield GPU host: factory NIC state plus some old local configuration.

    NICs: trust pcp, PFC off, MTU 1500, ECN off, ToS unset, firmware defaults. Files: hostname, hosts,
    os-release, a netplan file for the management port, a stale ``/etc/nccl.conf`` and an old
    ``/etc/sysctl.d`` MTU-probing line. No boot unit of fabconf's; lldpad not running.
    """
    built = [nic_from_dict(spec, i) for i, spec in enumerate(nics)] if nics else default_nics(ports)
    for index, nic in enumerate(built):
        if nic.address is None and not (nics and "address" in nics[index]):
            nic.address = default_address(hostname, index)
    add_port_keys(built)
    state = HostState(hostname=hostname, nics=built)
    state.files = {
        "/etc/hostname": f"{hostname}\n",
        "/etc/hosts": f"127.0.0.1 localhost\n127.0.1.1 {hostname}\n",
        "/etc/os-release": OS_RELEASE,
        "/etc/netplan/01-netcfg.yaml": NETPLAN_BROWNFIELD.format(mgmt=state.mgmt_if),
        "/etc/nccl.conf": NCCL_BROWNFIELD,
        "/etc/sysctl.d/60-net.conf": "net.ipv4.tcp_mtu_probing = 1\n",
        "/lib/systemd/system/lldpad.service": LLDPAD_UNIT,
    }
    return state
