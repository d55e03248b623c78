"""Limits on one inventory file, checked on the YAML event stream before any object is built.

An inventory file is read only after it passed these checks, so nothing later (the schema, the
cross-checks, deep copies, JSON) ever walks a structure that is too large or too deep:

- ``MAX_FILE_BYTES``: the file's size. A 32,768-GPU fabric's largest file (``cabling.yaml``) is 3.7 MB;
  16 MiB leaves four times that.
- ``MAX_DEPTH``: nesting levels (a mapping or a list inside another). The deepest inventory value is six
  levels down; Python's own recursion limit is the danger past a few hundred.
- ``MAX_NODES``: values (scalars, lists, mappings) counted after expanding every alias (``*name``). A
  32,768-GPU ``cabling.yaml`` holds 295,000; a YAML "billion laughs" holds 10**9 in a few hundred bytes.
  Aliases expand into one value per use, so the count is what every later walk of the data would visit.
  At the limit, a flat list of 2,000,000 numbers is refused by the schema in ~20 s and ~800 MB.
- One YAML document per file; every mapping key is a string (JSON Schema, which checks the files, and
  Nornir know no other keys); no alias refers to a node that contains it (a recursive structure).

The scan costs one extra pass of the C parser over the events, streaming (constant memory).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 2_000_000

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_KIND = {
    "tag:yaml.org,2002:int": "a number",
    "tag:yaml.org,2002:float": "a number",
    "tag:yaml.org,2002:bool": "a boolean",
    "tag:yaml.org,2002:null": "null",
    "tag:yaml.org,2002:timestamp": "a date",
}


class LimitExceeded(Exception):
    """The file breaks one of the limits; ``line`` and ``column`` count from 1 (0: the whole file)."""

    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.line, self.column, self.message = line, column, message

    @property
    def where(self) -> str:
        return f"line {self.line} column {self.column}" if self.line else "(file)"


@dataclass(slots=True)
class _Open:
    """A mapping or list not yet closed."""

    anchor: str | None
    first: int  # the node count when it opened (itself included)
    mapping: bool
    children: int = 0
    height: int = 0  # the most collections nested in one child so far


def _at(event: Any, message: str) -> LimitExceeded:
    mark = event.start_mark
    return LimitExceeded(mark.line + 1, mark.column + 1, message)


_RESOLVER = yaml.resolver.Resolver()
# the first characters of a plain scalar that YAML 1.1 may resolve to something other than a string
_RESOLVABLE = frozenset(_RESOLVER.yaml_implicit_resolvers) - {None}


def _key_problem(event: Any) -> str | None:
    """Why a mapping key is not a name, or None when it is one."""
    kind = type(event)
    if kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
        return "a key must be a name, not a " + ("mapping" if kind is yaml.MappingStartEvent else "list")
    if kind is not yaml.ScalarEvent:
        return None  # an alias as a key: the constructor says what is wrong with it
    tag, value = event.tag, event.value
    if tag is None or tag == "!":
        if not event.implicit[0] or (value and value[0] not in _RESOLVABLE):
            return None  # quoted, or plain and starting like no number, boolean, null or date
        tag = _RESOLVER.resolve(yaml.ScalarNode, value, event.implicit)
    if tag in (_STR, _MERGE):
        return None
    kind_name = _KIND.get(tag, f"tagged {tag}")
    return f"the key {value!r} is {kind_name}, not a name: put it in quotes if it is meant as one"


def check_events(text: str, loader: type) -> int:
    """Raise LimitExceeded when ``text`` breaks a limit; YAML syntax errors propagate as yaml.YAMLError.
    Returns the number of values, aliases expanded."""
    scalar, alias = yaml.ScalarEvent, yaml.AliasEvent
    mapping_start, sequence_start = yaml.MappingStartEvent, yaml.SequenceStartEvent
    ends = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    stack: list[_Open] = []
    anchors: dict[str, tuple[int, int]] = {}  # anchor -> (nodes, height) of its node, once closed
    nodes = documents = 0
    events: Iterator[Any] = yaml.parse(text, Loader=loader)
    for event in events:
        kind = type(event)
        if kind in ends:
            done = stack.pop()
            size, height = nodes - done.first + 1, done.height + 1  # a collection counts as one level
            if done.anchor is not None:
                anchors[done.anchor] = (size, height)
            if stack and stack[-1].height < height:
                stack[-1].height = height
            continue
        if kind is not scalar and kind is not alias and kind is not mapping_start and kind is not sequence_start:
            if kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise _at(event, "a second YAML document ('---'): an inventory file holds exactly one")
            continue
        parent = stack[-1] if stack else None
        if parent is not None:
            if parent.mapping and not parent.children & 1 and (problem := _key_problem(event)):
                raise _at(event, problem)
            parent.children += 1
        if kind is scalar:
            nodes += 1
            if event.anchor is not None:
                anchors[event.anchor] = (1, 0)
            if nodes > MAX_NODES:
                raise _at(event, f"more than {MAX_NODES:,} values")
            continue
        if kind is not alias:
            nodes += 1
            stack.append(_Open(event.anchor, nodes, kind is mapping_start))
            if len(stack) > MAX_DEPTH:
                raise _at(event, f"too deeply nested (more than {MAX_DEPTH} levels)")
            continue
        if any(o.anchor == event.anchor for o in stack):
            raise _at(event, f"the alias *{event.anchor} refers to a node that contains it: a recursive structure")
        if event.anchor not in anchors:
            continue  # undefined: the composer reports it
        size, height = anchors[event.anchor]
        nodes += size
        if len(stack) + height > MAX_DEPTH:  # an alias of a nested collection
            expands = f"counting what *{event.anchor} expands to"
            raise _at(event, f"too deeply nested (more than {MAX_DEPTH} levels, {expands})")
        if parent is not None and parent.height < height:
            parent.height = height
        if nodes > MAX_NODES:
            what = f"values once aliases are expanded (*{event.anchor} alone is {size:,})"
            raise _at(event, f"more than {MAX_NODES:,} {what}")
    return nodes


__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "MAX_NODES", "LimitExceeded", "check_events"]
