"""Locks and the audit log live where only the operator can write: created 0700/0600, a directory others can
write or another user owns is refused, a symlink planted at the file is never followed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from fabconf.deploy import audit
from fabconf.deploy.lock import DeviceLocks
from fabconf.deploy.private import UnsafePath


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_audit_log_and_locks_are_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "state" / "audit.jsonl"
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(log))
    audit.record("run1", "leaf1", "+x", "applied")
    assert _mode(log) == 0o600 and _mode(log.parent) == 0o700
    locks = tmp_path / "locks"
    with DeviceLocks([("leaf1", "eos", "192.0.2.11")], locks):
        (lock,) = locks.iterdir()
        assert _mode(lock) == 0o600 and _mode(locks) == 0o700


def test_a_directory_others_can_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    locks = DeviceLocks([("leaf1", "eos", "192.0.2.11")], shared)
    with pytest.raises(UnsafePath, match=r"writable by others \(mode 0777\)"):
        locks.__enter__()
    assert list(shared.iterdir()) == []


def test_a_symlink_planted_at_the_audit_log_is_not_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    home = tmp_path / "state"
    home.mkdir(mode=0o700)
    (home / "audit.jsonl").symlink_to(victim)
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(home / "audit.jsonl"))
    with pytest.raises(OSError):
        audit.record("run1", "leaf1", "+x", "applied")
    assert victim.read_text() == "precious\n"


def test_an_existing_log_readable_by_others_is_tightened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "state" / "audit.jsonl"
    log.parent.mkdir(mode=0o700)
    log.write_text("")
    os.chmod(log, 0o644)
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(log))
    audit.record("run1", "leaf1", "+x", "applied")
    assert _mode(log) == 0o600
