"""A strict lab: a corpus of wrong commands the real CLIs refuse (at least 30 per switch platform) is refused by
the simulators, with the device's own kind of error; and every rendered golden configuration is accepted.

Each EOS / NX-OS case is (context lines entered first, the wrong line); each NVUE case edits a rendered tree; each
host case is one shell command. The positive corpus is configuration written as the vendors' guides write it
(docs/reference/roce-lossless.md), which every simulator must accept.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabconf.compile.pipeline import Compiled
from fabconf.compile.render import render
from fabconf_lab.eos.sim import EosSim
from fabconf_lab.host.sim import GpuHostSim
from fabconf_lab.nvue.schema import Validator
from fabconf_lab.nvue.setcmd import set_patch
from fabconf_lab.nvue.tree import merge
from fabconf_lab.nxos.config import ConfigSession, NxosCliError, load
from fabconf_lab.nxos.render import default_startup_config as nxos_startup
from fabconf_lab.world import World

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
PORTS = [f"Ethernet{i}/1" for i in range(1, 9)]
STRATA, SAND = "DCS-7060X5-64PE", "DCS-7280CR3-32P4"
PROFILE = ["qos profile P"]
QUEUE = [*PROFILE, "uc-tx-queue 3"]
BGP = ["router bgp 65001"]
ETH = ["interface Ethernet1/1"]

EOS_CORPUS: list[tuple[str, list[str], str]] = [
    # (model, context, wrong line)
    (STRATA, [], "priority-flow-control foo bar baz"),
    (STRATA, [], "priority-flow-control pause watchdog default timeout 0.005"),
    (STRATA, [], "priority-flow-control pause watchdog default polling-interval abc"),
    (STRATA, [], "priority-flow-control pause watchdog action explode"),
    # issue 38: errdisable and notify-only are the per-port action's words; no-drop is the global action's
    (STRATA, [], "priority-flow-control pause watchdog action errdisable"),
    (STRATA, [], "priority-flow-control pause watchdog action notify-only"),
    (STRATA, PROFILE, "priority-flow-control pause watchdog port action no-drop"),
    (STRATA, PROFILE, "priority-flow-control pause watchdog port action errdisable"),
    (STRATA, ETH, "priority-flow-control pause watchdog port action no-drop"),
    (
        STRATA,
        PROFILE,
        "priority-flow-control pause watchdog port timer timeout 0.005 polling-interval 0.1 recovery-time 1",
    ),
    (STRATA, [], "qos map dscp 64 to traffic-class 3"),
    (STRATA, [], "qos map dscp 26 to traffic-class 8"),
    (STRATA, [], "qos map dscp 26 to tc 3"),
    (STRATA, [], "vlan 4095"),
    (STRATA, [], "router bgp 4294967296"),
    (STRATA, BGP, "bgp flibble"),
    (STRATA, BGP, "neighbor 10.0.0.1 remote-as abc"),
    (STRATA, BGP, "neighbor 10.0.0.1 remote-as 4294967296"),
    (STRATA, BGP, "neighbor 10.0.0.256 remote-as 65000"),
    (STRATA, BGP, "neighbor 10.0.0.1 flibble"),
    (STRATA, BGP, "maximum-paths 0"),
    (STRATA, BGP, "maximum-paths 64 ecmp 32"),
    (STRATA, BGP, "router-id 10.0.0"),
    (STRATA, BGP, "network 10.0.0.0"),
    (STRATA, BGP, "network 10.0.0.0/33"),
    (STRATA, ETH, "ip address 10.0.0.1"),
    (STRATA, ETH, "ip address 10.0.0.300/24"),
    (STRATA, ETH, "mtu 9300"),
    (STRATA, ETH, "mtu 67"),
    (STRATA, ETH, "priority-flow-control priority 8 no-drop"),
    (STRATA, ETH, "priority-flow-control priority 3 maybe"),
    (STRATA, ETH, "switchport access vlan 5000"),
    (STRATA, PROFILE, "qos trust ip"),
    (STRATA, PROFILE, "tx-queue 3"),  # Sand's command on a Strata switch
    (SAND, PROFILE, "uc-tx-queue 3"),  # Strata's command on a Sand switch
    (STRATA, PROFILE, "uc-tx-queue 8"),
    (STRATA, QUEUE, "bandwidth percent 101"),
    (STRATA, [*QUEUE, "bandwidth percent 50", *PROFILE, "uc-tx-queue 1"], "bandwidth percent 60"),
    (
        STRATA,
        QUEUE,
        "random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 101",
    ),
    (STRATA, QUEUE, "random-detect ecn minimum-threshold 150 furlongs maximum-threshold 1500 kbytes"),
    (STRATA, QUEUE, "random-detect ecn minimum-threshold 1500 kbytes maximum-threshold 150 kbytes"),
    (STRATA, QUEUE, "priority strict now"),
    # issue 29: trailing and missing tokens, values out of range, addresses that are no host address, a second
    # BGP instance, a port the switch lacks, a peer group that does not exist
    (STRATA, QUEUE, "bandwidth percent 50 extra"),
    (STRATA, QUEUE, "bandwidth percent"),
    (STRATA, ETH, "mtu 9214 extra"),
    (STRATA, [], "hostname"),
    (STRATA, [], "qos map traffic-class 3 to dscp 64"),
    (STRATA, [], "qos map traffic-class 3 to cos 8"),
    (STRATA, [], "qos map cos 8 to traffic-class 3"),
    (STRATA, ETH, "qos cos 8"),
    (STRATA, ETH, "qos dscp 64"),
    (STRATA, ETH, "switchport trunk allowed vlan 5000"),
    (STRATA, ETH, "speed flibble"),
    (STRATA, ETH, "ip address 224.0.0.1/24"),
    (STRATA, ETH, "ip address 10.0.0.1/33"),
    (STRATA, ETH, "ip address 300.1.1.1/24"),
    (STRATA, ETH, "ip address 0.0.0.0/0"),
    (STRATA, ETH, "ip address 127.0.0.1/8"),
    (STRATA, BGP, "router-id 224.0.0.1"),
    (STRATA, BGP, "neighbor 224.0.0.5 remote-as 65000"),
    (STRATA, BGP, "network 224.0.0.0/4"),
    (STRATA, BGP, "router bgp 65002"),
    (STRATA, BGP, "neighbor 10.0.0.1 peer group NOPE"),
    (STRATA, [], "interface Ethernet99/1"),
]

QOS = ["class-map type qos match-any C", "  match dscp 26", "policy-map type qos Q", "  class C"]
QUEUING = ["policy-map type queuing QU", "  class type queuing c-out-8q-q3"]
NQ = ["policy-map type network-qos NQ", "  class type network-qos c-8q-nq3"]
NX_BGP = ["feature bgp", "router bgp 65001"]
NX_ETH = ["interface Ethernet1/1"]
NX_L3 = [*NX_ETH, "no switchport"]

NXOS_CORPUS: list[tuple[list[str], str]] = [
    ([], "feature flibble"),
    ([], "system jumbomtu 9300"),
    ([], "priority-flow-control watch-dog interval 50"),
    ([], "priority-flow-control watch-dog shutdown-multiplier 11"),
    ([], "priority-flow-control watch-dog-interval maybe"),
    ([], "priority-flow-control flibble"),
    ([], "vlan 4095"),
    ([], "router bgp 65001"),  # without feature bgp
    (["class-map type qos match-any C"], "match dscp 64"),
    (["class-map type qos match-any C"], "match dscp foo"),
    (QUEUING, "pause pfc-cos 3"),
    (QUEUING, "mtu 9216"),
    (QUEUING, "set qos-group 3"),
    (QUEUING, "bandwidth remaining percent 101"),
    (
        [*QUEUING, "    bandwidth remaining percent 60", "  class type queuing c-out-8q-q-default"],
        "bandwidth remaining percent 50",
    ),
    (QUEUING, "priority level 9"),
    (
        QUEUING,
        "random-detect minimum-threshold 150 kbytes maximum-threshold 1500 kbytes drop-probability 101 weight 0 ecn",
    ),
    (
        QUEUING,
        "random-detect minimum-threshold 150 furlongs maximum-threshold 1500 kbytes drop-probability 7 weight 0 ecn",
    ),
    (
        QUEUING,
        "random-detect minimum-threshold 1500 kbytes maximum-threshold 150 kbytes drop-probability 7 weight 0 ecn",
    ),
    (QUEUING, "random-detect minimum-threshold 150 kbytes"),
    (["policy-map type queuing QU"], "class type queuing c-out-8q-q9"),
    (NQ, "bandwidth remaining percent 50"),
    (NQ, "random-detect minimum-threshold 150 kbytes maximum-threshold 1500 kbytes drop-probability 7 weight 0 ecn"),
    (NQ, "set qos-group 3"),
    (NQ, "pause pfc-cos 8"),
    (QOS, "pause pfc-cos 3"),
    (QOS, "priority level 1"),
    (QOS, "set qos-group 8"),
    (NX_ETH, "ip address 10.0.0.1"),
    (NX_ETH, "mtu 9300"),
    (NX_ETH, "priority-flow-control mode maybe"),
    (NX_ETH, "switchport access vlan 5000"),
    (NX_BGP, "router-id 10.0.0"),
    ([*NX_BGP, "  address-family ipv4 unicast"], "maximum-paths 65"),
    ([*NX_BGP, "  address-family ipv4 unicast"], "network 10.0.0.0/33"),
    ([*NX_BGP, "  neighbor 10.0.0.1"], "remote-as abc"),
    # issue 29
    ([], "system jumbomtu 9216 extra"),
    ([], "system jumbomtu"),
    ([], "vlan 3968"),  # Cisco's reserved block, as fabconf.platforms cites it
    ([], "vlan 4000"),
    (NX_ETH, "switchport access vlan 3968"),
    (QUEUING, "bandwidth remaining percent"),
    (QUEUING, "bandwidth remaining percent 50 extra"),
    (QOS, "set dscp 64"),
    (QOS, "set cos 8"),
    (["class-map type qos match-any C"], "match dscp"),
    (NX_L3, "ip address 224.0.0.1/24"),
    (NX_L3, "ip address 10.0.0.1/33"),
    (NX_L3, "ip address 300.1.1.1/24"),
    (NX_ETH, "mtu"),
    (NX_ETH, "speed flibble"),
    (NX_BGP, "router bgp 65002"),
    (NX_BGP, "router-id 224.0.0.1"),
    (NX_BGP, "neighbor 300.0.0.1"),
    ([*NX_BGP, "  address-family ipv4 unicast"], "network 224.0.0.0/4"),
    ([], "interface Ethernet1/99"),
    (NX_ETH, "service-policy type qos input NOPE"),
    (["system qos"], "service-policy type network-qos NOPE"),
    (["policy-map type qos Q"], "class NOPE"),
]


def _tree(compiled: Compiled, name: str) -> tuple[dict[str, Any], str, list[str]]:
    data = compiled.data[name]
    release = ".".join(data["os_version"].split(".")[:2])
    return yaml.safe_load(render(data))[0]["set"], release, sorted(compiled.model.devices[name].ports or [])


def _scheduler(tree: dict[str, Any]) -> dict[str, Any]:
    return tree["qos"]["egress-scheduler"]["default-global"]["traffic-class"]


NvueEdit = Callable[[dict[str, Any]], None]
NVUE_CORPUS: list[tuple[str, NvueEdit]] = [
    ("scheduler shares past 100 %", lambda t: _scheduler(t)["0"].update({"bw-percent": 60})),
    (
        "a DWRR class at 0 % (strict priority in qos_features.conf)",
        lambda t: _scheduler(t)["0"].update({"bw-percent": 0}),
    ),
    ("a DWRR class without a share", lambda t: _scheduler(t).update({"4": {"mode": "dwrr"}})),
    ("scheduler mode fastest", lambda t: _scheduler(t)["0"].update({"mode": "fastest"})),
    ("bw-percent 101", lambda t: _scheduler(t)["0"].update({"bw-percent": 101})),
    ("traffic class 8", lambda t: _scheduler(t).update({"8": {"mode": "dwrr", "bw-percent": 0}})),
    ("PFC on switch priority 8", lambda t: t["qos"]["pfc"]["default-global"]["switch-priority"].update({"8": {}})),
    ("PFC rx maybe", lambda t: t["qos"]["pfc"]["default-global"].update({"rx": "maybe"})),
    ("watchdog polling 50 ms", lambda t: t["qos"]["pfc-watchdog"].update({"polling-interval": 50})),
    ("watchdog robustness 0", lambda t: t["qos"]["pfc-watchdog"].update({"robustness": 0})),
    ("watchdog on the loopback", lambda t: t["interface"]["lo"].update({"qos": {"pfc-watchdog": {"state": "enable"}}})),
    ("unknown key under qos", lambda t: t["qos"].update({"flibble": {}})),
    ("unknown traffic pool", lambda t: t["qos"]["traffic-pool"].update({"weird": {"memory-percent": 1}})),
    ("pools past 100 %", lambda t: t["qos"]["traffic-pool"]["default-lossy"].update({"memory-percent": 60})),
    (
        "a switch priority in both pools",
        lambda t: t["qos"]["traffic-pool"]["default-lossy"]["switch-priority"].update({"3": {}}),
    ),
    (
        "ECN min above max",
        lambda t: t["qos"]["congestion-control"]["default-global"]["traffic-class"]["3"].update(
            {"min-threshold": 2000000}
        ),
    ),
    (
        "ECN probability 101",
        lambda t: t["qos"]["congestion-control"]["default-global"]["traffic-class"]["3"].update({"probability": 101}),
    ),
    (
        "ECN maybe",
        lambda t: t["qos"]["congestion-control"]["default-global"]["traffic-class"]["3"].update({"ecn": "maybe"}),
    ),
    ("DSCP 64 mapping", lambda t: t["qos"]["mapping"]["default-global"]["dscp"].update({"64": {"switch-priority": 3}})),
    (
        "switch priority 8 mapping",
        lambda t: t["qos"]["mapping"]["default-global"]["dscp"]["26"].update({"switch-priority": 8}),
    ),
    ("trust maybe", lambda t: t["qos"]["mapping"]["default-global"].update({"trust": "maybe"})),
    (
        "egress queue mapping to traffic class 8",
        lambda t: t["qos"]["egress-queue-mapping"]["default-global"]["switch-priority"]["0"].update(
            {"traffic-class": 8}
        ),
    ),
    ("MTU 9300", lambda t: t["interface"]["swp1"]["link"].update({"mtu": 9300})),
    ("MTU 500", lambda t: t["interface"]["swp1"]["link"].update({"mtu": 500})),
    ("a port the switch does not have", lambda t: t["interface"].update({"swp99": {"type": "swp"}})),
    ("access VLAN 4095", lambda t: t["interface"]["swp1"]["bridge"]["domain"]["br_default"].update({"access": 4095})),
    ("reserved VLAN 3800", lambda t: t["bridge"]["domain"]["br_default"]["vlan"].update({"3800": {}})),
    ("ASN 0", lambda t: t["router"]["bgp"].update({"autonomous-system": 0})),
    (
        "remote-as maybe",
        lambda t: next(iter(t["vrf"]["default"]["router"]["bgp"]["neighbor"].values())).update({"remote-as": "maybe"}),
    ),
    (
        "neighbor without remote-as",
        lambda t: next(iter(t["vrf"]["default"]["router"]["bgp"]["neighbor"].values())).pop("remote-as"),
    ),
    (
        "multipaths 257 (5.12 allows 1-128, 5.15 1-256)",
        lambda t: t["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]["multipaths"].update(
            {"ebgp": 257}
        ),
    ),
    (
        "neighbor type maybe",
        lambda t: next(iter(t["vrf"]["default"]["router"]["bgp"]["neighbor"].values())).update({"type": "maybe"}),
    ),
]


def _neighbor(t: dict[str, Any]) -> dict[str, Any]:
    return dict(t["vrf"]["default"]["router"]["bgp"]["neighbor"])


def _rekey_neighbor(t: dict[str, Any], key: str) -> None:
    neighbors = t["vrf"]["default"]["router"]["bgp"]["neighbor"]
    first = next(iter(neighbors))
    neighbors[key] = neighbors.pop(first)


def _ip(t: dict[str, Any], port: str) -> dict[str, Any]:
    iface = t["interface"][port]
    return dict(iface.get("ip") or iface.get("ipv4"))["address"]  # 5.15 renamed ip to ipv4


def _set_ip(t: dict[str, Any], port: str, address: str) -> None:
    key = "ipv4" if "ipv4" in t["interface"]["swp63"] else "ip"
    t["interface"][port][key] = {"address": {address: {}}}


def _two_lossless_pools(t: dict[str, Any]) -> None:
    t["qos"]["traffic-pool"]["default-lossy"]["memory-percent"] = 40
    t["qos"]["traffic-pool"]["roce-lossless"] = {"memory-percent": 10}


# issue 29: cross-object rules, addresses, neighbour keys, link-pause with PFC, one lossless pool
NVUE_CORPUS += [
    ("two lossless pools", _two_lossless_pools),
    (
        "access VLAN not in the bridge",
        lambda t: t["interface"]["swp1"]["bridge"]["domain"]["br_default"].update({"access": 999}),
    ),
    (
        "a bridge domain that does not exist",
        lambda t: t["interface"]["swp1"]["bridge"].update({"domain": {"br_other": {"access": 101}}}),
    ),
    ("an SVI for a VLAN not in the bridge", lambda t: t["interface"].update({"vlan999": {"type": "svi", "vlan": 999}})),
    ("an address on a bridge member", lambda t: _set_ip(t, "swp1", "10.9.9.1/31")),
    ("the same address on two ports", lambda t: _set_ip(t, "swp64", next(iter(_ip(t, "swp63"))))),
    ("a multicast address", lambda t: _set_ip(t, "swp63", "224.0.0.1/31")),
    ("a class E address", lambda t: _set_ip(t, "swp63", "240.0.0.1/31")),
    ("an address /33", lambda t: _set_ip(t, "swp63", "10.254.0.1/33")),
    ("address 300.1.1.1", lambda t: _set_ip(t, "swp63", "300.1.1.1/24")),
    ("an address without a prefix length", lambda t: _set_ip(t, "swp63", "10.254.0.1")),
    (
        "link-pause with PFC (default-global)",
        lambda t: t["qos"].update({"link-pause": {"default-global": {"tx": "enable"}}}),
    ),
    (
        "link-pause with PFC on a port",
        lambda t: t["interface"]["swp1"]["qos"].update({"link-pause": {"profile": "default-global"}}),
    ),
    ("neighbour key 10.254.0.300", lambda t: _rekey_neighbor(t, "10.254.0.300")),
    ("neighbour key with a prefix length", lambda t: _rekey_neighbor(t, "10.254.0.0/31")),
    ("neighbour key that is a name", lambda t: _rekey_neighbor(t, "spine1")),
]

# issue 33: adaptive routing / dynamic load balancing and the gNMI server
GNMI = ["management api gnmi", "   transport grpc G"]
EOS_CORPUS += [
    (STRATA, ["management api gnmi"], "grpc port 9339"),  # NX-OS's form on EOS
    (STRATA, GNMI, "port 70000"),
    (STRATA, GNMI, "port 0"),
    (STRATA, GNMI, "ssl profile"),
    (STRATA, GNMI, "notification timestamp never"),
    (STRATA, GNMI, "dynamic-load-balancing"),
    (STRATA, [], "load-balance policies"),  # no EOS DLB form is modelled (fabconf renders none)
]
NXOS_CORPUS += [
    ([], "hardware profile dlb"),  # 10.3(4a): before DLB (10.5(1)F)
    ([], "grpc port 9339"),  # before `feature grpc`
    (["feature grpc"], "grpc port 80"),
    (["feature grpc"], "grpc port 70000"),
    (["feature grpc"], "grpc port abc"),
    (["feature grpc"], "grpc certificate"),
    (["feature grpc"], "grpc flibble"),
    ([], "feature gnmi"),
]
NX_DLB_CORPUS: list[str] = [
    "dlb-interface Ethernet1/99",  # a port the switch does not have
    "dlb-interface",
    "mode turbo",
    "flowlet-aging abc",
    "dlb-mode per-packet",
    "sampling-interval 5",
]


def _ar_on(t: dict[str, Any]) -> dict[str, Any]:
    """Adaptive routing on, as the tree's release spells it (5.15: state enabled; before: enable on)."""
    return {"state": "enabled"} if "ipv4" in t["interface"]["swp63"] else {"enable": "on"}


