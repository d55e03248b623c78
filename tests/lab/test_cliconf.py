"""Unit tests for the shared indented-CLI config model (fabconf_lab.cliconf)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabconf_lab.cliconf import (
    EOS,
    NXOS,
    CliError,
    Editor,
    Node,
    load,
    parse,
    render,
    tree_diff,
    unified_diff,
    validate,
)

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "devices"

EOS_TEXT = """\
hostname leaf1
!
interface Ethernet1
   description old
   mtu 1500
!
interface Ethernet2
   shutdown
!
qos profile OLD
   qos trust cos
   !
   tx-queue 3
      bandwidth percent 30
!
router bgp 65001
   router-id 10.0.0.1
   neighbor 10.0.0.1 remote-as 65100
   neighbor 10.0.0.1 description spine1
   neighbor 10.0.0.3 remote-as 65100
   !
   address-family ipv4
      neighbor 10.0.0.1 activate
!
end
"""

NXOS_TEXT = """\
system jumbomtu 9216
class-map type qos match-any ROCEv2
  match dscp 24-26
policy-map type network-qos qos_network
  class type network-qos c-8q-nq3
    mtu 9216
    pause pfc-cos 3
system qos
  service-policy type network-qos qos_network
interface Ethernet1/1
  mtu 9216
  priority-flow-control mode on
router bgp 65001
  address-family ipv4 unicast
    maximum-paths 64
