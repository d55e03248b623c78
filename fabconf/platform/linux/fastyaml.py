"""Printing the GPU host's comparable documents without PyYAML's emitter (issue 42: ``yaml.dump`` was a fifth of
fabconf's CPU in a GPU host's diff).

``block_dump(doc, dump)`` prints exactly what ``dump(doc)`` (``yaml.dump`` with ``state._BlockDumper``,
``default_flow_style=False``, ``sort_keys=False``, ``width=120``) prints, for the shapes those documents hold:
mappings with string keys, lists (flow ``[a, b]`` when ``_BlockDumper`` makes them flow: no item a mapping or a
list and none with a space), strings, ints, bools and None. How each distinct scalar is written (plain, quoted,
escaped, a literal block) is asked of ``dump`` itself, once, on a one-entry document, and kept: the fast path only
lays out lines. Anything else -- a float, a key that is not a string, a scalar the one-entry document does not
print on one line (or as a plain literal block), a line that could reach the emitter's width and be folded --
makes ``block_dump`` return ``dump(doc)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

WIDTH_LIMIT = 100  # a line longer than this might be folded by the emitter (width 120): printed by PyYAML instead
_CACHE_MAX = 50_000  # distinct scalars kept (a fabric's hosts share most of theirs)


class _Fallback(Exception):
    """The document holds something outside the fast path's shapes."""


Dump = Callable[[Any], str]


class _Scalars:
    """How ``dump`` writes one scalar in each context, asked once per distinct (type, value)."""

    def __init__(self, dump: Dump) -> None:
        self.dump = dump
        self.value: dict[tuple[type, Any], str | list[str]] = {}  # block context: one line, or literal lines
        self.key: dict[str, str] = {}
        self.flow: dict[tuple[type, Any], str] = {}

    def _keep(self, cache: dict[Any, Any]) -> None:
        if len(cache) > _CACHE_MAX:
            cache.clear()

    def in_block(self, value: Any) -> str | list[str]:
        """A mapping value's or a list item's text: one line, or the lines of a literal block (``|``)."""
        k = (type(value), value)
        got = self.value.get(k)
        if got is None:
            text = self.dump({"k": value})
            if not text.startswith("k: ") or not text.endswith("\n"):
                raise _Fallback
            body = text[3:-1]
            if "\n" not in body:
                got = body
            else:
                lines = body.split("\n")
                # only the plain literal block: "|" then every line of the value, indented by two, none empty
                if lines[0] != "|" or not isinstance(value, str) or value != "\n".join(ln[2:] for ln in lines[1:]) + "\n":
                    raise _Fallback
                if any(not ln.startswith("  ") or ln[2:3] in ("", " ") for ln in lines[1:]):
                    raise _Fallback
                got = [ln[2:] for ln in lines[1:]]
            self._keep(self.value)
            self.value[k] = got
        return got

    def as_key(self, key: Any) -> str:
        if type(key) is not str:
            raise _Fallback
        got = self.key.get(key)
        if got is None:
            text = self.dump({key: 0})
            if not text.endswith(": 0\n") or text.count("\n") != 1 or text.startswith("? "):
                raise _Fallback
            got = text[: -len(": 0\n")]
            self._keep(self.key)
            self.key[key] = got
        return got

    def in_flow(self, value: Any) -> str:
        k = (type(value), value)
        got = self.flow.get(k)
        if got is None:
            text = self.dump({"k": [value]})
            if not text.startswith("k: [") or not text.endswith("]\n") or text.count("\n") != 1:
                raise _Fallback
            got = text[4:-2]
            self._keep(self.flow)
            self.flow[k] = got
        return got


_SCALARS = (str, int, bool, type(None))
_scalars: dict[int, _Scalars] = {}  # per dump function (id), so that each prints its own way


def _is_flow(items: list[Any]) -> bool:
    """``state._list_flow``'s rule."""
    return all(not isinstance(v, (dict, list)) and " " not in str(v) for v in items)


def block_dump(doc: Any, dump: Dump) -> str:
    """``dump(doc)``, faster for the comparable documents' shapes (see the module's docstring)."""
    scalars = _scalars.get(id(dump))
    if scalars is None or scalars.dump is not dump:
        scalars = _scalars[id(dump)] = _Scalars(dump)
    if type(doc) is not dict or not doc:
        return dump(doc)
    out: list[str] = []
    try:
        _mapping(doc, 0, "", out, scalars)
    except _Fallback:
        return dump(doc)
    for line in out:
        if len(line) > WIDTH_LIMIT:
            return dump(doc)
    out.append("")
    return "\n".join(out)


def _scalar_type(value: Any) -> bool:
    return type(value) in _SCALARS


def _mapping(doc: dict[Any, Any], indent: int, first: str, out: list[str], scalars: _Scalars) -> None:
    """A non-empty block mapping at ``indent``; its first line starts with ``first`` (``- `` in a list) instead
    of the indent."""
    pad = " " * indent
    lead = first or pad
    for key, value in doc.items():
        head = lead + scalars.as_key(key) + ":"
        lead = pad
        _value(value, head, indent, out, scalars)


def _value(value: Any, head: str, indent: int, out: list[str], scalars: _Scalars) -> None:
    """``value`` after ``head`` (``key:`` at ``indent``)."""
    if _scalar_type(value):
        text = scalars.in_block(value)
        if type(text) is str:
            out.append(head + " " + text)
        else:
            out.append(head + " |")
            body = " " * (indent + 2)
            out.extend(body + line for line in text)
    elif type(value) is dict:
        if not value:
            out.append(head + " {}")
        else:
            out.append(head)
            _mapping(value, indent + 2, "", out, scalars)
    elif type(value) is list:
        if _is_flow(value):
            out.append(head + " " + _flow(value, scalars))
        else:
            out.append(head)
            _sequence(value, indent, out, scalars)  # a list in a mapping is not indented
    else:
        raise _Fallback


def _flow(items: list[Any], scalars: _Scalars) -> str:
    for item in items:
        if not _scalar_type(item):
            raise _Fallback
    return "[" + ", ".join(scalars.in_flow(item) for item in items) + "]"


def _sequence(items: list[Any], indent: int, out: list[str], scalars: _Scalars) -> None:
    """A non-empty block sequence whose dashes are at ``indent``."""
    pad = " " * indent
    for item in items:
        if _scalar_type(item):
            text = scalars.in_block(item)
            if type(text) is not str:
                raise _Fallback  # a literal block as a list item: left to PyYAML
            out.append(pad + "- " + text)
        elif type(item) is dict:
            if not item:
                out.append(pad + "- {}")
            else:
                _mapping(item, indent + 2, pad + "- ", out, scalars)
        elif type(item) is list:
            if _is_flow(item):
                out.append(pad + "- " + _flow(item, scalars))
            else:
                raise _Fallback  # a block list in a block list: left to PyYAML
        else:
            raise _Fallback
