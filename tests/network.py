"""Loopback ranges for labs started by tests: each lab takes a /16 of 127/8 that no other test process uses,
so parallel tests (xdist workers, concurrent runs) never collide on an address and port.

A range is reserved with an exclusive ``flock`` on a file in a directory of the user's own under the temp dir
(another user's directory or files there never block a run), held until the process ends, and is skipped when
something already listens in it, on the vendor's or the lab's high SSH port."""

from __future__ import annotations

import fcntl
import os
import random
import socket
import tempfile
from pathlib import Path
from typing import IO

_HELD: list[IO[str]] = []  # reservations live as long as this process
_DIR = Path(tempfile.gettempdir()) / f"fabconf-test-networks-{os.getuid()}"
_PROBED_PORTS = (22, 10022)  # the lab's SSH port, with and without the privilege to bind ports below 1024


def lock_dir() -> Path:
    """The user's own lock directory (0700); one that is not the user's, or not a directory, is an error that
    says so rather than a lock that silently never holds."""
    _DIR.mkdir(mode=0o700, exist_ok=True)
    st = _DIR.lstat()
    if not _DIR.is_dir() or _DIR.is_symlink() or st.st_uid != os.getuid():
        raise RuntimeError(f"{_DIR}: not a directory of this user (uid {os.getuid()}); remove it")
    return _DIR


def base_port(network: str) -> int:
    """A base port for a lab of the shared-address layout (``fabconf_lab.ports``) on ``network``: 60 ports for each
    127.X.0.0/16 that ``free_network`` hands out, from 20000 (under Linux's ephemeral range, 32768 up)."""
    return 20000 + (int(network.split(".")[1]) - 90) * 60


def free_network() -> str:
    lock_dir()
    octets = list(range(90, 250))
    random.Random(os.getpid()).shuffle(octets)
    for octet in octets:
        handle = (_DIR / f"{octet}.lock").open("a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        if any(_listening(f"127.{octet}.0.1", port) for port in _PROBED_PORTS):
            handle.close()
            continue
        _HELD.append(handle)
        return f"127.{octet}.0.0/16"
    raise RuntimeError("no free 127.X.0.0/16 for the lab")


def _listening(address: str, port: int) -> bool:
    probe = socket.socket()
    probe.settimeout(0.2)
    try:
        return probe.connect_ex((address, port)) == 0
    finally:
        probe.close()
