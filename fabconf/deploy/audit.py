"""The audit log: one JSON line per device change attempt (who, when, device, diff hash, result).

Path: ``FABCONF_AUDIT_LOG`` or ``~/.local/state/fabconf/audit.jsonl``. Diffs are stored as SHA-256 only;
passwords never reach this file (diffs are redacted before hashing, messages before writing).
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
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(entry, sort_keys=True) + "\n")
