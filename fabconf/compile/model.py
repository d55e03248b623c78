"""The resolved inventory: every device merged once (defaults < groups < host) into an explicit model.

Nornir semantics for inheritance: a host's own value wins, then its groups in the order listed (a group's
own groups after it, depth first), then ``defaults``; ``data`` merges key by key (shallow), like Nornir.
The fabric intent keeps the shape of ``fabric.yaml`` with every default filled in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any, NamedTuple

from fabconf.compile.inventory import RawInventory
from fabconf.compile.problems import Problems
from fabconf.platforms import PLATFORMS, Kind

SWITCH_ROLES = ("super_spine", "spine", "leaf")
# The tier above each switch role in a Clos: leaves uplink to their pod's spines, spines to the super-spines.
UPPER_ROLE = {"leaf": "spine", "spine": "super_spine"}

_RANGE = re.compile(r"^(?P<pre>[^{}]*)\{(?P<lo>\d+)-(?P<hi>\d+)\}(?P<post>[^{}]*)$")


def expand_ports(spec: str) -> list[str]:
    """``swp{1-4}`` -> swp1..swp4; a plain name stands for itself. Raises ValueError on a bad range."""
    if "{" not in spec and "}" not in spec:
        return [spec]
    m = _RANGE.match(spec)
    if not m:
        raise ValueError(f"{spec!r} is not a port or a single range like swp{{1-64}}")
    lo, hi = int(m["lo"]), int(m["hi"])
    if lo > hi or hi - lo > 4096:
        raise ValueError(f"{spec!r}: range {lo}-{hi} is empty or too large")
    return [f"{m['pre']}{i}{m['post']}" for i in range(lo, hi + 1)]


@cache
def natural_key(name: str) -> tuple[Any, ...]:
    """Sort key that orders swp2 before swp10 and Ethernet1/2 before Ethernet1/10."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


@dataclass(frozen=True)
class Nic:
    netdev: str
    rdma: str
    rail: int
    speed_gbps: int = 400
    pci: str | None = None
    address: str | None = None
    adapter: str | None = None  # the card; ports of one card share its firmware settings
    port: int | None = None  # the port number on that card (mlxconfig _P1, _P2)
    gpu: int | None = None  # the GPU this NIC serves (nvidia-smi index), where the intent pairs them

    @property
    def card(self) -> tuple[str, int]:
        """(adapter, port on it): explicit ``adapter``/``port``, else the PCI address without its function
        (function n is port n+1), else the RDMA device alone on its card."""
        if self.adapter:
            return self.adapter, self.port or 1
        if self.pci:
            bus, _, function = self.pci.rpartition(".")
            return bus, int(function) + 1
        return self.rdma, self.port or 1


@dataclass
class Device:
    name: str
    hostname: str
    platform: str
    role: str
    id: int | None
    groups: tuple[str, ...]
    data: dict[str, Any]
    ports: frozenset[str] | None = None  # None: not declared, any name accepted
    nics: tuple[Nic, ...] = ()
    origin: str = ""  # the file that defines the device
    port: int | None = None
    connection_options: dict[str, Any] = field(default_factory=dict)
    connection_origin: tuple[str, list[Any]] = ("", [])  # (file, path) where connection_options is written
    pod: str | None = None  # spines and leaves: the pod they belong to (data.pod)
    # where each data key was written: key -> (file, path), so a problem names the file that set the value
    data_origin: dict[str, tuple[str, list[Any]]] = field(default_factory=dict)

    def where(self, key: str) -> tuple[str, list[Any]]:
        """(file, path) of ``data.<key>``: the host entry, the group that set it, or defaults.yaml; the host
        entry when nobody did."""
        return self.data_origin.get(key, (self.origin, [self.name, "data", key]))

    @property
    def is_switch(self) -> bool:
        spec = PLATFORMS.get(self.platform)
        return spec is not None and spec.kind is Kind.SWITCH

    @property
    def is_host(self) -> bool:
        spec = PLATFORMS.get(self.platform)
        return spec is not None and spec.kind is Kind.HOST


class Endpoint(NamedTuple):  # a tuple: 131,000 of them in a 32k-GPU fabric, built and hashed cheaply
    device: str
    port: str

    def __str__(self) -> str:
        return f"{self.device}:{self.port}"


@dataclass(slots=True)
class Link:
    a: Endpoint
    b: Endpoint
    index: int  # position in cabling.yaml `links`


