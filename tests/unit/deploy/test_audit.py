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


def _unfinished_parsing_every_line(path: Path) -> list[tuple[str, str]]:
    """What ``unfinished`` returns, worked out by parsing every line (the code before the skip of issue 42)."""
    import json

    open_: dict[tuple[str, str], dict[str, object]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        key = (str(entry.get("run")), str(entry.get("device")))
        result = entry.get("result")
        if result == audit.COMMITTING:
            open_[key] = entry
            continue
        open_.pop(key, None)
        if result in audit.READ_BACK or result == audit.ACKNOWLEDGED:
            everywhere = result == audit.ACKNOWLEDGED and entry.get("target") is None
            for other, e in list(open_.items()):
                if e.get("device") == entry.get("device") and (everywhere or e.get("target") == entry.get("target")):
                    del open_[other]
    return sorted((str(e["run"]), str(e["device"])) for e in open_.values())


@pytest.mark.parametrize("seed", range(20))
def test_unfinished_skips_only_lines_that_cannot_change_it(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a line is parsed only while a commit is open or when it may open one (issue 42: an audit log of 23,000
    # records was read twice per verify and push); random logs give what parsing every line gives
    import json
    import random

    rng = random.Random(seed)
    log = tmp_path / "audit.jsonl"
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(log))
    results = [audit.COMMITTING, "applied", "rolled back", "unchanged", "failed", "changes", audit.ACKNOWLEDGED]
    devices = ["leaf1", "leaf2", "spine1", "läf3"]
    with log.open("w", encoding="utf-8") as out:
        for i in range(rng.randrange(1, 60)):
            entry = {"run": f"run{rng.randrange(4)}", "device": rng.choice(devices), "result": rng.choice(results)}
            entry["time"] = f"2026-12-05T00:00:{i:02d}"
            if rng.random() < 0.5:
                entry["target"] = rng.choice(["lab a", "10.0.0.1"])
            if rng.random() < 0.1:
                entry["message"] = "committing went wrong"
            text = json.dumps(entry, ensure_ascii=rng.random() < 0.5)
            if rng.random() < 0.05:
                text = text[: rng.randrange(len(text))]  # cut short by a crash
            out.write(text + "\n")
    got = sorted((str(e["run"]), str(e["device"])) for e in audit.unfinished())
    assert got == _unfinished_parsing_every_line(log)
