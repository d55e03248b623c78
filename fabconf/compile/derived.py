"""The topology and the cross-checks of an earlier compile, reused when a device's edit touched nothing they read
(issue 42: the one-device edit of a 32k-GPU fabric in 0.5 s).

``topology.derive`` and the cross-checks are passes in Python over every link (65,536 at 32k GPUs): about 0.45 s of
the 0.72 s an edit of one leaf's MTU took. What they compute depends on every inventory file, but the topology reads
only a few keys of a device's ``data``: of the keys most often edited on one switch (``LOCAL_KEYS``: its MTU, release,
hardware model, ECMP width, load balancing, telemetry) only the MTU, and only through ``SwitchFacts.mtu`` and each
uplink's MTU (the smaller of its two ends' caps). So the topology and the findings of the costliest checks that read
none of those keys (``REUSED``) are kept in the compile cache under a key made of everything else: the SHA-256 of
every other file's bytes, the ``hosts.yaml`` entries without those keys in their ``data`` (``marshal`` version 0,
which writes equal values as equal bytes), the files' display names (a problem names them), a digest of every source
file of the fabconf package and the Python version. A run whose key is stored takes the topology from there, works
out again every switch's MTU and cap and each uplink whose end's cap changed, and runs every other check again. Its
problems are the stored ones, in the order a cold run adds them, with the re-run checks' in their places: the same
lines, word for word (``tests/unit/compile/test_derived.py`` compares it with a cold run over random edits, and reads
the sources of the topology and the reused checks for the local keys). Any other edit is a new key: it derives and
checks everything, as without the cache, and stores the result for the next run.

An entry that cannot be read, or does not have the shape written here, is a miss (nothing of it is used: the model is
changed only once the whole entry has been read back). The cache's own rules (``fabconf.compile.cache``) hold: a file
created with its final mode in an owner-only directory, opened without following a link, the entries used last kept
(and no more than ``MOST`` of these).
"""

from __future__ import annotations

import hashlib
import ipaddress
import marshal
import sys
from dataclasses import astuple
from typing import Any

from fabconf.compile import cache, checks, topology
from fabconf.compile.inventory import FILES, RawInventory
from fabconf.compile.model import Endpoint, Model
from fabconf.compile.problems import Problem, Problems
from fabconf.compile.topology import HostPort, Pod, SwitchFacts, Topology, Uplink

# the ``data`` keys of a hosts.yaml entry left out of the key: ``topology.derive`` reads none of them but the MTU (whose
# effects are applied again), and the ``REUSED`` checks none at all (``tests/unit/compile/test_derived.py`` reads
# their sources for these names, and edits them at random against cold runs)
LOCAL_KEYS = frozenset(
    {"mtu", "os_version", "assume_release", "model", "ecmp_max_paths", "load_balancing", "telemetry"}
)
# the checks whose findings are reused: the three that cost the most of those that read no ``LOCAL_KEYS``
REUSED: tuple[checks.Check, ...] = (checks.check_unique, checks.check_hosts, checks.check_attachment)
_KIND = "derived"
MOST = 4  # entries of this kind kept: one is 3.3 MB at 32k GPUs (``cache.KEEP`` counts entries, not bytes)
_FORMAT = "derived-1"


def key(raw: RawInventory) -> str | None:
    """What the topology and the ``REUSED`` checks of ``raw`` are stored under; None when it cannot be told (a file
    not read, a value ``marshal`` cannot write)."""
    parts = [_FORMAT, cache.package_version(), sys.version, repr(sorted(raw.files.items()))]
    for kind in FILES:
        if kind == "hosts":
            if kind not in raw.digests:
                return None
        elif kind in raw.digests:
            parts.append(f"{kind}={raw.digests[kind]}")
        elif kind in raw.data:
            parts.append(f"{kind}=absent")  # an optional file that is not there
        else:
            return None
    try:
        hosts = marshal.dumps(_projected(raw.hosts), 0)
    except ValueError:
        return None
    parts.append(f"hosts={cache.digest(hosts)}")
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _projected(hosts: dict[str, Any]) -> dict[str, Any]:
    """``hosts.yaml``'s entries without the ``LOCAL_KEYS`` of their ``data``."""
    out = {}
    for name, entry in hosts.items():
        data = entry.get("data") if isinstance(entry, dict) else None
        if isinstance(data, dict) and not LOCAL_KEYS.isdisjoint(data):
            entry = {**entry, "data": {k: v for k, v in data.items() if k not in LOCAL_KEYS}}
        out[name] = entry
    return out