@dataclass
class Model:
    devices: dict[str, Device]
    cabled: list[Any]  # cabling.yaml's ``links`` as read: ``links`` is made from them when first asked for
    fabric: dict[str, Any]
    files: dict[str, str]
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    # devices defined in hosts.yaml that could not be resolved (no platform, no role, a role their platform cannot
    # run), each with the data it inherited: their problem is reported once, and what depends on them (their
    # links, the cabling and pods of their peers) is not reported again as a problem of its own
    unresolved: dict[str, dict[str, Any]] = field(default_factory=dict)
    _links: list[Link] | None = field(default=None, compare=False, repr=False)

    @property
    def links(self) -> list[Link]:
        """The links of cabling.yaml, in its order. Made on first use: 65,536 of them take 70 ms at 32k GPUs, which a
        run whose topology comes from the compile cache (``fabconf.compile.derived``) does not need."""
        if self._links is None:
            self._links = [
                Link(Endpoint(*a.split(":", 1)), Endpoint(*b.split(":", 1)), i) for i, (a, b) in enumerate(self.cabled)
            ]
        return self._links

    def link_speed(self, device: str, port: str, peer: str, peer_port: str) -> int:
        """Gb/s a link runs at: a GPU NIC's declared speed for host links, else the fabric default
        (``DEFAULT_LINK_SPEED``, [U] 400G switch ports)."""
        for dev, name in ((device, port), (peer, peer_port)):
            found = self.devices.get(dev)
            for nic in found.nics if found is not None else []:
                if nic.netdev == name:
                    return nic.speed_gbps
        return DEFAULT_LINK_SPEED


DEFAULT_LINK_SPEED = 400
FABRIC_DEFAULTS: dict[str, Any] = {
    "roce": {
        "trust": "dscp",
        "ecn": {"probability": 100},
        "ets": {"roce_percent": 50},
        "pfc_watchdog": {
            "enabled": True,
            "polling_interval_ms": 100,
            "timeout_ms": 200,
            "action": "drop",
        },
        "cable_length_m": 100,
    },
    "addressing": {"uplinks_per_leaf": 8, "uplinks_per_spine": 8},
    "hosts": {"gid_index": 3, "mlxconfig": {}, "nccl": {}},
    "load_balancing": {"mode": "ecmp"},
    "monitoring": {
        "telemetry": {
            "enabled": False,
            "port": 9339,  # [V] IANA service name gnmi, 9339/tcp (also the Cumulus gNMI server's default)
            "paths": ["port_errors", "port_packets", "queue_depth", "pfc_pauses", "port_speed", "bgp_state"],
        }
    },
}


def _with_defaults(value: Any, defaults: Any) -> Any:
    if isinstance(defaults, dict) and isinstance(value, dict):
        out = dict(value)
        for key, default in defaults.items():
            out[key] = _with_defaults(out.get(key), default) if key in out else default
        return out
    return defaults if value is None else value


def _group_chain(name: str, groups: dict[str, Any], seen: set[str]) -> list[str]:
    out: list[str] = []
    for g in (groups.get(name) or {}).get("groups") or []:
        if g in seen:
            continue
        seen.add(g)
        out.append(g)
        out.extend(_group_chain(g, groups, seen))
    return out


@dataclass(frozen=True)
class _Inherited:
    """What a host inherits from one list of groups (their own groups after each, depth first) and defaults:
    worked out once per distinct list, not once per host (4,096 GPU hosts share a handful of lists)."""

    chain: tuple[str, ...]
    data: dict[str, Any]
    origin: dict[str, tuple[str, list[Any]]]
    picked: dict[str, Any]  # platform, hostname, port, connection_options: the first layer that sets each
    picked_at: dict[str, tuple[str, list[Any]]]  # (file, path) of each picked value


_PICKED = ("platform", "hostname", "port", "connection_options")


def _inherited(listed: tuple[str, ...], raw: RawInventory) -> _Inherited:
    groups = raw.groups
    chain: list[str] = []
    seen: set[str] = set()
    for g in listed:
        if g in groups and g not in seen:
            seen.add(g)
            chain.append(g)
            chain.extend(_group_chain(g, groups, seen))
    layers = [groups[g] or {} for g in chain] + [raw.defaults]
    sources = [
        *((raw.files.get("groups", "groups.yaml"), [g]) for g in chain),
        (raw.files.get("defaults", "defaults.yaml"), []),
    ]
    data: dict[str, Any] = {}
    origin: dict[str, tuple[str, list[Any]]] = {}
    for layer, (file, path) in reversed(list(zip(layers, sources, strict=True))):
        for key, value in (layer.get("data") or {}).items():
            data[key] = value
            origin[key] = (file, [*path, "data", key])
    picked: dict[str, Any] = {}
    picked_at: dict[str, tuple[str, list[Any]]] = {}
    for key in _PICKED:
        found = next(
            ((layer, where) for layer, where in zip(layers, sources, strict=True) if layer.get(key) is not None), None
        )
        picked[key] = None if found is None else found[0][key]
        if found is not None:
            picked_at[key] = (found[1][0], [*found[1][1], key])
    return _Inherited(tuple(chain), data, origin, picked, picked_at)


