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

# the host reader's pieces (``platform/linux/fastyaml.py``): the same subset of characters and lines, the same
# double-quoted keys and values, with NVUE's plain keys and null words
from fabconf.platform.linux.fastyaml import _INT, _LINE_MAX, _OUTSIDE, _key, _Outside, _quoted

_PLAIN_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_NULL = {"null"}  # any case: "Null" and "NULL" are null to the loader; "nULL", a string, is left to it too


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
    key, rest = _key(content, _PLAIN_KEY, _NULL)
    if key is None:
        raise _Outside
    return key, rest


def _value(text: str) -> Any:
    if text.startswith('"'):
        return _quoted(text)
    if text == "{}":
        return {}
    if _INT.fullmatch(text):
        return int(text)
    raise _Outside
