"""What a killed push left on a device, found from what it recorded, and cleaned by the next push.

A push killed between staging and the end of its commit (kill -9, a lost laptop, a cancelled CI runner) leaves a
staged candidate or a commit waiting for its confirmation on the device: an EOS config session, an NVUE revision,
an NX-OS configure replace with its checkpoint. Left there it blocks every later push (EOS refuses to stage while
another session is pending) or reverts the device after a later push reported it green (a revert timer still
running). So each push names what it leaves after its run id where the device lets it (EOS sessions are
``fabconf_<run id>``) and writes those names into the audit's ``committing`` record (``leftovers``), fsync'ed
before the commit; where staging itself leaves something named (the EOS session), a ``staging`` record names it
before the staging request is sent.

Before it stages, the next push of the device asks the audit log (``recorded``) for what killed runs left on that
device at that target: the ``leftovers`` of the last ``staging`` or ``committing`` record of another run that is
neither followed by that run's own end (it cleaned up after itself) nor cleaned since (a later run's record means
that run cleaned before it staged: only the last run can have left something). The driver (``Leftovers``)
removes what is still there and refuses, naming it, what is pending and recorded by no fabconf run. What was
cleaned is written to the audit as a ``cleaned`` record, which also closes the killed run's unfinished commit
(``fabconf.deploy.audit``).
A run whose device lock another live fabconf process holds is never cleaned: its commit is in progress.

``fabconf diff`` stages too (and discards): on EOS its session is named ``fabconf_diff<pid>x<random>``
(``diff_session``), never NAPALM's ``napalm_<microseconds>``, and a lock file of its own,
``LOCK_DIR/diffs/<device>/<session>.lock``, is held (``flock``) from before it stages until it has discarded. A
diff killed in between leaves the file with its lock free: the session is a dead diff's, and the next push
(``Cleaner``) or diff of that device aborts it, then removes the file. A diff's session never holds a commit, so
aborting it changes nothing on the device. A live diff's session (its lock held) is left alone: the push stops
on it, named, as on any other open session. Locks are per machine: a diff run from another machine with its own
lock directory is not seen as alive here.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from fabconf.deploy import audit
from fabconf.deploy.job import Job
from fabconf.deploy.lock import lock_address, lock_dir, lock_key
from fabconf.deploy.private import open_private, private_dir
from fabconf.drivers.contract import Driver, Leftovers

CLEANED = audit.CLEANED
STAGING = "staging"  # written before staging where staging leaves something named on the device (EOS sessions)
# a run's own outcome for a device after which nothing of it is left there (it ended its session itself); failed
# and unreachable outcomes may leave a commit waiting for a timer, so those leftovers stay to be checked
ENDED = frozenset({"applied", "rolled back", "unchanged", "untouched", "conflict"})


def recorded(device: str, target: str, current_run: str, path: Path | None = None) -> list[dict[str, str]]:
    """The leftovers killed runs recorded for ``device`` at ``target``, each with its ``run``; oldest first.

    The audit log is folded once per run and read on from where it stopped (``_Fold``): each device of a push asks,
    and reading the whole log for each cost a full-size push most of fabconf's CPU in its switches' wave (a 45 MB
    log: 0.41 s of CPU a device; folded, 0.56 s once, issue 42)."""
    path = path or audit.audit_path()
    with _FOLD_LOCK:
        global _FOLD
        if _FOLD is None or (_FOLD.path, _FOLD.run) != (path, current_run):
            _FOLD = _Fold(path, current_run)
        return _FOLD.found(device, target)


class _Fold:
    """What each (device, target) may still hold from killed runs, as the audit log's lines so far say, for one
    run. ``found`` reads the lines added since the last call; a log replaced, cut or rewritten is read again."""

    HEAD = 256  # the log's first bytes, compared on each call: another log at the same path is read from the start

    def __init__(self, path: Path, current_run: str) -> None:
        self.path, self.run = path, current_run
        self._reset(None)

    def _reset(self, inode: tuple[int, int] | None) -> None:
        self.inode, self.offset, self.head = inode, 0, b""
        self.left: dict[tuple[str, str], dict[str, dict[str, str]]] = {}

    def found(self, device: str, target: str) -> list[dict[str, str]]:
        self._read_on()
        return [dict(left) for left in self.left.get((device, target), {}).values()]

    def _read_on(self) -> None:
        try:
            log = self.path.open("rb")
        except FileNotFoundError:
            self._reset(None)
            return
        with log:
            info = os.fstat(log.fileno())
            inode = (info.st_dev, info.st_ino)
            if inode != self.inode or info.st_size < self.offset or log.read(len(self.head)) != self.head:
                self._reset(inode)
            log.seek(self.offset)
            data = log.read()
        end = data.rfind(b"\n") + 1  # a last line without its newline is read once it has one
        if not self.head:
            self.head = data[: min(self.HEAD, end)]
        self.offset += end
        for line in data[:end].splitlines():
            self._fold(line)

    def _fold(self, line: bytes) -> None:
        try:
            entry = json.loads(line)
        except ValueError:  # a line cut short by a crash (UnicodeDecodeError too)
            return
        if not isinstance(entry, dict):
            return
        device, target = entry.get("device"), entry.get("target")
        if not isinstance(device, str) or not isinstance(target, str):
            return
        run, result = str(entry.get("run")), entry.get("result")
        if result in (STAGING, audit.COMMITTING) and run != self.run:
            left = entry.get("leftovers")
            # a later run cleaned what was before it, before it committed: only its own leftovers can be left now
            self.left[device, target] = (
                {run: {**{str(k): str(v) for k, v in left.items()}, "run": run}} if isinstance(left, dict) else {}
            )
        elif result == CLEANED:
            found = self.left.get((device, target), {})
            for done in entry.get("resolves") or ():
                found.pop(str(done), None)
        elif result in ENDED:
            self.left.get((device, target), {}).pop(run, None)


_FOLD: _Fold | None = None
_FOLD_LOCK = threading.Lock()


def held_by_another(platform: str, address: str) -> bool:
    """A live fabconf process other than this one holds the device's lock (``fabconf.deploy.lock``)."""
    if not audit.lock_held(platform, address):
        return False
    try:
        holder = (lock_dir() / f"{lock_key(platform, address)}.lock").read_text(encoding="utf-8")
    except OSError:
        return True
    return not holder.startswith(f"pid {os.getpid()} ")


