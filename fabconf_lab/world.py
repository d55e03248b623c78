"""The lab's shared world: cabling between devices, and state that follows config on both ends.

Every simulator registers itself with one ``World`` and answers ``lab_view()`` with a ``DeviceView``:
what its *running* configuration says about interfaces and BGP. The world derives what a real network
would show from both ends of every cable:

- LLDP neighbors come from the cabling (so a miscabled link shows up as the wrong neighbor);
- a BGP session is Established only when both ends name each other with the right AS numbers, the
  link between them is cabled and up on both sides, and the peer address lives on the far end;
- routes follow eBGP path-vector rules: a device advertises its best path to every established peer,
  a receiver drops a path that already carries its own AS (so a pod's spines, sharing one AS, never
  learn their own pod's routes back through a super-spine), prefers the shortest AS path, and installs
  every session offering a path of that length (``bestpath as-path multipath-relax``) up to its
  maximum-paths. ``routes()`` is what ``show ip route`` prints; ``ecmp_paths()`` the width per prefix.
"""

from __future__ import annotations

import functools
import ipaddress
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabconf_lab.contract import Simulator

# How long a device whose own view changed waits, in a lab (``max_age`` > 0), for the sessions and routes another
# thread is working out, before it is answered from the last ones worked out. Small labs work them out in
# milliseconds, so a device still sees its own change at once there.
OWN_CHANGE_WAIT = 5.0

# Working sessions and routes out is the whole fabric's work, whatever asked: 3.1 s of CPU at 5,632 devices. In a
# push every commit changes a view, so a lab worker worked them out back to back, in every worker that runs switches,
# and starved the servers sharing its interpreter lock (the 5,632-device push's NX-OS leaves timed out in netmiko's
# SCP). After a derivation of ``DERIVE_REST_FROM`` seconds or more, the next one starts no sooner than
# ``DERIVE_REST`` times as long later: a worker spends at most a quarter of its time on it, and a device sees its
# peers' changes a few seconds later (a network converging). Small labs derive in milliseconds and never rest.
DERIVE_REST = 3.0
DERIVE_REST_FROM = 0.1


@dataclass(frozen=True)
class PortView:
    name: str
    enabled: bool = True
    mtu: int = 1500
    address: str | None = None  # "10.0.0.0/31"


@dataclass(frozen=True)
class NeighborView:
    peer: str  # a peer IP address, or a local interface name for BGP unnumbered
    remote_as: int | str  # a number, or "external" / "internal"


@dataclass(frozen=True)
class DeviceView:
    hostname: str
    ports: dict[str, PortView] = field(default_factory=dict)
    asn: int | None = None
    router_id: str | None = None
    neighbors: tuple[NeighborView, ...] = ()
    networks: tuple[str, ...] = ()  # prefixes advertised into BGP
    maximum_paths: int = 1


@dataclass(frozen=True)
class NextHop:
    address: str | None  # the peer's address on the session
    interface: str  # the local port the session runs over
    device: str  # the peer device


@dataclass(frozen=True)
class RouteView:
    prefix: str
    as_path: tuple[int, ...]  # the installed path's AS path (empty: originated here)
    next_hops: tuple[NextHop, ...]  # installed next hops (capped by maximum-paths); empty when originated


@dataclass(frozen=True)
class BgpSession:
    peer: str  # as configured locally (address or interface)
    remote_as: int | None
    remote_device: str | None
    state: str  # "Established" | "Active" | "Idle"
    local_address: str | None
    remote_address: str | None
    prefixes_received: int
    remote_router_id: str | None = None  # the peer's BGP router-id (shown by `show ip bgp neighbors`)


def _addr(port: PortView | None) -> ipaddress.IPv4Interface | None:
    if port is None or not port.address:
        return None
    return _interface(port.address)


# Working sessions out parses every port's and every neighbour's address, for every snapshot: 65,536 sessions of
# the 5,632-device fabric took 4.4 s of CPU, most of it in ``ipaddress``. The same strings come back snapshot after
# snapshot (a view changes only with its device's configuration), so each is parsed once; the caches are bounded.
_PARSED = 1 << 18


@functools.lru_cache(maxsize=_PARSED)
def _interface(address: str) -> ipaddress.IPv4Interface | None:
    try:
        return ipaddress.IPv4Interface(address)
    except ValueError:
        return None


