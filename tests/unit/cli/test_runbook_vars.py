"""Runbook variables (``fabconf run BOOK -e NAME=VALUE -e @FILE``): filled in before the runbook is validated, and a
variable nobody set is a ``file: path: message`` problem before any step runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pristine import EXAMPLE

from fabconf.cli import runvars
from fabconf.cli.main import main
from fabconf.compile.problems import InputError
from fabconf.errors import UsageError

ROOT = Path(__file__).resolve().parents[3]
BOOK = ROOT / "tasks" / "onboard-rack.yaml"


def test_variables_fill_values_keep_types_and_never_evaluate() -> None:
    doc = {"name": "onboard {{ rack }} into {{pod}}", "steps": [{"push": {"canary": "{{ n }}", "limit": "{{rack}}"}}]}
    out = runvars.substitute(doc, {"rack": "rack9", "pod": "pod1", "n": 2}, "b.yaml")
    assert out == {"name": "onboard rack9 into pod1", "steps": [{"push": {"canary": 2, "limit": "rack9"}}]}
    assert doc["name"] == "onboard {{ rack }} into {{pod}}"  # the parsed document is never changed
    with pytest.raises(InputError) as caught:
        runvars.substitute({"name": "{{ rack.__class__ }}"}, {"rack": "x"}, "b.yaml")
    assert "b.yaml: name: {{ rack.__class__ }}: only a variable name goes between the braces" in str(
        caught.value.problems.errors[0]
    )


def test_extra_vars_as_ansible_takes_them(tmp_path: Path) -> None:
    (tmp_path / "vars.yaml").write_text("rack: rack9\ncanary: 2\n")
    got = runvars.parse(["pod=pod1", f"@{tmp_path / 'vars.yaml'}", "rack=rack10", "note=a=b"])
    assert got == {"pod": "pod1", "rack": "rack10", "canary": 2, "note": "a=b"}  # later ones win
    with pytest.raises(UsageError, match="expected NAME=VALUE or @FILE"):
        runvars.parse(["rack"])
    with pytest.raises(UsageError, match="no such file"):
        runvars.parse([f"@{tmp_path / 'missing.yaml'}"])
    (tmp_path / "list.yaml").write_text("- rack9\n")
    with pytest.raises(InputError) as caught:
        runvars.parse([f"@{tmp_path / 'list.yaml'}"])
    assert "list.yaml: (root): expected a mapping" in str(caught.value.problems.errors[0])


def test_an_undefined_variable_stops_the_runbook_before_any_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inventory = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, inventory)
    before = (inventory / "hosts.yaml").read_bytes()
    assert main(["run", str(BOOK), "-i", str(inventory), "-e", "pod=pod1", "--check"]) == 1
    err = capsys.readouterr().err
    assert "onboard-rack.yaml: steps[0].onboard.rack: undefined variable 'rack'" in err
    assert "onboard-rack.yaml: steps[2].diff.limit: undefined variable 'rack'" in err
    assert "== step" not in err and "Traceback" not in err
    assert (inventory / "hosts.yaml").read_bytes() == before


def test_the_onboarding_runbook_takes_its_rack_and_pod(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--check` (no lab): the rack named with -e is onboarded into a scratch copy and validated; the diff step
    then needs devices, which this unit test does not have, so only the first two steps are looked at."""
    inventory = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, inventory)
    before = {p.name: p.read_bytes() for p in inventory.iterdir()}
    main(["run", str(BOOK), "-i", str(inventory), "-e", "rack=rack9", "-e", "pod=pod1", "--check", "--timeout", "1"])
    err = capsys.readouterr()
    text = err.out + err.err
    assert "== runbook: onboard rack9 into pod1 (check mode: no changes)" in text
    assert "onboarded rack rack9 into pod pod1" in text and "== step 2: validate" in text
    assert {p.name: p.read_bytes() for p in inventory.iterdir()} == before