def derive_and_check(raw: RawInventory, model: Model, problems: Problems) -> Topology:
    """``topology.derive(model, problems)`` then ``checks.run``: taken from the compile cache where no more than
    ``LOCAL_KEYS`` changed since a run stored it (what depends on them worked out again), else computed and stored."""
    found = key(raw) if cache.directory() is not None else None
    if found is not None:
        restored = _restore(cache.get(_KIND, found), model)
        if restored is not None:
            topo, derived, moved, reused = restored
            _move(model, moved)
            problems.extend(derived)
            for check in checks.CHECKS:
                if check in REUSED:
                    problems.extend(reused[check.__name__])
                else:
                    check(model, topo, problems)
            return topo
    devices, unresolved = dict(model.devices), set(model.unresolved)
    derived_problems = Problems()
    topo = topology.derive(model, derived_problems)
    problems.extend(derived_problems)
    reused_problems: dict[str, list[tuple[str, str, str, str]]] = {}
    for check in checks.CHECKS:
        if check in REUSED:
            mine = Problems()
            check(model, topo, mine)
            problems.extend(mine)
            reused_problems[check.__name__] = [astuple(p) for p in mine]
        else:
            check(model, topo, problems)
    if found is not None:
        moved = [
            (name, "role", None) if data is devices[name].data else (name, "pod", data.get("pod"))
            for name, data in model.unresolved.items()
            if name not in unresolved
        ]
        stored = _stored(model, topo, [astuple(p) for p in derived_problems], moved, reused_problems)
        if stored is not None:
            cache.put(_KIND, found, stored, MOST)
    return topo


def _move(model: Model, moved: list[tuple[str, str, Any]]) -> None:
    """What ``topology.derive`` does to the model: the devices of a misplaced role or pod set aside as unresolved."""
    for name, how, pod in moved:
        data = model.devices.pop(name).data
        model.unresolved[name] = data if how == "role" else {**data, "pod": pod}


def _stored(
    model: Model,
    topo: Topology,
    derived: list[tuple[str, str, str, str]],
    moved: list[tuple[str, str, Any]],
    reused: dict[str, list[tuple[str, str, str, str]]],
) -> tuple[Any, ...] | None:
    """The plain data ``_restore`` builds ``topo`` and the problems back from; None when it cannot be written so."""
    caps = topology.mtu_caps(model, topo.switches)
    uplinks: list[Uplink] = [up for facts in topo.switches.values() for up in facts.uplinks]
    uplink_at = {id(up): i for i, up in enumerate(uplinks)}
    ports: list[HostPort] = [hp for facts in topo.switches.values() for hp in facts.host_ports]
    port_at = {id(hp): i for i, hp in enumerate(ports)}
    nic_at: dict[int, int] = {}  # id(a NIC) -> its index in its device's NICs (a group's hosts share theirs)
    for dev in model.devices.values():
        if dev.nics and id(dev.nics[0]) not in nic_at:
            nic_at.update((id(n), i) for i, n in enumerate(dev.nics))
    # text interned: ``marshal`` writes a text it meets again as a reference (a device's name once, not once per link)
    intern = sys.intern
    try:
        port_rows = [
            (intern(host), nic_at[id(nic)], intern(leaf), intern(port), vlan, ip, prefix, gateway, link)
            for host, nic, leaf, port, vlan, ip, prefix, gateway, link in ports
        ]
        switches = [
            (
                name,
                f.asn,
                None if f.loopback is None else int(f.loopback),
                f.pod,
                f.cabled_uplinks,
                [(vid, int(gw.ip), gw.network.prefixlen) for vid, gw in f.svis.items()],
                caps[name],
                len(f.uplinks),  # its uplinks and host ports are the next ones of ``uplinks`` and ``ports``
                len(f.host_ports),
                [uplink_at[id(down)] for down in f.downlinks],
            )
            for name, f in topo.switches.items()
        ]
        host_ports = [(host, [port_at[id(hp)] for hp in hps]) for host, hps in topo.host_ports.items()]
    except KeyError:  # a port or link not where derive puts it: not reusable
        return None
    return (
        _FORMAT,
        derived,
        moved,
        switches,
        [
            (intern(low), intern(low_port), intern(up), intern(up_port), network, mtu, link)
            for low, low_port, up, up_port, network, mtu, link in uplinks
        ],
        port_rows,
        host_ports,
        list(topo.vlan_by_rail.items()),
        [(p.name, p.id, p.spine_asn) for p in topo.pods.values()],
        list(topo.leaves_by_pod.items()),
        [tuple(ep) for ep in topo.orphaned],
        reused,
    )


