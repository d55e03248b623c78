"""The commit lock ON a GPU host: one fabconf run at a time changes a host, whichever machine it runs from.

A local lock (``fabconf.deploy.lock``) protects only runs that share its directory; this one lives on the host
itself, so two operators on two machines are serialised too. It is a directory, ``/run/fabconf/commit.lock``,
made with ``mkdir`` (without ``-p``): mkdir(2) creates it for exactly one of two racing sessions and fails with
EEXIST for the other — the classic POSIX mutex, needing nothing but coreutils on the host. ``/run`` is a tmpfs,
so a reboot ends every lock. Inside it, ``owner`` names the holder (controller host name, process id, start time).

A holder is alive while its process runs (checked with ``kill -0`` when it is on this controller) or, when it is
on another controller, until its lease (``LEASE`` seconds from the start) runs out: then the lock is stale and
taken over. [U] assumes controller clocks agree within a few seconds (NTP). A lock directory without an owner
file (a run killed between ``mkdir`` and writing it, a window of one round trip) is treated as held: it names
itself in the conflict message and can be removed by hand, or by a reboot.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from dataclasses import asdict, dataclass

from fabconf.drivers.contract import CommitConflict
from fabconf.platform.linux.plan import file_write, sh
from fabconf.platform.linux.ssh import HostShell, LinuxHostError

LOCK_PARENT = "/run/fabconf"
LOCK_DIR = f"{LOCK_PARENT}/commit.lock"
OWNER_FILE = f"{LOCK_DIR}/owner"
LEASE = 900.0  # seconds another controller's lock holds at most (a host commit with a firmware reset fits)


@dataclass(frozen=True)
class Owner:
    controller: str
    pid: int
    started: float

    @classmethod
    def me(cls) -> Owner:
        return cls(socket.gethostname(), os.getpid(), time.time())

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Owner | None:
        try:
            data = json.loads(text)
            return cls(str(data["controller"]), int(data["pid"]), float(data["started"]))
        except (ValueError, KeyError, TypeError):
            return None

    def is_me(self) -> bool:
        return self.controller == socket.gethostname() and self.pid == os.getpid()

    def alive(self) -> bool:
        if self.controller == socket.gethostname():
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                return False
            except PermissionError:
                return True  # another user's live process
            return True
        return time.time() - self.started < LEASE

    def describe(self) -> str:
        since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.started))
        return f"fabconf process {self.pid} on {self.controller}, since {since}"


class HostLock:
    """Take and release the host's commit lock over an open ``HostShell``; re-entrant within one process (a
    reconnect of the same run, recovering after a lost session, holds it already)."""

    def __init__(self, shell: HostShell, sudo: str) -> None:
        self.shell, self.sudo = shell, sudo

    def acquire(self) -> None:
        """Raises ``CommitConflict`` while another live run holds it; takes over a stale lock."""
        self.shell.run(self.sudo + sh("mkdir", "-p", LOCK_PARENT))
        for _attempt in range(2):
            made = self.shell.run(self.sudo + sh("mkdir", LOCK_DIR), check=False)
            if made.status == 0:
                self.shell.run(file_write(self.sudo, OWNER_FILE, Owner.me().to_json()))
                return
            owner = self._owner()
            if owner is None:
                raise CommitConflict(
                    f"the host's commit lock {LOCK_DIR} exists without an owner (a run killed while taking it?); "
                    "remove it if no fabconf run is changing this host"
                )
            if owner.is_me():
                return
            if owner.alive():
                raise CommitConflict(f"another fabconf run is committing on this host ({owner.describe()})")
            self.shell.run(self.sudo + sh("rm", "-rf", LOCK_DIR))  # stale: its run is gone
        raise CommitConflict(f"another fabconf run took the host's commit lock {LOCK_DIR} at the same moment")

    def _owner(self) -> Owner | None:
        result = self.shell.run(f"{self.sudo}{sh('cat', OWNER_FILE)}", check=False)
        if result.status != 0:
            if self.shell.run(sh("test", "-d", LOCK_DIR), check=False).status != 0:
                raise self.shell.failure(f"mkdir {LOCK_DIR}", result)  # not there, yet mkdir failed: a real error
            return None
        return Owner.from_json(result.stdout)

    def held_by_other(self) -> Owner | None:
        """Read only: the live holder when it is another run (None when free, stale, or ours)."""
        with contextlib.suppress(LinuxHostError):
            if self.shell.run(sh("test", "-d", LOCK_DIR), check=False).status != 0:
                return None
            owner = self._owner()
            if owner is None:
                return Owner("an unknown controller", 0, time.time())
            return owner if owner.alive() and not owner.is_me() else None
        return None

    def release(self) -> None:
        """Remove the lock when this process holds it; never raises (a lost session leaves it for the
        reconnect of the same run, or for the next run once this process is gone)."""
        with contextlib.suppress(Exception):
            owner = self._owner()
            if owner is not None and owner.is_me():
                self.shell.run(self.sudo + sh("rm", "-rf", LOCK_DIR))
