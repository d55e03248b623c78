"""The shape of device data: what ``fabconf.compile.design.device`` produces and the templates see, as TypedDicts.

Every key is required (a template may use any of them, and StrictUndefined makes a missing one an error);
``X | None`` marks a value that may be null. ``conforms(value, Type)`` checks a value against a type
recursively — exact keys, no unknown ones — and the golden tests run it on every designed device, so a
key added to the design without being declared here fails the suite.
"""

from __future__ import annotations

import types
from typing import Any, Literal, TypedDict, Union, get_args, get_origin, get_type_hints

# -- common to every switch ----------------------------------------------------------------------------------


class Interface(TypedDict):
    name: str
    description: str
    mtu: int
    kind: Literal["uplink", "downlink", "host"]  # to the tier above, to the tier below, to a GPU host
    address: str | None  # uplinks: the /31
    vlan: int | None  # host ports: the rail's VLAN
    pfc: bool
    pfc_watchdog: bool
    peer: str  # DEVICE:PORT from the cabling
    adaptive_routing: bool  # adaptive routing / DLB on this port (load_balancing adaptive, routed fabric ports)


class Vlan(TypedDict):
    id: int
    name: str
    gateway: str  # A.B.C.D/M, the SVI address
    mtu: int


class BgpNeighbor(TypedDict):
    address: str
    remote_as: int
    description: str
    peer_device: str


class Bgp(TypedDict):
    asn: int
    router_id: str
    max_paths: int
    neighbors: list[BgpNeighbor]
    networks: list[str]


# -- QoS per dialect (the platform table's qos_dialect) ---------------------------------------------------------


class NvueEcn(TypedDict):
    tc: int
    min: int  # bytes
    max: int
    probability: int


class NvueScheduler(TypedDict):
    tc: int
    mode: Literal["dwrr", "strict"]
    bw_percent: int | None


class NvuePfc(TypedDict):
    priorities: list[int]
    cable_length: int


class NvuePool(TypedDict):
    lossless_percent: int
    lossy_percent: int
    priorities: list[int]  # the lossless pool's switch priorities
    lossy_priorities: list[int]  # every other one (the two lists are disjoint)


class NvueWatchdog(TypedDict):
    enabled: bool
    polling_interval: int  # ms
    robustness: int


class NvueQos(TypedDict):
    trust: str
    dscp_map: list[list[int]]  # [dscp, switch priority], all 64
    queue_map: list[list[int]]  # [switch priority, traffic class]
    pfc: NvuePfc
    ecn: list[NvueEcn]
    scheduler: list[NvueScheduler]
    pool: NvuePool
    watchdog: NvueWatchdog


class EosEcn(TypedDict):
    min: int
    max: int
    units: Literal["bytes", "kbytes"]
    probability: int


class EosTxQueue(TypedDict):
    id: int
    strict: bool
    bandwidth: int | None
    ecn: EosEcn | None


class EosDscpLine(TypedDict):
    dscps: list[int]
    tc: int


class EosWatchdog(TypedDict):
    enabled: bool
    timeout: str  # seconds, as EOS writes them (at most two decimals)
    polling_interval: str
    recovery_time: str
    action: str


class EosQos(TypedDict):
    profile: str
    trust: str
    queue_command: Literal["uc-tx-queue", "tx-queue"]  # by hardware family: Strata / Sand
    dscp_map: list[EosDscpLine]  # every DSCP, one line per traffic class
    pfc_priorities: list[int]
    tx_queues: list[EosTxQueue]
    watchdog: EosWatchdog


class NxosClass(TypedDict):
    name: str
    dscp: int
    qos_group: int


# "class" is a Python keyword: these are declared in TypedDict's functional form
NxosNetworkQosClass = TypedDict("NxosNetworkQosClass", {"class": str, "pause_cos": int | None})  # None: lossy


class NxosEcn(TypedDict):
    min: int
    max: int
    probability: int  # kbytes


NxosQueuingClass = TypedDict(
    "NxosQueuingClass",
    {"class": str, "priority_level": int | None, "bandwidth": int | None, "ecn": NxosEcn | None},
)


class NxosNetworkQos(TypedDict):
    name: str
    mtu: int  # on every class
    classes: list[NxosNetworkQosClass]  # all eight


class NxosQueuing(TypedDict):
    name: str
    classes: list[NxosQueuingClass]


class NxosWatchdog(TypedDict):
    enabled: bool
    interval: int  # ms
    shutdown_multiplier: int  # intervals


class NxosQos(TypedDict):
    classes: list[NxosClass]
    default_qos_group: int  # class-default: every DSCP the classes do not match
    input_policy: str
    network_qos: NxosNetworkQos
    queuing: NxosQueuing  # all eight queuing classes
    watchdog: NxosWatchdog


class EcmpCheck(TypedDict):
    prefix: str  # a remote leaf's loopback
    paths: int  # installed ECMP next hops verify expects
    target: str  # the leaf that owns the prefix


class SwitchVerify(TypedDict):
    ecmp: list[EcmpCheck]  # what ``fabconf verify`` reads back from the routing table (templates ignore it)
    adaptive_ports: list[str]  # ports verify expects adaptive routing / DLB on (empty: ECMP only)


class LoadBalancing(TypedDict):
    mode: str  # ecmp | adaptive (fabric.yaml load_balancing.mode, or the switch's data.load_balancing)
    ports: list[str]  # the routed fabric ports adaptive routing / DLB is rendered on (empty in ecmp mode)


