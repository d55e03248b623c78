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
