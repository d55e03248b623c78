"""NVUE configuration state of one simulated Cumulus switch: revisions, applied, startup, history, confirm.

Transport-free: the REST front end (``nvue.py``) and the ``nv`` CLI (``nvue_cli.py``) both drive it.

Model (assumptions marked [U] are not checked against a real switch):

- A revision is created from the APPLIED tree of that moment and holds ``base + patches``; applying it
  replaces the applied tree with that full tree (so a revision created before another apply still
  yields a full-tree result, not a partial merge).
- Ids are integer-like strings ("1", "2", …) as CL 5.x uses; ``applied``, ``startup`` and ``empty``
  name the obvious trees.
- States: ``pending`` → ``applying`` → ``applied`` (or ``applied_and_saved`` when auto-save is on,
  the CL >= 5.9 default: ``system config auto-save state`` absent or ``enabled``) or ``apply_fail``
  with the reasons in ``transition.issue``; applied stays untouched on failure. [U] exact issue shape.
- Applying an already-applied revision (or ``startup``) rolls back to its tree; every apply is a
  history entry.
- Commit-confirm (CLI only; no REST equivalent is documented): ``apply(..., confirm_seconds=N)`` arms
  a real timer; when it fires, the previous applied tree is re-applied (history ``rollback``) and the
  revision's state becomes ``confirm_fail`` [U]. ``confirm_yes()`` disarms it (and saves when
  auto-save is on; nothing is auto-saved while a confirm is pending [U]). While a confirm is pending a
  new pending revision cannot be applied [U]; applying an older revision or ``startup`` cancels the
  timer (a manual rollback).
- An apply that touches ``qos`` needs the "are you sure" answer (REST ``auto-prompt.ays = ays_yes``,
  CLI ``-y``), since it reloads switchd; without it the apply ends in ``ays_fail`` [U].
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fabconf.private import private_dir, write_private
from fabconf_lab.faults import Faults
from fabconf_lab.nvue import tree as nvue_tree
from fabconf_lab.nvue.schema import Validator
from fabconf_lab.nvue.tree import Tree, copy_tree

NAMED = ("applied", "startup", "empty")
PROMPT_SECTIONS = ("qos",)


class NvueError(Exception):
    """An NVUE API error: ``status`` is the HTTP status the REST front end answers with."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass
class Revision:
    rev_id: str
    tree: Tree
    base: Tree
    user: str
    created: float = field(default_factory=time.time)
    state: str = "pending"
    issues: list[str] = field(default_factory=list)
    progress: str = ""
    message: str = ""

    def as_json(self) -> dict[str, Any]:
        issue = {
            str(i): {"code": "config_invalid", "message": msg, "severity": "error"} for i, msg in enumerate(self.issues)
        }
        return {"state": self.state, "transition": {"issue": issue, "progress": self.progress}}


@dataclass
class HistoryEntry:
    rev_id: str
    when: float
    user: str
    method: str
    message: str
    action: str  # "apply" | "rollback" | "confirm-timeout"


@dataclass
class _Confirm:
    rev_id: str
    previous: Tree
    previous_id: str | None
    deadline: float
    timer: threading.Timer


def auto_save_enabled(tree: Tree) -> bool:
    auto = tree.get("system", {}).get("config", {}).get("auto-save", {})
    return not (isinstance(auto, dict) and auto.get("state") == "disabled")


