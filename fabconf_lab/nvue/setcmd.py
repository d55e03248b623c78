"""Turn ``nv set`` / ``nv unset`` words into NVUE tree paths, guided by the schema.

``nv set interface swp1-2 link mtu 9000`` -> patch ``{"interface": {"swp1": {"link": {"mtu": 9000}},
"swp2": …}}``; ``nv set bridge domain br_default vlan 10,20`` -> ``vlan: {"10": {}, "20": {}}``;
``nv set qos roce`` -> ``{"qos": {"roce": {}}}``.

Rules: a container word descends; a collection word takes the next word as a key (interface-style
ranges ``swp1-4`` and comma lists expand to several keys; [U] VLAN ranges such as ``100-200`` stay one
key); an open collection (``ip address``, ``pfc … switch-priority``) takes one key and ends as ``{}``;
a leaf takes the rest of the line as its value (all-digit values become integers).
"""

from __future__ import annotations

import re
from typing import Any

from fabconf_lab.nvue.schema import Validator
from fabconf_lab.nvue.tree import Tree, merge, wrap


def expand_keys(word: str) -> list[str]:
    """``swp1-3,swp7`` -> ``[swp1, swp2, swp3, swp7]``; other words split on commas only."""
    out: list[str] = []
    for part in word.split(","):
        match = re.fullmatch(r"([A-Za-z_]+[A-Za-z_0-9]*?)(\d+)-(\d+)", part)
        if match and int(match.group(2)) <= int(match.group(3)):
            prefix, lo, hi = match.group(1), int(match.group(2)), int(match.group(3))
            out.extend(f"{prefix}{n}" for n in range(lo, hi + 1))
        elif part:
            out.append(part)
    return out


def _value(words: list[str]) -> Any:
    text = " ".join(words)
    return int(text) if text.isdigit() else text


def resolve(validator: Validator, words: list[str], *, need_value: bool = True) -> list[tuple[list[str], Any]]:
    """Every (path, value) a ``nv set`` line names. Raises ValueError for unknown or incomplete paths."""
    results: list[tuple[list[str], Any]] = []
    _walk(validator, None, words, [], results, need_value)
    return results


def _walk(
    validator: Validator, node: Any, words: list[str], parts: list[str], out: list[tuple[list[str], Any]], need: bool
) -> None:
    if not words:
        out.append((parts, {}))
        return
    word, rest = words[0], words[1:]
    step = validator.child(node, word)
    if step is None:
        where = " ".join(parts) or "nv set"
        raise ValueError(f"'{word}' is not a valid keyword after '{where}'")
    kind, sub = step
    here = [*parts, word]
    if kind == "container":
        _walk(validator, sub, rest, here, out, need)
    elif kind == "map":
        if not rest:
            raise ValueError(f"'{' '.join(here)}' needs a name")
        for key in expand_keys(rest[0]):
            _walk(validator, sub, rest[1:], [*here, key], out, need)
    elif kind == "open":
        if not rest:
            out.append((here, {}))
            return
        if len(rest) > 1:
            raise ValueError(f"unexpected '{' '.join(rest[1:])}' after '{' '.join([*here, rest[0]])}'")
        for key in expand_keys(rest[0]):
            out.append(([*here, key], {}))
    else:
        if not rest and need:
            raise ValueError(f"'{' '.join(here)}' needs a value")
        out.append((here, _value(rest) if rest else None))


def set_patch(validator: Validator, words: list[str]) -> Tree:
    """The PATCH body for ``nv set WORDS``."""
    patch: Tree = {}
    for parts, value in resolve(validator, words):
        patch = merge(patch, wrap(parts, value))
    return patch


def unset_paths(validator: Validator, words: list[str]) -> list[list[str]]:
    """The paths ``nv unset WORDS`` removes (a trailing leaf value is ignored)."""
    return [parts for parts, _ in resolve(validator, words, need_value=False)]