@functools.lru_cache(maxsize=_PARSED)
def _int_interface(address: str) -> tuple[int, int] | None:
    """``address`` ("10.0.0.1/31") as (address, prefix length) integers; None when it is not one."""
    parsed = _interface(address)
    return None if parsed is None else (int(parsed.ip), parsed.network.prefixlen)


@functools.lru_cache(maxsize=_PARSED)
def _int_address(address: str) -> int | None:
    try:
        return int(ipaddress.IPv4Address(address))
    except ValueError:
        return None


def _network_of(ip: int, prefixlen: int) -> int:
    return ip & ((0xFFFFFFFF << (32 - prefixlen)) & 0xFFFFFFFF)


@dataclass(frozen=True)
class _Routes:
    """Every device's best paths, per group of prefixes originated by the same devices (they travel together)."""

    by_group: dict[str, dict[tuple[str, ...], tuple[tuple[int, ...], list[NextHop]]]]
    prefixes: dict[tuple[str, ...], list[str]]  # group -> its prefixes
    # (device, maximum-paths) -> its routes, as ``World.routes`` answers them, made once for these best paths
    answered: dict[tuple[str, int], dict[str, RouteView]] = field(default_factory=dict, compare=False)

    def table(self, device: str) -> dict[str, tuple[tuple[int, ...], list[NextHop]]]:
        """prefix -> (best AS path, next hops) of one device."""
        return {p: entry for group, entry in self.by_group.get(device, {}).items() for p in self.prefixes[group]}


class _Snapshot:
    """Every device's view at one moment, and what the World derives from them (computed once, on demand)."""

    def __init__(self, views: dict[str, DeviceView], taken: float) -> None:
        self.views = views
        self.taken = taken
        self.established: dict[tuple[str, str], tuple[str, str | None, str | None, str]] | None = None
        self.rib: _Routes | None = None


