"""A large list of links cut into parts that forked workers parse at once (``fabconf.compile.inventory.Parts``,
issue 42): the same value and the same problems, word for word, as reading the file whole; anything that is not
plainly one key and its one-line items is read whole."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from pristine import EXAMPLE
from test_validation import CASES, case_inventory, validate

from fabconf.compile import inventory
from fabconf.compile.inventory import Parts
from fabconf.compile.problems import Problems


def _cut_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """The example's cabling.yaml (2 KB) cut into parts of about 300 bytes, in forked workers (even where a thread an
    earlier test left running would keep the reader from forking)."""
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(inventory, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(Parts, "MIN_BYTES", 0)
    monkeypatch.setattr(Parts, "PART_BYTES", 300)


def _one_line_items(inv: Path) -> bool:
    """cabling.yaml rewritten with one item a line (``- [A:PORT, B:PORT]``), as genfabric writes it, when a case
    left it a plain mapping: the shape ``Parts`` cuts."""
    path = inv / "cabling.yaml"
    doc = yaml.safe_load(path.read_text())
    if not isinstance(doc, dict) or not isinstance(doc.get("links"), list) or len(doc) != 1:
        return False
    path.write_text(yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=1000))
    return True


EDITS = ("write", "set", "append", "delete")
CABLING_CASES = [c for c in CASES if any("cabling.yaml" in c.get(op, {}) for op in EDITS)]


@pytest.mark.parametrize("case", CABLING_CASES, ids=[c["name"] for c in CABLING_CASES])
def test_every_cabling_validation_case_reads_the_same_in_parts(
    case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FABCONF_CACHE", "off")
    inv = case_inventory(case, tmp_path)
    in_parts = "cabling.yaml" not in case.get("write", {}) and _one_line_items(inv)
    whole = validate(inv, capsys)
    _cut_small(monkeypatch)
    if in_parts:  # the case's file is one that is cut
        assert Parts.cut(inv / "cabling.yaml") is not None
    assert validate(inv, capsys) == whole


def test_parts_give_the_value_a_whole_read_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABCONF_CACHE", "off")
    inv = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, inv)
    whole = inventory.load(inv, Problems())
    _cut_small(monkeypatch)
    parts = Parts.cut(inv / "cabling.yaml")
    assert parts is not None and len(parts.texts) >= 4  # the example's own file, comments and all, is cut
    assert all(Parts.parse(part) is not None for part in parts.texts)
    cut = inventory.load(inv, Problems())
    assert cut.data == whole.data and cut.digests == whole.digests
    assert cut.cabling["links"] == whole.cabling["links"] and len(cut.cabling["links"]) == 24


LINKS = "".join(f"- [leaf1:swp{i}, spine1:swp{i}]\n" for i in range(1, 41))


@pytest.mark.parametrize(
    ("text", "cut"),
    [
        ("links:\n" + LINKS, True),
        ("# cabling\nlinks:\n" + LINKS.replace("- ", "  - ") + "  # end\n", True),
        ("links:\n" + LINKS + "other: 1\n", True),  # a second key: the part holding it is read whole
        ("links:\n" + LINKS.replace("[leaf1:swp30,", "[leaf1:swp30"), True),  # a YAML error in a part
        ("links:\n" + LINKS.replace("- [leaf1:swp20, spine1:swp20]", "- {a: 1, a: 2}"), True),  # a duplicate key
        ("links:\n" + LINKS.replace("- [leaf1:swp20, spine1:swp20]", "- [leaf1:swp20,\n  spine1:swp20]"), True),
        ("links:\n" + LINKS.replace("swp25]", "swp25\x07]"), True),  # a character YAML does not allow
        ("links:\n" + LINKS.replace("- [leaf1:swp9,", "- [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[leaf1:swp9,"), True),
        ("links:\n" + LINKS.replace("swp3]", "swp3] #x\n- *a"), True),  # an alias with no anchor
        ("links: &a\n" + LINKS, False),  # an anchor anywhere: read whole
        ("---\nlinks:\n" + LINKS, False),
        ("links:  # the list\n" + LINKS, False),
        ("links:\n- [a:b, c:d]\n", False),  # one item: nothing to cut
    ],
)
def test_a_file_not_plainly_a_list_of_links_reads_as_a_whole_read_does(
    text: str, cut: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever the file holds, the parts' reader gives the whole-file reader's value or its problems, word for
    word (the line and column of a syntax error included)."""
    monkeypatch.setenv("FABCONF_CACHE", "off")
    path = tmp_path / "cabling.yaml"
    path.write_text(text)
    whole = Problems()
    expected = inventory.load_yaml(path, "cabling.yaml", whole)
    _cut_small(monkeypatch)
    assert (Parts.cut(path) is not None) == cut
    got = inventory._read_files([("cabling", path, "cabling.yaml")])
    (ok, value, _digest, _entries, problems) = got[0]
    assert (ok, value) == expected
    assert [str(p) for p in problems] == [str(p) for p in whole]
