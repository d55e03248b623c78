"""Per-device locks so that two pushes never work on one device at the same time.

A lock is an ``flock`` on ``LOCK_DIR/<device>.lock`` (``FABCONF_LOCK_DIR``, default
``/tmp/fabconf-locks``), held for the whole run and released by the kernel if fabconf dies. The file
names the holder (pid, user, command) for the refusal message.
"""

from __future__ import annotations

import fcntl
import getpass
import os
import sys
from pathlib import Path
from typing import IO

from fabconf.errors import FabconfError


class LockedError(FabconfError):
    pass


def lock_dir() -> Path:
    return Path(os.environ.get("FABCONF_LOCK_DIR", "/tmp/fabconf-locks"))


class DeviceLocks:
    def __init__(self, names: list[str], directory: Path | None = None) -> None:
        self.names = sorted(names)
        self.directory = directory or lock_dir()
        self._held: list[IO[str]] = []

    def __enter__(self) -> DeviceLocks:
        self.directory.mkdir(parents=True, exist_ok=True)
        busy: list[str] = []
        for name in self.names:
            path = self.directory / f"{name}.lock"
            handle = path.open("a+")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another fabconf run"
                busy.append(f"{name} ({holder})")
                handle.close()
                continue
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()} user {getpass.getuser()}: {' '.join(sys.argv[:3])}")
            handle.flush()
            self._held.append(handle)
        if busy:
            self.release()
            raise LockedError("another push holds these devices: " + ", ".join(busy))
        return self

    def release(self) -> None:
        for handle in self._held:
            try:
                fcntl.flock(handle, fcntl.LOCK_UN)
            finally:
                handle.close()
        self._held = []

    def __exit__(self, *exc: object) -> None:
        self.release()
