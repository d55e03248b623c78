"""The in-memory file system of a lab Linux host: regular files in a dict plus virtual trees (sysfs)."""

from __future__ import annotations

import posixpath
import threading
from typing import Protocol


class FsError(Exception):
    """A file operation failed; the message is the strerror text ("No such file or directory")."""


# -- file system ----------------------------------------------------------------------------------


class FileSystem(Protocol):
    def read(self, path: str) -> str: ...
    def write(self, path: str, data: str, *, append: bool, root: bool) -> None: ...
    def exists(self, path: str) -> bool: ...
    def isdir(self, path: str) -> bool: ...
    def listdir(self, path: str) -> list[str]: ...
    def remove(self, path: str, *, root: bool, recursive: bool = False) -> None: ...
    def mkdir(self, path: str, *, root: bool, exist_ok: bool = True) -> None: ...


class VirtualFiles(Protocol):
    """Files computed from device state (sysfs, configfs): a host supplies one for a path prefix."""

    def read(self, path: str) -> str | None: ...  # None: no such file
    def write(self, path: str, data: str) -> None: ...  # raises FsError
    def listdir(self, path: str) -> list[str] | None: ...  # None: not a directory


def _user_writable(path: str, home: str) -> bool:
    return path.startswith(("/tmp/", "/dev/null")) or path.startswith(home.rstrip("/") + "/")


class MemoryFs:
    """Regular files in a dict (shared with the host's state) plus virtual trees under given prefixes."""

    def __init__(self, files: dict[str, str], virtual: dict[str, VirtualFiles] | None = None, home: str = "/root"):
        self.files = files
        self.virtual = virtual or {}
        self.home = home
        self._mkdir_lock = threading.Lock()
        self.dirs: set[str] = {
            "/",
            "/etc",
            "/tmp",
            "/root",
            "/home",
            "/usr",
            "/usr/local",
            "/usr/local/sbin",
            "/usr/local/bin",
            "/etc/systemd",
            "/etc/systemd/system",
            "/var",
            "/run",
            "/dev",
        }

    def _virtual(self, path: str) -> VirtualFiles | None:
        for prefix, tree in self.virtual.items():
            if path == prefix or path.startswith(prefix + "/"):
                return tree
        return None

    def read(self, path: str) -> str:
        if path == "/dev/null":
            return ""
        tree = self._virtual(path)
        if tree is not None:
            data = tree.read(path)
            if data is None:
                if tree.listdir(path) is not None:
                    raise FsError("Is a directory")
                raise FsError("No such file or directory")
            return data
        if path in self.files:
            return self.files[path]
        if self.isdir(path):
            raise FsError("Is a directory")
        raise FsError("No such file or directory")

    def write(self, path: str, data: str, *, append: bool, root: bool) -> None:
        if path == "/dev/null":
            return
        tree = self._virtual(path)
        if tree is not None:
            if not root:
                raise FsError("Permission denied")
            tree.write(path, data)
            return
        if self.isdir(path):
            raise FsError("Is a directory")
        if not self.isdir(posixpath.dirname(path)):
            raise FsError("No such file or directory")
        if not root and not _user_writable(path, self.home):
            raise FsError("Permission denied")
        self.files[path] = (self.files.get(path, "") + data) if append else data

    def exists(self, path: str) -> bool:
        tree = self._virtual(path)
        if tree is not None:
            return tree.read(path) is not None or tree.listdir(path) is not None
        return path in self.files or self.isdir(path) or path == "/dev/null"

    def isdir(self, path: str) -> bool:
        tree = self._virtual(path)
        if tree is not None:
            return tree.listdir(path) is not None
        if path in self.dirs:
            return True
        prefix = path.rstrip("/") + "/"
        return any(name.startswith(prefix) for name in self.files)

    def listdir(self, path: str) -> list[str]:
        tree = self._virtual(path)
        if tree is not None:
            names = tree.listdir(path)
            if names is None:
                raise FsError("Not a directory" if tree.read(path) is not None else "No such file or directory")
            return sorted(names)
        if not self.isdir(path):
            raise FsError("Not a directory" if path in self.files else "No such file or directory")
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix) :].split("/", 1)[0] for p in list(self.files) + list(self.dirs) if p.startswith(prefix)}
        names.update(p[len(prefix) :] for p in self.virtual if p.startswith(prefix) and "/" not in p[len(prefix) :])
        return sorted(n for n in names if n)

    def remove(self, path: str, *, root: bool, recursive: bool = False) -> None:
        if self._virtual(path) is not None:
            raise FsError("Operation not permitted")
        if not root and not _user_writable(path, self.home):
            raise FsError("Permission denied")
        if path in self.files:
            del self.files[path]
            return
        if self.isdir(path):
            if not recursive:
                raise FsError("Is a directory")
            prefix = path.rstrip("/") + "/"
            for name in [p for p in self.files if p.startswith(prefix)]:
                del self.files[name]
            self.dirs = {d for d in self.dirs if d != path and not d.startswith(prefix)}
            return
        raise FsError("No such file or directory")

    def mkdir(self, path: str, *, root: bool, exist_ok: bool = True) -> None:
        """``exist_ok=False`` is mkdir(2): an existing path is EEXIST, a missing parent ENOENT, and the check
        and the creation are one step (two sessions racing for a lock directory: exactly one wins)."""
        if not root and not _user_writable(path + "/", self.home):
            raise FsError("Permission denied")
        with self._mkdir_lock:
            if not exist_ok:
                if self.exists(path):
                    raise FsError("File exists")
                parent = path.rstrip("/").rsplit("/", 1)[0] or "/"
                if not self.isdir(parent):
                    raise FsError("No such file or directory")
            self.dirs.add(path)
