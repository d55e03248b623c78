"""A content-addressed cache of the compile stages that depend on one inventory file alone.

Reading a 32,768-GPU fabric's 3 MB ``cabling.yaml`` and checking it against its schema costs about 2 s of the
5 s a compile takes; neither result can change unless the file's bytes (or fabconf) change. So each is kept
under a key made of the file's SHA-256, what was computed from it and fabconf's own code version, and the next
run that reads the same bytes takes it from here. A file edited since is simply a new key: nothing is ever
invalidated, only replaced. Cross-file stages (model, topology, cross-checks) always run on everything.
A large file read entry by entry (``fabconf.compile.inventory.Entries``) also keeps, under its path, one map from each
entry's SHA-256 to what was computed from that entry: editing one device of ``hosts.yaml`` redoes that device.

Where: ``FABCONF_CACHE_DIR``, else ``$XDG_CACHE_HOME/fabconf``, else ``~/.cache/fabconf``; ``FABCONF_CACHE=off``
turns it off. Entries are ``marshal`` data (plain values only: no code runs when one is read, unlike pickle),
written atomically (a temporary file renamed), in a directory only its owner can enter; one that cannot be
read is ignored and written again. The directory keeps the ``KEEP`` entries written or read last (a read
touches its entry: the large ``cabling.yaml`` results, read by every run and written once, are not the first to go).
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import stat
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

KEEP = 64  # entries kept (a 32k-GPU fabric's cabling is ~3 MB as marshal data)
_FORMAT = b"fabconf-cache-1\n"
MISS: Any = object()  # what ``get`` returns for an entry it does not have


def directory() -> Path | None:
    """The cache directory, or None when caching is off."""
    if os.environ.get("FABCONF_CACHE", "").lower() in ("off", "0", "no", "false"):
        return None
    explicit = os.environ.get("FABCONF_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fabconf"


@cache
def code_version() -> str:
    """A digest of fabconf's own sources and schemas: an entry made by other code is never read. The platform
    registry and the platform packages' rows count too: the schemas' platform enums are expanded from them."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted([*root.glob("*.py"), *root.glob("schemas/*.json")]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    top = root.parent
    for path in sorted([top / "platforms.py", *top.glob("platform/*/__init__.py")]):
        digest.update(path.relative_to(top).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@cache
def package_version() -> str:
    """A digest of every source and data file of the fabconf package (``.py``, ``.json``): what a result that the
    design, the platform packages or their checks computed (``fabconf.compile.outcome``) is keyed by, since
    ``code_version`` covers only what a single file's parse and checks depend on."""
    top = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".json")):
                path = Path(folder, name)
                digest.update(path.relative_to(top).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _path(kind: str, key: str) -> Path | None:
    where = directory()
    if where is None:
        return None
    name = hashlib.sha256(f"{kind}\0{key}\0{code_version()}".encode()).hexdigest()[:32]
    return where / f"{kind}-{name}"


def get(kind: str, key: str) -> Any:
    """The value stored for (``kind``, ``key``), or ``MISS``."""
    path = _path(kind, key)
    if path is None:
        return MISS
    try:
        # a link planted at an entry's name is a miss, and so is a FIFO (never waited on) or anything not a file
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as stream:
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                return MISS
            blob = stream.read()
            if not blob.startswith(_FORMAT):
                return MISS
            stored_key, value = marshal.loads(blob[len(_FORMAT) :])
            if stored_key != key:
                return MISS
            with contextlib.suppress(OSError, NotImplementedError):
                os.utime(stream.fileno())  # used now: ``_trim`` keeps the entries used last, not those written last
    except (OSError, EOFError, ValueError, TypeError):
        return MISS
    return value


def has(kind: str, key: str) -> bool:
    """Whether an entry for (``kind``, ``key``) is stored (without reading it; ``get`` may still miss)."""
    path = _path(kind, key)
    return path is not None and path.is_file()


def put(kind: str, key: str, value: Any, most: int | None = None) -> None:
    """Store ``value`` (plain data: what ``marshal`` writes; anything else is not cached). Never raises. With ``most``,
    no more than that many entries of ``kind`` are kept (those written or read last): for large values."""
    path = _path(kind, key)
    if path is None:
        return
    try:
        blob = _FORMAT + marshal.dumps((key, value))
    except ValueError:  # a value marshal cannot write (a YAML timestamp): not cached
        return
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as stream:
                stream.write(blob)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        _trim(path.parent, KEEP)
        if most is not None:
            _trim(path.parent, most, f"{kind}-")


class EntryStore:
    """What was computed from each entry of one file read entry by entry (``fabconf.compile.inventory.Entries``):
    one cache value under ``scope`` (the file's path), a map from each entry's SHA-256 to what was computed from
    it. ``save`` writes the entries kept in this run, and only when they differ from the stored ones."""

    def __init__(self, kind: str, scope: str) -> None:
        self.kind, self.scope = kind, scope
        stored = get(kind, scope)
        self._known: dict[str, Any] = stored if isinstance(stored, dict) else {}
        self._fresh: dict[str, Any] = {}

    def get(self, digest: str) -> Any:
        """The value kept for the entry of SHA-256 ``digest`` (before or in this run), or ``MISS``."""
        return self._fresh[digest] if digest in self._fresh else self._known.get(digest, MISS)

    def keep(self, digest: str, value: Any) -> None:
        self._fresh[digest] = value

    def save(self) -> None:
        if self._fresh.keys() != self._known.keys():
            put(self.kind, self.scope, self._fresh)


def _trim(where: Path, keep: int, prefix: str = "") -> None:
    """Keep the ``keep`` entries used last (of those named ``prefix`` and a name's 32 hex digits, with a prefix)."""
    entries = []
    for entry in os.scandir(where):
        if prefix and not (entry.name.startswith(prefix) and len(entry.name) == len(prefix) + 32):
            continue
        with contextlib.suppress(OSError):
            entries.append((entry.stat().st_mtime, entry.path))
    for _mtime, old in sorted(entries, reverse=True)[keep:]:
        with contextlib.suppress(OSError):
            os.unlink(old)