NVUE_CORPUS += [
    (
        "adaptive routing on the loopback",
        lambda t: t["interface"]["lo"].update({"router": {"adaptive-routing": _ar_on(t)}}),
    ),
    (
        "adaptive routing on an SVI",
        lambda t: t["interface"][next(k for k in t["interface"] if k.startswith("vlan"))].update(
            {"router": {"adaptive-routing": _ar_on(t)}}
        ),
    ),
    (
        "adaptive routing link-utilization-threshold 101",
        lambda t: t["interface"]["swp63"].update(
            {"router": {"adaptive-routing": {**_ar_on(t), "link-utilization-threshold": 101}}}
        ),
    ),
    ("adaptive routing maybe", lambda t: t.setdefault("router", {}).update({"adaptive-routing": {"enable": "maybe"}})),
    ("adaptive routing profile flibble", lambda t: t["router"].update({"adaptive-routing": {"profile": "flibble"}})),
    # issue #39: what a real switch refuses at `nv config apply` and the simulator applied over REST
    (
        "a port naming an undefined PFC profile",
        lambda t: t["interface"]["swp1"].setdefault("qos", {}).update({"pfc": {"profile": "NO_SUCH_PROFILE"}}),
    ),
    (
        "bridge VLAN 5000",
        lambda t: (
            t.setdefault("bridge", {})
            .setdefault("domain", {})
            .setdefault("br_default", {})
            .setdefault("vlan", {})
            .update({"5000": {}})
        ),
    ),
    # 5.12 has no NVUE gNMI server at all; 5.15 takes ports 1024-65535 (nvueschema)
    ("gNMI server port 80", lambda t: t["system"].update({"gnmi-server": {"port": 80, "state": "enabled"}})),
    ("gNMI server state on", lambda t: t["system"].update({"gnmi-server": {"state": "on"}})),
    # dial-in needs a listening address [V: Cumulus Linux 5.13-5.19 "gNMI Streaming"] (issue 38)
    (
        "gNMI server without a listening address",
        lambda t: t["system"].update({"gnmi-server": {"port": 9339, "state": "enabled"}}),
    ),
]


