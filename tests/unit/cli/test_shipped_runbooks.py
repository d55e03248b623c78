"""Every shipped runbook (tasks/*.yaml) works on every shipped example inventory: each selection it will use, after
its variables are filled in, selects what it means there, checked before the first step -- the ones after an
``onboard`` step against the inventory as it will be with the rack. Nothing is written by the check."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fabconf.cli import runbook
from fabconf.cli.main import main
from fabconf.compile.selection import select
from fabconf.plan.onboard import with_rack

ROOT = Path(__file__).resolve().parents[3]
BOOKS = sorted((ROOT / "tasks").glob("*.yaml"))
EXAMPLES = [ROOT / "inventory", ROOT / "examples" / "two-pods"]
VARIABLES = {"rack": "rack9", "pod": "pod1"}


def _copy(tmp_path: Path, example: Path) -> Path:
    target = tmp_path / "inventory"
    shutil.copytree(example, target)
    return target


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("book", BOOKS, ids=lambda p: p.name)
def test_every_selection_of_a_shipped_runbook_fits_every_example(tmp_path: Path, book: Path, example: Path) -> None:
    inventory = _copy(tmp_path, example)
    before = {p.name: p.read_bytes() for p in inventory.iterdir()}
    doc = runbook.load(book, VARIABLES)
    runbook.check_limits(book, doc, inventory, doc.get("limit"))  # an InputError names the step that would stop
    assert {p.name: p.read_bytes() for p in inventory.iterdir()} == before


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_the_onboarding_runbook_pushes_the_rack_and_its_pods_spines(tmp_path: Path, example: Path) -> None:
    inventory = _copy(tmp_path, example)
    book = runbook.load(ROOT / "tasks" / "onboard-rack.yaml", VARIABLES)
    model = with_rack(inventory, "pod1", "rack9").model
    chosen = set(select(model, book["steps"][-1]["push"]["limit"]))
    rack = {n for n, d in model.devices.items() if d.data.get("rack") == "rack9"}
    spines = {n for n, d in model.devices.items() if d.role == "spine" and d.pod == "pod1"}
    assert rack and spines and chosen == rack | spines


def test_a_selection_after_onboarding_is_checked_before_the_first_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo in a step after `onboard` used to be found only when that step started, after hosts.yaml and
    cabling.yaml had been written."""
    inventory = _copy(tmp_path, ROOT / "examples" / "two-pods")
    book = tmp_path / "book.yaml"
    book.write_text(
        "name: onboard\nsteps:\n  - onboard: {pod: pod1, rack: rack9}\n  - validate: {}\n"
        '  - push: {limit: "rack9,spines"}\n'
    )
    before = {p.name: p.read_bytes() for p in inventory.iterdir()}
    assert main(["run", str(book), "-i", str(inventory), "--yes"]) == 1
    err = capsys.readouterr().err
    assert "book.yaml: steps[2].push.limit: --limit: 'spines' matches no device or group" in err, err
    assert "== step" not in err and "Traceback" not in err
    assert {p.name: p.read_bytes() for p in inventory.iterdir()} == before
