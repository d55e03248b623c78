"""The audit log: one JSON line per device change attempt (who, when, device, diff hash, result).

Path: ``FABCONF_AUDIT_LOG`` or ``~/.local/state/fabconf/audit.jsonl``, created 0600 in a 0700 directory that
only the operator can write (``fabconf.deploy.private``). Diffs are stored as SHA-256 only;
passwords never reach this file (diffs are redacted before hashing, messages before writing).

Before each commit a ``committing`` record (with the hash of the configuration it replaces) is appended and
fsync'ed; the outcome follows when the device is done. A run killed in between leaves the first without the
second: ``unfinished()`` lists those, ``fabconf audit`` prints them, and the next push or verify of such a
device warns.
"""

from __future__ import annotations

import datetime as dt
import getpass
import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from fabconf.deploy.credentials import REDACTOR
from fabconf.deploy.private import open_private

_LOCK = threading.Lock()


def audit_path() -> Path:
    default = Path.home() / ".local" / "state" / "fabconf" / "audit.jsonl"
    return Path(os.environ.get("FABCONF_AUDIT_LOG", str(default)))


def record(run_id: str, device: str, diff: str, result: str, message: str = "", **extra: Any) -> None:
    entry = {
        "time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "run": run_id,
        "user": getpass.getuser(),
        "device": device,
        "diff_sha256": hashlib.sha256(diff.encode()).hexdigest() if diff else None,
        "result": result,
        "message": REDACTOR(message),
        **extra,
    }
    path = audit_path()
    with _LOCK:
        fd = open_private(path, os.O_WRONLY | os.O_APPEND)  # 0600, in a 0700 directory, never via a symlink
        torn = _torn(path)
        with os.fdopen(fd, "a", encoding="utf-8") as out:
            # a line a crash cut short is closed first, so it cannot swallow this record
            out.write(("\n" if torn else "") + json.dumps(entry, sort_keys=True) + "\n")
            out.flush()
            os.fsync(out.fileno())  # a record written before a commit must survive fabconf being killed


def _torn(path: Path) -> bool:
    """Whether the log's last line lacks its newline (a write cut short)."""
    if not path.exists() or path.stat().st_size == 0:
        return False
    with path.open("rb") as log:
        log.seek(-1, os.SEEK_END)
        return log.read(1) != b"\n"


COMMITTING = "committing"


def unfinished(path: Path | None = None) -> list[dict[str, Any]]:
    """``committing`` records with no later record of the same run and device: commits whose outcome was
    never written (fabconf killed, the machine lost). Oldest first."""
    path = path or audit_path()
    if not path.exists():
        return []
    open_: dict[tuple[str, str], dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash
        key = (str(entry.get("run")), str(entry.get("device")))
        if entry.get("result") == COMMITTING:
            open_[key] = entry
        else:
            open_.pop(key, None)
    return sorted(open_.values(), key=lambda e: str(e.get("time")))
