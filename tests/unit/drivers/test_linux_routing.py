"""Per-NIC policy routing in the linux driver, without a host: the document's forms, what the host's JSON says,
the plan between them (order, ownership) and the restore target."""

from __future__ import annotations

import json

import pytest

from fabconf.platform.linux import routing as r
from fabconf.platform.linux.plan import sh
from fabconf.platform.linux.state import DocumentError, target_from_document

DOC = """
hostname: gpu1
nics:
  - {netdev: ens1f0np0, rdma: mlx5_0, address: 10.101.0.2/24}
routing:
  rules: ["100: from 10.101.0.2 lookup 100"]
  routes:
    - 10.102.0.0/16 via 10.101.0.1 dev ens1f0np0 table 100
    - 10.101.0.0/24 dev ens1f0np0 scope link src 10.101.0.2 table 100
sysctl: {net.ipv4.conf.ens1f0np0.arp_ignore: 1}
"""


def test_document_forms_round_trip() -> None:
    target = target_from_document(DOC).routing
    assert target is not None
    assert [str(x) for x in target.routes or []] == [
        "10.101.0.0/24 dev ens1f0np0 scope link src 10.101.0.2 table 100",
        "10.102.0.0/16 via 10.101.0.1 dev ens1f0np0 table 100",
    ]
    assert [str(x) for x in target.rules or []] == ["100: from 10.101.0.2 lookup 100"]
    assert target.addresses == {"ens1f0np0": ["10.101.0.2/24"]}
    assert r.parse_route("10.0.0.0/8 via 10.1.1.1 dev x").table == r.MAIN


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (("lookup 100", "lookup all"), "table 'all' is not a table number"),
        (("100: from", "5: from"), "priority outside fabconf's 100..163"),
        (("dev ens1f0np0 table 100\n", "table 100\n"), "no dev"),
        (("via 10.101.0.1", "via 10.101.0.1 via 10.1.1.1"), "unexpected 'via'"),
    ],
)
def test_a_bad_routing_document_is_refused(edit: tuple[str, str], problem: str) -> None:
    with pytest.raises(DocumentError, match=problem):
        target_from_document(DOC.replace(*edit, 1))


def observed(routes: list[dict], rules: list[dict], addresses: dict[str, list[str]]) -> r.RoutingObserved:
    links = [
        {
            "ifname": n,
            "addr_info": [
                {"family": "inet", "local": a.split("/")[0], "prefixlen": int(a.split("/")[1]), "scope": "global"}
                for a in v
            ],
        }
        for n, v in addresses.items()
    ]
    return r.RoutingObserved(
        r.parse_addresses(json.dumps(links)),
        r.parse_routes(json.dumps(routes)),
        r.parse_rules(json.dumps(rules)),
        r.parse_sysctl("net.ipv4.conf.ens1f0np0.arp_ignore = 0\n"),
    )


def test_plan_adds_before_it_removes_and_touches_only_what_fabconf_owns() -> None:
    target = target_from_document(DOC).routing
    assert target is not None
    have = observed(
        routes=[
            {"dst": "default", "gateway": "192.168.100.1", "dev": "eno1", "protocol": "static", "flags": []},
            {"dst": "10.102.0.0/16", "gateway": "10.101.0.9", "dev": "ens1f0np0", "table": "100", "protocol": "250"},
            {"dst": "10.9.0.0/16", "gateway": "10.101.0.1", "dev": "ens1f0np0", "table": "100", "protocol": "250"},
        ],
        rules=[{"priority": 0, "src": "all", "table": "local"}, {"priority": 101, "src": "10.9.9.9", "table": "101"}],
        addresses={"ens1f0np0": ["10.200.0.1/31"], "eno1": ["192.168.100.10/24"]},
    )
    steps = r.plan(target, have, sh, "sudo -n ")
    lines = [s.line for s in steps]
    assert lines == [
        "sysctl net.ipv4.conf.ens1f0np0.arp_ignore 0 -> 1",
        "ens1f0np0: address 10.101.0.2/24 missing",
        "route 10.101.0.0/24 dev ens1f0np0 scope link src 10.101.0.2 table 100: missing",
        "route 10.102.0.0/16 via 10.101.0.1 dev ens1f0np0 table 100: "
        "was 10.102.0.0/16 via 10.101.0.9 dev ens1f0np0 table 100",
        "rule 100: from 10.101.0.2 lookup 100: missing",
        "rule 101: from 10.9.9.9 lookup 101 -> removed",
        "route 10.9.0.0/16 via 10.101.0.1 dev ens1f0np0 table 100 -> removed",
        "ens1f0np0: address 10.200.0.1/31 -> removed",
    ]
    commands = [c for s in steps for c in s.commands]
    assert "sudo -n ip route replace 10.102.0.0/16 via 10.101.0.1 dev ens1f0np0 table 100 proto 250" in commands
    assert not any("eno1" in c or "default" in c for c in commands)  # the management route is not fabconf's


def test_restore_target_puts_back_exactly_the_captured_state() -> None:
    target = target_from_document(DOC).routing
    assert target is not None
    before = observed(routes=[], rules=[], addresses={"ens1f0np0": ["10.200.0.1/31"]})
    restore = r.from_observed(before, target)
    assert restore.addresses == {"ens1f0np0": ["10.200.0.1/31"]} and restore.routes == [] and restore.rules == []
    assert restore.sysctl == {"net.ipv4.conf.ens1f0np0.arp_ignore": 0}


def test_boot_commands_can_run_again() -> None:
    target = target_from_document(DOC).routing
    assert target is not None
    boot = r.boot_commands(target, sh)
    assert boot[1:3] == ["ip -4 addr flush dev ens1f0np0 scope global", "ip addr add 10.101.0.2/24 dev ens1f0np0"]
    assert boot[-2:] == ["ip rule del pref 100 2>/dev/null || true", "ip rule add from 10.101.0.2 lookup 100 pref 100"]