class Telemetry(TypedDict):
    port: int  # the gNMI server's TCP port
    tls_profile: str | None  # EOS ssl profile, NX-OS trustpoint, Cumulus certificate id; None: the platform's own
    listening_address: str | None  # the management address (the inventory's hostname) where it is an IP address


class Switch(TypedDict):
    hostname: str
    platform: str
    role: str
    model: str
    os_version: str  # data.os_version, else the platform's default release
    release_line: str  # the release line the configuration is rendered for (platform table)
    hardware_family: str  # e.g. EOS strata / sand; "" where the configuration does not differ
    asn: int
    router_id: str
    loopback: str
    mtu: int
    interfaces: list[Interface]
    vlans: list[Vlan]
    bgp: Bgp
    qos: NvueQos | EosQos | NxosQos  # by the platform's qos_dialect: see QOS_TYPES
    load_balancing: LoadBalancing
    telemetry: Telemetry | None  # the gNMI server, None where the intent turns it off
    verify: SwitchVerify


# -- GPU hosts ----------------------------------------------------------------------------------------------------


class _NicPairing(TypedDict, total=False):
    gpu: int  # the GPU it serves (nvidia-smi index), only where the intent pairs them


class Nic(_NicPairing):
    netdev: str
    rdma: str
    rail: int
    speed_gbps: int
    mtu: int
    address: str
    gateway: str
    vlan: int
    leaf: str
    leaf_port: str
    adapter: str  # the card: inventory ``adapter``, else PCI domain:bus:device, else the RDMA device
    port: int  # this port's number on the card
    mlxconfig: dict[str, int | str]  # the card's settings for this port beyond port 1 (``_P2`` keys)


class HostQos(TypedDict):
    trust: Literal["dscp", "pcp"]
    pfc: list[int]  # 8 flags
    dscp2prio: list[list[int]]  # [dscp, priority] where the mlx5 default differs


class HostEcn(TypedDict):
    np_enable: list[int]
    rp_enable: list[int]
    cnp_dscp: int
    cnp_802p_prio: int


class HostRule(TypedDict):
    priority: int
    source: str  # the NIC address the rule matches (``from``)
    table: int


class HostRoute(TypedDict):
    destination: str  # a prefix
    gateway: str | None  # None: on-link (the NIC's own subnet)
    device: str
    source: str | None  # preferred source address
    table: int | None  # None: the main table


class HostRouting(TypedDict):
    rules: list[HostRule]
    routes: list[HostRoute]


class Host(TypedDict):
    hostname: str
    platform: str
    role: str
    mtu: int
    nics: list[Nic]
    qos: HostQos
    ecn: HostEcn
    roce_tos: int
    mlxconfig: dict[str, int | str]
    nccl: dict[str, int | str]
    routing: HostRouting
    sysctl: dict[str, int]


QOS_TYPES: dict[str, type] = {"nvue": NvueQos, "eos_cli": EosQos, "nxos_cli": NxosQos}


# -- the checker ------------------------------------------------------------------------------------------------


def conforms(value: Any, kind: Any, path: str = "") -> list[str]:
    """Every way ``value`` differs from ``kind`` (a TypedDict, list[...], dict[str, ...], a union, a Literal
    or a scalar type), as ``path: problem`` lines; empty when it conforms."""
    where = path or "(root)"
    origin = get_origin(kind)
    if kind is Any:
        return []
    if origin in (Union, types.UnionType):
        attempts = [conforms(value, option, path) for option in get_args(kind)]
        if any(not a for a in attempts):
            return []
        return min(attempts, key=len)
    if origin is Literal:
        return [] if value in get_args(kind) else [f"{where}: {value!r} is not one of {get_args(kind)}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {type(value).__name__}"]
        (item,) = get_args(kind)
        return [p for i, v in enumerate(value) for p in conforms(v, item, f"{path}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: expected a mapping, got {type(value).__name__}"]
        key_type, item = get_args(kind)
        out = [f"{where}: key {k!r} is not a {key_type.__name__}" for k in value if not isinstance(k, key_type)]
        return out + [p for k, v in value.items() for p in conforms(v, item, f"{path}.{k}")]
    if isinstance(kind, type) and issubclass(kind, dict) and hasattr(kind, "__annotations__"):
        if not isinstance(value, dict):
            return [f"{where}: expected a {kind.__name__} mapping, got {type(value).__name__}"]
        hints = get_type_hints(kind)
        required = getattr(kind, "__required_keys__", frozenset(hints))  # NotRequired keys may be absent
        out = [f"{where}: missing key {k!r} ({kind.__name__})" for k in hints if k not in value and k in required]
        out += [f"{where}: unknown key {k!r} (not declared in {kind.__name__})" for k in value if k not in hints]
        for key, hint in hints.items():
            if key in value:
                out += conforms(value[key], hint, f"{path}.{key}" if path else key)
        return out
    if kind is type(None):
        return [] if value is None else [f"{where}: expected null, got {value!r}"]
    if kind is int and isinstance(value, bool):
        return [f"{where}: expected an integer, got a boolean"]
    if isinstance(kind, type) and not isinstance(value, kind):
        return [f"{where}: expected {kind.__name__}, got {type(value).__name__} {value!r}"]
    return []


def check_device(data: dict[str, Any], qos_dialect: str | None) -> list[str]:
    """A designed device against its shape: Host, or Switch with the QoS of its platform's dialect."""
    if qos_dialect is None or qos_dialect == "host":
        return conforms(data, Host)
    problems = conforms({**data, "qos": {}}, Switch)
    problems = [p for p in problems if not p.startswith("qos")]
    return problems + conforms(data.get("qos"), QOS_TYPES[qos_dialect], "qos")
