"""The lab World: LLDP from cabling, BGP sessions from both ends' config, prefixes and ECMP."""

from __future__ import annotations

from dataclasses import dataclass

from fabconf.lab.world import DeviceView, NeighborView, PortView, World


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