"""


def apply(text: str, lines: list[str], dialect=EOS) -> Node:
    root = parse(text, dialect)
    ed = Editor(root, dialect)
    for line in lines:
        ed.apply(line)
    return root


def section_lines(root: Node, *path: str) -> list[str]:
    node = root.section(*path)
    assert node is not None, path
    return [c.text for c in node.children]


# -- parse / render -------------------------------------------------------------------------------------------------


def test_parse_builds_tree_by_indentation_and_ignores_separators() -> None:
    root = parse("! Command: show running-config\n" + EOS_TEXT, EOS)
    assert [c.text for c in root.children] == [
        "hostname leaf1",
        "interface Ethernet1",
        "interface Ethernet2",
        "qos profile OLD",
        "router bgp 65001",
    ]
    assert section_lines(root, "qos profile OLD", "tx-queue 3") == ["bandwidth percent 30"]
    assert section_lines(root, "router bgp 65001", "address-family ipv4") == ["neighbor 10.0.0.1 activate"]


def test_render_round_trip_eos_and_nxos() -> None:
    assert render(parse(EOS_TEXT, EOS), EOS) == EOS_TEXT
    assert render(parse(NXOS_TEXT, NXOS), NXOS) == NXOS_TEXT


def test_render_separates_empty_interface_sections_like_eos() -> None:
    text = render(parse("interface Ethernet3\ninterface Ethernet4\nip routing\n", EOS), EOS)
    assert text == "interface Ethernet3\n!\ninterface Ethernet4\n!\nip routing\n!\nend\n"


# -- stripped-line application ------------------------------------------------------------------------------------


def test_stripped_lines_follow_submodes_and_fall_back_to_parent_modes() -> None:
    root = apply(
        "",
        [
            "interface Ethernet1",
            "mtu 9214",
            "qos profile ROCE",  # opens a top-level mode from inside an interface
            "qos trust dscp",
            "uc-tx-queue 3",
            "bandwidth percent 50",
            "uc-tx-queue 6",  # a sibling sub-mode: falls back one level
            "priority strict",
            "priority-flow-control on",  # not valid in tx-queue: back to the qos profile
            "interface Ethernet2",
            "service-profile ROCE",
            "router bgp 65001",
            "address-family ipv4",
            "network 10.0.0.0/31",
            "neighbor 10.0.0.1 remote-as 65002",  # not an address-family command: back to router bgp
            "hostname leaf9",  # global command pops to the top
        ],
    )
    assert [c.text for c in root.children] == [
        "hostname leaf9",
        "interface Ethernet1",
        "interface Ethernet2",
        "qos profile ROCE",
        "router bgp 65001",
    ]
    assert section_lines(root, "interface Ethernet1") == ["mtu 9214"]
    assert section_lines(root, "qos profile ROCE") == [
        "qos trust dscp",
        "priority-flow-control on",
        "uc-tx-queue 3",
        "uc-tx-queue 6",
    ]
    assert section_lines(root, "qos profile ROCE", "uc-tx-queue 3") == ["bandwidth percent 50"]
    assert section_lines(root, "qos profile ROCE", "uc-tx-queue 6") == ["priority strict"]
    assert section_lines(root, "interface Ethernet2") == ["service-profile ROCE"]
    assert section_lines(root, "router bgp 65001") == ["neighbor 10.0.0.1 remote-as 65002", "address-family ipv4"]
    assert section_lines(root, "router bgp 65001", "address-family ipv4") == ["network 10.0.0.0/31"]


def test_exit_pops_one_level_and_end_returns_to_top() -> None:
    root = Node("")
    ed = Editor(root, EOS)
    ed.apply_all(["qos profile P", "tx-queue 3", "bandwidth percent 10", "exit", "qos trust dscp"])
    assert section_lines(root, "qos profile P") == ["qos trust dscp", "tx-queue 3"]
    assert ed.mode == "qos-profile"
    ed.apply("end")
    assert ed.mode == "root" and ed.ended


def test_reentering_a_section_edits_it_in_place() -> None:
    root = apply(EOS_TEXT, ["interface Ethernet1", "description uplink", "mtu 9214"])
    assert section_lines(root, "interface Ethernet1") == ["description uplink", "mtu 9214"]
    assert [c.text for c in root.children].count("interface Ethernet1") == 1


# -- single-valued commands and no-forms --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "line", "expected"),
    [
        (("interface Ethernet1",), "mtu 9214", ["description old", "mtu 9214"]),
        (("interface Ethernet1",), "description new", ["description new", "mtu 1500"]),
        (("qos profile OLD",), "qos trust dscp", ["qos trust dscp", "tx-queue 3"]),
        (("qos profile OLD", "tx-queue 3"), "bandwidth percent 50", ["bandwidth percent 50"]),
    ],
)
def test_single_valued_commands_replace_their_previous_value(path: tuple[str, ...], line: str, expected) -> None:
    root = apply(EOS_TEXT, [*path, line])
    assert section_lines(root, *path) == expected


def test_single_valued_rules_are_keyed_by_their_arguments() -> None:
    root = apply(
        EOS_TEXT,
        [
            "router bgp 65001",
            "neighbor 10.0.0.1 remote-as 65200",  # replaces only 10.0.0.1's remote-as
            "maximum-paths 4 ecmp 4",
            "maximum-paths 64 ecmp 64",
            "qos profile OLD",
            "tx-queue 3",
            "random-detect ecn minimum-threshold 100 kbytes maximum-threshold 1000 kbytes",
            "random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100",
            "random-detect ecn count",
        ],
    )
    bgp = section_lines(root, "router bgp 65001")
    assert "neighbor 10.0.0.1 remote-as 65200" in bgp and "neighbor 10.0.0.1 remote-as 65100" not in bgp
    assert "neighbor 10.0.0.3 remote-as 65100" in bgp
    assert [x for x in bgp if x.startswith("maximum-paths")] == ["maximum-paths 64 ecmp 64"]
    assert section_lines(root, "qos profile OLD", "tx-queue 3") == [
        "bandwidth percent 30",
        "random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100",
        "random-detect ecn count",
    ]


def test_switchport_access_vlan_and_vlan_name_are_single_valued() -> None:
    lines = ["vlan 10", "name A", "name B", "interface Ethernet1"]
    lines += ["switchport access vlan 10", "switchport access vlan 2"]
    root = apply("", lines)
    assert section_lines(root, "vlan 10") == ["name B"]
    assert section_lines(root, "interface Ethernet1") == ["switchport access vlan 2"]


def test_no_forms_remove_lines_and_sections() -> None:
    root = apply(
        EOS_TEXT,
        [
            "interface Ethernet1",
            "no mtu",  # keyword only: removes 'mtu 1500'
            "interface Ethernet2",
            "no shutdown",  # EOS does not store 'no shutdown'
            "no qos profile OLD",  # a whole section
            "router bgp 65001",
            "no neighbor 10.0.0.1",  # every line of that neighbor
            "no address-family ipv4",
        ],
    )
    assert section_lines(root, "interface Ethernet1") == ["description old"]
    assert section_lines(root, "interface Ethernet2") == []
    assert root.find("qos profile OLD") is None
    assert section_lines(root, "router bgp 65001") == ["router-id 10.0.0.1", "neighbor 10.0.0.3 remote-as 65100"]


def test_stored_negations_replace_their_positive_form_and_back() -> None:
    root = apply("", ["interface Ethernet1", "switchport", "no switchport"])
    assert section_lines(root, "interface Ethernet1") == ["no switchport"]
    root = apply("", ["qos profile P", "tx-queue 3", "priority strict", "no priority"])
    assert section_lines(root, "qos profile P", "tx-queue 3") == ["no priority"]
    ed = Editor(root, EOS)
    ed.apply_all(["qos profile P", "tx-queue 3", "priority strict"])
    assert section_lines(root, "qos profile P", "tx-queue 3") == ["priority strict"]


def test_default_form_removes_stored_negation_too() -> None:
    root = apply("", ["interface Ethernet1", "no switchport", "mtu 9214", "default switchport"])
    assert section_lines(root, "interface Ethernet1") == ["mtu 9214"]


# -- invalid input ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["frobnicate the switch"], "Invalid input (at token 0: 'frobnicate')"),
        (["interface Ethernet1", "mtu 99999"], "Invalid input (at token 1: '99999')"),
        (["interface Ethernet1", "mtu"], "Incomplete command"),
        (["qos profile P", "tx-queue 3", "bandwidth percent 150"], "Invalid input (at token 2: '150')"),
        (["mtu 9214"], "Invalid input (at token 1: '9214')"),  # known keyword, but not at the top level
        (["vlan 5000"], "Invalid input (at token 1: '5000')"),
    ],
)
def test_invalid_lines_raise_the_device_error(lines: list[str], message: str) -> None:
    root = parse(EOS_TEXT, EOS)
    before = render(root, EOS)
    ed = Editor(root, EOS)
    with pytest.raises(CliError) as info:
        ed.apply_all(lines)
    assert info.value.message == message
    if len(lines) == 1:
        assert render(root, EOS) == before


def test_validate_reports_unknown_lines() -> None:
    errors = validate(parse("hostname x\ninterface Ethernet1\n   mtu 9214\n   bogus thing\n", EOS), EOS)
    assert [e.line for e in errors] == ["bogus thing"]


@pytest.mark.parametrize("device", ["leaf3", "spine1"])
def test_rendered_eos_configs_are_accepted_and_stripped_equals_indented(device: str) -> None:
    path = GOLDEN / f"{device}.cfg"
    if not path.exists():
        pytest.skip(f"{path} not present")
    text = path.read_text()
    assert validate(parse(text, EOS), EOS) == []
    indented = load(text, EOS)
    stripped = Node("")
    Editor(stripped, EOS).apply_all(line.strip() for line in text.splitlines())
    assert render(stripped, EOS) == render(indented, EOS)


# -- indented application (NX-OS merge) ------------------------------------------------------------------------------


def test_indented_lines_use_indentation_for_nesting() -> None:
    root = Node("")
    Editor(root, NXOS).apply_indented(NXOS_TEXT.splitlines())
    assert render(root, NXOS) == NXOS_TEXT
    # a second merge changes one value in a nested section and adds an interface
    Editor(root, NXOS).apply_indented(
        [
            "policy-map type network-qos qos_network",
            "  class type network-qos c-8q-nq3",
            "    mtu 9000",
            "interface Ethernet1/2",
            "  mtu 9216",
        ]
    )
    assert section_lines(root, "policy-map type network-qos qos_network", "class type network-qos c-8q-nq3") == [
        "mtu 9000",
        "pause pfc-cos 3",
    ]
    assert section_lines(root, "interface Ethernet1/2") == ["mtu 9216"]


def test_load_validates_full_configs() -> None:
    with pytest.raises(CliError):
        load("hostname x\ninterface Ethernet1\n   not-a-command 1\n", EOS)


def test_dialect_extend_adds_rules_without_touching_the_base() -> None:
    extended = EOS.extend(commands={"interface": (r"frobnicate \d+",)})
    root = Node("")
    Editor(root, extended).apply_all(["interface Ethernet1", "frobnicate 3"])
    assert section_lines(root, "interface Ethernet1") == ["frobnicate 3"]
    with pytest.raises(CliError):
        Editor(Node(""), EOS).apply_all(["interface Ethernet1", "frobnicate 3"])


# -- diffs --------------------------------------------------------------------------------------------------------


def test_unified_diff_reads_like_show_session_config_diffs() -> None:
    old = parse(EOS_TEXT, EOS)
    new = apply(EOS_TEXT, ["interface Ethernet1", "mtu 9214"])
    text = unified_diff(old, new, EOS, "system:/running-config", "session:/s1-session-config")
    assert text == (
        "--- system:/running-config\n"
        "+++ session:/s1-session-config\n"
        "@@ -2,7 +2,7 @@\n"
        " !\n"
        " interface Ethernet1\n"
        "    description old\n"
        "-   mtu 1500\n"
        "+   mtu 9214\n"
        " !\n"
        " interface Ethernet2\n"
        "    shutdown\n"
    )
    assert unified_diff(old, old.copy(), EOS, "a", "b") == ""


def test_tree_diff_shows_section_context_in_device_indentation() -> None:
    old = parse(EOS_TEXT, EOS)
    new = apply(
        EOS_TEXT,
        ["qos profile OLD", "tx-queue 3", "bandwidth percent 50", "router bgp 65001", "no neighbor 10.0.0.3"],
    )
    assert tree_diff(old, new, EOS) == (
        " qos profile OLD\n"
        "    tx-queue 3\n"
        "-      bandwidth percent 30\n"
        "+      bandwidth percent 50\n"
        " router bgp 65001\n"
        "-   neighbor 10.0.0.3 remote-as 65100\n"
    )
    nx_old = parse(NXOS_TEXT, NXOS)
    nx_new = nx_old.copy()
    Editor(nx_new, NXOS).apply_all(["interface Ethernet1/1", "mtu 9000"])
    assert tree_diff(nx_old, nx_new, NXOS) == " interface Ethernet1/1\n-  mtu 9216\n+  mtu 9000\n"


def test_remediation_lines_remove_what_they_name_and_globals_fall_back_to_the_top() -> None:
    text = """\
