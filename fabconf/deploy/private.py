"""Files only the operator may touch: the lock directory and the audit log.

A lock or audit file in a place another local user can write is worth nothing: they could pre-create the
lock files (and block every push) or a symlink where the audit log goes (and have fabconf append to, or
truncate, a file of their choosing). So fabconf creates these directories with mode 0700 and files with 0600,
never follows a symlink at the file itself, and refuses a directory that is not the operator's or that
others can write.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from fabconf.errors import FabconfError


class UnsafePath(FabconfError):
    pass


def private_dir(path: Path) -> Path:
    """Create ``path`` (0700) if missing; refuse it when another user owns it or group/others can write it."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.stat()
    if info.st_uid != os.getuid():
        raise UnsafePath(f"{path}: owned by uid {info.st_uid}, not by you (uid {os.getuid()}); choose your own")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        mode = stat.S_IMODE(info.st_mode)
        raise UnsafePath(f"{path}: writable by others (mode {mode:04o}); `chmod go-w {path}` or choose another")
    return path


def open_private(path: Path, flags: int) -> int:
    """``os.open`` of a file in a private directory: created 0600, never through a symlink; an existing file
    that is not the operator's is refused, and one readable by others is tightened to 0600."""
    private_dir(path.parent)
    fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    info = os.fstat(fd)
    if info.st_uid != os.getuid():
        os.close(fd)
        raise UnsafePath(f"{path}: owned by uid {info.st_uid}, not by you")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.fchmod(fd, 0o600)
    return fd
