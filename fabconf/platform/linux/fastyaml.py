"""The GPU host's documents without PyYAML where that is exact (issue 42: printing the comparable documents with
``yaml.dump`` and reading the candidate with ``yaml.load`` were two fifths of fabconf's CPU in a GPU host's diff).
Reading: see ``load``.

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

import re
from collections.abc import Callable
from typing import Any

import yaml

WIDTH_LIMIT = 100  # a line longer than this might be folded by the emitter (width 120): printed by PyYAML instead
_CACHE_MAX = 50_000  # distinct scalars kept (a fabric's hosts share most of theirs)


class _Fallback(Exception):
    """The document holds something outside the fast path's shapes."""


Dump = Callable[[Any], str]


class _Scalars:
    """How ``dump`` writes one scalar in each context, asked once per distinct (type, value); and how it lays out
    lists (``flow``: which it writes in flow style) and how long a line may be without a fold (``width``)."""

    def __init__(self, dump: Dump, flow: Callable[[list[Any]], bool], width: int) -> None:
        self.dump, self.flow_list, self.width = dump, flow, width
        self.value: dict[tuple[type, Any], str | list[str]] = {}  # block context: one line, or literal lines
        self.key: dict[str, str] = {}
        self.flow: dict[tuple[type, Any], str] = {}

    def _keep(self, cache: dict[Any, Any]) -> None:
        if len(cache) > _CACHE_MAX:
            cache.clear()

    def in_block(self, value: Any) -> str | list[str]:
        """A mapping value's or a list item's text: one line, or the lines of a literal block (``|``)."""
        kind = type(value)
        if kind is str:
            if _SIMPLE.fullmatch(value):
                # no indicator but ": " or a final ":", no quote, no break: plain, unless it would be read back
                # as something else or ": " makes it a key; then single-quoted (nothing in it to escape)
                if value[-1] == ":" or ": " in value or _resolves(value):
                    return "'" + value + "'"
                return value
        elif kind is int:
            return str(value)  # SafeRepresenter.represent_int
        elif kind is bool:
            return "true" if value else "false"
        elif value is None:
            return "null"
        k = (kind, value)
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
                if (
                    lines[0] != "|"
                    or not isinstance(value, str)
                    or value != "\n".join(ln[2:] for ln in lines[1:]) + "\n"
                ):
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
# a string the emitter writes plain or single-quoted in block context, by ``in_block``'s rule: it starts with a
# letter, a digit, "_" or "/" (no indicator, no "..."), has words of [A-Za-z0-9_./,=+:-] one space apart (no
# "#", no quote, no break) and is short (the line length check keeps it from being folded)
_SIMPLE = re.compile(r"[A-Za-z0-9_/][A-Za-z0-9_./,=+:-]*(?: [A-Za-z0-9_./,=+:-]+)*")
_RESOLVERS: dict[Any, list[tuple[str, re.Pattern[str]]]] = yaml.resolver.Resolver.yaml_implicit_resolvers


def _resolves(value: str) -> bool:
    """Whether a plain ``value`` would be read back as something else than a string (``Resolver.resolve``'s
    implicit resolvers, which PyYAML's dumpers also ask before writing a string plain)."""
    return any(regexp.match(value) for _tag, regexp in _RESOLVERS.get(value[0], []) + _RESOLVERS.get(None, []))


_scalars: dict[int, _Scalars] = {}  # per dump function (id), so that each prints its own way


def _is_flow(items: list[Any]) -> bool:
    """``state._list_flow``'s rule."""
    return all(not isinstance(v, (dict, list)) and " " not in str(v) for v in items)


def never_flow(items: list[Any]) -> bool:
    """``default_flow_style=False``'s rule: every list in block style."""
    return False


