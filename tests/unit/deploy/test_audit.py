"""The audit log's `committing` records: written before each commit, closed by the outcome; what is left open
is what a killed run touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabconf.deploy import audit


def test_unfinished_commits_are_the_committing_records_without_an_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "audit.jsonl"
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(log))
    audit.record("run1", "leaf1", "d", audit.COMMITTING, config_before_sha256="a")
    audit.record("run1", "leaf1", "d", "applied")
    audit.record("run1", "leaf2", "d", audit.COMMITTING, config_before_sha256="b")
    audit.record("run2", "leaf1", "d", audit.COMMITTING, config_before_sha256="c")
    with log.open("a") as out:
        out.write('{"run": "run3", "device": "leaf9", "result": "commi')  # cut short by a crash
    left = audit.unfinished()
    assert [(e["run"], e["device"], e["config_before_sha256"]) for e in left] == [
        ("run1", "leaf2", "b"),
        ("run2", "leaf1", "c"),
    ]
    audit.record("run2", "leaf1", "d", "rolled back")
    assert [e["device"] for e in audit.unfinished()] == ["leaf2"]


def test_a_later_outcome_read_back_at_the_same_target_resolves_an_unfinished_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records match on device and target: a later push's outcome at that target closes the commit; the same
    name in another lab (another target) neither closes it nor is closed by it."""
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    monkeypatch.setenv("FABCONF_LOCK_DIR", str(tmp_path / "locks"))
    here, there = audit.target_of({"lab_state": "/labs/a"}, "127.1.0.9"), audit.target_of(None, "192.0.2.9")
    assert (here, there) == ("lab /labs/a", "192.0.2.9")
    audit.record("run1", "leaf1", "d", audit.COMMITTING, target=here, address="127.1.0.9", platform="eos")
    audit.record("run2", "leaf1", "d", audit.COMMITTING, target=there, address="192.0.2.9", platform="eos")
    audit.record("run3", "leaf1", "d", "untouched", target=here)  # not read back from the device
    assert [e["run"] for e in audit.unfinished()] == ["run1", "run2"]
    audit.record("run4", "leaf1", "d", "applied", target=here)
    assert [e["run"] for e in audit.unfinished()] == ["run2"]
    audit.resolve("verify", [("leaf1", "verified", "127.1.0.9")], {"lab_state": "/labs/a"})  # nothing left there
    assert [e["run"] for e in audit.unfinished()] == ["run2"]
    audit.resolve("verify", [("leaf1", "verified", "192.0.2.9")], None)
    assert audit.unfinished() == []


def test_an_acknowledgement_closes_every_target_unless_one_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    monkeypatch.setenv("FABCONF_LOCK_DIR", str(tmp_path / "locks"))
    for run, target in (("run1", "a"), ("run2", "b"), ("run3", "c")):
        audit.record(run, "leaf1", "d", audit.COMMITTING, target=target, address=target, platform="eos")
    assert audit.acknowledge("leaf1", "checked", target="a") == 1
    assert [e["target"] for e in audit.unfinished()] == ["b", "c"]
    assert audit.acknowledge("leaf1", "checked the rest") == 2
    assert audit.unfinished() == []
    assert audit.acknowledge("leaf1", "again") == 0


def test_a_commit_whose_lock_a_live_run_holds_is_in_progress_not_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fabconf.cli import main
    from fabconf.deploy.lock import DeviceLocks

    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    monkeypatch.setenv("FABCONF_LOCK_DIR", str(tmp_path / "locks"))
    audit.record("run1", "leaf1", "d", audit.COMMITTING, target="192.0.2.9", address="192.0.2.9", platform="eos")
    with DeviceLocks([("leaf1", "eos", "192.0.2.9")]):  # the live run, mid-commit
        (entry,) = audit.unfinished()
        assert entry["in_progress"] is True
        assert main(["audit"]) == 0
        assert "in progress (a live run holds its lock)" in capsys.readouterr().out
    (entry,) = audit.unfinished()
    assert entry["in_progress"] is False  # the run died without an outcome: now it is lost
    assert main(["audit"]) == 2
    assert "outcome never recorded" in capsys.readouterr().out
