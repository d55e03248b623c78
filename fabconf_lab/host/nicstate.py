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

# mlxconfig parameters a card shows, with their kinds and defaults. A kind is "int", "bool", "array" (a value
# mlxconfig prints as ``Array[0..N]``; the lab does not set it) or an enum {NAME: number}; values are stored as
# numbers. The set, its order and its defaults are those of a published ConnectX-6 Dx dump (185 keys on a dual-port
# card; tests/captures/mlxconfig-query, docs/reference/captures.md) [3P]; a ConnectX-7 is assumed to show the same
# [U]. The lab's own entries: LINK_TYPE_P1 (VPI cards; its place in the order is [U]), ROCE_CC_ALGORITHM_P1 (as a
# published ConnectX-5 dump shows it), MAX_ACC_OUT_READ [U], NUM_OF_PF 1 (a single-function card). Defaults
# fabconf manages: docs/reference/roce-lossless.md §4.4 and §0. A second port's keys (_P2) come from add_port_keys.
LINK_TYPES = {"IB": 1, "ETH": 2, "VPI": 3}
ROCE_CONTROL = {"DEVICE_DEFAULT": 0, "ROCE_DISABLE": 1, "ROCE_ENABLE": 2}  # [3P: mstconfig -d DEV i of a CX-6 Dx]
PCI_WR_ORDERING = {"per_mkey": 0, "force_relax": 1}
ROCE_CC_ALGORITHM = {"ECN": 0, "QCN": 1}  # [3P: mstconfig -d DEV i of a ConnectX-6 Dx: 0x0 ECN, 0x1 QCN]
ENUMS: dict[str, dict[str, int]] = {
    "LINK_TYPE_P1": LINK_TYPES,
    "ROCE_CONTROL": ROCE_CONTROL,
    "PCI_WR_ORDERING": PCI_WR_ORDERING,
    "ROCE_CC_ALGORITHM_P1": ROCE_CC_ALGORITHM,
}
_DUMP = """
MEMIC_BAR_SIZE 0
MEMIC_SIZE_LIMIT _256KB(1)
HOST_CHAINING_MODE DISABLED(0)
HOST_CHAINING_CACHE_DISABLE False(0)
HOST_CHAINING_DESCRIPTORS Array[0..7]
HOST_CHAINING_TOTAL_BUFFER_SIZE Array[0..7]
FLEX_PARSER_PROFILE_ENABLE 0
PROG_PARSE_GRAPH False(0)
FLEX_IPV4_OVER_VXLAN_PORT 0
ROCE_NEXT_PROTOCOL 254
ESWITCH_HAIRPIN_DESCRIPTORS Array[0..7]
ESWITCH_HAIRPIN_TOT_BUFFER_SIZE Array[0..7]
PF_BAR2_SIZE 0
PF_NUM_OF_VF_VALID False(0)
NON_PREFETCHABLE_PF_BAR False(0)
VF_VPD_ENABLE False(0)
PF_NUM_PF_MSIX_VALID False(0)
PER_PF_NUM_SF False(0)
STRICT_VF_MSIX_NUM False(0)
VF_NODNIC_ENABLE False(0)
NUM_PF_MSIX_VALID True(1)
NUM_OF_VFS 0
NUM_OF_PF 1
PF_BAR2_ENABLE False(0)
SRIOV_EN False(0)
PF_LOG_BAR_SIZE 5
VF_LOG_BAR_SIZE 0
NUM_PF_MSIX 63
NUM_VF_MSIX 11
LINK_TYPE_P1 ETH(2)
INT_LOG_MAX_PAYLOAD_SIZE AUTOMATIC(0)
PCIE_CREDIT_TOKEN_TIMEOUT 0
LAG_RESOURCE_ALLOCATION DEVICE_DEFAULT(0)
PHY_COUNT_LINK_UP_DELAY DELAY_NONE(0)
ACCURATE_TX_SCHEDULER False(0)
PARTIAL_RESET_EN False(0)
RESET_WITH_HOST_ON_ERRORS False(0)
PCI_SWITCH_EMULATION_NUM_PORT 16
PCI_SWITCH_EMULATION_ENABLE False(0)
PCI_DOWNSTREAM_PORT_OWNER Array[0..15]
CQE_COMPRESSION BALANCED(0)
IP_OVER_VXLAN_EN False(0)
MKEY_BY_NAME False(0)
PRIO_TAG_REQUIRED_EN False(0)
UCTX_EN True(1)
REAL_TIME_CLOCK_ENABLE False(0)
RDMA_SELECTIVE_REPEAT_EN False(0)
PCI_ATOMIC_MODE PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0)
TUNNEL_ECN_COPY_DISABLE False(0)
LRO_LOG_TIMEOUT0 6
LRO_LOG_TIMEOUT1 7
LRO_LOG_TIMEOUT2 8
LRO_LOG_TIMEOUT3 13
LOG_TX_PSN_WINDOW 7
LOG_MAX_OUTSTANDING_WQE 7
TUNNEL_IP_PROTO_ENTROPY_DISABLE False(0)
ICM_CACHE_MODE DEVICE_DEFAULT(0)
TLS_OPTIMIZE False(0)
TX_SCHEDULER_BURST 0
ZERO_TOUCH_TUNING_ENABLE False(0)
ROCE_CC_LEGACY_DCQCN True(1)
LOG_MAX_QUEUE 17
LOG_DCR_HASH_TABLE_SIZE 11
MAX_PACKET_LIFETIME 0
DCR_LIFO_SIZE 16384
ROCE_CC_PRIO_MASK_P1 255
ROCE_CC_ALGORITHM_P1 ECN(0)
CLAMP_TGT_RATE_AFTER_TIME_INC_P1 True(1)
CLAMP_TGT_RATE_P1 False(0)
RPG_TIME_RESET_P1 300
RPG_BYTE_RESET_P1 32767
RPG_THRESHOLD_P1 1
RPG_MAX_RATE_P1 0
RPG_AI_RATE_P1 5
RPG_HAI_RATE_P1 50
RPG_GD_P1 11
RPG_MIN_DEC_FAC_P1 50
RPG_MIN_RATE_P1 1
RATE_TO_SET_ON_FIRST_CNP_P1 0
DCE_TCP_G_P1 1019
DCE_TCP_RTT_P1 1
RATE_REDUCE_MONITOR_PERIOD_P1 4
INITIAL_ALPHA_VALUE_P1 1023
MIN_TIME_BETWEEN_CNPS_P1 4
CNP_802P_PRIO_P1 6
CNP_DSCP_P1 48
LLDP_NB_DCBX_P1 False(0)
LLDP_NB_RX_MODE_P1 OFF(0)
LLDP_NB_TX_MODE_P1 OFF(0)
ROCE_RTT_RESP_DSCP_P1 0
ROCE_RTT_RESP_DSCP_MODE_P1 DEVICE_DEFAULT(0)
DCBX_IEEE_P1 True(1)
DCBX_CEE_P1 True(1)
DCBX_WILLING_P1 True(1)
KEEP_ETH_LINK_UP_P1 True(1)
KEEP_IB_LINK_UP_P1 False(0)
KEEP_LINK_UP_ON_BOOT_P1 False(0)
KEEP_LINK_UP_ON_STANDBY_P1 False(0)
DO_NOT_CLEAR_PORT_STATS_P1 False(0)
AUTO_POWER_SAVE_LINK_DOWN_P1 False(0)
NUM_OF_VL_P1 _4_VLs(3)
NUM_OF_TC_P1 _8_TCs(0)
NUM_OF_PFC_P1 8
VL15_BUFFER_SIZE_P1 0
DUP_MAC_ACTION_P1 LAST_CFG(0)
MPFS_MC_LOOPBACK_DISABLE_P1 False(0)
MPFS_UC_LOOPBACK_DISABLE_P1 False(0)
UNKNOWN_UPLINK_MAC_FLOOD_P1 False(0)
SRIOV_IB_ROUTING_MODE_P1 LID(1)
IB_ROUTING_MODE_P1 LID(1)
PHY_FEC_OVERRIDE_P1 DEVICE_DEFAULT(0)
WOL_MAGIC_EN True(1)
PF_TOTAL_SF 0
PF_SF_BAR_SIZE 0
PF_NUM_PF_MSIX 63
ROCE_CONTROL ROCE_ENABLE(2)
PCI_WR_ORDERING per_mkey(0)
MULTI_PORT_VHCA_EN False(0)
PORT_OWNER True(1)
ALLOW_RD_COUNTERS True(1)
RENEG_ON_CHANGE True(1)
TRACER_ENABLE True(1)
IP_VER IPv4(0)
BOOT_UNDI_NETWORK_WAIT 0
UEFI_HII_EN True(1)
BOOT_DBG_LOG False(0)
UEFI_LOGS DISABLED(0)
BOOT_VLAN 1
LEGACY_BOOT_PROTOCOL PXE(1)
BOOT_INTERRUPT_DIS False(0)
BOOT_LACP_DIS True(1)
BOOT_VLAN_EN False(0)
BOOT_PKEY 0
P2P_ORDERING_MODE DEVICE_DEFAULT(0)
ATS_ENABLED False(0)
DYNAMIC_VF_MSIX_TABLE False(0)
EXP_ROM_UEFI_ARM_ENABLE True(1)
EXP_ROM_UEFI_x86_ENABLE True(1)
EXP_ROM_PXE_ENABLE True(1)
ADVANCED_PCI_SETTINGS False(0)
MAX_ACC_OUT_READ 0
SAFE_MODE_THRESHOLD 10
SAFE_MODE_ENABLE True(1)
"""


def _spec(value: str) -> tuple[str | dict[str, int], int]:
    """The kind and number of a value as a dump prints it: ``True(1)``, ``NAME(n)``, ``Array[0..7]``, ``255``."""
    if value.startswith("Array["):
        return "array", int(value[len("Array[0..") : -1])
    name, _, number = value.partition("(")
    if number:
        n = int(number.rstrip(")"))
        return ("bool", n) if name in ("True", "False") else ({name: n}, n)
    return "int", int(value)


def _specs() -> dict[str, tuple[str | dict[str, int], int]]:
    out: dict[str, tuple[str | dict[str, int], int]] = {}
    for row in _DUMP.split("\n"):
        if row:
            key, value = row.split(" ", 1)
            kind, default = _spec(value)
            out[key] = (ENUMS[key], default) if key in ENUMS else (kind, default)
    return out


MLXCONFIG_SPEC: dict[str, tuple[str | dict[str, int], int]] = _specs()


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
    fec_off: bool = False  # the link came up without FEC (`fabconf lab fault HOST link PORT:fec=off`)
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
