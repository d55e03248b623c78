"""Per-device locks so that two pushes never work on one device at the same time.

A lock is an ``flock`` on ``LOCK_DIR/<platform>@<management address[:port]>.lock``: keyed by what the device is, not
by its inventory name, which two unrelated inventories can share (and one device can have two names in two
inventories). ``LOCK_DIR`` is ``FABCONF_LOCK_DIR``, default the user's state directory
(``$XDG_STATE_HOME/fabconf/locks``, else ``~/.local/state/fabconf/locks``). A lock is held for the whole run
and released by the kernel if fabconf dies; the file names the holder (pid, user, command) for the refusal
message. Locks protect only runs that share the directory: another machine's push is caught on the device
itself (a conflict), not here.
"""

from __future__ import annotations

import fcntl
import getpass
import os
import re
import sys
from pathlib import Path
from typing import IO

from fabconf.deploy.private import open_private, private_dir
from fabconf.errors import FabconfError


class LockedError(FabconfError):
    pass


def lock_dir() -> Path:
    if os.environ.get("FABCONF_LOCK_DIR"):
        return Path(os.environ["FABCONF_LOCK_DIR"])
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "fabconf" / "locks"


def lock_address(hostname: str, port: int | None) -> str:
    """What a device is, for its lock: its management address and, where the inventory names one, its port (the
    devices of a lab on one address, 127.0.0.1, differ only by port)."""
    return f"{hostname}:{port}" if port else hostname


def lock_key(platform: str, address: str) -> str:
    """The file name part for a device: platform and management address, safe as a file name."""
    return re.sub(r"[^A-Za-z0-9_.:@-]", "_", f"{platform}@{address}")


class DeviceLocks:
    """``devices``: (inventory name, platform, management address) of each device to lock."""

    def __init__(self, devices: list[tuple[str, str, str]], directory: Path | None = None) -> None:
        self.devices = sorted(devices)
        self.directory = directory or lock_dir()
        self._held: list[IO[str]] = []

    def __enter__(self) -> DeviceLocks:
        private_dir(self.directory)  # others must not be able to pre-create (or replace) lock files
        busy: list[str] = []
        for name, platform, address in self.devices:
            path = self.directory / f"{lock_key(platform, address)}.lock"
            handle = os.fdopen(open_private(path, os.O_RDWR), "a+")
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
            handle.write(f"pid {os.getpid()} user {getpass.getuser()} as {name}: {' '.join(sys.argv[:3])}")
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
