"""The audit log: one JSON line per device change attempt (who, when, device, diff hash, result).

Path: ``FABCONF_AUDIT_LOG`` or ``~/.local/state/fabconf/audit.jsonl``, created 0600 in a 0700 directory that
only the operator can write (``fabconf.deploy.private``). Diffs are stored as SHA-256 only;
passwords never reach this file (diffs are redacted before hashing, messages before writing).

Before each commit a ``committing`` record (with the hash of the configuration it replaces) is appended and
fsync'ed; the outcome follows when the device is done. A run killed in between leaves the first without the
second: ``unfinished()`` lists those, ``fabconf audit`` prints them, and the next push or verify of such a
device warns.

Every record carries its ``target``: the lab's state directory for a lab run, else the device's management
address; records match on device *and* target, so another lab's (or another fabric's same-named device's)
records never show up. An unfinished commit is resolved once a later run records an outcome read back from that
device at that target (a push that applied, rolled back or found it unchanged; a verify that read it: a
``resolved`` record), or an operator acknowledges it (``fabconf audit --ack DEVICE --note TEXT``). A commit whose
device lock a live run still holds is in progress, not unfinished.
"""

from __future__ import annotations

import datetime as dt
import fcntl
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
RESOLVED, ACKNOWLEDGED = "resolved", "acknowledged"
CLEANED = "cleaned"  # a later push removed what a killed run left on the device (fabconf.deploy.leftovers)
# outcomes read back from the device: a later one closes an earlier run's unfinished commit of that device
READ_BACK = frozenset({"applied", "rolled back", "unchanged", RESOLVED, CLEANED})


def target_of(context: dict[str, str] | None, address: str) -> str:
    """Where a record's device is: the lab's state directory for a lab run, else its management address."""
    lab_state = (context or {}).get("lab_state")
    return f"lab {lab_state}" if lab_state else address


def unfinished(path: Path | None = None) -> list[dict[str, Any]]:
    """``committing`` records not closed since: no outcome of their own run, no later outcome read back from
    the same device at the same target, no acknowledgement. Oldest first; each with ``in_progress`` True when
    a live run holds the device's lock (its commit is under way, not lost)."""
    path = path or audit_path()
    if not path.exists():
        return []
    open_: dict[tuple[str, str], dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not open_ and COMMITTING not in line and "\\u" not in line:
            continue  # nothing open, and not a commit's start (json.dumps writes it as is): it can close nothing
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash
        if not isinstance(entry, dict):
            continue
        key = (str(entry.get("run")), str(entry.get("device")))
        result = entry.get("result")
        if result == COMMITTING:
            open_[key] = entry
            continue
        open_.pop(key, None)
        if result in READ_BACK or result == ACKNOWLEDGED:
            everywhere = result == ACKNOWLEDGED and entry.get("target") is None
            for other, e in list(open_.items()):
                same = e.get("device") == entry.get("device")
                if same and (everywhere or e.get("target") == entry.get("target")):
                    del open_[other]
    left = sorted(open_.values(), key=lambda e: str(e.get("time")))
    return [{**e, "in_progress": lock_held(str(e.get("platform")), str(e.get("address")))} for e in left]


def lock_held(platform: str, address: str) -> bool:
    """A live run holds the device's lock (``fabconf.deploy.lock``): tried without waiting, never created."""
    from fabconf.deploy.lock import lock_dir, lock_key

    path = lock_dir() / f"{lock_key(platform, address)}.lock"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases a lock this probe took
    return False


def resolve(command: str, outcomes: list[tuple[str, str, str]], context: dict[str, str] | None) -> None:
    """After a push or verify: each (device, state, management address) whose state was read back from the
    device closes that device's unfinished commits at that target, with a ``resolved`` record."""
    waiting = [e for e in unfinished() if not e["in_progress"]]
    for device, state, address in outcomes:
        target = target_of(context, address)
        runs = [str(e.get("run")) for e in waiting if e.get("device") == device and e.get("target") == target]
        if runs:
            message = f"{command} read the device back ({state}): the unfinished commit is resolved"
            record(f"{command}-{os.getpid()}", device, "", RESOLVED, message, target=target, resolves=runs)


def acknowledge(device: str, note: str, target: str | None = None) -> int:
    """``fabconf audit --ack``: an operator closes the device's unfinished commits (at ``target``, else at
    every target); returns how many it closed."""
    closed = [e for e in unfinished() if e.get("device") == device and (target is None or e.get("target") == target)]
    if closed:
        extra: dict[str, Any] = {"resolves": [str(e.get("run")) for e in closed]}
        if target is not None:
            extra["target"] = target
        record(f"ack-{os.getpid()}", device, "", ACKNOWLEDGED, note, **extra)
    return len(closed)
