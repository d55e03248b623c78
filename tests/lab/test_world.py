"""The lab World: LLDP from cabling, BGP sessions from both ends' config, prefixes and ECMP."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from fabconf_lab.world import DeviceView, NeighborView, PortView, World


@dataclass
class Box:
    """A device whose running config is a DeviceView (the World only ever reads lab_view())."""

    name: str
    view: DeviceView

    def lab_view(self) -> DeviceView:
        return self.view


def _leaf(name: str, asn: int, addr: str, peer: str, net: str, remote_as: int = 65100) -> Box:
    return Box(
        name,
        DeviceView(
            name, {"swp1": PortView("swp1", True, 9216, addr)}, asn, None, (NeighborView(peer, remote_as),), (net,), 64
        ),
    )


def _world(leaf2_remote_as: int = 65100) -> World:
    world = World([("leaf1", "swp1", "spine", "Ethernet1"), ("leaf2", "swp1", "spine", "Ethernet2")])
    spine = Box(
        "spine",
        DeviceView(
            "spine",
            {
                "Ethernet1": PortView("Ethernet1", True, 9216, "10.0.0.0/31"),
                "Ethernet2": PortView("Ethernet2", True, 9216, "10.0.0.2/31"),
            },
            65100,
            None,
            (NeighborView("10.0.0.1", 65101), NeighborView("10.0.0.3", 65102)),
            ("10.255.0.1/32",),
            64,
        ),
    )
    world.register(spine)
    world.register(_leaf("leaf1", 65101, "10.0.0.1/31", "10.0.0.0", "10.1.1.0/24"))
    world.register(_leaf("leaf2", 65102, "10.0.0.3/31", "10.0.0.2", "10.1.2.0/24", leaf2_remote_as))
    return world


def test_lldp_follows_cabling() -> None:
    assert _world().lldp_neighbors("spine") == [("Ethernet1", "leaf1", "swp1"), ("Ethernet2", "leaf2", "swp1")]


def test_sessions_and_prefixes_received() -> None:
    world = _world()
    (s,) = world.bgp_sessions("leaf1")
    assert (s.state, s.remote_device, s.remote_as) == ("Established", "spine", 65100)
    # from the spine: its loopback and leaf2's subnet; never leaf1's own subnet reflected back
    assert s.prefixes_received == 2
    assert world.ecmp_paths("leaf1") == {"10.1.2.0/24": 1, "10.255.0.1/32": 1}


def test_wrong_remote_as_keeps_the_session_down_on_both_ends() -> None:
    world = _world(leaf2_remote_as=65999)
    assert world.bgp_sessions("leaf2")[0].state == "Active"
    states = {s.peer: s.state for s in world.bgp_sessions("spine")}
    assert states == {"10.0.0.1": "Established", "10.0.0.3": "Active"}
    assert "10.1.2.0/24" not in world.ecmp_paths("leaf1")


def _clos(leaf_max_paths: int = 64) -> World:
    """Two pods (spines share their pod's AS), two super-spines (one AS), one leaf per pod with two uplinks."""
    asn = {"ss1": 65000, "ss2": 65000, "p1s1": 65100, "p1s2": 65100, "p2s1": 65101, "p2s2": 65101}
    asn |= {"p1l1": 4200000001, "p2l1": 4200000002}
    networks = {"p1l1": ("10.255.1.1/32", "10.101.0.0/24"), "p2l1": ("10.255.1.2/32", "10.101.1.0/24")}
    links = [("p1l1", "p1s1"), ("p1l1", "p1s2"), ("p2l1", "p2s1"), ("p2l1", "p2s2")]
    links += [(s, ss) for s in ("p1s1", "p1s2", "p2s1", "p2s2") for ss in ("ss1", "ss2")]
    ports: dict[str, dict[str, PortView]] = {name: {} for name in asn}
    neighbors: dict[str, list[NeighborView]] = {name: [] for name in asn}
    world = World()
    for i, (low, up) in enumerate(links):
        lp, upp = f"p{i}", f"p{i}"
        world.cable(low, lp, up, upp)
        ports[low][lp] = PortView(lp, True, 9216, f"10.254.0.{2 * i + 1}/31")
        ports[up][upp] = PortView(upp, True, 9216, f"10.254.0.{2 * i}/31")
        neighbors[low].append(NeighborView(f"10.254.0.{2 * i}", asn[up]))
        neighbors[up].append(NeighborView(f"10.254.0.{2 * i + 1}", asn[low]))
    for name in asn:
        paths = leaf_max_paths if name.endswith("l1") else 64
        view = DeviceView(name, ports[name], asn[name], None, tuple(neighbors[name]), networks.get(name, ()), paths)
        world.register(Box(name, view))
    return world


def test_three_tier_routes_follow_ebgp_path_vector_rules() -> None:
    world = _clos()
    # a leaf reaches the other pod through both of its spines (equal AS paths: spine AS, super-spine AS, ...)
    assert world.ecmp_paths("p1l1")["10.255.1.2/32"] == 2
    assert world.routes("p1l1")["10.101.1.0/24"].as_path == (65100, 65000, 65101, 4200000002)
    # a super-spine reaches a pod's leaf through both spines of that pod
    assert world.ecmp_paths("ss1")["10.255.1.1/32"] == 2
    # a spine reaches its own pod's leaf only directly: the path back through a super-spine carries its own AS
    assert world.ecmp_paths("p1s1")["10.255.1.1/32"] == 1
    assert world.routes("p1s1")["10.255.1.1/32"].next_hops[0].device == "p1l1"
    # what a session reports as received: the peer's best paths that do not carry our AS
    received = {s.remote_device: s.prefixes_received for s in world.bgp_sessions("p1l1")}
    assert received == {"p1s1": 2, "p1s2": 2}  # the other pod's two prefixes, never its own two back


def test_maximum_paths_caps_the_installed_next_hops() -> None:
    world = _clos(leaf_max_paths=1)
    assert world.ecmp_paths("p1l1")["10.255.1.2/32"] == 1
    assert len(world.routes("p1l1")["10.255.1.2/32"].next_hops) == 1


def test_a_device_waits_a_bounded_time_for_its_own_change_then_gets_the_last_routes(monkeypatch) -> None:
    """In a lab (``max_age`` > 0), a device whose own view changed waits for the sessions and routes another thread
    is working out at most ``OWN_CHANGE_WAIT``, then is answered from the last ones worked out (a network still
    converging); once worked out, its change shows."""
    import threading
    import time

    from fabconf_lab import world as world_module

    monkeypatch.setattr(world_module, "OWN_CHANGE_WAIT", 0.2)
    world = _world()
    world.max_age = 0.05
    assert "10.1.9.0/24" not in world.routes("leaf1")
    started, release = threading.Event(), threading.Event()
    work_out = World._work_out_routes

    def slow(views, established):  # another thread's derivation, held until the test lets it go
        started.set()
        release.wait(10)
        return work_out(views, established)

    monkeypatch.setattr(world, "_work_out_routes", slow)
    leaf1 = world._devices["leaf1"]
    leaf1.view = DeviceView(
        "leaf1", leaf1.view.ports, 65101, None, leaf1.view.neighbors, ("10.1.1.0/24", "10.1.9.0/24"), 64
    )
    time.sleep(0.1)  # the snapshot is older than max_age
    other = threading.Thread(target=world.routes, args=("spine",))
    other.start()
    assert started.wait(5)
    stale = world.routes("leaf1")  # not worked out yet: the last routes, not a wait for the derivation
    release.set()
    other.join(10)
    assert "10.1.9.0/24" not in stale and "10.1.1.0/24" in stale
    time.sleep(0.1)
    assert "10.1.9.0/24" in world.routes("leaf1")


def test_a_long_derivation_rests_before_the_next_and_own_neighbours_show_at_once(monkeypatch) -> None:
    """A derivation of ``DERIVE_REST_FROM`` seconds or more holds the next one back for ``DERIVE_REST`` times as
    long (a 5,632-device push derived back to back in every switch worker and starved its servers): meanwhile
    questions get the last sessions and routes, except that a device lists its own neighbours as configured now (a
    new one Active); after the rest, the change is worked out."""
    import time

    from fabconf_lab import world as world_module

    monkeypatch.setattr(world_module, "DERIVE_REST_FROM", 0.0)
    monkeypatch.setattr(world_module, "DERIVE_REST", 1.0)
    world = _world()
    world.max_age = 0.01
    work_out, runs = World._work_out_routes, []

    def slow(views, established):  # a derivation long enough that the rest (1 x its length) is measurable
        runs.append(time.monotonic())
        time.sleep(0.3)
        return work_out(views, established)

    monkeypatch.setattr(world, "_work_out_routes", slow)
    assert "10.1.9.0/24" not in world.routes("spine")
    leaf1 = world._devices["leaf1"]
    leaf1.view = DeviceView(
        "leaf1",
        leaf1.view.ports,
        65101,
        None,
        (*leaf1.view.neighbors, NeighborView("10.0.0.9", 65109)),
        ("10.1.1.0/24", "10.1.9.0/24"),
        64,
    )
    time.sleep(0.02)  # older than max_age, well within the rest
    assert "10.1.9.0/24" not in world.routes("spine") and "10.1.9.0/24" not in world.routes("leaf1")
    sessions = {s.peer: s.state for s in world.bgp_sessions("leaf1")}
    assert sessions == {"10.0.0.0": "Established", "10.0.0.9": "Active"}  # its own new neighbour, at once
    assert len(runs) == 1  # nothing worked out during the rest
    time.sleep(0.35)
    assert "10.1.9.0/24" in world.routes("spine") and "10.1.9.0/24" in world.routes("leaf1")
    assert len(runs) == 2
    monkeypatch.setattr(world_module, "DERIVE_REST_FROM", 10.0)  # a short derivation (small labs): no rest at all
    world._rest_until = 0.0
    leaf1.view = DeviceView("leaf1", leaf1.view.ports, 65101, None, leaf1.view.neighbors, ("10.1.1.0/24",), 64)
    time.sleep(0.02)
    assert "10.1.9.0/24" not in world.routes("spine")
    leaf1.view = DeviceView(
        "leaf1", leaf1.view.ports, 65101, None, leaf1.view.neighbors, ("10.1.1.0/24", "10.1.9.0/24"), 64
    )
    time.sleep(0.02)
    assert "10.1.9.0/24" in world.routes("spine")


def test_routes_travel_the_whole_length_of_a_chain() -> None:
    """Each round works out again only the devices whose peers changed: a prefix still reaches the far end of a
    chain of eight ASes, with its whole AS path, and a ring's two ways round are an ECMP pair where they are equal."""
    names = [f"r{i}" for i in range(8)]
    asn = {name: 65000 + i for i, name in enumerate(names)}
    ports: dict[str, dict[str, PortView]] = {name: {} for name in names}
    neighbors: dict[str, list[NeighborView]] = {name: [] for name in names}
    world = World()
    links = [*itertools.pairwise(names), (names[-1], names[0])]  # a ring of eight
    for i, (a, b) in enumerate(links):
        world.cable(a, f"e{i}", b, f"e{i}")
        ports[a][f"e{i}"] = PortView(f"e{i}", True, 9216, f"10.9.0.{2 * i}/31")
        ports[b][f"e{i}"] = PortView(f"e{i}", True, 9216, f"10.9.0.{2 * i + 1}/31")
        neighbors[a].append(NeighborView(f"10.9.0.{2 * i + 1}", asn[b]))
        neighbors[b].append(NeighborView(f"10.9.0.{2 * i}", asn[a]))
    for name in names:
        nets = ("10.10.0.0/24",) if name == "r0" else ()
        world.register(Box(name, DeviceView(name, ports[name], asn[name], None, tuple(neighbors[name]), nets, 8)))
    assert world.routes("r3")["10.10.0.0/24"].as_path == (65002, 65001, 65000)
    assert world.routes("r5")["10.10.0.0/24"].as_path == (65006, 65007, 65000)
    opposite = world.routes("r4")["10.10.0.0/24"]  # four hops either way round
    assert len(opposite.as_path) == 4 and {h.device for h in opposite.next_hops} == {"r3", "r5"}
