"""The shape of device data: what ``fabconf.compile.design.device`` produces and the templates see, as TypedDicts.

Every key is required (a template may use any of them, and StrictUndefined makes a missing one an error);
``X | None`` marks a value that may be null. ``conforms(value, Type)`` checks a value against a type
recursively — exact keys, no unknown ones — and the golden tests run it on every designed device, so a
key added to the design without being declared here fails the suite.
"""

from __future__ import annotations

import types
from typing import Any, Literal, TypedDict, Union, get_args, get_origin, get_type_hints

from fabconf.platforms import PLATFORMS, design_hooks

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
    qos: dict[str, Any]  # the platform's own terms: its design hooks' qos_type (fabconf/platform/<name>/design.py)
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
    spec = next(p for p in PLATFORMS.values() if p.qos_dialect == qos_dialect)
    return problems + conforms(data.get("qos"), design_hooks(spec.name).qos_type, "qos")