priority-flow-control pause watchdog default timeout 0.2
qos profile P
   priority-flow-control pause watchdog
   !
   tx-queue 3
      bandwidth percent 50
      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100
   !
   tx-queue 6
      priority strict
interface Ethernet1
   description x
   no switchport
   ip address 10.0.0.1/31
router bgp 65001
   maximum-paths 64 ecmp 64
   neighbor 10.0.0.0 remote-as 65100
"""
    root = load(text, EOS)
    Editor(root, EOS).apply_all(
        [
            "interface Ethernet1",
            "no ip address",
            "no priority-flow-control pause watchdog default timeout 0.2",  # global: leaves interface mode
            "qos profile P",
            "tx-queue 3",
            "no random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100",
            "tx-queue 6",
            "no priority strict",
            "router bgp 65001",
            "no maximum-paths",
            "no neighbor 10.0.0.0 remote-as 65100",
        ]
    )
    assert render(root, EOS) == (
        "qos profile P\n"
        "   priority-flow-control pause watchdog\n"
        "   !\n"
        "   tx-queue 3\n"
        "      bandwidth percent 50\n"
        "   !\n"
        "   tx-queue 6\n"  # empty now, still separated like EOS does
        "!\n"
        "interface Ethernet1\n"
        "   description x\n"
        "   no switchport\n"
        "!\n"
        "router bgp 65001\n"
        "!\n"
        "end\n"
    )