def _eos(model: str) -> EosSim:
    return EosSim("s1", "127.0.0.1", ports=PORTS, username="u", password="p", ca=None, model=model)


@pytest.mark.parametrize(("model", "context", "line"), EOS_CORPUS, ids=[c[2] for c in EOS_CORPUS])
def test_eos_refuses(model: str, context: list[str], line: str) -> None:
    sim = _eos(model)
    good = sim.run_cmds(["configure", *context], "json")
    assert "error" not in good, good
    bad = sim.run_cmds(["configure", *context, line], "json")
    assert "error" in bad, f"accepted: {line}"
    assert any(m.startswith(("Invalid input", "Incomplete command", "%")) for m in bad["error"]["data"][-1]["errors"])


def _nxos_session() -> ConfigSession:
    names = [f"Ethernet1/{i}" for i in range(1, 9)]
    return ConfigSession(load(nxos_startup("n1", names), names), names)


@pytest.mark.parametrize(("context", "line"), NXOS_CORPUS, ids=[c[1] for c in NXOS_CORPUS])
def test_nxos_refuses(context: list[str], line: str) -> None:
    session = _nxos_session()
    for ok in context:
        session.apply(ok)
    with pytest.raises(NxosCliError) as err:
        session.apply(line)
    assert err.value.message.startswith(("%", "ERROR")), err.value.message


