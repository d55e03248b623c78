"""What killed runs left on a device, as the audit log records it (fabconf.deploy.leftovers.recorded): the
next push of that device at that target cleans exactly these."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabconf.deploy import audit
from fabconf.deploy.leftovers import recorded

T = "lab /tmp/x"


@pytest.fixture(autouse=True)
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    return tmp_path / "audit.jsonl"


def commit(run: str, device: str = "leaf3", target: str = T, **left: str) -> None:
    extra: dict[str, Any] = {"leftovers": left} if left else {}
    audit.record(run, device, "d", audit.COMMITTING, target=target, **extra)


def test_a_killed_runs_recorded_leftovers_are_found_at_its_target_only() -> None:
    commit("r1", session="fabconf_r1")
    assert recorded("leaf3", T, "now") == [{"session": "fabconf_r1", "run": "r1"}]
    assert recorded("leaf3", "10.0.0.3", "now") == []  # another fabric's leaf3
    assert recorded("leaf4", T, "now") == []
    assert recorded("leaf3", T, "r1") == []  # a run never cleans up after itself


def test_a_run_that_ended_on_the_device_left_nothing() -> None:
    commit("r1", session="fabconf_r1")
    audit.record("r1", "leaf3", "d", "applied", target=T)
    assert recorded("leaf3", T, "now") == []


def test_a_failed_run_may_have_left_a_commit_waiting_for_its_timer() -> None:
    commit("r1", checkpoint="rollback_config.txt")
    audit.record("r1", "leaf3", "d", "failed", "device state unknown", target=T)
    assert recorded("leaf3", T, "now") == [{"checkpoint": "rollback_config.txt", "run": "r1"}]


def test_cleaned_leftovers_are_not_found_again_and_the_unfinished_commit_is_closed() -> None:
    commit("r1", session="fabconf_r1")
    assert [e["run"] for e in audit.unfinished()] == ["r1"]
    audit.record("r2", "leaf3", "", audit.CLEANED, "aborted", target=T, resolves=["r1"])
    assert recorded("leaf3", T, "now") == []
    assert audit.unfinished() == []


def test_acknowledged_or_resolved_commits_still_have_their_leftovers_cleaned() -> None:
    commit("r1", session="fabconf_r1")
    audit.acknowledge("leaf3", "looked at it")
    audit.resolve("verify", [("leaf3", "verified", "ignored")], {"lab_state": "/tmp/x"})
    assert audit.unfinished() == []
    assert recorded("leaf3", T, "now") == [{"session": "fabconf_r1", "run": "r1"}]


def test_a_later_commit_of_another_run_means_the_earlier_leftovers_were_cleaned_first() -> None:
    commit("r1", session="fabconf_r1")
    commit("r2", session="fabconf_r2")  # r2 cleaned r1's before it staged
    assert recorded("leaf3", T, "now") == [{"session": "fabconf_r2", "run": "r2"}]
    commit("r3")  # a commit that leaves nothing by name
    assert recorded("leaf3", T, "now") == []