def block_dump(doc: Any, dump: Dump, *, flow: Callable[[list[Any]], bool] = _is_flow, width: int = WIDTH_LIMIT) -> str:
    """``dump(doc)``, faster for the comparable documents' shapes (see the module's docstring). ``doc`` is a
    mapping, or a list of mappings (NVUE's ``- set:`` form); ``flow`` says which lists ``dump`` writes in flow style
    (``state._list_flow``'s rule by default; ``never_flow`` for ``default_flow_style=False``), and a line longer
    than ``width`` makes it ``dump(doc)`` (keep it well under the emitter's width: 100 for 120, 60 for 80)."""
    scalars = _scalars.get(id(dump))
    if scalars is None or scalars.dump is not dump:
        scalars = _scalars[id(dump)] = _Scalars(dump, flow, width)
    out: list[str] = []
    try:
        if type(doc) is dict and doc:
            _mapping(doc, 0, "", out, scalars)
        elif type(doc) is list and doc and all(type(item) is dict and item for item in doc):
            _sequence(doc, 0, out, scalars)
        else:
            return dump(doc)
    except _Fallback:
        return dump(doc)
    for line in out:
        if len(line) > scalars.width:
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
        if not value or scalars.flow_list(value):  # an empty list is "[]" in either style
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
            if not item or scalars.flow_list(item):
                out.append(pad + "- " + _flow(item, scalars))
            else:
                raise _Fallback  # a block list in a block list: left to PyYAML
        else:
            raise _Fallback


# -- reading fabconf's own rendered documents ------------------------------------------------------------------------

# What ``load`` reads itself: the subset ``templates/linux`` writes. Everything else goes to PyYAML.
_OUTSIDE = re.compile(r"[^\x20-\x7e\n]|\n\n|\n[ ]*\n")  # a control or non-ASCII character, tab, CR, blank line
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT = re.compile(r"0|-?[1-9][0-9]*")
_NOT_STR = {"yes", "no", "true", "false", "on", "off", "null"}  # plain words YAML 1.1 reads as a bool or null
_WORDS: dict[str, Any] = {"true": True, "false": False, "null": None}
_LINE_MAX = 1000  # a simple key may not be longer than 1024 characters


class _Outside(Exception):
    """The text is outside the subset: PyYAML reads it."""


def load(text: str, loader: type) -> Any:
    """``yaml.load(text, Loader=loader)``, read without PyYAML when ``text`` is in the subset the host template
    writes (issue 42: PyYAML's constructors were a fifth of fabconf's CPU in a GPU host's diff): comment lines,
    block mappings and sequences indented by spaces, keys plain (``[A-Za-z_][A-Za-z0-9_]*``, not a YAML 1.1 bool
    or null word) or double-quoted, values double-quoted without ``\\`` or ``"``, decimal integers, ``true``,
    ``false``, ``null``, ``[]``, ``{}``, flow lists of those numbers and words, and plain literal blocks (``|``);
    printable ASCII only, no blank line, a final line break. Anything else, valid or not, is read by PyYAML."""
    try:
        return _Reader(text).document()
    except _Outside:
        return yaml.load(text, Loader=loader)