@pytest.mark.parametrize(("label", "edit"), NVUE_CORPUS, ids=[c[0] for c in NVUE_CORPUS])
@pytest.mark.parametrize("device", ["leaf1", "leaf2"])  # Cumulus 5.12 and 5.15
def test_nvue_refuses(example: Compiled, device: str, label: str, edit: NvueEdit) -> None:
    tree, release, ports = _tree(example, device)
    validator = Validator(release)
    assert validator.apply_errors(tree, ports) == []
    broken = copy.deepcopy(tree)
    edit(broken)
    assert validator.apply_errors(broken, ports), f"{release} accepted: {label}"


def _nxos_dlb_session() -> ConfigSession:
    names = [f"Ethernet1/{i}" for i in range(1, 9)]
    session = ConfigSession(load(nxos_startup("n1", names), names, "10.5(1)F"), names, version="10.5(1)F")
    session.apply("hardware profile dlb")
    return session


@pytest.mark.parametrize("line", NX_DLB_CORPUS)
def test_nxos_refuses_in_the_dlb_profile(line: str) -> None:
    session = _nxos_dlb_session()
    with pytest.raises(NxosCliError) as err:
        session.apply(line)
    assert err.value.message.startswith(("%", "ERROR")), err.value.message


def test_the_corpus_is_large_enough() -> None:
    assert len(EOS_CORPUS) >= 30 and len(NXOS_CORPUS) >= 30 and len(NVUE_CORPUS) >= 30


