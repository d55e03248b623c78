"""Large inventory files read entry by entry (``fabconf.compile.inventory.Entries``): the same values and the same
problems, word for word, as reading them whole; an edited entry is the only one read again; anything that is not
plainly a mapping of named entries is read whole."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from pristine import EXAMPLE
from test_validation import CASES, case_inventory, validate

from fabconf.compile import inventory
from fabconf.compile.inventory import Entries
from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.problems import Problems

# every validation case whose files a reader cuts into entries (the example's are small: the threshold is lowered)
ENTRY_CASES = [
    c for c in CASES if {"hosts.yaml", "groups.yaml", "fabric.yaml"} & {*c.get("write", {}), *c.get("set", {})}
]


@pytest.mark.parametrize("case", ENTRY_CASES, ids=[c["name"] for c in ENTRY_CASES])
def test_every_validation_case_reads_the_same_entry_by_entry(
    case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FABCONF_CACHE", "off")
    inv = case_inventory(case, tmp_path)
    whole = validate(inv, capsys)
    monkeypatch.setattr(Entries, "MIN_BYTES", 0)
    assert validate(inv, capsys) == whole


def test_entries_give_the_value_a_whole_read_gives(inventory_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABCONF_CACHE", "off")
    whole = inventory.load(inventory_copy, Problems())
    monkeypatch.setattr(Entries, "MIN_BYTES", 0)
    cut = inventory.load(inventory_copy, Problems())
    assert cut.data == whole.data
    assert list(cut.hosts) == list(whole.hosts)  # in the file's order
    assert [k for k, _digest in cut.entries["hosts"]] == list(whole.hosts)
    assert "hosts" not in whole.entries and "cabling" not in cut.entries  # cabling.yaml is one key: read whole


def test_an_edited_entry_is_the_only_one_read_again(
    inventory_copy: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Entries, "MIN_BYTES", 0)
    read: list[str] = []
    real = inventory._read_entry

    def spy(part: str) -> list[Any]:
        entry = real(part)
        read.append(entry[0])
        return entry

    monkeypatch.setattr(inventory, "_read_entry", spy)
    cold = compile_inventory(inventory_copy)
    hosts = inventory_copy / "hosts.yaml"
    assert sorted(k for k in read if k in cold.model.devices) == sorted(cold.model.devices)  # and fabric.yaml keys
    read.clear()
    text = hosts.read_text()
    start = text.index("\nleaf2:\n")
    at = text.index("\n  data:\n", start) + len("\n  data:\n")
    hosts.write_text(text[:at] + "    mtu: 9100\n" + text[at:])
    edited = compile_inventory(inventory_copy)
    assert read == ["leaf2"]
    assert edited.model.devices["leaf2"].data["mtu"] == 9100
    assert {n: d for n, d in edited.data.items() if n != "leaf2" and "leaf2" not in str(d)} == {
        n: d for n, d in cold.data.items() if n != "leaf2" and "leaf2" not in str(d)
    }


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("a: &x {hostname: h1}\nb: *x\n", "an anchor: an alias may reach across entries"),
        ('"a":\n  hostname: h1\nb:\n  hostname: h2\n', "a quoted key at column 0"),
        ("a:\n  hostname: h1\n---\nb:\n  hostname: h2\n", "a second document"),
        ("a:\n  hostname: h1\nb: 'two\nc: lines'\n", "a quoted scalar over lines that look like keys"),
        ("a:\n  hostname: h1\na:\n  hostname: h2\n", "a key twice"),
        ("a:\n  hostname: h1\n", "one entry only"),
    ],
)
def test_what_is_not_plainly_entries_is_read_whole(text: str, why: str, tmp_path: Path) -> None:
    assert Entries.read(text, tmp_path / "hosts.yaml") is None, why


def test_entries_count_against_the_values_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each entry is within the limit; together they are not: the file is read whole, which reports the limit."""
    monkeypatch.setattr(inventory.limits, "MAX_NODES", 80)
    text = "".join(f"h{i}:\n  data: {{a: 1, b: 2, c: 3}}\n" for i in range(8))  # 11 values each, 81 in the file
    assert Entries.read(text, tmp_path / "hosts.yaml") is None
    monkeypatch.setattr(inventory.limits, "MAX_NODES", 81)
    assert Entries.read(text, tmp_path / "hosts.yaml") is None  # near the limit: read whole, in one pass
    monkeypatch.setattr(inventory, "_likely_too_many_values", lambda text: False)  # the entry-by-entry count alone
    cut = Entries.read(text, tmp_path / "hosts.yaml")
    assert cut is not None and len(cut.value) == 8


def test_a_file_far_past_the_values_limit_is_refused_by_one_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hosts.yaml of many small entries past MAX_NODES is refused by the whole-file reader's single event pass,
    with the line where the limit is passed, never parsed entry by entry first (200,000 entries took 25 s that
    way; bench/bench_limits.py has the figure), and word for word as the whole read reports it."""
    monkeypatch.setenv("FABCONF_CACHE", "off")
    monkeypatch.setattr(inventory.limits, "MAX_NODES", 5_000)
    monkeypatch.setattr(Entries, "MIN_BYTES", 0)
    read: list[str] = []
    real = inventory._read_entry

    def read_entry(part):
        read.append(part)
        return real(part)

    monkeypatch.setattr(inventory, "_read_entry", read_entry)
    inv = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, inv)
    hosts = inv / "hosts.yaml"
    hosts.write_text(hosts.read_text() + "".join(f"bulk{n}:\n  hostname: h{n}\n" for n in range(2_000)))
    code, text = validate(inv, capsys)
    assert code == 1 and "more than 5,000 values" in text, text
    assert not [part for part in read if "bulk" in part], "no entry of hosts.yaml was parsed on its own"


def test_problems_in_many_entries_come_in_the_whole_read_order(
    inventory_copy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Schema problems of several entries, written out of name order, with a name the schema refuses among them."""
    monkeypatch.setenv("FABCONF_CACHE", "off")
    hosts = inventory_copy / "hosts.yaml"
    bad = (
        "zz9:\n  hostname: 'bad host'\n  bogus: 1\n  data: {id: 0}\n"
        "_under:\n  hostname: h\n  data: {ports: [1]}\n"
        "aa1:\n  platform: junos\n  data: {role: router, mtu: 'big'}\n"
    )
    hosts.write_text(hosts.read_text() + bad)
    whole = validate(inventory_copy, capsys)
    assert whole[0] == 1 and whole[1].count("hosts.yaml") >= 6, whole[1]
    monkeypatch.setattr(Entries, "MIN_BYTES", 0)
    assert validate(inventory_copy, capsys) == whole
