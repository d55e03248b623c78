"""The jobs layer's ``Target`` and ``prepare``: the lab's defaults are the CLI's, and a job started the lab only
through ``Target.start_lab`` (the product reaches the lab through fabconf.cli.lab alone)."""

from __future__ import annotations

from pathlib import Path

import pytest

import fabconf
from fabconf.cli import lab
from fabconf.cli.devices import quiet_start, target_of
from fabconf.cli.main import build_parser
from fabconf.errors import UsageError
from fabconf.jobs.target import LAB_NETWORK, LAB_STATE, Target, prepare

ROOT = Path(__file__).resolve().parents[3]


def test_the_lab_defaults_are_the_cli_s() -> None:
    assert LAB_STATE == lab.DEFAULT_STATE
    assert LAB_NETWORK == lab.DEFAULT_NETWORK


def test_a_target_without_start_lab_needs_a_running_lab(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no running lab"):
        prepare(Target(ROOT / "inventory", lab=True, state=tmp_path / "none"))


def test_start_lab_is_called_with_the_target_and_its_failure_refused(tmp_path: Path) -> None:
    calls: list[tuple[Path, Path, str]] = []

    def refuse(inventory: Path, state: Path, network: str) -> int:
        calls.append((inventory, state, network))
        return 1

    target = Target(ROOT / "inventory", lab=True, state=tmp_path / "st", network="127.61.0.0/16", start_lab=refuse)
    with pytest.raises(UsageError, match="the lab could not be started"):
        prepare(target)
    assert calls == [(ROOT / "inventory", tmp_path / "st", "127.61.0.0/16")]


def test_the_cli_passes_its_lab_starter() -> None:
    args = build_parser().parse_args(["diff", "--lab", "-i", str(ROOT / "inventory")])
    assert target_of(args).start_lab is quiet_start


def test_the_jobs_are_the_public_api() -> None:
    from fabconf.jobs import diff, drift, preflight, push, verify

    assert fabconf.diff is diff.diff and fabconf.push is push.push and fabconf.verify is verify.verify
    assert fabconf.drift is drift.check and fabconf.preflight_checks is preflight.check
    assert fabconf.Target is Target