def _cli_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("!") and ln.strip() != "end"]


@pytest.mark.parametrize(
    "path", sorted(GOLDEN.rglob("devices/*.cfg")), ids=lambda p: f"{p.parent.parent.name}/{p.stem}"
)
def test_every_rendered_cli_golden_is_accepted(path: Path, example: Compiled, two_pods: Compiled) -> None:
    text = path.read_text()
    ports = sorted(set(re.findall(r"^interface ((?:Ethernet)\S+)", text, re.M)))
    if text.startswith("!Command:"):  # NX-OS, on the release the example names (DLB needs 10.5(1)F)
        compiled = two_pods if path.parent.parent.name == "two-pods" else example
        version = compiled.data[path.stem]["os_version"]
        session = ConfigSession(load(nxos_startup(path.stem, ports), ports, version), ports, version=version)
        for line in _cli_lines(text):
            session.apply(line)
        return
    model = re.match(r"! fabconf \S+ \((\S+)\)", text).group(1)  # type: ignore[union-attr]
    sim = EosSim(path.stem, "127.0.0.1", ports=ports, username="u", password="p", ca=None, model=model)
    reply = sim.run_cmds(["configure", *_cli_lines(text)], "json")
    assert "error" not in reply, reply.get("error")


# ---------------------------------------------------------------------------------------------------------------
# GPU host: the Linux and NVIDIA tools refuse (non-zero status, a message on stderr) what the real ones refuse.
IF0, IF1 = "ens1f0np0", "ens2f0np0"
PCI0 = "0000:17:00.0"  # the first NIC of a lab host with two single-port cards
HOST_CORPUS: list[str] = [
    f"mlnx_qos -i {IF0} --trust foo",
    f"mlnx_qos -i {IF0} --pfc 0,0,0,1,0,0,0",
    f"mlnx_qos -i {IF0} --pfc 0,0,0,2,0,0,0,0",
    f"mlnx_qos -i {IF0} --dscp2prio set,64,3",
    f"mlnx_qos -i {IF0} --dscp2prio set,26,8",
    f"mlnx_qos -i {IF0} --dscp2prio set,26",
    f"mlnx_qos -i {IF0} --trust dscp extra",
    "mlnx_qos -i nosuch0 --trust dscp",
    f"mlxconfig -y -d {PCI0} set CNP_802P_PRIO_P1=8",
    f"mlxconfig -y -d {PCI0} set CNP_DSCP_P1=64",
    f"mlxconfig -y -d {PCI0} set ROCE_CC_PRIO_MASK_P1=256",
    f"mlxconfig -y -d {PCI0} set NO_SUCH_KEY=1",
    f"mlxconfig -y -d {PCI0} set CNP_802P_PRIO_P1",
    f"mlxconfig -y -d {PCI0} set CNP_802P_PRIO_P2=3",  # a single-port card has no second port
    # -d takes a PCI address or an mst device (MFT "Examples of mlxconfig Usage"), not an RDMA device or a netdev
    "mlxconfig -d mlx5_0 q",
    f"mlxconfig -d {IF0} q",
    "mlxconfig -y -d mlx5_0 set CNP_DSCP_P1=48",
    "mlxfwreset -d mlx5_0 -y reset",
    "mlxconfig -d 0000:17:00 q",
    "ethtool -i",
    "ethtool -i nosuch0",
    f"ip link set dev {IF0} mtu 100000",
    f"ip link set dev {IF0} mtu 9000 extra",
    "ip link set dev nosuch0 up",
    f"ip addr add 300.1.1.1/24 dev {IF0}",
    f"ip addr add 10.0.0.1/33 dev {IF0}",
    "ip route add 10.9.0.0/24 via 300.0.0.1",
    "sysctl -w net.ipv4.no_such_key=1",
    f"echo 2 > /sys/class/net/{IF0}/ecn/roce_np/enable/3",
    "echo 300 > /sys/class/infiniband/mlx5_0/tc/1/traffic_class",
    "cma_roce_tos -d mlx5_0 -t 300",
    "ib_send_bw -d mlx5_9",
    "ib_send_bw -d mlx5_0 -x",
    "lspci -z",
    "lldpctl -f xml",
    "ip -o link show nosuch0",
    "systemctl start nosuch.service",
]


