"""Loopback ranges for labs started by tests: each lab takes a /16 of 127/8 that no other test process uses,
so parallel tests (xdist workers, concurrent runs) never collide on an address and port.

A range is reserved with an exclusive ``flock`` on a file under the temp dir, held until the process ends,
and is skipped when something already listens in it."""

from __future__ import annotations

import fcntl
import os
import random
import socket
import tempfile
from pathlib import Path
from typing import IO

_HELD: list[IO[str]] = []  # reservations live as long as this process
_DIR = Path(tempfile.gettempdir()) / "fabconf-test-networks"


def free_network() -> str:
    _DIR.mkdir(exist_ok=True)
    octets = list(range(90, 250))
    random.Random(os.getpid()).shuffle(octets)
    for octet in octets:
        handle = (_DIR / f"{octet}.lock").open("a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        probe = socket.socket()
        probe.settimeout(0.2)
        busy = probe.connect_ex((f"127.{octet}.0.1", 22)) == 0
        probe.close()
        if busy:
            handle.close()
            continue
        _HELD.append(handle)
        return f"127.{octet}.0.0/16"
    raise RuntimeError("no free 127.X.0.0/16 for the lab")