_Restored = tuple[Topology, list[Problem], list[tuple[str, str, Any]], dict[str, list[Problem]]]


def _restore(value: Any, model: Model) -> _Restored | None:
    """The topology, derive's problems, the model's changes and the reused checks' problems stored in ``value`` (the
    MTUs of ``model`` applied), or None where ``value`` is not what ``_stored`` writes. Changes nothing."""
    if not (isinstance(value, tuple) and len(value) == 12 and value[0] == _FORMAT):
        return None
    try:
        return _restored(value, model)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        return None


def _restored(value: tuple[Any, ...], model: Model) -> _Restored | None:
    _fmt, derived, moved, switch_rows, uplink_rows, port_rows, host_rows, vlans, pods, leaves, orphaned, reused = value
    devices, fabric = model.devices, model.fabric
    if not all(name in devices for name, _how, _pod in moved) or set(reused) != {c.__name__ for c in REUSED}:
        return None
    switches: dict[str, SwitchFacts] = {}
    stored_caps: dict[str, int] = {}
    for name, asn, loopback, pod, cabled, svis, cap, _ups, _ports, _downs in switch_rows:
        mtu = topology.switch_mtu(devices[name].data, fabric)
        facts = SwitchFacts(asn=asn, mtu=mtu, pod=pod, cabled_uplinks=cabled)
        facts.loopback = None if loopback is None else ipaddress.IPv4Address(loopback)
        facts.svis = {vid: ipaddress.IPv4Interface((ip, prefix)) for vid, ip, prefix in svis}
        switches[name] = facts
        stored_caps[name] = cap
    caps = topology.mtu_caps(model, switches)
    changed = {name for name, cap in caps.items() if cap != stored_caps[name]}
    new = tuple.__new__  # a row of the right length made a tuple of its class directly: 65,536 of them at 32k GPUs
    if set(map(len, uplink_rows)) - {len(Uplink._fields)}:
        return None
    uplinks = [new(Uplink, row) for row in uplink_rows]
    if changed:
        uplinks = [
            up._replace(mtu=min(caps[up.lower], caps[up.upper])) if up.lower in changed or up.upper in changed else up
            for up in uplinks
        ]
    ports = [
        new(HostPort, (host, devices[host].nics[nic], leaf, leaf_port, vlan, ip, prefix, gateway, link))
        for host, nic, leaf, leaf_port, vlan, ip, prefix, gateway, link in port_rows
    ]
    up_at = port_at = 0
    for name, *_rest, ups, hps, downs in switch_rows:
        facts = switches[name]
        facts.uplinks, facts.host_ports = uplinks[up_at : up_at + ups], ports[port_at : port_at + hps]
        facts.downlinks = [uplinks[i] for i in downs]
        up_at, port_at = up_at + ups, port_at + hps
    if (up_at, port_at) != (len(uplinks), len(ports)):
        return None
    topo = Topology(
        switches=switches,
        host_ports={host: [ports[i] for i in at] for host, at in host_rows},
        vlan_by_rail=dict(vlans),
        pods={name: Pod(name, pod_id, spine_asn) for name, pod_id, spine_asn in pods},
        leaves_by_pod=dict(leaves),
        orphaned={Endpoint(*ep) for ep in orphaned},
    )
    found = {name: [Problem(*p) for p in listed] for name, listed in reused.items()}
    return topo, [Problem(*p) for p in derived], [(n, h, p) for n, h, p in moved], found
