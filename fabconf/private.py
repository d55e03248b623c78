"""Files only the operator may touch: the lock directory, the audit log, drift backups and the lab's state.

A lock or audit file in a place another local user can write is worth nothing: they could pre-create the
lock files (and block every push) or a symlink where the audit log goes (and have fabconf append to, or
truncate, a file of their choosing). So fabconf creates these directories with mode 0700 and files with 0600,
never follows a symlink at the file itself, and refuses a directory that is not the operator's or that
others can write. A secret file is created with its final mode (``write_private``: never a moment at a wider
one) under a temporary name and renamed into place, so a reader never sees half of it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from fabconf.errors import FabconfError


class UnsafePath(FabconfError):
    pass


def private_dir(path: Path, *, tighten: bool = False, symlink: bool = True) -> Path:
    """Create ``path`` (0700) if missing; refuse it when another user owns it or group/others can write it.
    ``tighten``: an existing directory of the operator's that others may read or enter becomes 0700.
    ``symlink=False``: ``path`` itself may not be a symbolic link."""
    _mkdirs(path)
    if not symlink and path.is_symlink():
        raise UnsafePath(f"{path}: a symbolic link; give the directory itself")
    info = path.stat()
    if info.st_uid != os.getuid():
        raise UnsafePath(f"{path}: owned by uid {info.st_uid}, not by you (uid {os.getuid()}); choose your own")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        mode = stat.S_IMODE(info.st_mode)
        raise UnsafePath(f"{path}: writable by others (mode {mode:04o}); `chmod go-w {path}` or choose another")
    if tighten and stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, 0o700, follow_symlinks=False)
    return path


def _mkdirs(path: Path) -> None:
    """``path`` and every missing directory above it, each created 0700 (``Path.mkdir(parents=True)`` creates the
    ones above with the default mode)."""
    if path.is_dir():
        return
    if path.parent != path:
        _mkdirs(path.parent)
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)


def trusted_chain(path: Path) -> Path:
    """``path`` resolved, when no other user can replace it or any directory above it: each is the operator's
    or root's, and none is writable by group or others unless sticky (like /tmp, where only an entry's owner
    may rename it). ``path`` itself may not be a symbolic link. The resolved path, else UnsafePath."""
    path = Path(path)
    if path.is_symlink():
        raise UnsafePath(f"{path}: a symbolic link; give the directory itself")
    real = path.resolve()
    for where in (real, *real.parents):
        try:
            info = os.lstat(where)
        except FileNotFoundError:
            continue  # created later, by the operator's process, with its own mode
        if info.st_uid not in (0, os.getuid()):
            raise UnsafePath(f"{path}: {where} is owned by uid {info.st_uid}, neither you nor root")
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not info.st_mode & stat.S_ISVTX:
            mode = stat.S_IMODE(info.st_mode)
            raise UnsafePath(f"{path}: {where} is writable by others (mode {mode:04o})")
    return real


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


def write_private(path: Path, data: bytes | str, mode: int = 0o600) -> Path:
    """Write ``path`` whole, with ``mode`` from the moment it exists: a new file (O_CREAT|O_EXCL|O_NOFOLLOW,
    ``mode``) under a temporary name in the same directory, renamed over ``path`` (a symbolic link there is
    replaced, never followed). The directory must be the operator's and not writable by others."""
    path = Path(path)
    private_dir(path.parent)
    if isinstance(data, str):
        data = data.encode()
    import secrets  # here, not at start-up: it loads hashlib and random, which most runs never need (issue 42)

    temp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode & 0o777)
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), mode & 0o777)  # exactly `mode` (the umask may have narrowed it), never wider
            out.write(data)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return path


class Unwritable(ValueError):
    """An output file that could not be written: ``path: cannot write: why``."""


def write_file(path: Path, data: str) -> None:
    """Write an output file the operator asked for (a rendered device file, a generated inventory or document),
    created with its final mode (0644 less the umask) and never through a symbolic link: ``O_NOFOLLOW`` refuses a
    link at the file's name (ELOOP) instead of following it to wherever it points. Any failure is ``Unwritable``,
    naming the file and why (a link said as such).

    An existing regular file that already holds exactly ``data`` is left as it is (its bytes, mode and times): a
    re-render of 5,632 unchanged devices then reads them instead of truncating and rewriting 87 MB (issue 42). One
    that differs is overwritten in place and cut to the new length; one that is not a regular file (a FIFO, a
    device) is refused."""
    content = data.encode("utf-8")
    try:
        readable = True
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except PermissionError:  # a file the operator may write but not read, or no file and no right to create it
            readable = False
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            size = _regular_size(fd) if readable else 0
            if size == len(content) and size and _holds(fd, content):
                return
            _write_all(fd, content)
            if size > len(content):
                os.ftruncate(fd, len(content))
        finally:
            os.close(fd)
    except OSError as exc:
        why = "a symbolic link (fabconf never writes through one)" if exc.errno == errno.ELOOP else exc.strerror
        raise Unwritable(f"{path}: cannot write: {why or exc}") from None


def _regular_size(fd: int) -> int:
    """The size of the regular file open at ``fd``; OSError when it is anything else."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file")
    return info.st_size


def _holds(fd: int, content: bytes) -> bool:
    """Whether the file at ``fd`` (at offset 0, as long as ``content``) holds exactly ``content``."""
    return os.read(fd, len(content) + 1) == content


def _write_all(fd: int, content: bytes) -> None:
    """``content`` from offset 0 of ``fd``, whole (a write may take fewer bytes than given)."""
    view, offset = memoryview(content), 0
    while offset < len(content):
        offset += os.pwrite(fd, view[offset:], offset)


def read_private(path: Path, limit: int = 1 << 20) -> bytes:
    """The content of ``path`` when it is the operator's own regular file that no one else can write; never
    through a symbolic link. OSError when it cannot be read; UnsafePath when it is not to be trusted."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as src:
        info = os.fstat(src.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(f"{path}: not a regular file")
        if info.st_uid != os.getuid():
            raise UnsafePath(f"{path}: owned by uid {info.st_uid}, not by you (uid {os.getuid()})")
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise UnsafePath(f"{path}: writable by others (mode {stat.S_IMODE(info.st_mode):04o})")
        return src.read(limit)