def _host() -> GpuHostSim:
    return GpuHostSim("gpu3", "127.12.2.3", ports=[IF0, IF1], username="u", password="p", port=0)


@pytest.mark.parametrize("command", HOST_CORPUS)
def test_host_refuses(command: str) -> None:
    result = _host().run(command)
    assert result.status != 0, f"accepted: {command}"
    assert result.stderr.strip(), result


def test_the_corpus_grew_by_issue_29() -> None:
    assert len(EOS_CORPUS) >= 36 + 15 and len(NXOS_CORPUS) >= 35 + 15 and len(NVUE_CORPUS) >= 31 + 15
    assert len(HOST_CORPUS) >= 15


# ---------------------------------------------------------------------------------------------------------------
# Positive corpus: configuration written the way each vendor's guide writes it is accepted.

# Arista: the EOS RoCE skeleton of docs/reference/roce-lossless.md 2.1 (AVD templates [V], the AMD/Arista DCQCN
# example [3P]), plus the speed and peer-group forms of the EOS manual [3P].
EOS_POSITIVE = [
    "qos map dscp 26 to traffic-class 3",
    "qos map dscp 48 to traffic-class 6",
    "qos map traffic-class 3 to dscp 26",
    "qos profile ROCE",
    "   qos trust dscp",
    "   priority-flow-control on",
    "   priority-flow-control priority 3 no-drop",
    "   priority-flow-control pause watchdog",
    "   uc-tx-queue 3",
    "      bandwidth percent 50",
    "      random-detect ecn minimum-threshold 2000 segments maximum-threshold 10000 segments"
    " max-mark-probability 20 weight 0",
    "      random-detect ecn count",
    "   uc-tx-queue 6",
    "      priority strict",
    "interface Ethernet1/1",
    "   mtu 9214",
    "   no switchport",
    "   ip address 10.254.0.1/31",
    "   speed forced 100gfull",
    "   service-profile ROCE",
    "interface Ethernet2/1",
    "   speed 400g-8",
    "   switchport access vlan 101",
    "interface Ethernet3/1",
    "   speed auto",
    "   switchport trunk allowed vlan 101",
    "priority-flow-control pause watchdog default timeout 0.05",
    "priority-flow-control pause watchdog action drop",
    "priority-flow-control pause watchdog action no-drop",  # [V: AVD schema] the global action's other word
    "qos profile ROCE",
    "   priority-flow-control pause watchdog port action notify-only",
    "   priority-flow-control pause watchdog port timer timeout 0.2 polling-interval auto recovery-time 0.4 forced",
    "router bgp 65001",
    "   router-id 10.255.0.1",
    "   maximum-paths 64 ecmp 64",
    "   neighbor FABRIC peer group",
    "   neighbor 10.254.0.0 peer group FABRIC",
    "   neighbor FABRIC remote-as 65100",
    "   neighbor interface Ethernet4/1 peer-group FABRIC remote-as 4200200000",
    "   network 10.255.0.1/32",
    "router bgp 65001",  # re-entering the running instance is fine
]

# Cisco: the Nexus 9000 RoCE policy of docs/reference/roce-lossless.md 3 (Microsoft's Azure Local TOR reference
# [V] and the DSCP variant [3P]), with Azure's equal ECN thresholds.
NXOS_POSITIVE = [
    "system jumbomtu 9216",
    "priority-flow-control watch-dog-interval on",
    "class-map type qos match-any ROCEv2",
    "  match dscp 24-26",
    "class-map type qos match-any CNP",
    "  match dscp 48",
    "policy-map type qos QOS_CLASSIFICATION",
    "  class ROCEv2",
    "    set qos-group 3",
    "  class CNP",
    "    set qos-group 7",
    "  class class-default",
    "    set qos-group 0",
    "policy-map type network-qos qos_network",
    "  class type network-qos c-8q-nq3",
    "    mtu 9216",
    "    pause pfc-cos 3",
    "  class type network-qos c-8q-nq-default",
    "    mtu 9216",
    "policy-map type queuing QOS_EGRESS_PORT",
    "  class type queuing c-out-8q-q3",
    "    bandwidth remaining percent 50",
    "    random-detect minimum-threshold 300 kbytes maximum-threshold 300 kbytes drop-probability 100 weight 0 ecn",
    "  class type queuing c-out-8q-q7",
    "    priority level 1",
    "  class type queuing c-out-8q-q-default",
    "    bandwidth remaining percent 50",
    "system qos",
    "  service-policy type network-qos qos_network",
    "  service-policy type queuing output QOS_EGRESS_PORT",
    "vlan 101",
    "vlan 3967",
    "interface Ethernet1/1",
    "  mtu 9216",
    "  speed 100000",
    "  priority-flow-control mode on",
    "  priority-flow-control watch-dog-interval on",
    "  service-policy type qos input QOS_CLASSIFICATION",
    "  switchport access vlan 101",
    "interface Ethernet1/2",
    "  no switchport",
    "  ip address 10.254.0.1/31",
    "feature bgp",
    "router bgp 65001",
    "  router-id 10.255.0.1",
    "  bestpath as-path multipath-relax",
    "  address-family ipv4 unicast",
    "    maximum-paths 64",
    "    network 10.255.0.1/32",
    "  neighbor 10.254.0.0",
    "    remote-as 65100",
]

