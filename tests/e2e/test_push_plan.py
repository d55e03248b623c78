"""``fabconf push --plan`` through the CLI against the lab (issue 42): the plan touches nothing and estimates
from the platform table; a push records its phases in the audit log, shows each wave's estimate against what it
took, and the next plan's estimates come from that log."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from labkit import ROOT, free_network


@pytest.fixture
def lab_cli(tmp_path: Path) -> Iterator[tuple[Path, list[str], dict[str, str]]]:
    inventory = tmp_path / "inventory"
    shutil.copytree(ROOT / "inventory", inventory)
    state = tmp_path / "state"
    where = ["--state", str(state), "--network", free_network()]
    env = {**os.environ, "FABCONF_AUDIT_LOG": str(tmp_path / "audit" / "audit.jsonl")}
    try:
        yield inventory, where, env
    finally:
        subprocess.run([sys.executable, "-m", "fabconf", "lab", "down", "--state", str(state)], capture_output=True)


def _fab(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "fabconf", *args], capture_output=True, text=True, cwd=ROOT, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def test_plan_touches_nothing_then_estimates_from_the_pushes_before_it(
    lab_cli: tuple[Path, list[str], dict[str, str]],
) -> None:
    inventory, where, env = lab_cli
    plan_args = ("push", "-i", str(inventory), "--lab", *where, "--plan", "--limit", "leaves", "--format", "json")
    code, out, err = _fab(env, *plan_args)
    assert code == 0, err
    before = json.loads(out)
    assert before["waves"][0]["label"] == "leaf canary"
    assert sorted(d for w in before["waves"] for d in w["devices"]) == ["leaf1", "leaf2", "leaf3", "leaf4"]
    assert all(lat["source"] == "platform table default" for lat in before["latencies"].values())
    assert before["estimate_s"] == pytest.approx(sum(w["estimate_s"] for w in before["waves"]), abs=0.5)
    assert not Path(where[1]).exists()  # no lab was started, no device touched
    assert not Path(env["FABCONF_AUDIT_LOG"]).exists()

    code, out, err = _fab(
        env, "push", "-i", str(inventory), "--lab", *where, "--limit", "leaf1", "--yes", "--bgp-wait", "0"
    )
    assert code in (0, 1), err  # BGP to the brownfield spines may not come up; the commit is timed either way
    assert "waves: estimate / actual" in out
    assert "leaf canary" in out.split("waves: estimate / actual")[1]

    records = [json.loads(line) for line in Path(env["FABCONF_AUDIT_LOG"]).read_text().splitlines()]
    applied = [r for r in records if r["result"] == "applied"]
    if not applied:
        pytest.skip(f"leaf1 was not applied in this lab run: {out}")
    assert set(applied[0]["phases"]) == {"commit", "verify", "confirm"}
    platform_name = applied[0]["platform"]
    code, out, err = _fab(env, *plan_args)
    assert code == 0, err
    after = json.loads(out)
    assert after["latencies"][platform_name]["source"] == "audit log, 1 push(es)"
    assert after["latencies"][platform_name]["commit_s"] == applied[0]["phases"]["commit"]
