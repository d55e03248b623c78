"""`fabconf docs`: the cabling plan lists every link (an onboarded rack's too), a page per device, pod and fabric,
a diagram with every device; the output is deterministic."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from pristine import EXAMPLE

from fabconf.cli import main

ROOT = Path(__file__).resolve().parents[3]


def test_docs_cover_an_onboarded_rack_and_are_deterministic(tmp_path: Path) -> None:
    inv = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, inv)
    assert main(["onboard", "rack", "--pod", "pod1", "-i", str(inv)]) == 0
    out = tmp_path / "docs"
    assert main(["docs", "-i", str(inv), "-o", str(out)]) == 0
    rows = list(csv.DictReader((out / "cabling.csv").open()))
    assert len(rows) == 36
    assert {
        "device": "leaf5",
        "port": "swp63",
        "peer": "spine1",
        "peer_port": "Ethernet5/1",
        "speed_gbps": "400",
        "cable": "optic (leaf-spine)",
    } in rows
    assert {
        "device": "gpu09",
        "port": "ens1f0np0",
        "peer": "leaf5",
        "peer_port": "swp1",
        "speed_gbps": "400",
        "cable": "DAC/AOC (in rack)",
    } in rows
    page = (out / "devices" / "leaf5.md").read_text()
    assert "| rack | rack1 |" in page and "| ASN | 65105 |" in page and "spine1:Ethernet5/1" in page
    assert "| leaf | 6 | leaf1, leaf2, leaf3, leaf4, leaf5, leaf6 |" in (out / "pods" / "pod1.md").read_text()
    diagram = (out / "fabric.dot").read_text()
    assert all(f'"{name}"' in diagram for name in ("spine1", "leaf6", "gpu12"))
    first = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert main(["docs", "-i", str(inv), "-o", str(out)]) == 0
    assert first == {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}


def test_docs_writes_beside_the_project_s_own_docs_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In a clone, ./docs is the project's documentation site: `fabconf docs` wrote into it by default and
    `mkdocs build --strict` then failed (issue #40)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    assert main(["docs", "-i", str(EXAMPLE)]) == 0
    assert list((tmp_path / "docs").iterdir()) == []
    assert (tmp_path / "fabric-docs" / "cabling.csv").is_file()
    assert "to fabric-docs/" in capsys.readouterr().out


def test_docs_never_write_through_a_symbolic_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, victim = tmp_path / "fabric-docs", tmp_path / "victim"
    out.mkdir()
    victim.write_text("precious\n")
    (out / "cabling.csv").symlink_to(victim)
    assert main(["docs", "-i", str(EXAMPLE), "-o", str(out)]) == 1
    assert f"{out / 'cabling.csv'}: cannot write: a symbolic link" in capsys.readouterr().err
    assert victim.read_text() == "precious\n"
