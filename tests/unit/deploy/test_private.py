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


def test_write_private_creates_the_file_with_its_final_mode(tmp_path: Path) -> None:
    """Under umask 0 a file written then narrowed is 0666 for a moment; write_private's never is: its temporary
    file is created 0600 (O_EXCL, O_NOFOLLOW) and renamed over the target, a symlink there replaced."""
    from fabconf.private import write_private

    old = os.umask(0)
    try:
        target = tmp_path / "state" / "lab.env"
        elsewhere = tmp_path / "authorized_keys"
        elsewhere.write_text("mine\n")
        target.parent.mkdir(mode=0o700)
        target.symlink_to(elsewhere)
        write_private(target, "FABCONF_PASSWORD=x\n")
    finally:
        os.umask(old)
    assert elsewhere.read_text() == "mine\n" and not target.is_symlink()
    assert _mode(target) == 0o600 and target.read_text() == "FABCONF_PASSWORD=x\n"
    assert [p.name for p in target.parent.iterdir()] == ["lab.env"]  # no temporary file left


def test_read_private_trusts_only_the_operators_own_files(tmp_path: Path) -> None:
    from fabconf.private import read_private

    mine = tmp_path / "daemon.json"
    mine.write_text("{}")
    mine.chmod(0o600)
    assert read_private(mine) == b"{}"
    link = tmp_path / "link.json"
    link.symlink_to(mine)
    with pytest.raises(OSError):  # ELOOP: never read through a symlink
        read_private(link)
    mine.chmod(0o666)
    with pytest.raises(UnsafePath, match="writable by others"):
        read_private(mine)


def test_trusted_chain_refuses_a_path_others_can_replace(tmp_path: Path) -> None:
    from fabconf.private import trusted_chain

    view = tmp_path / "mine" / "view"
    view.parent.mkdir()
    assert trusted_chain(view) == view.resolve()  # under /tmp: writable by all, but sticky
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # not sticky: anyone may rename its entries and put a symlink there
    with pytest.raises(UnsafePath, match="writable by others"):
        trusted_chain(shared / "view")
    (tmp_path / "link").symlink_to(view.parent)
    with pytest.raises(UnsafePath, match="symbolic link"):
        trusted_chain(tmp_path / "link")


def test_write_file_leaves_an_identical_file_untouched(tmp_path: Path) -> None:
    """An output file that already holds the text is not truncated and rewritten (issue 42: 5,632 device files
    re-rendered): its inode, mode and times stay; one that differs is rewritten whole, longer or shorter."""
    from fabconf.private import write_file

    path = tmp_path / "leaf1.cfg"
    write_file(path, "hostname leaf1\n")
    os.chmod(path, 0o640)
    os.utime(path, (1_000_000_000, 1_000_000_000))
    before = path.stat()
    write_file(path, "hostname leaf1\n")
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns, _mode(path)) == (before.st_ino, 1_000_000_000 * 10**9, 0o640)
    write_file(path, "hostname leaf1\nmtu 9216\n")
    assert path.read_text() == "hostname leaf1\nmtu 9216\n" and path.stat().st_mtime_ns != before.st_mtime_ns
    write_file(path, "hostname leaf2\n")
    assert path.read_text() == "hostname leaf2\n"
    write_file(path, "")
    assert path.read_bytes() == b""


def test_write_file_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    """A FIFO at an output file's name is refused with the file and why (writing into it would block until some
    reader came), and nothing is created in its place."""
    from fabconf.private import Unwritable, write_file

    fifo = tmp_path / "leaf1.cfg"
    os.mkfifo(fifo)
    with pytest.raises(Unwritable, match=f"{fifo}: cannot write: not a regular file"):
        write_file(fifo, "hostname leaf1\n")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