class ConfigStore:
    """All configuration state of one switch. Thread-safe."""

    def __init__(
        self,
        startup: Tree,
        *,
        ports: list[str],
        validator: Validator,
        faults: Faults,
        state_dir: Path | None = None,
        apply_seconds: float = 0.2,
        on_applied: Callable[[], None] | None = None,
    ) -> None:
        self._lock = threading.RLock()
        self.ports = list(ports)
        self.validator = validator
        self.faults = faults
        self.apply_seconds = apply_seconds
        self.state_dir = Path(state_dir) if state_dir is not None else None
        self._on_applied = on_applied
        loaded = self._load_startup()
        self.startup: Tree = copy.deepcopy(loaded if loaded is not None else startup)
        self.applied: Tree = copy.deepcopy(self.startup)
        self.applied_id: str | None = None
        self.revisions: dict[str, Revision] = {}
        self.history: list[HistoryEntry] = []
        self._next = 1
        self._confirm: _Confirm | None = None

    # -- trees -------------------------------------------------------------------------------------
    def tree(self, ref: str) -> Tree:
        """A copy of ``tree_now(ref)``, the caller's to change (no tree changes once made: copying it outside the
        lock copies what ``ref`` named when asked)."""
        return copy_tree(self.tree_now(ref))

    def tree_now(self, ref: str) -> Tree:
        """The tree of ``ref`` itself, as ``tree`` names it, not a copy, for reading only (a GET's JSON, a diff): no
        tree is changed in place once made (``fabconf_lab.nvue.tree``), a revision's changes put another in its
        place. The copy per GET of a revision was a sixth of a Cumulus switch's CPU in a diff."""
        with self._lock:
            if ref == "applied":
                return self.applied
            if ref == "startup":
                return self.startup
            if ref == "empty":
                return {}
            return self._rev(ref).tree

    def get(self, rev_id: str) -> Revision:
        with self._lock:
            return self._rev(rev_id)

    def drop(self, rev_id: str) -> None:
        """Forget a pending revision (``nv config detach`` / REST DELETE of a revision)."""
        with self._lock:
            rev = self._rev(rev_id)
            if rev.state != "pending":
                raise NvueError(400, f"Revision {rev_id} is '{rev.state}' and cannot be deleted")
            del self.revisions[rev_id]

    def _rev(self, rev_id: str) -> Revision:
        rev = self.revisions.get(rev_id)
        if rev is None:
            raise NvueError(404, f"The requested revision '{rev_id}' was not found")
        return rev

    # -- revisions ---------------------------------------------------------------------------------
    def create(self, user: str) -> Revision:
        with self._lock:
            rev_id = str(self._next)
            self._next += 1
            rev = Revision(rev_id, copy.deepcopy(self.applied), copy.deepcopy(self.applied), user)
            self.revisions[rev_id] = rev
            return rev

    def _pending(self, rev_id: str) -> Revision:
        if rev_id in NAMED:
            raise NvueError(400, f"Revision '{rev_id}' is read-only; create a revision to change configuration")
        rev = self._rev(rev_id)
        if rev.state != "pending":
            raise NvueError(400, f"Revision {rev_id} is in state '{rev.state}' and can no longer be changed")
        return rev

    def patch(self, rev_id: str, parts: list[str], body: Any, *, validate: bool = True) -> Any:
        """Deep-merge ``body`` at ``parts``; returns the change (5.10+ answers with only the change)."""
        with self._lock:
            rev = self._pending(rev_id)
            new = nvue_tree.merge(rev.tree, nvue_tree.wrap(parts, body))
            if validate:
                errors = self.validator.schema_errors(new)
                if errors:
                    raise NvueError(400, "; ".join(errors))
            rev.tree = new
            return body

    def delete(self, rev_id: str, parts: list[str]) -> None:
        with self._lock:
            rev = self._pending(rev_id)
            rev.tree = nvue_tree.unset(rev.tree, parts)

    def replace(self, rev_id: str, tree: Tree) -> None:
        """``nv config replace``: the revision's tree becomes ``tree``."""
        with self._lock:
            self._pending(rev_id).tree = copy.deepcopy(tree)

    def latest_pending(self, user: str | None = None) -> Revision | None:
        with self._lock:
            for rev in reversed(list(self.revisions.values())):
                if rev.state == "pending" and (user is None or rev.user == user):
                    return rev
            return None

    # -- apply ----------------------------------------------------------------------------------------
    def apply(
        self,
        ref: str,
        *,
        user: str,
        assume_yes: bool,
        confirm_seconds: float | None = None,
        method: str = "api",
        message: str = "",
        background: bool = False,
    ) -> Revision:
        """Apply a revision (or roll back to an applied one / ``startup``). Returns the revision.

        With ``background`` the revision goes to ``applying`` and the work finishes after
        ``apply_seconds`` in a thread (the REST flow); otherwise it completes before returning.
        """
        with self._lock:
            if ref == "startup":
                rev = self.create(user)
                rev.tree = copy.deepcopy(self.startup)
                rev.message = message or "rollback to startup"
            elif ref == "applied":
                raise NvueError(400, "Revision 'applied' is already applied")
            else:
                rev = self._rev(ref)
            rollback = rev.state in ("applied", "applied_and_saved", "confirm_fail")
            if self._confirm is not None and not rollback and ref != "startup":
                raise NvueError(
                    409, f"Revision {self._confirm.rev_id} is waiting for confirmation; confirm it or let it expire"
                )
            if rev.state in ("applying",):
                raise NvueError(409, f"Revision {rev.rev_id} is already being applied")
            rev.message = message or rev.message
            rev.state = "applying"
            rev.progress = "Applying"
            rev.issues = []
        if background:
            worker = threading.Thread(
                target=self._finish,
                args=(rev, user, assume_yes, confirm_seconds, method, rollback or ref == "startup", self.apply_seconds),
                daemon=True,
            )
            worker.start()
        else:
            self._finish(rev, user, assume_yes, confirm_seconds, method, rollback or ref == "startup", 0.0)
        return rev

    def _finish(
        self,
        rev: Revision,
        user: str,
        assume_yes: bool,
        confirm_seconds: float | None,
        method: str,
        rollback: bool,
        delay: float,
    ) -> None:
        if delay:
            time.sleep(delay)
        with self._lock:
            errors = self.validator.apply_errors(rev.tree, self.ports)
            lines = nvue_tree.diff_lines(self.applied, rev.tree)
            errors += [f"Rejected by the switch: {line}" for line in lines if self.faults.rejects(line)]
            if errors:
                rev.state, rev.issues, rev.progress = "apply_fail", errors, ""
                return
            touched = {path[0] for path in nvue_tree.changed_paths(self.applied, rev.tree)}
            if not assume_yes and touched & set(PROMPT_SECTIONS):
                rev.state, rev.progress = "ays_fail", ""
                rev.issues = ["The apply reloads switchd and may disrupt traffic: answer yes (ays_yes) to proceed"]
                return
            if self._confirm is not None:  # a manual rollback cancels a pending confirm
                self._confirm.timer.cancel()
                self._revision_state(self._confirm.rev_id, "applied")
                self._confirm = None
            previous, previous_id = copy.deepcopy(self.applied), self.applied_id
            self.applied = copy.deepcopy(rev.tree)
            self.applied_id = rev.rev_id
            rev.progress = ""
            self.history.append(
                HistoryEntry(rev.rev_id, time.time(), user, method, rev.message, "rollback" if rollback else "apply")
            )
            if confirm_seconds is not None:
                timer = threading.Timer(confirm_seconds, self._confirm_expired, args=(rev.rev_id,))
                timer.daemon = True
                self._confirm = _Confirm(rev.rev_id, previous, previous_id, time.time() + confirm_seconds, timer)
                rev.state = "applied"
                timer.start()
            elif auto_save_enabled(self.applied):
                self._save()
                rev.state = "applied_and_saved"
            else:
                rev.state = "applied"
        self._notify()

    def _revision_state(self, rev_id: str | None, state: str) -> None:
        if rev_id is not None and rev_id in self.revisions:
            self.revisions[rev_id].state = state

    def _confirm_expired(self, rev_id: str) -> None:
        with self._lock:
            pending = self._confirm
            if pending is None or pending.rev_id != rev_id:
                return
            self._confirm = None
            self.applied = pending.previous
            self.applied_id = pending.previous_id
            self._revision_state(rev_id, "confirm_fail")
            self.history.append(
                HistoryEntry(
                    pending.previous_id or "startup",
                    time.time(),
                    "system",
                    "confirm-timer",
                    f"revision {rev_id} not confirmed in time: reverted",
                    "confirm-timeout",
                )
            )
        self._notify()

    def confirm_yes(self) -> str:
        with self._lock:
            pending = self._confirm
            if pending is None:
                raise NvueError(400, "There is no pending confirmation")
            pending.timer.cancel()
            self._confirm = None
            if auto_save_enabled(self.applied):
                self._save()
                self._revision_state(pending.rev_id, "applied_and_saved")
            return pending.rev_id

    def confirm_status(self) -> tuple[str, float] | None:
        """(revision id, seconds left) while a confirm is pending, else None."""
        with self._lock:
            if self._confirm is None:
                return None
            return self._confirm.rev_id, max(0.0, self._confirm.deadline - time.time())

    # -- startup ----------------------------------------------------------------------------------------
    def save(self) -> None:
        with self._lock:
            self._save()

    def _save(self) -> None:
        self.startup = copy.deepcopy(self.applied)
        if self.state_dir is not None:
            private_dir(self.state_dir)
            write_private(self.state_dir / "startup.yaml", startup_yaml(self.startup))  # never through a symlink

    def _load_startup(self) -> Tree | None:
        if self.state_dir is None:
            return None
        path = self.state_dir / "startup.yaml"
        if not path.exists():
            return None
        return parse_startup_yaml(path.read_text())

    def _notify(self) -> None:
        self.faults.changed()  # a background apply or an expired confirm changes the view after its request
        if self._on_applied is not None:
            self._on_applied()

    def stop(self) -> None:
        with self._lock:
            if self._confirm is not None:
                self._confirm.timer.cancel()


def startup_yaml(tree: Tree) -> str:
    """``/etc/nvue.d/startup.yaml`` form: a header, then one ``set`` of the whole tree.

    [U] header keys. PyYAML quotes strings such as 'on'/'off' so they read back as strings (YAML 1.1).
    """
    doc = [{"header": {"model": "SIMULATED", "nvue-api-version": "nvue_v1", "version": "Cumulus Linux 5.12"}}]
    doc.append({"set": tree})
    return yaml.safe_dump(doc, sort_keys=False)


def parse_startup_yaml(text: str) -> Tree:
    data = yaml.safe_load(text) or {}
    if isinstance(data, dict):
        return data
    out: Tree = {}
    for item in data:
        if isinstance(item, dict) and "set" in item:
            out = nvue_tree.merge(out, item["set"])
    return out