@dataclass
class Cleaner:
    """One push of one device: names what it leaves (``own_run``) and cleans what killed runs left."""

    run: str
    context: dict[str, str] | None = None
    names: dict[str, str] = field(default_factory=dict)  # what this push leaves, for its committing record
    staged: dict[str, str] = field(default_factory=dict)  # what its staging leaves, named in its staging record

    def clean(self, job: Job, driver: Driver) -> str:
        """Before staging: what was cleaned, for the device's outcome ("" when nothing was left). A retried
        attempt (its connection was lost before the commit) also cleans what the lost attempt may have staged."""
        if not isinstance(driver, Leftovers):
            return ""
        staging = driver.own_run(self.run)
        address = lock_address(job.device.hostname, job.device.port)
        target = audit.target_of(self.context, job.device.hostname)
        found = recorded(job.name, target, self.run)
        lost = [{**self.staged, "run": f"{self.run} (an earlier attempt of this push)"}] if self.staged else []
        dead = dead_diffs(job) if staging else []
        todo = found + lost + [{"session": path.stem, "run": DIFF_RUN} for path in dead]
        done = driver.clean_leftovers(todo) if todo and not held_by_another(job.platform, address) else []
        _forget(dead)
        if done:
            runs = [r["run"] for r in found]
            text = "; ".join(done)
            audit.record(self.run, job.name, "", CLEANED, text, platform=job.platform, target=target, resolves=runs)
        if staging and not self.staged:  # a kill while the staging request is in flight leaves it: named first
            audit.record(self.run, job.name, "", STAGING, "about to stage", target=target, leftovers=staging)
        self.staged = staging
        return f"cleaned what a killed run left: {'; '.join(done)}" if done else ""

    def note(self, driver: Driver) -> None:
        """Just before the commit: what a kill from now on would leave."""
        self.names = driver.leftovers() if isinstance(driver, Leftovers) else {}


DIFF_RUN = "fabconf diff"  # what the cleaning says left a dead diff's session


def _diff_dir(job: Job) -> Path:
    """Where the diffs of ``job``'s device keep their lock files (one per session)."""
    return lock_dir() / "diffs" / lock_key(job.platform, lock_address(job.device.hostname, job.device.port))


def _is_free(path: Path) -> bool:
    """No process holds ``path``'s lock: the diff that made it is gone."""
    try:
        with os.fdopen(open_private(path, os.O_RDWR), "a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            return True
    except OSError:
        return False


def dead_diffs(job: Job) -> list[Path]:
    """The lock files of diffs of ``job``'s device that died before they discarded their session."""
    directory = _diff_dir(job)
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.glob("fabconf_diff*.lock") if p.stem.isascii() and _is_free(p))


def _forget(paths: list[Path]) -> None:
    for path in paths:
        with suppress(OSError):
            path.unlink()


@contextmanager
def diff_session(job: Job, driver: Driver) -> Iterator[str]:
    """A diff of one device: where its staging leaves something named (an EOS session), names it after this diff
    and holds its lock file until the body (stage, compare, discard) is done; first aborts what dead diffs left on
    the device. Yields what was cleaned, for people ("" when nothing)."""
    names = driver.own_run(f"diff{os.getpid()}x{secrets.token_hex(4)}") if isinstance(driver, Leftovers) else {}
    session = names.get("session")
    if not session or not isinstance(driver, Leftovers):
        yield ""
        return
    directory = _diff_dir(job)
    private_dir(directory.parent)
    private_dir(directory)
    dead = dead_diffs(job)
    done = driver.clean_leftovers([{"session": p.stem, "run": DIFF_RUN} for p in dead]) if dead else []
    _forget(dead)
    own = directory / f"{session}.lock"
    handle = os.fdopen(open_private(own, os.O_RDWR), "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield "; ".join(done)
    finally:
        with suppress(OSError):
            own.unlink()
        handle.close()
