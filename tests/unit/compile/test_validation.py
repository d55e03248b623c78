"""Every validation rule fails on a crafted inventory with `file: path: message`, exit 1, no traceback (a case
with ``exit: 0`` expects warnings, which do not fail validation)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pristine import EXAMPLE

from fabconf.cli import main

ROOT = Path(__file__).resolve().parents[3]

CASES = yaml.safe_load((Path(__file__).parent / "validation_cases.yaml").read_text())
_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _tokens(path: str) -> list[str | int]:
    return [int(i) if i else k for k, i in _TOKEN.findall(path)]


def _walk(doc: Any, tokens: list[str | int]) -> Any:
    for t in tokens:
        if isinstance(t, int):
            doc = doc[t]
        else:
            if doc.get(t) is None:
                doc[t] = {}
            doc = doc[t]
    return doc


def _apply(inv: Path, case: dict[str, Any]) -> None:
    for name in case.get("remove", []):
        (inv / name).unlink()
    for name, text in case.get("write", {}).items():
        (inv / name).write_text(text)
    edits: dict[str, Any] = {}
    for op in ("set", "delete", "append"):
        for name in case.get(op, {}):
            edits.setdefault(name, yaml.safe_load((inv / name).read_text()) or {})
    for name, changes in case.get("set", {}).items():
        for path, value in changes.items():
            *parent, last = _tokens(path)
            _walk(edits[name], parent)[last] = value
    for name, paths in case.get("delete", {}).items():
        for path in paths:
            *parent, last = _tokens(path)
            del _walk(edits[name], parent)[last]
    for name, changes in case.get("append", {}).items():
        for path, item in changes.items():
            _walk(edits[name], _tokens(path)).append(item)
    for name, doc in edits.items():
        (inv / name).write_text(yaml.safe_dump(doc, sort_keys=False))


def case_inventory(case: dict[str, Any], tmp_path: Path) -> Path:
    """A copy of the case's base inventory under ``tmp_path`` with the case's edits applied."""
    inv = tmp_path / "inventory"
    shutil.copytree(EXAMPLE if case.get("base", "inventory") == "inventory" else ROOT / case["base"], inv)
    _apply(inv, case)
    return inv


def validate(inv: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``fabconf validate -i INV`` in this process: its exit status and what it wrote to stderr."""
    rc = main(["validate", "-i", str(inv)])
    return rc, capsys.readouterr().err


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_validation_case(case: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inventory_copy = case_inventory(case, tmp_path)
    rc, err = validate(inventory_copy, capsys)
    assert rc == case.get("exit", 1), err
    lines = err.splitlines()
    prefix = str(inventory_copy) + "/"
    for want in case["expect"]:
        assert any(line.startswith(prefix + want) for line in lines), f"expected {want!r} in:\n{err}"
    if "errors" in case:  # the root cause alone: no knock-on error of what depends on it
        errors = [line for line in lines if line.startswith(prefix) and ": warning: " not in line]
        assert len(errors) == case["errors"], f"expected {case['errors']} error(s), got:\n{err}"
    for unwanted in case.get("absent", []):
        assert unwanted not in err, f"{unwanted!r} in:\n{err}"
    assert "Traceback" not in err


def test_case_names_are_unique() -> None:
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names))


def test_example_inventory_is_valid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "-i", str(EXAMPLE)]) == 0
    captured = capsys.readouterr()
    assert "valid: 6 switches, 8 GPU hosts, 24 links, 0 warning(s)" in captured.out
    assert captured.err == ""


def test_two_pod_example_is_valid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "-i", str(ROOT / "examples" / "two-pods")]) == 0
    captured = capsys.readouterr()
    assert "valid: 10 switches, 4 GPU hosts, 24 links, 0 warning(s)" in captured.out
    assert captured.err == ""


def test_bad_input_through_the_console_script_has_no_traceback(inventory_copy: Path) -> None:
    (inventory_copy / "fabric.yaml").write_text("roce: [\n")
    proc = subprocess.run(
        [sys.executable, "-m", "fabconf", "validate", "-i", str(inventory_copy)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "fabric.yaml: line 2 column 1: YAML syntax error" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_the_docs_validate_example_is_reproducible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/inventory/validation.md's example, edit for edit, prints exactly what the page shows."""
    page = (ROOT / "docs" / "inventory" / "validation.md").read_text()
    block = page.split("```\n$ fabconf validate\n", 1)[1].split("```", 1)[0]
    shutil.copytree(EXAMPLE, tmp_path / "inventory")
    fabric = tmp_path / "inventory" / "fabric.yaml"
    text = fabric.read_text()
    text = text.replace("\n  priority: 3 ", "\n  priority: 9 ", 1).replace("\n  switch: 9216 ", "\n  switch: 9216x", 1)
    fabric.write_text(text)
    hosts = tmp_path / "inventory" / "hosts.yaml"
    hosts.write_text(
        hosts.read_text().replace(
            "leaf1:\n  hostname: 192.0.2.11", "leaf1:\n  hostname: 192.0.2.11\n  hostname: 192.0.2.12", 1
        )
    )
    monkeypatch.chdir(tmp_path)
    assert main(["validate"]) == 1
    assert capsys.readouterr().err == block