class _Reader:
    def __init__(self, text: str) -> None:
        if not text.endswith("\n") or _OUTSIDE.search(text):
            raise _Outside
        self.lines = text[:-1].split("\n")
        self.at = 0

    def document(self) -> dict[str, Any]:
        self._skip()
        if self.at == len(self.lines) or self.lines[self.at].startswith(" "):
            raise _Outside
        doc = self._mapping(0, None)
        self._skip()
        if self.at != len(self.lines):
            raise _Outside
        return doc

    def _skip(self) -> None:
        """Past comment lines (where a node may start: never inside a literal block)."""
        lines = self.lines
        while self.at < len(lines) and lines[self.at].lstrip().startswith("#"):
            self.at += 1

    def _next(self) -> tuple[int, str] | None:
        """The next node line's indent and content, not consumed; None at the end."""
        self._skip()
        if self.at == len(self.lines):
            return None
        line = self.lines[self.at]
        if len(line) > _LINE_MAX:
            raise _Outside
        content = line.lstrip(" ")
        return len(line) - len(content), content

    def _mapping(self, indent: int, first: str | None) -> dict[str, Any]:
        """A block mapping whose keys are at ``indent``; ``first``: its first entry's text, already read (after
        ``- `` in a sequence)."""
        out: dict[str, Any] = {}
        while True:
            if first is None:
                got = self._next()
                if got is None or got[0] < indent:
                    return out
                if got[0] > indent:
                    raise _Outside
                content = got[1]
                self.at += 1
            else:
                content, first = first, None
            key, rest = _key(content)
            if key is None:
                raise _Outside
            out[key] = self._value(rest, indent)

    def _value(self, rest: str, indent: int) -> Any:
        """A mapping value: ``rest`` follows ``key:`` on its line; the key is at ``indent``."""
        if rest == "":
            got = self._next()
            if got is None or got[0] <= indent:
                return None
            inner, content = got
            if content.startswith("- "):
                return self._sequence(inner)
            if content in ("[]", "{}"):
                self.at += 1
                after = self._next()
                if after is not None and after[0] > indent:
                    raise _Outside
                return [] if content == "[]" else {}
            return self._mapping(inner, None)
        if rest == "|":
            return self._literal(indent)
        return _scalar(rest)

    def _sequence(self, indent: int) -> list[Any]:
        out: list[Any] = []
        while True:
            got = self._next()
            if got is None or got[0] < indent:
                return out
            if got[0] > indent or not got[1].startswith("- "):
                raise _Outside
            self.at += 1
            item = got[1][2:]
            first = item[:1]  # an entry starts with a quote, a letter or "_" (a number or a flow list does not)
            if (first == '"' or first == "_" or first.isalpha()) and _key(item)[0] is not None:
                out.append(self._mapping(indent + 2, item))
            else:
                out.append(_scalar(item))

    def _literal(self, indent: int) -> str:
        """A literal block (``|``, clipped) under a key at ``indent``."""
        lines = self.lines
        if self.at == len(lines):
            raise _Outside
        first = lines[self.at]
        body = len(first) - len(first.lstrip(" "))
        if body <= indent:
            raise _Outside  # an empty block
        out = []
        while self.at < len(lines) and lines[self.at][:body].isspace() and len(lines[self.at]) > body:
            out.append(lines[self.at][body:])
            self.at += 1
        return "\n".join(out) + "\n"


def _key(content: str, plain: re.Pattern[str] = _PLAIN_KEY, words: set[str] = _NOT_STR) -> tuple[str | None, str]:
    """A mapping entry's key and the text after ``: `` ("" when the line ends after the colon); (None, "") when
    ``content`` is not an entry of the subset: a key double-quoted (no ``\\`` or ``"`` in it) or ``plain``, and not
    one of ``words`` in any case (a plain word the loader reads as something else than a string). Also the Cumulus
    reader's (``platform/cumulus/fastread.py``), with its own plain keys and words."""
    if content.startswith('"'):
        end = content.find('"', 1)
        if end < 0 or "\\" in content[:end]:
            return None, ""
        key, tail = content[1:end], content[end + 1 :]
    else:
        match = plain.match(content)
        if match is None or match.group().lower() in words:
            return None, ""
        key, tail = match.group(), content[match.end() :]
    if tail == ":":
        return key, ""
    if tail.startswith(": ") and tail[2:3] not in ("", " "):
        return key, tail[2:]
    return None, ""


def _quoted(text: str) -> str:
    """A double-quoted value with nothing to unescape (no ``\\`` or ``"`` inside)."""
    if len(text) < 2 or not text.endswith('"') or '"' in text[1:-1] or "\\" in text:
        raise _Outside
    return text[1:-1]


def _scalar(text: str) -> Any:
    """A value of the subset on one line (not a literal block)."""
    if text.startswith('"'):
        return _quoted(text)
    if text.startswith("["):
        if text == "[]":
            return []
        if not text.endswith("]"):
            raise _Outside
        return [_word(item) for item in text[1:-1].split(", ")]
    if text == "{}":
        return {}
    return _word(text)


def _word(text: str) -> Any:
    """A decimal integer, true, false or null."""
    if text.isdigit() and (text[0] != "0" or text == "0"):  # ASCII only (the reader took nothing else)
        return int(text)
    if _INT.fullmatch(text):
        return int(text)
    if text in _WORDS:
        return _WORDS[text]
    raise _Outside
