"""Whether a running lab still runs the code that is installed now.

The lab's daemon imports its simulators and fabconf from where they were installed when it started. A
``pip install -e '.[docs]'`` (as the docs said to do next) or a ``git pull`` of an editable install replaces those
files under it: the simulators then failed with an ``ImportError`` that only ``lab.log`` showed, and ``preflight
--bandwidth`` spent 8 minutes on 16 timeouts (issue #40). So the command that starts a lab records a fingerprint
of the installed code in the lab's state directory (``code.json``: each module's path, size and modification
time, and where the two packages live), and every command that uses a running lab compares it with the code
installed now and, where it changed, stops with what to do."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import fabconf
from fabconf.errors import FabconfError

RECORD = "code.json"


class LabCodeChanged(FabconfError):
    """The running lab's code was replaced since it started."""


def fingerprint(lab_package: Path) -> str:
    """A digest of the fabconf modules and the lab's (``lab_package``: fabconf_lab's folder, named by
    fabconf.cli.lab, the product's one way to the lab) installed now: their folders, and each module's path, size
    and modification time (a reinstall or an edit changes one of them; reading every file would cost more)."""
    digest = hashlib.sha256()
    for name, root in (("fabconf", Path(fabconf.__file__ or "").resolve().parent), ("fabconf_lab", lab_package)):
        digest.update(f"{name}={root}\n".encode())
        for path in sorted(root.rglob("*.py")):
            try:
                info = path.stat()
            except OSError:
                continue
            digest.update(f"{path.relative_to(root)} {info.st_size} {info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def record(state: Path, lab_package: Path) -> None:
    """Write the fingerprint of the code a lab has just started with into its state directory (0600, never
    through a symlink)."""
    text = json.dumps({"fingerprint": fingerprint(lab_package), "fabconf": str(Path(fabconf.__file__ or "").parent)})
    fd = os.open(state / RECORD, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text + "\n")


def check(state: Path, lab_package: Path) -> None:
    """Raise ``LabCodeChanged`` when the lab of ``state`` started with code other than what is installed now. A
    lab without a record (started by an older fabconf, or by a test's own orchestrator) is not judged."""
    try:
        fd = os.open(state / RECORD, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, encoding="utf-8") as stream:
            recorded = json.load(stream)
    except (OSError, ValueError):
        return
    if not isinstance(recorded, dict) or recorded.get("fingerprint") == fingerprint(lab_package):
        return
    where = recorded.get("fabconf", "?")
    raise LabCodeChanged(
        f"the lab of {state} runs code that changed after it started (fabconf was reinstalled or edited; it "
        f"started from {where}): its simulators would fail in ways only {state / 'lab.log'} shows. Restart it: "
        f"fabconf lab down --state {state}, then run the command again (a --lab command starts a new lab)"
    )