class World:
    """Cabling plus registered simulators (and, in a lab spread over processes, the views of the devices other
    processes run). Thread-safe.

    Questions are answered from a snapshot of every view. ``max_age`` 0 (the default) takes a fresh one for every
    question; a lab sets a fraction of a second, as a network takes time to converge: a question then costs the
    same at 2,000 devices as at 20, and another device's change shows within ``max_age``; a device asking about itself
    always sees its own change at once. What is derived from a snapshot (sessions, routes) is computed once and kept
    while the views stay equal."""

    def __init__(self, cables: list[tuple[str, str, str, str]] | None = None, *, max_age: float = 0.0) -> None:
        self._lock = threading.Lock()
        self._devices: dict[str, Simulator] = {}
        self._remote: dict[str, DeviceView] = {}
        self._peer: dict[tuple[str, str], tuple[str, str]] = {}
        self._ports: dict[str, dict[str, tuple[str, str]]] = {}  # device -> its cabled ports -> far end
        self._no_carrier: set[tuple[str, str]] = set()  # (device, port) of cables cut by a `link PORT:down` fault
        self.max_age = max_age
        self._snapshot: _Snapshot | None = None
        self._rebuild = threading.Lock()
        self._deriving = threading.Lock()  # one thread works sessions and routes out at a time
        self._last_derived: _Snapshot | None = None
        self._rest_until = 0.0  # no derivation starts before this (monotonic), see DERIVE_REST
        for a, pa, b, pb in cables or []:
            self.cable(a, pa, b, pb)

    # -- construction -------------------------------------------------------------------------
    def cable(self, a: str, port_a: str, b: str, port_b: str) -> None:
        with self._lock:
            self._peer[(a, port_a)] = (b, port_b)
            self._peer[(b, port_b)] = (a, port_a)
            self._ports.setdefault(a, {})[port_a] = (b, port_b)
            self._ports.setdefault(b, {})[port_b] = (a, port_a)

    def recable(self, cables: list[tuple[str, str, str, str]]) -> None:
        """The cabling becomes ``cables`` (``fabconf lab sync``: racks come and go); a cut cable that is still there
        stays cut."""
        peer: dict[tuple[str, str], tuple[str, str]] = {}
        ports: dict[str, dict[str, tuple[str, str]]] = {}
        for a, pa, b, pb in cables:
            peer[(a, pa)], peer[(b, pb)] = (b, pb), (a, pa)
            ports.setdefault(a, {})[pa] = (b, pb)
            ports.setdefault(b, {})[pb] = (a, pa)
        with self._lock:
            self._peer, self._ports = peer, ports
            self._no_carrier = {end for end in self._no_carrier if end in peer}
            self._snapshot = None
            self._last_derived = None

    def cables(self) -> list[tuple[str, str, str, str]]:
        """The cabling, each cable once (as ``recable`` takes it)."""
        with self._lock:
            return [(a, pa, b, pb) for (a, pa), (b, pb) in self._peer.items() if (a, pa) < (b, pb)]

    def forget(self, names: list[str]) -> None:
        """Devices that have gone from the lab (``fabconf lab sync``): their views from other processes too."""
        with self._lock:
            for name in names:
                self._devices.pop(name, None)
                self._remote.pop(name, None)
            self._snapshot = None
            self._last_derived = None

    def set_carrier(self, device: str, port: str, up: bool) -> None:
        """``fabconf lab fault SWITCH link PORT:down|up``: the cable on ``port`` loses (or regains) carrier at both
        ends: no LLDP, no BGP session, no route over it. The cut is known to this World (a sharded lab applies it
        in the shard that runs ``device``)."""
        with self._lock:
            ends = {(device, port)} | ({self._peer[(device, port)]} if (device, port) in self._peer else set())
            if up:
                self._no_carrier -= ends
            else:
                self._no_carrier |= ends
            self._snapshot = None
            self._last_derived = None

    def carrier_down(self, device: str) -> list[str]:
        """The ports of ``device`` whose cable is cut (what `lab status` shows)."""
        return sorted(port for dev, port in self._no_carrier if dev == device)

    def register(self, sim: Simulator) -> None:
        with self._lock:
            self._devices[sim.name] = sim
            self._snapshot = None

    def unregister(self, name: str) -> None:
        with self._lock:
            self._devices.pop(name, None)
            self._snapshot = None

    def set_remote(self, views: dict[str, DeviceView]) -> None:
        """Views of devices another process runs (``fabconf_lab.shards``), as that process last published them."""
        with self._lock:
            self._remote.update(views)
            self._snapshot = None

    def invalidate(self) -> None:
        """A view changed: the next question takes a fresh snapshot."""
        self._snapshot = None

    def local_views(self) -> dict[str, DeviceView]:
        """The views of the simulators registered here (what a shard publishes)."""
        with self._lock:
            sims = list(self._devices.values())
        return {s.name: s.lab_view() for s in sims}

    # -- questions ------------------------------------------------------------------------------
    def far_end(self, device: str, port: str) -> tuple[str, str] | None:
        return self._peer.get((device, port))

    def lldp_neighbors(self, device: str) -> list[tuple[str, str, str]]:
        """(local_port, remote_device, remote_port) for every cabled port whose both ends are up."""
        views = self._snap(device).views
        mine = views.get(device)
        out = []
        for port, (rdev, rport) in sorted(self._ports.get(device, {}).items()):
            if (device, port) in self._no_carrier:
                continue
            if mine is not None and port in mine.ports and not mine.ports[port].enabled:
                continue
            far = views.get(rdev)
            if far is not None and rport in far.ports and not far.ports[rport].enabled:
                continue
            out.append((port, views[rdev].hostname if rdev in views else rdev, rport))
        return out

    def bgp_sessions(self, device: str) -> list[BgpSession]:
        """The device's sessions: its neighbours as its configuration says now, each in the state last worked out
        (a neighbour configured since shows Active until the next derivation, as a real session takes a while)."""
        now = self._snap(device)
        snap = self._derived(now, device)
        views = snap.views
        established, best = snap.established or {}, snap.rib
        assert best is not None
        view = now.views.get(device)
        if view is None:
            return []
        out = []
        for nb in view.neighbors:
            hit = established.get((device, nb.peer))
            if hit is None:
                remote_as = nb.remote_as if isinstance(nb.remote_as, int) else None
                state = "Active" if view.asn else "Idle"
                out.append(BgpSession(nb.peer, remote_as, None, state, None, None, 0))
                continue
            rdev, laddr, raddr, _lport = hit
            rview = views[rdev]
            # what the peer advertises to us: its best path to each prefix, minus paths through our own AS
            received = sum(
                len(best.prefixes[group])
                for group, path in best.by_group.get(rdev, {}).items()
                if view.asn not in (rview.asn, *path[0])
            )
            session = BgpSession(nb.peer, rview.asn, rdev, "Established", laddr, raddr, received, rview.router_id)
            out.append(session)
        return out

    def routes(self, device: str) -> dict[str, RouteView]:
        """The device's BGP routes (prefixes it originates have no next hops), by prefix. Read only: while the
        best paths stand, every question gets the same dict (a verify asks a switch's routes several times)."""
        snap = self._derived(self._snap(device), device)
        view = snap.views.get(device)
        if view is None or snap.rib is None:
            return {}
        cap = max(1, view.maximum_paths)
        out = snap.rib.answered.get((device, cap))
        if out is not None:
            return out
        out = {}
        for prefix, (path, hops) in sorted(snap.rib.table(device).items()):
            chosen = sorted(hops, key=lambda h: (h.interface, h.address or ""))[:cap]
            out[prefix] = RouteView(prefix, path, tuple(chosen))
        snap.rib.answered[(device, cap)] = out
        return out

    def ecmp_paths(self, device: str) -> dict[str, int]:
        """Prefix -> number of paths installed (learnt over established sessions, capped by maximum-paths)."""
        return {p: len(r.next_hops) for p, r in self.routes(device).items() if r.next_hops}

    # -- internals ----------------------------------------------------------------------------------
    def router_ids(self) -> dict[str, str]:
        """Every registered device's BGP router-id (as its running config says), without working out
        sessions: what `show ip bgp` needs to name its peers."""
        return {name: view.router_id for name, view in self._views().items() if view.router_id}

    def _views(self) -> dict[str, DeviceView]:
        return self._snap().views

    def _snap(self, device: str | None = None) -> _Snapshot:
        """The current snapshot; a fresh one when it is older than ``max_age``, or when ``device`` (the one asking)
        runs here and its own view changed since: a device always sees its own change at once."""
        snap = self._current(device)
        if snap is not None:
            return snap
        old = self._snapshot
        # many questions at once: one takes the snapshot while the others keep to the last one. Never wait for it:
        # taking one reads every simulator's view, and a simulator may be asking this while holding its own lock.
        if not self._rebuild.acquire(blocking=False):
            if old is None or self.max_age <= 0:
                return self._take(old)
            sim = self._devices.get(device) if device is not None else None
            if sim is None:
                return old
            own = sim.lab_view()
            if old.views.get(device) == own:
                return old
            return _Snapshot({**old.views, device: own}, old.taken)  # the last one, with the asker's own change
        try:
            return self._take(old)
        finally:
            self._rebuild.release()

    def _take(self, old: _Snapshot | None) -> _Snapshot:
        with self._lock:
            sims = list(self._devices.values())
            views = dict(self._remote)
        views.update((s.name, s.lab_view()) for s in sims)
        fresh = _Snapshot(views, time.monotonic())
        if old is not None and old.views == views:  # nothing changed: keep what was derived
            fresh.established, fresh.rib = old.established, old.rib
        self._snapshot = fresh
        return fresh

    def _current(self, device: str | None) -> _Snapshot | None:
        snap = self._snapshot
        if snap is None or time.monotonic() - snap.taken > self.max_age:
            return None
        sim = self._devices.get(device) if device is not None else None
        if sim is not None and snap.views.get(device) != sim.lab_view():
            return None
        return snap

    def _link(self, views: dict[str, DeviceView], dev: str, port: str) -> tuple[str, str] | None:
        far = self._peer.get((dev, port))
        if far is None or (dev, port) in self._no_carrier:
            return None
        mine = views[dev].ports.get(port)
        theirs = views.get(far[0], DeviceView("")).ports.get(far[1])
        if mine is None or theirs is None or not mine.enabled or not theirs.enabled:
            return None
        return far

    def _resolve(
        self,
        views: dict[str, DeviceView],
        subnets: dict[str, dict[int, dict[int, list[str]]]],
        dev: str,
        nb: NeighborView,
    ) -> tuple[str, str, str] | None:
        """Find (remote device, remote port, local port) that a neighbor statement points at."""
        view = views[dev]
        if nb.peer in view.ports:  # unnumbered: the neighbor is the far end of this interface
            far = self._link(views, dev, nb.peer)
            return (far[0], far[1], nb.peer) if far else None
        peer_ip = _int_address(nb.peer)
        if peer_ip is None:
            return None
        for plen, by_net in subnets.get(dev, {}).items():
            for pname in by_net.get(_network_of(peer_ip, plen), ()):
                local = _int_interface(view.ports[pname].address or "")
                if local is None or peer_ip == local[0]:
                    continue
                far = self._link(views, dev, pname)
                if far is None:
                    continue
                rport = views[far[0]].ports.get(far[1])
                remote = _int_interface(rport.address) if rport is not None and rport.address else None
                if remote is not None and remote[0] == peer_ip:
                    return far[0], far[1], pname
        return None

    @staticmethod
    def _subnets(views: dict[str, DeviceView]) -> dict[str, dict[int, dict[int, list[str]]]]:
        """Per device, prefix length -> connected subnet (as an integer) -> its ports (sorted): a peer address is
        resolved by looking up its subnet at each prefix length the device uses, not by scanning every port."""
        out: dict[str, dict[int, dict[int, list[str]]]] = {}
        for dev, view in views.items():
            for pname in sorted(view.ports):
                address = view.ports[pname].address
                local = _int_interface(address) if address else None
                if local is not None:
                    ip, plen = local
                    out.setdefault(dev, {}).setdefault(plen, {}).setdefault(_network_of(ip, plen), []).append(pname)
        return out

    @staticmethod
    def _as_ok(expected: int | str, local_as: int | None, remote_as: int | None) -> bool:
        if local_as is None or remote_as is None:
            return False
        if expected == "external":
            return local_as != remote_as
        if expected == "internal":
            return local_as == remote_as
        return expected == remote_as

    def _derived(self, snap: _Snapshot, device: str | None = None) -> _Snapshot:
        """A snapshot whose sessions and routes are worked out: ``snap`` itself, or, while another thread works
        ``snap``'s out, the last one worked out -- unless the asking ``device`` changed since that one (a device
        sees its own change at once) or answers must be fresh (``max_age`` 0): then it waits for ``snap``'s."""
        if snap.rib is not None:
            return snap
        rested = self._rested()
        if rested is not None:
            return rested
        if not self._deriving.acquire(blocking=False):
            last = self._last_derived
            if last is not None and self.max_age > 0 and last.views.get(device or "") == snap.views.get(device or ""):
                return last
            bounded = last is not None and self.max_age > 0
            if not self._deriving.acquire(timeout=OWN_CHANGE_WAIT if bounded else -1):
                # Still being worked out (a 2,048-device lab while 100 switches commit at once: every leaf waited
                # for the next derivation, and its GET /vrf missed a 60 s timeout). Answer as a network still
                # converging would: from the last snapshot worked out; the own change shows in a later answer.
                assert last is not None
                return last
        try:
            rested = self._rested() if snap.rib is None else None
            if rested is not None:  # waited while another thread worked out the last ones
                return rested
            if snap.rib is None:
                began = time.monotonic()
                established = self._work_out_sessions(snap.views)
                snap.established = established
                snap.rib = self._work_out_routes(snap.views, established)  # last: a set rib means all is there
                ended = time.monotonic()
                took = ended - began
                self._rest_until = ended + DERIVE_REST * took if took >= DERIVE_REST_FROM else 0.0
            self._last_derived = snap
            return snap
        finally:
            self._deriving.release()

    def _rested(self) -> _Snapshot | None:
        """The last snapshot worked out, while it rests: in a lab (``max_age`` > 0), when that derivation was long
        and ended less than ``DERIVE_REST`` times its length ago (questions are answered from it); else None."""
        last = self._last_derived
        if self.max_age > 0 and last is not None and time.monotonic() < self._rest_until:
            return last
        return None

    def _work_out_sessions(
        self, views: dict[str, DeviceView]
    ) -> dict[tuple[str, str], tuple[str, str | None, str | None, str]]:
        subnets = self._subnets(views)
        hits: dict[tuple[str, str], tuple[str, str, str, NeighborView]] = {}
        pointing: dict[tuple[str, str, str], list[NeighborView]] = {}  # (device, local port, remote device)
        for dev, view in views.items():
            for nb in view.neighbors:
                hit = self._resolve(views, subnets, dev, nb)
                if hit is not None:
                    hits[(dev, nb.peer)] = (*hit, nb)
                    pointing.setdefault((dev, hit[2], hit[0]), []).append(nb)
        found: dict[tuple[str, str], tuple[str, str | None, str | None, str]] = {}
        for (dev, peer), (rdev, rport, lport, nb) in hits.items():
            view, rview = views[dev], views[rdev]
            if not self._as_ok(nb.remote_as, view.asn, rview.asn):
                continue
            # the far end must point back at us, over the same link
            if any(self._as_ok(rnb.remote_as, rview.asn, view.asn) for rnb in pointing.get((rdev, rport, dev), ())):
                la = _addr(view.ports.get(lport))
                ra = _addr(rview.ports.get(rport))
                found[(dev, peer)] = (rdev, str(la.ip) if la else None, str(ra.ip) if ra else None, lport)
        return found

    @staticmethod
    def _work_out_routes(
        views: dict[str, DeviceView], established: dict[tuple[str, str], tuple[str, str | None, str | None, str]]
    ) -> _Routes:
        """Prefixes originated by the same devices travel together (no per-prefix policy here): the rounds run
        over those groups, not over every prefix, and each device's table is expanded to prefixes at the end."""
        sessions: dict[str, list[tuple[str, NextHop]]] = {}
        for (dev, _peer), (rdev, _laddr, raddr, lport) in sorted(established.items()):
            sessions.setdefault(dev, []).append((rdev, NextHop(raddr, lport, rdev)))
        originators: dict[str, list[str]] = {}
        for dev, view in views.items():
            for prefix in view.networks:
                originators.setdefault(prefix, []).append(dev)
        groups: dict[tuple[str, ...], list[str]] = {}
        for prefix, devs in originators.items():
            groups.setdefault(tuple(sorted(devs)), []).append(prefix)
        own: dict[str, list[tuple[str, ...]]] = {}
        for group in groups:
            for dev in group:
                own.setdefault(dev, []).append(group)
        Route = tuple[tuple[int, ...], list[NextHop]]
        rib: dict[str, dict[tuple[str, ...], Route]] = {d: {g: ((), []) for g in own.get(d, ())} for d in views}
        # who listens to whom: a device's table is worked out again only in a round after one of its peers' changed
        # (the same inputs give the same table), so the last rounds touch the few devices still changing
        listeners: dict[str, set[str]] = {}
        for dev, peers in sessions.items():
            for rdev, _hop in peers:
                listeners.setdefault(rdev, set()).add(dev)
        dirty: set[str] = set(views)
        for _round in range(len(views) + 1):
            # what each device with a changed table offers its peers this round: its best paths, its AS prepended
            # (built once per device, not once per session)
            offers: dict[str, list[tuple[tuple[str, ...], tuple[int, ...]]]] = {}
            changed: set[str] = set()
            new: dict[str, dict[tuple[str, ...], Route]] = {}
            for dev, view in views.items():
                if dev not in dirty:
                    new[dev] = rib.get(dev, {})
                    continue
                table: dict[tuple[str, ...], Route] = {g: ((), []) for g in own.get(dev, ())}
                asn = view.asn
                for rdev, hop in sessions.get(dev, []):
                    offered_by = offers.get(rdev)
                    if offered_by is None:
                        rasn = views[rdev].asn
                        offered_by = offers[rdev] = (
                            [] if rasn is None else [(g, (rasn, *path)) for g, (path, _) in rib.get(rdev, {}).items()]
                        )
                    for prefix, offered in offered_by:
                        if asn in offered:
                            continue  # eBGP loop prevention: our own AS is already on the path
                        current = table.get(prefix)
                        if current is None or (len(offered) < len(current[0]) and current[1]):
                            table[prefix] = (offered, [hop])
                        elif current[1] and len(offered) == len(current[0]):
                            current[1].append(hop)
                new[dev] = table
                before = rib.get(dev, {})
                if len(before) != len(table) or any(
                    p not in before or before[p][0] != a or set(before[p][1]) != set(h) for p, (a, h) in table.items()
                ):
                    changed.add(dev)
            rib = new
            if not changed:
                break
            dirty = {d for rdev in changed for d in listeners.get(rdev, ())}
        return _Routes(rib, groups)
