"""The Python API recipe, run from the directory that holds the clone, failed with "cannot import name
'compile_inventory' from 'fabconf' (unknown location)" (issue #40): the clone's folder, named fabconf, shadows an
editable install. The page says where to run it, and the shadowing it warns of is real."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import fabconf

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture" / "python-api.md"


def test_the_page_says_where_to_run_the_recipe() -> None:
    text = PAGE.read_text().split("## Compile and render", 1)[1].split("<!-- recipe: run -->", 1)[0]
    assert "Run it from the clone's root" in text
    assert "cannot import name 'compile_inventory' from 'fabconf' (unknown location)" in text


def test_a_folder_named_fabconf_in_the_current_directory_shadows_an_editable_install(tmp_path: Path) -> None:
    installed = Path(fabconf.__file__).resolve().parent
    if installed.parent != ROOT:
        pytest.skip("fabconf is not an editable install of this checkout")
    (tmp_path / "fabconf" / "docs").mkdir(parents=True)  # the clone, seen from the folder that holds it
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = [sys.executable, "-c", "from fabconf import compile_inventory"]
    shadowed = subprocess.run(probe, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    if shadowed.returncode == 0:
        pytest.skip("this interpreter's editable install is found first (a path-based install)")
    assert "cannot import name 'compile_inventory' from 'fabconf' (unknown location)" in shadowed.stderr
    inside = subprocess.run(probe, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert inside.returncode == 0, inside.stderr  # from the clone's root, as the page says
