"""Load the inventory directory: Nornir SimpleInventory files plus the fabric intent and the cabling.

Only reading happens here. Every file is parsed with PyYAML's C loader when available, duplicate keys
are reported (PyYAML would silently keep the last one), and every failure becomes a Problem with the
file, line and column rather than an exception.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fabconf.problems import Problems

FILES = {
    "hosts": ("hosts.yaml", True),
    "groups": ("groups.yaml", False),
    "defaults": ("defaults.yaml", False),
    "fabric": ("fabric.yaml", True),
    "cabling": ("cabling.yaml", True),
}

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _DuplicateKey(Exception):
    def __init__(self, key: object, line: int, column: int) -> None:
        super().__init__(key)
        self.key, self.line, self.column = key, line, column


class _Loader(_BaseLoader):
    """Safe loader that refuses duplicate mapping keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                hashable = key in seen
            except TypeError:
                continue
            if hashable:
                mark = key_node.start_mark
                raise _DuplicateKey(key, mark.line + 1, mark.column + 1)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _Loader.construct_mapping)


def display_name(path: Path) -> str:
    """A path as the user should read it: relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


@dataclass
class RawInventory:
    """The parsed files, untouched. ``files`` maps a kind (``hosts``…) to its display name."""

    directory: Path
    files: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def hosts(self) -> dict[str, Any]:
        return self.data.get("hosts") or {}

    @property
    def groups(self) -> dict[str, Any]:
        return self.data.get("groups") or {}

    @property
    def defaults(self) -> dict[str, Any]:
        return self.data.get("defaults") or {}

    @property
    def fabric(self) -> dict[str, Any]:
        return self.data.get("fabric") or {}

    @property
    def cabling(self) -> dict[str, Any]:
        return self.data.get("cabling") or {}


def load_yaml(path: Path, shown: str, problems: Problems) -> tuple[bool, Any]:
    """Parse one YAML file; on failure record a problem and return (False, None)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        problems.add(shown, "(file)", "file not found")
        return False, None
    except (OSError, UnicodeDecodeError) as exc:
        problems.add(shown, "(file)", f"cannot read: {exc}")
        return False, None
    try:
        return True, yaml.load(text, Loader=_Loader)
    except _DuplicateKey as exc:
        problems.add(shown, f"line {exc.line} column {exc.column}", f"duplicate key {exc.key!r}")
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else "(file)"
        problems.add(shown, where, f"YAML syntax error: {exc.problem or exc.context}")
    except yaml.YAMLError as exc:
        problems.add(shown, "(file)", f"YAML error: {exc}")
    return False, None


def load(directory: Path | str, problems: Problems) -> RawInventory:
    """Read every inventory file of ``directory``; what cannot be read is recorded in ``problems``."""
    directory = Path(directory)
    raw = RawInventory(directory)
    if not directory.is_dir():
        problems.add(display_name(directory), "(directory)", "inventory directory not found")
        return raw
    for kind, (name, required) in FILES.items():
        path = directory / name
        shown = display_name(path)
        raw.files[kind] = shown
        if not path.exists() and not required:
            raw.data[kind] = {}
            continue
        ok, value = load_yaml(path, shown, problems)
        if ok:
            raw.data[kind] = {} if value is None else value
    return raw
