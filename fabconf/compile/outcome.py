"""The whole outcome of ``fabconf render --limit`` kept in the compile cache: an unchanged inventory rendered again
is one lookup, not a compile (issue 42: the one-device edit of a 32k-GPU fabric in 0.5 s).

What a limited render prints and writes (its warnings, the device data of the devices it selected) depends on
every inventory file, on fabconf's code and on how the run names the inventory (a problem names each file as the
user reads it, relative to the working directory). So the key is all of those: the SHA-256 of every inventory
file's bytes (``absent`` for an optional file that is not there), a digest of every source file of the fabconf
package (``cache.package_version``: the design and the platforms' checks count, not only ``fabconf.compile``), the
Python version, the inventory path as given, the working directory and the ``--limit`` pattern. Any difference is a
new key: nothing is invalidated, and no result computed from other bytes is ever taken.

Only a run that compiled without an error is kept (an inventory with errors is compiled again, and says them
again), and only for a few devices (``MAX_DEVICES``: the point is the one-device edit, not 5,632 devices' data). An
entry is stored under the digests of the bytes the compile itself read (``RawInventory.digests``): a file edited
between the lookup and the compile is never stored under the old bytes' key. An entry that cannot be read, is cut
short, or does not have the shape written here is a miss (``cache.get``), and the run compiles as without it.
Importing this module costs no YAML, model or topology: a hit renders with Jinja2 alone.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

from fabconf.compile import cache

# the inventory files of ``fabconf.compile.inventory.FILES``, in its order (a unit test checks they agree): not
# imported from there, which would load YAML on a hit
FILE_NAMES = ("hosts.yaml", "groups.yaml", "defaults.yaml", "fabric.yaml", "cabling.yaml")
MAX_DEVICES = 256  # selections of more devices are not kept (a full render's data of 5,632 devices is ~100 MB)
MAX_FILE_BYTES = 16 * 1024 * 1024  # ``fabconf.compile.limits.MAX_FILE_BYTES``: a larger file is the compile's to refuse
_KIND = "outcome"

Warning_ = tuple[str, str, str, str]  # (file, path, message, severity) of a ``fabconf.compile.problems.Problem``


def _file_digest(path: Path) -> str | None:
    """The SHA-256 of a regular file's bytes, ``absent`` when there is none at ``path`` (as the loader sees it), None
    when it cannot be read here (the compile reports why)."""
    try:
        if not path.exists():
            return "absent"
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        with path.open("rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    return None if len(data) > MAX_FILE_BYTES else cache.digest(data)


def _key(inventory: Path, pattern: str, digests: list[str]) -> str:
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = ""
    parts = [cache.package_version(), sys.version, str(inventory), cwd, pattern, *digests]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def lookup(inventory: Path, pattern: str) -> tuple[list[Warning_], dict[str, dict[str, Any]]] | None:
    """(warnings, device data of the selected devices) stored for this very inventory, fabconf and pattern, or None
    (caching off, a file that cannot be read here, no entry, an entry that does not have the shape ``store`` writes)."""
    if cache.directory() is None:
        return None
    digests = [_file_digest(inventory / name) for name in FILE_NAMES]
    if None in digests:
        return None
    value = cache.get(_KIND, _key(inventory, pattern, [d for d in digests if d is not None]))
    if not (isinstance(value, tuple) and len(value) == 2):
        return None
    warnings, data = value
    if not (isinstance(warnings, list) and isinstance(data, dict)):
        return None
    if not all(isinstance(w, tuple) and len(w) == 4 and all(isinstance(x, str) for x in w) for w in warnings):
        return None
    if not all(isinstance(name, str) and isinstance(d, dict) for name, d in data.items()):
        return None
    return warnings, data


def store(
    inventory: Path,
    pattern: str,
    read: dict[str, str],
    loaded: Collection[str],
    warnings: list[Warning_],
    data: dict[str, dict[str, Any]],
) -> None:
    """Keep what a compile without errors gave: ``read`` maps each file's kind to the SHA-256 of the bytes the compile
    read, ``loaded`` the kinds it loaded (a kind loaded without a digest is an optional file that is not there)."""
    if cache.directory() is None or len(data) > MAX_DEVICES:
        return
    from fabconf.compile.inventory import FILES  # only after a compile, which imported it already

    digests = []
    for kind in FILES:
        if kind in read:
            digests.append(read[kind])
        elif kind in loaded:
            digests.append("absent")
        else:
            return  # not every file was read: nothing to key the outcome by
    cache.put(_KIND, _key(inventory, pattern, digests), (warnings, data))
