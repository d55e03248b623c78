"""The NVUE document fabconf renders, read without PyYAML where that is exact (issue 42: PyYAML's constructors were
a quarter of fabconf's CPU in a Cumulus switch's diff).

``read(text)`` returns what ``yaml.load(text, Loader=plan._NvueLoader)`` returns, or ``None`` when ``text`` is
outside the subset ``templates/cumulus`` writes; the caller then asks PyYAML, so anything else, valid or not, reads
exactly as before. The subset: comment lines; one ``- set:`` item (nothing else at the top level); block mappings
indented by spaces below it; keys double-quoted (no ``\\`` or ``"`` in them) or plain (a letter, then letters,
digits, ``_`` and ``-``; not a null word); values double-quoted the same way, decimal integers (no sign but ``-``,
no leading zero), ``{}``, or nothing (null); printable ASCII only, no blank line, a final line break. The NVUE
loader's YAML 1.2 rules agree on all of these: a plain key starting with a letter is a string unless it is a null
word, and the only plain values read are integers.
"""

from __future__ import annotations

import re
from typing import Any

_OUTSIDE = re.compile(r"[^\x20-\x7e\n]|\n\n|\n[ ]*\n")  # a control or non-ASCII character, tab, CR, blank line
_PLAIN_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_NULL = {"null", "Null", "NULL"}
_INT = re.compile(r"0|-?[1-9][0-9]*")
_LINE_MAX = 1000  # a simple key may not be longer than 1024 characters


class _Outside(Exception):
    """The text is outside the subset."""


def read(text: str) -> list[dict[str, Any]] | None:
    """``[{"set": tree}]`` as the NVUE loader reads ``text``; None when ``text`` is outside the subset."""
    if not text.endswith("\n") or _OUTSIDE.search(text):
        return None
    lines = [ln for ln in text[:-1].split("\n") if not ln.lstrip(" ").startswith("#")]
    if not lines or lines[0] != "- set:":
        return None
    try:
        tree, at = _mapping(lines, 1, 4)
    except _Outside:
        return None
    if at != len(lines) or not tree:
        return None
    return [{"set": tree}]


def _mapping(lines: list[str], at: int, indent: int) -> tuple[dict[str, Any], int]:
    """The block mapping whose keys are at ``indent``, from line ``at``; and the line after it."""
    out: dict[str, Any] = {}
    while at < len(lines):
        line = lines[at]
        if len(line) > _LINE_MAX:
            raise _Outside
        content = line.lstrip(" ")
        depth = len(line) - len(content)
        if depth < indent:
            return out, at
        if depth > indent:
            raise _Outside
        key, rest = _entry(content)
        at += 1
        if rest:
            out[key] = _value(rest)
            continue
        nxt = lines[at] if at < len(lines) else ""
        inner = len(nxt) - len(nxt.lstrip(" "))
        if inner > indent:
            out[key], at = _mapping(lines, at, inner)
        else:
            out[key] = None  # ``key:`` and nothing under it
    return out, at


def _entry(content: str) -> tuple[str, str]:
    """A mapping entry's key and the text after ``: `` ("" when the line ends after the colon)."""
    if content.startswith('"'):
        end = content.find('"', 1)
        if end < 0 or "\\" in content[:end]:
            raise _Outside
        key, tail = content[1:end], content[end + 1 :]
    else:
        match = _PLAIN_KEY.match(content)
        if match is None or match.group() in _NULL:
            raise _Outside
        key, tail = match.group(), content[match.end() :]
    if tail == ":":
        return key, ""
    if tail.startswith(": ") and tail[2:3] not in ("", " "):
        return key, tail[2:]
    raise _Outside


def _value(text: str) -> Any:
    if text.startswith('"'):
        if len(text) < 2 or not text.endswith('"') or '"' in text[1:-1] or "\\" in text:
            raise _Outside
        return text[1:-1]
    if text == "{}":
        return {}
    if _INT.fullmatch(text):
        return int(text)
    raise _Outside