# NVIDIA: `nv set` lines of the Cumulus Linux QoS and RoCE pages (docs/reference/roce-lossless.md 1.2 and 1.3 [V]);
# IP stands for `ip` (5.12) or `ipv4` (5.15, [V: nvueschema]).
NVUE_POSITIVE = [
    "qos roce mode lossless",
    "qos traffic-pool roce-lossless memory-percent 60",
    "qos traffic-pool default-lossy memory-percent 40",
    "qos mapping default-global trust l3",
    "qos mapping default-global dscp 26 switch-priority 3",
    "qos egress-queue-mapping default-global switch-priority 3 traffic-class 3",
    "qos pfc default-global switch-priority 3",
    "qos pfc default-global tx enable",
    "qos pfc default-global rx enable",
    "qos pfc default-global cable-length 50",
    "qos congestion-control default-global traffic-class 3 min-threshold 150000",
    "qos congestion-control default-global traffic-class 3 max-threshold 1500000",
    "qos congestion-control default-global traffic-class 3 probability 100",
    "qos congestion-control default-global traffic-class 3 ecn enable",
    "interface swp1 qos pfc-watchdog",
    "qos pfc-watchdog polling-interval 200",
    "qos pfc-watchdog robustness 5",
    "interface swp1 link mtu 9216",
    "interface swp1-2 bridge domain br_default",
    "bridge domain br_default vlan 10,20",
    "bridge domain br_default untagged 1",
    "interface swp1 bridge domain br_default access 10",
    "interface vlan10 IP address 10.1.10.2/24",
    "interface swp51 IP address 10.0.0.1/31",
    "interface lo IP address 10.10.10.1/32",
    "router bgp autonomous-system 65101",
    "router bgp router-id 10.10.10.1",
    "vrf default router bgp neighbor swp52 remote-as external",
    "vrf default router bgp neighbor 10.0.0.0 remote-as external",
    "vrf default router bgp address-family ipv4-unicast network 10.10.10.1/32",
    # a PFC profile of its own on a port (Cumulus Linux QoS page, "Priority Flow Control" [V]); the top VLAN ID
    "qos pfc my_pfc_ports switch-priority 3",
    "qos pfc my_pfc_ports tx enable",
    "qos pfc my_pfc_ports rx enable",
    "interface swp2 qos pfc profile my_pfc_ports",
    "bridge domain br_default vlan 4094",
]
# Adaptive routing: the NVUE reference's `nv set` examples [V], as each release spells them; the gNMI server: the
# Cumulus Linux 5.13+ gNMI page's dial-in example [V] (with port 9339: the page's port 443 is below the 1024-65535
# nvueschema 5.13 and later take)
NVUE_AR = {
    "5.12": [
        "router adaptive-routing enable on",
        "interface swp51 router adaptive-routing enable on",
        "interface swp51 router adaptive-routing link-utilization-threshold 70",
    ],
    "5.15": [
        "router adaptive-routing state enabled",
        "interface swp51 router adaptive-routing state enabled",
        "interface swp51 router adaptive-routing link-utilization-threshold 70",
        "system gnmi-server listening-address 10.10.10.1",
        "system gnmi-server port 9339",
        "system gnmi-server state enabled",
    ],
}
# EOS: the AVD gNMI example [V]; NX-OS: the gRPC agent commands of the programmability guide [V] and the DLB
# profile [3P] on 10.5(1)F
EOS_GNMI_POSITIVE = [
    "management api gnmi",
    "   transport grpc MGMT",
    "      vrf MGMT",
    "      ip access-group ACL-GNMI",
    "   transport grpc MONITORING",
    "      port 6031",
    "      vrf MONITORING",
    "      ssl profile TELEMETRY",
    "   provider eos-native",
]
NXOS_GRPC_POSITIVE = ["feature grpc", "grpc port 50051", "grpc certificate TRUSTPOINT", "grpc use-vrf default"]
NXOS_DLB_POSITIVE = [
    "hardware profile dlb",
    "  dlb-interface Ethernet1/1,Ethernet1/2",
    "  mac-address aa:bb:cc:dd:ee:ff",
    "  mode per-packet",
    "  flowlet-aging 256",
]
NVUE_PORTS = [f"swp{i}" for i in range(1, 65)]


def _nvue_tree(release: str, lines: list[str]) -> tuple[Validator, dict[str, Any]]:
    validator = Validator(release)
    tree: dict[str, Any] = {}
    for line in lines:
        words = line.replace("IP", "ipv4" if release == "5.15" else "ip").split()
        tree = merge(tree, set_patch(validator, words))
    return validator, tree


def test_eos_accepts_the_vendor_examples() -> None:
    reply = _eos(STRATA).run_cmds(["configure", *[line.strip() for line in EOS_POSITIVE]], "json")
    assert "error" not in reply, reply.get("error")


def test_nxos_accepts_the_vendor_examples() -> None:
    session = _nxos_session()
    for line in NXOS_POSITIVE:
        session.apply(line)
    for line in NXOS_GRPC_POSITIVE:
        session.apply(line)


