"""The tests' lab networks are reserved in a lock directory of the user's own: another user's files in the temp
dir (the old shared ``/tmp/fabconf-test-networks``, made by whoever ran the tests first) never block a run, and a
directory under the user's name that someone else owns is an error that says what to do."""

from __future__ import annotations

import os
from pathlib import Path

import network
import pytest


def test_the_lock_directory_is_the_users_own() -> None:
    assert network.lock_dir().name == f"fabconf-test-networks-{os.getuid()}"
    assert network.lock_dir().stat().st_uid == os.getuid()
    assert network.free_network().startswith("127.")


def test_a_directory_someone_else_owns_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to make a directory that another user owns")
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, 65534, 65534)
    monkeypatch.setattr(network, "_DIR", theirs)
    with pytest.raises(RuntimeError, match=rf"{theirs}: not a directory of this user \(uid 0\); remove it"):
        network.lock_dir()
