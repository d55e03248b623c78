"""The docs' checklist page (issue 33): every row names at least one fabconf command, each command exists in the
CLI, each option in parentheses is one of that command's, each preflight check is one the preflight page lists, and
each alert one the monitoring rules define."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from fabconf.cli.main import build_parser

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "mkdocs.yml").exists())
PAGE = ROOT / "docs" / "reference" / "checklist.md"
ITEMS = (
    "PFC",
    "ECN",
    "MTU",
    "VLAN",
    "ECMP",
    "NIC QoS",
    "Adaptive routing",
    "telemetry",
    "Above 4G",
    "SR-IOV",
    "CUDA",
)


def _rows() -> list[list[str]]:
    lines = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    return [row for row in cells[1:] if not set(row[0]) <= {"-"}]


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _preflight_checks() -> set[str]:
    text = (ROOT / "docs" / "operations" / "preflight.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\| `(\w+)` \|", text, re.M))


def test_every_row_names_commands_the_cli_has() -> None:
    rows = _rows()
    commands = _subcommands()
    checks = _preflight_checks()
    rules = (ROOT / "fabconf" / "monitoring" / "rules.py").read_text(encoding="utf-8")
    assert len(rows) >= 20
    for item, _what, column in rows:
        named = re.findall(r"`fabconf ([a-z]+)(?: \(([^)]+)\))?`", column)
        assert named, f"{item}: no fabconf command"
        for command, detail in named:
            assert command in commands, f"{item}: fabconf {command} is not a command"
            if not detail:
                continue
            if detail.startswith("--"):
                options = {o for a in commands[command]._actions for o in a.option_strings}
                assert detail in options, f"{item}: fabconf {command} has no {detail}"
            elif command == "preflight":
                assert detail in checks, f"{item}: preflight has no check {detail}"
            else:
                assert command == "monitoring" and f'"{detail}"' in rules, f"{item}: no alert {detail}"


def test_the_checklist_items_are_all_there() -> None:
    items = " ".join(row[0] for row in _rows())
    assert [i for i in ITEMS if i not in items] == []


def test_the_page_is_in_the_nav() -> None:
    assert "reference/checklist.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