def test_nxos_accepts_the_dlb_profile_from_10_5() -> None:
    session = _nxos_dlb_session()
    for line in NXOS_DLB_POSITIVE[1:]:
        session.apply(line)


def test_eos_accepts_the_gnmi_example() -> None:
    reply = _eos(STRATA).run_cmds(["configure", *[line.strip() for line in EOS_GNMI_POSITIVE]], "json")
    assert "error" not in reply, reply.get("error")


@pytest.mark.parametrize("release", ["5.12", "5.15"])
def test_nvue_accepts_adaptive_routing_and_gnmi(release: str) -> None:
    validator, tree = _nvue_tree(release, NVUE_AR[release])
    assert validator.apply_errors(tree, NVUE_PORTS) == []


def test_nvue_5_12_has_no_gnmi_server() -> None:
    """The NVUE gNMI server arrived in 5.13 (nvueschema): a 5.12 switch refuses it, as validate does."""
    validator, tree = _nvue_tree("5.12", ["router adaptive-routing enable on"])
    tree["system"] = {"gnmi-server": {"state": "enabled"}}
    assert validator.apply_errors(tree, NVUE_PORTS)


@pytest.mark.parametrize("release", ["5.12", "5.15"])
def test_nvue_accepts_the_vendor_examples(release: str) -> None:
    validator, tree = _nvue_tree(release, NVUE_POSITIVE)
    assert validator.apply_errors(tree, NVUE_PORTS) == []


@pytest.mark.parametrize("release", ["5.12", "5.15"])
def test_nvue_accepts_the_qos_page_scheduler_example(release: str) -> None:
    lines = [
        "qos egress-scheduler default-global traffic-class 3 mode dwrr",
        "qos egress-scheduler default-global traffic-class 3 bw-percent 50",
        "qos egress-scheduler default-global traffic-class 6 mode strict",
    ]
    validator, tree = _nvue_tree(release, lines)
    assert validator.apply_errors(tree, NVUE_PORTS) == []


# Common invocations of the host tools, answered as the real tools answer them.
HOST_POSITIVE = [
    "ip -o link show",
    f"ip -o addr show dev {IF0}",
    "lspci",
    "lspci -D -d 15b3:",
    "lspci -vvv",
    "lldpctl",
    f"lldpctl -f keyvalue {IF0}",
    "lldpctl -f json",
    "ib_send_bw --help",
    "ib_send_bw -h",
    f"mlnx_qos -i {IF0} --trust dscp",
    f"mlnx_qos -i {IF0} --pfc 0,0,0,1,0,0,0,0",
    f"mlxconfig -d {PCI0} q",
    "mlxconfig -d 17:00.0 q",
    "mlxconfig -d /dev/mst/mt4129_pciconf0 q",
    f"ethtool -i {IF0}",
    f"mlxconfig -y -d {PCI0} set CNP_802P_PRIO_P1=6 CNP_DSCP_P1=48 ROCE_CC_PRIO_MASK_P1=255",
    "cma_roce_tos -d mlx5_0 -t 106",
    "echo 106 > /sys/class/infiniband/mlx5_0/tc/1/traffic_class",
    f"ethtool -S {IF0}",
    "ibdev2netdev",
    "rdma link show",
]


@pytest.mark.parametrize("command", HOST_POSITIVE)
def test_host_accepts_common_invocations(command: str) -> None:
    result = _host().run(command)
    assert result.status == 0, result


def test_host_one_line_forms() -> None:
    host = _host()
    links = host.run("ip -o link show").stdout.splitlines()
    assert [line.split(":")[1].strip() for line in links] == ["lo", "eno1", IF0, IF1]
    assert all("\\    link/" in line for line in links)
    addrs = host.run(f"ip -o addr show dev {IF0}").stdout.splitlines()
    assert len(addrs) == 1 and addrs[0].startswith(f"3: {IF0}    inet ") and "\\       valid_lft" in addrs[0]
    assert host.run("lspci").stdout.splitlines()[1] == (
        "17:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]"
    )
    assert host.run("lspci -D -d 15b3:").stdout.splitlines() == [
        "0000:17:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]",
        "0000:27:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]",
    ]
    assert host.run("ib_send_bw --help").stdout.startswith(" Usage:\n   ib_send_bw ")


def test_lldpctl_plain_lists_the_neighbours() -> None:
    world = World([("gpu3", IF0, "leaf1", "swp1")])
    host = GpuHostSim("gpu3", "127.12.2.3", ports=[IF0, IF1], username="u", password="p", world=world, port=0)
    out = host.run("lldpctl").stdout
    assert f"Interface:    {IF0}, via: LLDP" in out and "SysName:      leaf1" in out and "ifname swp1" in out
    assert host.run(f"lldpctl {IF1}").stdout.count("Interface:") == 0


def test_ib_send_bw_client_waits_for_a_starting_server() -> None:
    world = World([("gpu1", IF0, "gpu2", IF0)])
    server = GpuHostSim("gpu1", "127.12.2.1", ports=[IF0], username="u", password="p", world=world, port=0)
    client = GpuHostSim("gpu2", "127.12.2.2", ports=[IF0], username="u", password="p", world=world, port=0)
    assert server.run("ib_send_bw -d mlx5_0 -x 3 >/dev/null 2>&1 &").status == 0
    address = server.state.addresses[IF0][0].split("/")[0]
    result = client.run(f"ib_send_bw -d mlx5_0 -x 3 {address}")  # at once: the server is still starting
    assert "Couldn't connect" not in result.stderr, result.stderr
    alone = client.run("ib_send_bw -d mlx5_0 -x 3 10.9.9.9")  # no server at all: refused at once
    assert alone.status == 1 and "Couldn't connect to 10.9.9.9:18515" in alone.stderr
