"""``fabconf render --limit`` of an inventory rendered before comes whole from the compile cache
(``fabconf.compile.outcome``, issue 42): the same files and warnings, without compiling; an edit anywhere (any file,
any entry, fabconf itself) is compiled again and reports exactly what a cold ``validate`` reports, cache on or off;
a damaged, cut-short or planted entry is never taken."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fabconf.cli import main
from fabconf.compile import cache, inventory, outcome


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


def _render(inv: Path, out: Path, capsys: pytest.CaptureFixture[str], limit: str = "leaf1") -> tuple[int, str]:
    return _run(["render", "-i", str(inv), "-o", str(out), "--limit", limit], capsys)


def _entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("outcome-*")) if cache_dir.exists() else []


def _uncable_one_nic(inv: Path) -> None:
    """A warning to carry: gpu08's second NIC left uncabled."""
    cabling = inv / "cabling.yaml"
    text = cabling.read_text()
    line = "  - [gpu08:ens2f0np0, leaf4:Ethernet1/4]\n"
    assert line in text
    cabling.write_text(text.replace(line, ""))


def test_the_file_names_are_the_loaders(cache_dir: Path) -> None:
    assert tuple(name for name, _required in inventory.FILES.values()) == outcome.FILE_NAMES


def test_an_unchanged_render_comes_from_the_cache_with_its_files_and_warnings(
    inventory_copy: Path, tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _uncable_one_nic(inventory_copy)
    cold_out, warm_out = tmp_path / "cold", tmp_path / "warm"
    code, cold_err = _render(inventory_copy, cold_out, capsys, "leaf1,gpu08")
    assert code == 0 and "warning: gpu08:ens2f0np0 is not cabled to a leaf" in cold_err
    assert len(_entries(cache_dir)) == 1
    code, warm_err = _render(inventory_copy, warm_out, capsys, "leaf1,gpu08")
    assert code == 0 and warm_err == cold_err
    assert sorted(p.name for p in warm_out.iterdir()) == sorted(p.name for p in cold_out.iterdir())
    for path in cold_out.iterdir():
        assert (warm_out / path.name).read_bytes() == path.read_bytes()


def test_a_hit_compiles_nothing(inventory_copy: Path, tmp_path: Path, cache_dir: Path) -> None:
    """In a new process, as a user runs it: the second run never imports the model, topology or checks."""
    script = (
        "import sys; from fabconf.cli import main; code = main(sys.argv[1:]); "
        "print(code, 'fabconf.compile.topology' in sys.modules, 'yaml' in sys.modules)"
    )
    argv = [sys.executable, "-c", script, "render", "-i", str(inventory_copy), "-o", str(tmp_path / "o"), "-l", "leaf1"]
    env = {**os.environ, "FABCONF_CACHE_DIR": str(cache_dir)}
    env.pop("FABCONF_CACHE", None)
    first = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout.split()[-3:]
    second = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout.split()[-3:]
    assert first == ["0", "True", "True"]
    assert second == ["0", "False", "False"]


EDITS = {
    # one entry edited, in ways that must fail validation; each must be found by a limited render as by validate
    "MTU below the host MTU": (
        "hosts.yaml",
        "leaf1:\n  hostname: 192.0.2.11\n",
        "  data:\n    id: 1\n",
        "    mtu: 1500\n",
    ),
    "MTU unlike its peer's": ("hosts.yaml", "spine1:\n", "  data:\n", "    mtu: 9216\n"),  # leaf3 (EOS) caps at 9214
    "duplicate leaf id": ("hosts.yaml", "leaf2:\n", "  data:\n    id: 2\n", None),
    "duplicate management address": ("hosts.yaml", "leaf1:\n", "  hostname: 192.0.2.11\n", None),
    "undefined group": ("hosts.yaml", "leaf1:\n", "  groups: [leaves, sn5600]\n", None),
    "link to an unknown port": ("cabling.yaml", "", "  - [leaf1:swp63, spine1:Ethernet1/1]\n", None),
    # keys whose edit reuses the topology and the costliest checks from the cache (``fabconf.compile.derived``)
    "unknown release": ("hosts.yaml", "leaf3:\n", "    id: 3\n", "    os_version: 9.9.9\n"),
    "ECMP wider than the platform's": ("hosts.yaml", "leaf3:\n", "    id: 3\n", "    ecmp_max_paths: 300\n"),
    "unknown hardware model": ("hosts.yaml", "leaf3:\n", "    id: 3\n", "    model: nosuch\n"),
    "adaptive routing the platform cannot run": ("hosts.yaml", "leaf3:\n", "    load_balancing: ecmp\n", None),
}
REPLACEMENTS = {
    "duplicate leaf id": "  data:\n    id: 1\n",
    "duplicate management address": "  hostname: 192.0.2.12\n",  # leaf2's
    "undefined group": "  groups: [leaves, sn5600, nosuch]\n",
    "link to an unknown port": "  - [leaf1:bogus63, spine1:Ethernet1/1]\n",
    "adaptive routing the platform cannot run": "    load_balancing: adaptive\n",
}


def _edit(inv: Path, case: str) -> None:
    file, entry, old, added = EDITS[case]
    path = inv / file
    text = path.read_text()
    start = text.index(entry) if entry else 0
    at = text.index(old, start)
    new = old + added if added is not None else REPLACEMENTS[case]
    path.write_text(text[:at] + new + text[at + len(old) :])


@pytest.mark.parametrize("case", sorted(EDITS))
def test_an_edit_reports_what_a_cold_validate_reports(
    inventory_copy: Path,
    tmp_path: Path,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    case: str,
) -> None:
    out = tmp_path / "out"
    assert _render(inventory_copy, out, capsys)[0] == 0  # the unchanged fabric's outcome is in the cache
    assert _entries(cache_dir)
    _edit(inventory_copy, case)
    monkeypatch.setenv("FABCONF_CACHE", "off")
    code, cold = _run(["validate", "-i", str(inventory_copy)], capsys)
    assert code == 1 and "error(s)" in cold, cold
    monkeypatch.delenv("FABCONF_CACHE")
    for _ in range(2):  # cache on: the first run reads the edit, the second finds every per-file result cached
        code, err = _render(inventory_copy, tmp_path / "again", capsys)
        assert (code, err) == (1, cold)
    monkeypatch.setenv("FABCONF_CACHE", "off")
    assert _render(inventory_copy, tmp_path / "again", capsys) == (1, cold)
    assert not (tmp_path / "again").exists()


def test_an_edit_of_the_selected_device_is_rendered(
    inventory_copy: Path, tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _render(inventory_copy, tmp_path / "a", capsys)[0] == 0
    _edit(inventory_copy, "MTU below the host MTU")
    hosts = inventory_copy / "hosts.yaml"
    hosts.write_text(hosts.read_text().replace("    mtu: 1500\n", "    mtu: 9100\n"))
    assert _render(inventory_copy, tmp_path / "b", capsys)[0] == 0
    assert len(_entries(cache_dir)) == 2
    (before,) = (tmp_path / "a").iterdir()
    after = (tmp_path / "b" / before.name).read_text()
    assert "9100" in after and after != before.read_text()


def test_another_pattern_or_directory_name_is_another_key(
    inventory_copy: Path,
    tmp_path: Path,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Problems name files as the user reads them: the same inventory named otherwise is compiled again."""
    _uncable_one_nic(inventory_copy)
    code, named = _render(inventory_copy, tmp_path / "a", capsys, "gpu08")
    assert code == 0 and f"{inventory_copy}/groups.yaml: " in named
    monkeypatch.chdir(inventory_copy)
    shown = named.replace(f"{inventory_copy}/", "")
    assert _render(Path("."), tmp_path / "b", capsys, "gpu08") == (0, shown)
    assert _render(Path("."), tmp_path / "c", capsys, "gpu07") == (0, shown)  # a warning of the whole fabric
    assert len(_entries(cache_dir)) == 3


@pytest.mark.parametrize("damage", ["cut short", "empty", "other data", "garbage"])
def test_a_damaged_entry_is_ignored(
    inventory_copy: Path, tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    _uncable_one_nic(inventory_copy)
    code, cold_err = _render(inventory_copy, tmp_path / "cold", capsys, "gpu08")
    (entry,) = _entries(cache_dir)
    blob = entry.read_bytes()
    key = marshal.loads(blob[len(cache._FORMAT) :])[0]
    entry.write_bytes(
        {
            "cut short": blob[: len(blob) // 2],
            "empty": b"",
            "other data": cache._FORMAT + marshal.dumps((key, ([("x",)], {"gpu08": 1}))),
            "garbage": cache._FORMAT + os.urandom(64),
        }[damage]
    )
    assert _render(inventory_copy, tmp_path / "warm", capsys, "gpu08") == (code, cold_err)
    (name,) = (p.name for p in (tmp_path / "cold").iterdir())
    assert (tmp_path / "warm" / name).read_bytes() == (tmp_path / "cold" / name).read_bytes()
    assert cache.get("outcome", key) != cache.MISS  # written again, whole


def test_a_link_planted_at_an_entry_is_never_followed(
    inventory_copy: Path, tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _render(inventory_copy, tmp_path / "cold", capsys)[0] == 0
    (entry,) = _entries(cache_dir)
    planted = tmp_path / "planted"
    planted.write_bytes(entry.read_bytes())
    entry.unlink()
    entry.symlink_to(planted)
    key = marshal.loads(planted.read_bytes()[len(cache._FORMAT) :])[0]
    assert cache.get("outcome", key) is cache.MISS
    assert _render(inventory_copy, tmp_path / "warm", capsys)[0] == 0
    assert not entry.is_symlink() and entry.stat().st_mode & 0o077 == 0  # replaced by a file of its own, private
    assert planted.read_bytes().startswith(cache._FORMAT)


def test_nothing_is_kept_with_the_cache_off(
    inventory_copy: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FABCONF_CACHE", "off")
    assert _render(inventory_copy, inventory_copy.parent / "out", capsys)[0] == 0
    assert not cache_dir.exists()


def test_a_full_render_is_not_kept(
    inventory_copy: Path, tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(["render", "-i", str(inventory_copy), "-o", str(tmp_path / "out")], capsys)[0] == 0
    assert not _entries(cache_dir)
