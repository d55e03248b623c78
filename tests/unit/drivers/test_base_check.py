"""The commit-time base check of EOS and NX-OS (issue #43): what counts as the same running configuration."""

from __future__ import annotations

import pytest
from napalm.base.exceptions import CommitError

from fabconf.drivers.cli.base_check import CHANGED_LINES, base_moved, config_lines, refuse_moved, undo_if_moved
from fabconf.drivers.contract import CommitConflict

RUNNING = """!Command: show running-config
!Running configuration last done at: Sat Dec  5 00:00:01 2026
!Time: Sat Dec  5 00:00:02 2026

version 10.3(4a) Bios:version 01.08
hostname leaf4
interface Ethernet1/1
  mtu 9216
"""


def test_comments_blank_lines_and_trailing_spaces_do_not_move_the_base() -> None:
    later = RUNNING.replace("00:00:02", "00:09:59").replace("  mtu 9216", "  mtu 9216   ") + "\n\n"
    assert base_moved(RUNNING, later) == ""
    assert config_lines(RUNNING) == [
        "version 10.3(4a) Bios:version 01.08",
        "hostname leaf4",
        "interface Ethernet1/1",
        "  mtu 9216",
    ]
    # what NAPALM's get_config strips (the expected side) and the switch still prints (the found side)
    assert base_moved(RUNNING, RUNNING + "Startup config saved at: Sat Dec  5 00:00:00 2026\n") == ""


def test_a_changed_line_is_named() -> None:
    moved = base_moved(RUNNING, RUNNING + "snmp-server contact noc\n")
    assert "+snmp-server contact noc" in moved and moved.startswith("--- read before the diff")
    with pytest.raises(CommitConflict, match=r"leaf4: the device changed since its diff was computed"):
        refuse_moved("leaf4", RUNNING, RUNNING.replace("mtu 9216", "mtu 1500"))
    refuse_moved("leaf4", RUNNING, RUNNING)  # the same base: nothing raised


def test_a_long_change_is_cut_short() -> None:
    many = RUNNING + "".join(f"vlan {i}\n" for i in range(2, 100))
    moved = base_moved(RUNNING, many).splitlines()
    assert len(moved) == CHANGED_LINES + 1 and moved[-1].endswith("more lines)")


def test_a_moved_base_is_undone_and_checked() -> None:
    other = RUNNING + "snmp-server contact noc\n"
    device = {"running": "ours on top of " + other}
    undone: list[str] = []

    def undo() -> None:
        undone.append("undo")
        device["running"] = other

    with pytest.raises(CommitConflict, match=r"undone at once and the configuration it found is back"):
        undo_if_moved("leaf4", RUNNING, other, undo, lambda: device["running"])
    assert undone == ["undo"]
    undo_if_moved("leaf4", RUNNING, RUNNING, undo, lambda: device["running"])  # the same base: nothing undone
    assert undone == ["undo"]
    # an undo that does not bring back what the commit found: the state is unknown, not a conflict
    with pytest.raises(CommitError, match=r"did not bring back the configuration it found"):
        undo_if_moved("leaf4", RUNNING, other, lambda: None, lambda: RUNNING)
