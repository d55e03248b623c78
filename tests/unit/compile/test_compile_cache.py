"""The compile cache (``fabconf.compile.cache``): a file's parse and schema result are reused only for the same bytes
and the same fabconf, give exactly what a cold run gives (problems included), and a damaged entry is recomputed.
``render --limit`` designs only the selected devices and renders them exactly as a full render does."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from fabconf.cli import main
from fabconf.compile import cache
from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.problems import InputError


def _problems(directory: Path) -> list[str]:
    try:
        compile_inventory(directory)
    except InputError as exc:
        return [str(p) for p in exc.problems]
    return []


def test_a_warm_compile_gives_what_a_cold_one_gives(inventory_copy: Path, cache_dir: Path) -> None:
    cold = compile_inventory(inventory_copy)
    kinds = sorted(p.name.split("-")[0] for p in cache_dir.iterdir())
    assert kinds.count("yaml") == 5 and kinds.count("schema") == 5  # every file: its parse and its schema result
    warm = compile_inventory(inventory_copy)
    assert warm.data == cold.data
    assert [str(p) for p in warm.problems] == [str(p) for p in cold.problems]


def test_schema_problems_come_back_the_same_from_the_cache(inventory_copy: Path, cache_dir: Path) -> None:
    fabric = inventory_copy / "fabric.yaml"
    fabric.write_text(fabric.read_text() + "bogus_top_key: 1\n")
    cold = _problems(inventory_copy)
    assert any("unknown key" in p for p in cold), cold
    assert _problems(inventory_copy) == cold


def test_an_edited_file_is_read_again(inventory_copy: Path, cache_dir: Path) -> None:
    compile_inventory(inventory_copy)
    fabric = inventory_copy / "fabric.yaml"
    text = fabric.read_text()
    assert "probability: 100" in text
    fabric.write_text(text.replace("probability: 100", "probability: 90", 1))
    edited = compile_inventory(inventory_copy)
    fabric.write_text(text)
    again = compile_inventory(inventory_copy)
    assert edited.model.fabric["roce"]["ecn"]["probability"] == 90
    assert again.model.fabric["roce"]["ecn"]["probability"] == 100


def test_a_damaged_entry_is_ignored_and_written_again(inventory_copy: Path, cache_dir: Path) -> None:
    cold = compile_inventory(inventory_copy)
    for entry in cache_dir.iterdir():
        entry.write_bytes(entry.read_bytes()[: len(entry.read_bytes()) // 2])  # cut short, as by a full disk
    assert compile_inventory(inventory_copy).data == cold.data
    assert compile_inventory(inventory_copy).data == cold.data


def test_an_entry_of_other_bytes_is_never_taken(cache_dir: Path) -> None:
    cache.put("yaml", "a" * 64, {"x": 1})
    assert cache.get("yaml", "a" * 64) == {"x": 1}
    assert cache.get("yaml", "b" * 64) is cache.MISS
    assert cache.get("schema-hosts", "a" * 64) is cache.MISS


def test_values_marshal_cannot_write_are_not_cached(cache_dir: Path) -> None:
    import datetime

    cache.put("yaml", "c" * 64, {"when": datetime.date(2026, 12, 3)})  # a YAML timestamp
    assert cache.get("yaml", "c" * 64) is cache.MISS


def test_cache_off(inventory_copy: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABCONF_CACHE", "off")
    compile_inventory(inventory_copy)
    assert not cache_dir.exists()


def test_the_cache_directory_is_private(inventory_copy: Path, cache_dir: Path) -> None:
    compile_inventory(inventory_copy)
    assert cache_dir.stat().st_mode & 0o077 == 0


def test_keeps_only_the_newest_entries(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "KEEP", 3)
    for i in range(6):
        cache.put("yaml", f"{i:064d}", i)
    assert len(list(cache_dir.iterdir())) == 3


@pytest.mark.parametrize("limit", ["leaf1", "gpu03", "spine*", "leaf3,gpu08"])
def test_render_limit_renders_exactly_what_a_full_render_does(
    inventory_copy: Path, tmp_path: Path, cache_dir: Path, limit: str
) -> None:
    full, limited = tmp_path / "full", tmp_path / "limited"
    assert main(["render", "-i", str(inventory_copy), "-o", str(full)]) == 0
    assert main(["render", "-i", str(inventory_copy), "-o", str(limited), "-l", limit]) == 0
    written = sorted(p.name for p in limited.iterdir())
    assert written and len(written) < len(list(full.iterdir()))
    for name in written:
        assert (limited / name).read_bytes() == (full / name).read_bytes()
    shutil.rmtree(limited)


def test_render_limit_still_validates_the_whole_fabric(inventory_copy: Path, tmp_path: Path, cache_dir: Path) -> None:
    """A problem on another device stops a limited render too: only design is limited, not validation."""
    hosts = inventory_copy / "hosts.yaml"
    text = hosts.read_text()
    assert "spine2:" in text
    hosts.write_text(text.replace("spine2:", "spine2:\n  bogus_key: 1", 1))
    assert main(["render", "-i", str(inventory_copy), "-o", str(tmp_path / "out"), "-l", "leaf1"]) == 1
    assert not (tmp_path / "out").exists()


def test_an_entry_read_is_kept_before_one_only_written(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The large ``cabling.yaml`` results are written once and read by every run: trimming keeps what was used last,
    so a series of edits (each writing a few entries) never pushes them out (it did: written-first went first)."""
    monkeypatch.setattr(cache, "KEEP", 3)
    for i in range(3):
        cache.put("yaml", f"{i:064d}", i)
    for i, when in ((0, 1000), (1, 2000), (2, 3000)):  # entry 0 the oldest
        path = cache._path("yaml", f"{i:064d}")
        assert path is not None
        os.utime(path, (when, when))
    assert cache.get("yaml", f"{0:064d}") == 0  # read: now the newest
    cache.put("yaml", f"{3:064d}", 3)
    assert cache.get("yaml", f"{0:064d}") == 0
    assert cache.get("yaml", f"{1:064d}") is cache.MISS  # the least recently used
