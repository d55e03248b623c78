"""The lab's SONiC configuration: a CONFIG_DB and the Generic Config Updater's commands on it, with GCU's words.

What it does as GCU does (sonic-utilities ``config/main.py`` and ``generic_config_updater/``, the commit in
docs/reference/sonic.md): ``apply-patch`` applies an RFC 6902 patch to a copy, refuses a result with an empty
table and a result the YANG models refuse (``fabconf_lab.sonic.yangcheck`` when yangson is installed, else
structural checks only), and writes nothing unless all of it passes; ``checkpoint``, ``rollback``,
``delete-checkpoint`` and ``list-checkpoints`` keep whole copies by name. Messages and exit statuses are GCU's:
success on stdout, ``Failed to … due to: …`` on stderr then click's usage block and ``Error: …``, status 2.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable
from typing import Any

_VALIDATOR: Any = None
_VALIDATOR_LOCK = threading.Lock()


class PatchRefused(ValueError):
    """A patch or command GCU refuses; the text is GCU's."""


def _validator() -> Any:
    global _VALIDATOR
    with _VALIDATOR_LOCK:
        if _VALIDATOR is None:
            from fabconf_lab.sonic import yangcheck

            _VALIDATOR = yangcheck.Validator() if yangcheck.available() else False
        return _VALIDATOR


def _parts(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchRefused(f"Error resolving path: '{path}'")
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def _test(doc: Any, parts: list[str], value: Any) -> None:
    found: Any = doc
    for p in parts:
        if not isinstance(found, dict) or p not in found:
            raise PatchRefused(f"member '{p}' not found in {found}")
        found = found[p]
    if found != value:
        raise PatchRefused(f"{found} ({type(found)}) is not equal to tested value {value} ({type(value)})")


def apply_patch(config: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    """RFC 6902 ``add``, ``remove``, ``replace`` and ``test`` on a copy of ``config``. GCU simulates the whole
    patch with python-jsonpatch before it sorts and applies any step, so a failed ``test`` refuses the patch with
    nothing applied, in jsonpatch's words [U: GCU's patch simulation, python-jsonpatch's TestOperation]."""
    doc = copy.deepcopy(config)
    if not isinstance(ops, list):
        raise PatchRefused("Given patch is not valid")
    for op in ops:
        if not isinstance(op, dict) or op.get("op") not in ("add", "remove", "replace", "test") or "path" not in op:
            raise PatchRefused("Given patch is not valid")
        parts = _parts(str(op["path"]))
        if op["op"] == "test":
            _test(doc, parts, op.get("value"))
            continue
        if not parts:
            raise PatchRefused("Wrong patch with empty path.")
        parent: Any = doc
        for p in parts[:-1]:
            if not isinstance(parent, dict) or p not in parent:
                raise PatchRefused(f"can't replace a non-existent object '{p}'")
            parent = parent[p]
        last = parts[-1]
        if not isinstance(parent, dict):
            raise PatchRefused("Given patch is not valid")
        if op["op"] == "remove":
            if last not in parent:
                raise PatchRefused(f"can't remove a non-existent object '{last}'")
            del parent[last]
        elif op["op"] == "replace":
            if last not in parent:
                raise PatchRefused(f"can't replace a non-existent object '{last}'")
            parent[last] = copy.deepcopy(op.get("value"))
        else:
            parent[last] = copy.deepcopy(op.get("value"))
    return doc


def _structural(config: dict[str, Any]) -> list[str]:
    problems = []
    for table, rows in config.items():
        if not isinstance(rows, dict):
            problems.append(f"{table}: not a table")
            continue
        for key, fields in rows.items():
            if not isinstance(fields, dict) or not all(isinstance(v, (str, list)) for v in fields.values()):
                problems.append(f"{table}|{key}: every value is a string")
    return problems


def validate(config: dict[str, Any], touched: set[str] | None = None) -> list[str]:
    """What the YANG models refuse in ``config`` (structural checks when yangson is missing). As GCU does, a table
    no model covers is left out of the check ("Below table(s) have no YANG models") unless the patch changes it:
    then the patch is refused. The lab knows the models vendored under tests/sonic_yang only."""
    problems = _structural(config)
    if problems:
        return problems
    validator = _validator()
    if not validator:
        return []
    if touched is not None and touched - set(validator.tables):
        raise PatchRefused("Given patch is not valid because it has changes to tables without YANG models")
    return list(validator.check({t: rows for t, rows in config.items() if t in validator.tables}))


class ConfigDb:
    """One switch's CONFIG_DB and checkpoints. Thread-safe: every SSH channel shares it."""

    def __init__(self, config: dict[str, Any], save: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.config = copy.deepcopy(config)
        self.checkpoints: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.fail_next_apply: str | None = None  # a fault: the next apply-patch fails with this error
        self._save = save  # called with the new configuration after every change (GCU writes CONFIG_DB)

    def _changed(self) -> None:
        if self._save is not None:
            self._save(copy.deepcopy(self.config))

    def running(self) -> dict[str, Any]:
        with self.lock:
            return copy.deepcopy(self.config)

    def apply(self, ops: Any, dry_run: bool = False) -> None:
        with self.lock:
            if self.fail_next_apply is not None:
                message, self.fail_next_apply = self.fail_next_apply, None
                raise PatchRefused(message)
            new = apply_patch(self.config, ops)
            empty = sorted(t for t, rows in new.items() if isinstance(rows, dict) and not rows)
            if empty:
                raise PatchRefused(
                    f"localhost: given patch is not valid because it will result in empty tables which is not "
                    f"allowed in ConfigDb. Table{'s' if len(empty) > 1 else ''}: {', '.join(empty)}"
                )
            touched = {_parts(str(op["path"]))[0] for op in ops}
            problems = validate(new, touched)
            if problems:
                raise PatchRefused(f"Given patch will produce invalid config. Error: {'; '.join(problems)}")
            if not dry_run:
                self.config = new
                self._changed()

    def checkpoint(self, name: str) -> None:
        with self.lock:
            self.checkpoints[name] = copy.deepcopy(self.config)

    def rollback(self, name: str) -> None:
        with self.lock:
            if name not in self.checkpoints:
                raise PatchRefused(f"Checkpoint '{name}' does not exist")
            self.config = copy.deepcopy(self.checkpoints[name])
            self._changed()

    def delete_checkpoint(self, name: str) -> None:
        with self.lock:
            if name not in self.checkpoints:
                raise PatchRefused(f"Checkpoint '{name}' does not exist")
            del self.checkpoints[name]

    def list_checkpoints(self) -> str:
        with self.lock:
            return json.dumps(sorted(self.checkpoints), indent=4)