@cache
def _port_set(specs: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The ports a list of specs names, and the problems of the specs that name none (one per bad spec)."""
    expanded: list[str] = []
    bad: list[str] = []
    for spec in specs:
        try:
            expanded.extend(expand_ports(spec))
        except ValueError as exc:
            bad.append(str(exc))
    return frozenset(expanded), tuple(bad)


def build(raw: RawInventory, problems: Problems) -> Model:
    """Resolve devices and links. Assumes the files passed their JSON schemas."""
    hosts_file = raw.files.get("hosts", "hosts.yaml")
    groups = raw.groups
    devices: dict[str, Device] = {}
    unresolved: dict[str, dict[str, Any]] = {}
    inherited: dict[tuple[str, ...], _Inherited] = {}
    nic_tuples: dict[int, tuple[Any, tuple[Nic, ...]]] = {}  # id(list of NICs) -> (that list, its Nic values)
    for name, entry in raw.hosts.items():
        entry = entry or {}
        listed = tuple(entry.get("groups") or ())
        undefined = [g for g in listed if g not in groups]
        for g in undefined:
            problems.add(hosts_file, [name, "groups"], f"group {g!r} is not defined in groups.yaml")
        base = inherited.get(listed)
        if base is None:
            base = inherited[listed] = _inherited(listed, raw)
        data = dict(base.data)
        origin = dict(base.origin)
        for key, value in (entry.get("data") or {}).items():
            data[key] = value
            origin[key] = (hosts_file, [name, "data", key])

        picked = {key: base.picked[key] if entry.get(key) is None else entry[key] for key in _PICKED}
        platform = picked["platform"]
        role = data.get("role")
        # an undefined group is the root cause of a missing platform or role (the group would have set it)
        if platform is None:
            if not undefined:
                problems.add(hosts_file, [name, "platform"], "no platform set on the host, its groups or defaults")
            unresolved[name] = data
            continue
        if role is None:
            if not undefined:
                problems.add(hosts_file, [name, "data", "role"], "no role set on the host, its groups or defaults")
            unresolved[name] = data
            continue
        spec = PLATFORMS.get(platform)
        if spec is not None and (role == "gpu_host") != spec.is_host:
            # where the platform is written: a group's platform is one problem for all its hosts
            file, path = (hosts_file, [name, "platform"]) if entry.get("platform") else base.picked_at["platform"]
            problems.add(file, path, f"role {role!r} cannot run on platform {platform!r}")
            unresolved[name] = data
            continue
        ports: frozenset[str] | None = None
        if data.get("ports"):
            ports, bad = _port_set(tuple(data["ports"]))
            for message in bad:
                problems.add(hosts_file, [name, "data", "ports"], message)
        listed_nics = data.get("nics") or ()
        # GPU hosts of one group share its list of NICs: made into Nic values (immutable) once per list, not per host
        made = nic_tuples.get(id(listed_nics))
        if made is None or made[0] is not listed_nics:
            made = nic_tuples[id(listed_nics)] = (listed_nics, tuple(Nic(**n) for n in listed_nics))
        nics = made[1]
        devices[name] = Device(
            name=name,
            hostname=str(picked["hostname"] or name),
            platform=platform,
            role=role,
            id=data.get("id"),
            groups=base.chain,
            data=data,
            ports=ports,
            nics=nics,
            origin=hosts_file,
            port=picked["port"],
            connection_options=dict(picked["connection_options"] or {}),
            connection_origin=(
                (hosts_file, [name, "connection_options"])
                if entry.get("connection_options") is not None
                else base.picked_at.get("connection_options", (hosts_file, [name, "connection_options"]))
            ),
            pod=data.get("pod"),
            data_origin=origin,
        )
    fabric = _with_defaults(raw.fabric, FABRIC_DEFAULTS)
    return Model(
        devices=devices,
        cabled=list(raw.cabling.get("links") or []),
        fabric=fabric,
        files=dict(raw.files),
        groups=groups,
        unresolved=unresolved,
    )
