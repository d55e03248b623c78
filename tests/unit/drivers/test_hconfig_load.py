"""The CLI platforms' fast hier_config loading and the equal-trees remediation (issue 42) against hier_config's own
way: the same trees, remediations, rollbacks and views, on the lab's configurations, the golden renders and random
configurations with every line hier_config substitutes."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hier_config import HConfig, Platform, WorkflowRemediation, get_hconfig

from fabconf.drivers.cli import remediation
from fabconf.drivers.cli.hconfig_load import _loader, _substituted, parse
from fabconf_lab.eos.config import default_eos_config
from fabconf_lab.nxos.render import default_startup_config

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "features"
DIALECTS = {"eos": Platform.ARISTA_EOS, "nxos": Platform.CISCO_NXOS}


def _shape(tree: HConfig) -> list[tuple[int, str, frozenset[str], int]]:
    return [
        (child.depth(), child.text, frozenset(child.tags), child.real_indent_level) for child in tree.all_children()
    ]


def _golden(platform: str) -> str:
    return "\n".join(p.read_text() for p in sorted((GOLDEN / platform).glob("*.txt")))


def _lab(platform: str) -> str:
    ports = [f"Ethernet1/{i}" for i in range(1, 9)]
    return default_eos_config("leaf1", ports) if platform == "eos" else default_startup_config("leaf1", ports)


TRICKY = [
    "! a comment",
    "!Time: Sat Dec  5 00:00:02 2026",
    "version 10.3(4a) Bios:version 01.08",
    "end",
    "boot system bootflash:nxos.bin",
    "ntp clock-period 17179869",
    "Building configuration...",
    "Current configuration : 1234 bytes",
    "snmp-server location  rack  4",
    "hostname   leaf1",
    "ip routing   ",
    "\tip routing",
    "",
    "   ",
]
NESTED = [
    "description uplink!to spine",
    "description a  b",
    "mtu 9214",
    "no ip address",
    "no ip address 10.0.0.1/31",
    "ipv6 unreachables disable",
    "logging event link-status",
    "exit-address-family",
    "! nested comment",
    "shutdown",
    "bandwidth percent 40",
]
ROOTS = [
    "interface Ethernet1/{n}",
    "router bgp 65001",
    "qos profile FABCONF_ROCE",
    "vlan {n}",
    "hostname leaf{n}",
    "ip routing",
    "policy-map type queuing Q{n}",
]


def _random_config(rng: random.Random) -> str:
    lines: list[str] = []
    for _ in range(rng.randint(0, 12)):
        roll = rng.random()
        if roll < 0.2:
            lines.append(rng.choice(TRICKY))
            continue
        lines.append(rng.choice(ROOTS).format(n=rng.randint(1, 60)))
        for _ in range(rng.randint(0, 4)):
            depth = rng.choice([1, 1, 1, 2])
            indent = rng.choice([" ", "  ", "   "]) * depth
            lines.append(indent + rng.choice(NESTED))
    return "\n".join(lines) + rng.choice(["", "\n"])


@pytest.mark.parametrize("platform", ["eos", "nxos"])
def test_the_fast_path_is_taken_for_the_cli_platforms(platform: str) -> None:
    loader = _loader(DIALECTS[platform])
    assert loader.loading is not None and loader.loading.rules.per_line_sub == []
    assert loader.driver.rules.per_line_sub  # the dialect's own rules are untouched
    assert _substituted(loader, _lab(platform).splitlines()) is not None
    assert _substituted(loader, _golden(platform).splitlines()) is not None


@pytest.mark.parametrize("platform", ["eos", "nxos"])
def test_lab_and_golden_configurations_load_as_hier_config_loads_them(platform: str) -> None:
    dialect = DIALECTS[platform]
    for text in (_lab(platform), _golden(platform), "\n".join(TRICKY)):
        assert _shape(parse(dialect, text)) == _shape(get_hconfig(dialect, text))


def test_a_banner_takes_hier_config_own_way() -> None:
    text = "hostname a\nbanner motd ^C\nhello  there\n! not a comment here\n^C\nip routing\n"
    loader = _loader(Platform.ARISTA_EOS)
    assert _substituted(loader, text.splitlines()) is None
    assert _shape(parse(Platform.ARISTA_EOS, text)) == _shape(get_hconfig(Platform.ARISTA_EOS, text))


def _outcome(compute: Any, *args: Any) -> tuple[Any, ...]:
    """What a computation gives, or the error it raises (hier_config refuses a duplicate section)."""
    try:
        return tuple(compute(*args))
    except Exception as exc:  # the same error both ways is the point
        return ("raised", type(exc).__name__, str(exc))


def _old_remediation(platform: str, running: str, intended: str, whole: bool) -> tuple[Any, ...]:
    """What remediation.py computed before issue 42: hier_config's own loading and remediation, always."""
    dialect = DIALECTS[platform]
    run = get_hconfig(dialect, remediation._strip_comments(running))
    want = get_hconfig(dialect, remediation._strip_comments(intended))
    if not whole:
        interfaces = remediation.rendered_interfaces(intended)
        owned = remediation._owned_test(platform, interfaces, remediation.rendered_owned(platform, intended))
        for tree in (run, want):
            for child in list(tree.children):
                if not owned(child.text):
                    child.delete()
    flow = WorkflowRemediation(run, want)
    return (
        _shape(run),
        _shape(want),
        remediation.lowered_first(remediation._text(flow.remediation_config)),
        remediation._text(flow.rollback_config),
        remediation.owned_views(run, want),
    )


def _new_remediation(platform: str, running: str, intended: str, whole: bool) -> tuple[Any, ...]:
    run, want = remediation.owned_trees(platform, running, intended, whole=whole)
    rem = remediation.remediation_of(run, want)
    return _shape(run), _shape(want), rem.config, rem.rollback, remediation.owned_views(run, want)


@pytest.mark.parametrize("platform", ["eos", "nxos"])
def test_random_configurations_remediate_as_before(platform: str) -> None:
    rng = random.Random(42)
    texts = [_lab(platform), _golden(platform)] + [_random_config(rng) for _ in range(120)]
    outcomes: set[bool] = set()
    for _ in range(250):
        running, intended = rng.choice(texts), rng.choice(texts)
        if rng.random() < 0.3:
            intended = running  # equal trees: the shortcut
        whole = rng.random() < 0.3
        args = (platform, running, intended, whole)
        new = _outcome(_new_remediation, *args)
        assert new == _outcome(_old_remediation, *args), args
        outcomes.add(new[0] == "raised")
    assert outcomes == {True, False}  # both refused and remediated configurations were compared


@pytest.mark.parametrize("platform", ["eos", "nxos"])
def test_a_converged_device_skips_hier_config_remediation(platform: str) -> None:
    text = _golden(platform)
    run, want = remediation.owned_trees(platform, text, text)
    assert remediation._same(run, want)
    rem = remediation.remediation_of(run, want)
    assert rem.empty and rem.config == "" and rem.rollback == ""


def test_duplicate_siblings_take_the_full_computation() -> None:
    run = get_hconfig(Platform.ARISTA_EOS, "router bgp 1\n  neighbor a\n")
    want = get_hconfig(Platform.ARISTA_EOS, "router bgp 1\n  neighbor a\n")
    assert remediation._same(run, want)
    for tree, extra in ((run, "neighbor b"), (want, "neighbor c")):
        tree.add_child("router bgp 1", check_if_present=False).add_child(extra)
    assert not remediation._same(run, want)
    assert remediation.remediation_of(run, want).config == remediation.lowered_first(
        remediation._text(WorkflowRemediation(run, want).remediation_config)
    )
