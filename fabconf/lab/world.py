"""The lab's shared world: cabling between devices, and state that follows config on both ends.

Every simulator registers itself with one ``World`` and answers ``lab_view()`` with a ``DeviceView``:
what its *running* configuration says about interfaces and BGP. The world derives what a real network
would show from both ends of every cable:

- LLDP neighbors come from the cabling (so a miscabled link shows up as the wrong neighbor);
- a BGP session is Established only when both ends name each other with the right AS numbers, the
  link between them is cabled and up on both sides, and the peer address lives on the far end;
- the prefixes a device learns are the networks its established peers advertise (plus what those
  peers learnt, eBGP-style, without loops), and the ECMP width towards a prefix is the number of
  established sessions it is learnt over, capped by the device's maximum-paths.
"""

from __future__ import annotations

import ipaddress
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabconf.lab.contract import Simulator


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
    try:
        return ipaddress.IPv4Interface(port.address)
    except ValueError:
        return None


class World:
    """Cabling plus registered simulators. Thread-safe; views are read fresh on every question."""

    def __init__(self, cables: list[tuple[str, str, str, str]] | None = None) -> None:
        self._lock = threading.Lock()
        self._devices: dict[str, Simulator] = {}
        self._peer: dict[tuple[str, str], tuple[str, str]] = {}
        for a, pa, b, pb in cables or []:
            self.cable(a, pa, b, pb)

    # -- construction -------------------------------------------------------------------------
    def cable(self, a: str, port_a: str, b: str, port_b: str) -> None:
        with self._lock:
            self._peer[(a, port_a)] = (b, port_b)
            self._peer[(b, port_b)] = (a, port_a)

    def register(self, sim: Simulator) -> None:
        with self._lock:
            self._devices[sim.name] = sim

    def unregister(self, name: str) -> None:
        with self._lock:
            self._devices.pop(name, None)

    # -- questions ------------------------------------------------------------------------------
    def far_end(self, device: str, port: str) -> tuple[str, str] | None:
        return self._peer.get((device, port))

    def lldp_neighbors(self, device: str) -> list[tuple[str, str, str]]:
        """(local_port, remote_device, remote_port) for every cabled port whose both ends are up."""
        views = self._views()
        mine = views.get(device)
        out = []
        for (dev, port), (rdev, rport) in sorted(self._peer.items()):
            if dev != device:
                continue
            if mine is not None and port in mine.ports and not mine.ports[port].enabled:
                continue
            far = views.get(rdev)
            if far is not None and rport in far.ports and not far.ports[rport].enabled:
                continue
            out.append((port, views[rdev].hostname if rdev in views else rdev, rport))
        return out

    def bgp_sessions(self, device: str) -> list[BgpSession]:
        views = self._views()
        established = self._established(views)
        learnt = self._routes(views, established)
        view = views.get(device)
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
            rdev, laddr, raddr = hit
            rview = views[rdev]
            # what the peer advertises to us: its own networks and what it learnt, minus what we originate
            # (eBGP drops routes carrying our own AS, so our prefixes never come back to us)
            received = len((learnt.get(rdev, set()) | set(rview.networks)) - set(view.networks))
            session = BgpSession(nb.peer, rview.asn, rdev, "Established", laddr, raddr, received, rview.router_id)
            out.append(session)
        return out

    def ecmp_paths(self, device: str) -> dict[str, int]:
        """Prefix -> number of paths installed (learnt over established sessions, capped by maximum-paths)."""
        views = self._views()
        established = self._established(views)
        view = views.get(device)
        if view is None:
            return {}
        learnt = self._routes(views, established)
        paths: dict[str, int] = {}
        for (dev, _peer), (rdev, _l, _r) in established.items():
            if dev != device:
                continue
            for prefix in learnt.get(rdev, set()) | set(views[rdev].networks):
                if prefix in view.networks:
                    continue
                paths[prefix] = paths.get(prefix, 0) + 1
        cap = max(1, view.maximum_paths)
        return {p: min(n, cap) for p, n in sorted(paths.items())}

    # -- internals ----------------------------------------------------------------------------------
    def router_ids(self) -> dict[str, str]:
        """Every registered device's BGP router-id (as its running config says), without working out
        sessions: what `show ip bgp` needs to name its peers."""
        return {name: view.router_id for name, view in self._views().items() if view.router_id}

    def _views(self) -> dict[str, DeviceView]:
        with self._lock:
            sims = list(self._devices.values())
        return {s.name: s.lab_view() for s in sims}

    def _link(self, views: dict[str, DeviceView], dev: str, port: str) -> tuple[str, str] | None:
        far = self._peer.get((dev, port))
        if far is None:
            return None
        mine = views[dev].ports.get(port)
        theirs = views.get(far[0], DeviceView("")).ports.get(far[1])
        if mine is None or theirs is None or not mine.enabled or not theirs.enabled:
            return None
        return far

    def _resolve(self, views: dict[str, DeviceView], dev: str, nb: NeighborView):
        """Find (remote device, remote port, local port) that a neighbor statement points at."""
        view = views[dev]
        if nb.peer in view.ports:  # unnumbered: the neighbor is the far end of this interface
            far = self._link(views, dev, nb.peer)
            return (far[0], far[1], nb.peer) if far else None
        try:
            peer_ip = ipaddress.IPv4Address(nb.peer)
        except ValueError:
            return None
        for pname, port in view.ports.items():
            local = _addr(port)
            if local is None or peer_ip not in local.network or peer_ip == local.ip:
                continue
            far = self._link(views, dev, pname)
            if far is None:
                continue
            rport = _addr(views[far[0]].ports.get(far[1]))
            if rport is not None and rport.ip == peer_ip:
                return far[0], far[1], pname
        return None

    @staticmethod
    def _as_ok(expected: int | str, local_as: int | None, remote_as: int | None) -> bool:
        if local_as is None or remote_as is None:
            return False
        if expected == "external":
            return local_as != remote_as
        if expected == "internal":
            return local_as == remote_as
        return expected == remote_as

    def _established(self, views: dict[str, DeviceView]) -> dict[tuple[str, str], tuple[str, str | None, str | None]]:
        found: dict[tuple[str, str], tuple[str, str | None, str | None]] = {}
        for dev, view in views.items():
            for nb in view.neighbors:
                hit = self._resolve(views, dev, nb)
                if hit is None:
                    continue
                rdev, rport, lport = hit
                rview = views[rdev]
                if not self._as_ok(nb.remote_as, view.asn, rview.asn):
                    continue
                # the far end must point back at us, over the same link
                back = False
                for rnb in rview.neighbors:
                    rhit = self._resolve(views, rdev, rnb)
                    if rhit and rhit[0] == dev and rhit[2] == rport and self._as_ok(rnb.remote_as, rview.asn, view.asn):
                        back = True
                        break
                if back:
                    la = _addr(view.ports.get(lport))
                    ra = _addr(rview.ports.get(rport))
                    found[(dev, nb.peer)] = (rdev, str(la.ip) if la else None, str(ra.ip) if ra else None)
        return found

    def _routes(self, views, established) -> dict[str, set[str]]:
        """Prefixes each device knows beyond its own, by flooding over established sessions (AS-path loop-free)."""
        adj: dict[str, set[str]] = {}
        for (dev, _p), (rdev, _l, _r) in established.items():
            adj.setdefault(dev, set()).add(rdev)
        known: dict[str, set[str]] = {d: set(v.networks) for d, v in views.items()}
        changed = True
        rounds = 0
        while changed and rounds < 16:
            changed = False
            rounds += 1
            for dev in views:
                for rdev in adj.get(dev, ()):
                    # eBGP does not send a route back into the AS it came from: approximate by
                    # refusing prefixes originated by a device with our own AS.
                    new = {
                        p
                        for p in known[rdev]
                        if p not in known[dev]
                        and not any(
                            p in views[o].networks and views[o].asn == views[dev].asn and o != dev for o in views
                        )
                    }
                    if new:
                        known[dev] |= new
                        changed = True
        return {d: known[d] - set(views[d].networks) for d in views}
