"""Ansible-style device selection for ``--limit``.

A pattern is a list of terms separated by ``,`` or ``:``. Each term is a device name, a group name, a pod
name (``data.pod``: ``--limit pod2`` pushes a new pod), a rack name (``data.rack``) or a shell glob over any
of them (``leaf*``, ``gpu0[1-4]``); ``!term`` removes what it matches and ``&term`` keeps only what it also
matches. Terms without a prefix are unioned, then ``&`` and ``!`` apply in order; ``all`` alone selects
every device, as in Ansible.

Every term must match something, whatever its prefix, and the whole pattern is checked before anything
connects: ``leaves,!lef1`` is refused (``'!lef1' matches no device or group; did you mean 'leaf1'?``)
instead of pushing the leaf its author meant to protect.
"""

from __future__ import annotations

import difflib
import fnmatch
import re

from fabconf.compile.model import Model
from fabconf.errors import FabconfError


class SelectionError(FabconfError, ValueError):
    pass


def _match(term: str, model: Model) -> set[str]:
    names = set(model.devices)
    if term in names:
        return {term}
    out = {n for n in names if fnmatch.fnmatchcase(n, term)}
    for name, dev in model.devices.items():
        labels = [*dev.groups, *(str(x) for x in (dev.pod, dev.data.get("rack")) if x)]
        if any(fnmatch.fnmatchcase(g, term) for g in labels):
            out.add(name)
    return out


def _suggest(term: str, model: Model) -> str:
    """ "; did you mean …?" with the closest group, pod or rack names first (``leafs`` -> ``leaves``), then the
    closest device names, or ""."""
    labels = sorted(
        {g for dev in model.devices.values() for g in dev.groups}
        | {dev.pod for dev in model.devices.values() if dev.pod}
        | {str(dev.data["rack"]) for dev in model.devices.values() if dev.data.get("rack")}
    )
    close = difflib.get_close_matches(term, labels, n=2, cutoff=0.7)
    close += difflib.get_close_matches(term, sorted(model.devices), n=4 - len(close), cutoff=0.6)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def _term_error(shown: str, bare: str, model: Model) -> SelectionError:
    return SelectionError(f"--limit: {shown!r} matches no device or group{_suggest(bare, model)}")


def select(model: Model, pattern: str | None) -> list[str]:
    """Sorted device names matching ``pattern`` (all devices when None/empty).

    Every term must match at least one device, group, pod or rack of the inventory, whatever its prefix: a
    typo in an exclusion (``leaves,!lef1``) would otherwise select the very device it meant to protect."""
    if not pattern or pattern.strip() == "all":
        return sorted(model.devices)
    terms = [t.strip() for t in re.split(r"[,:]", pattern) if t.strip()]
    hits: list[tuple[str, set[str]]] = []
    for term in terms:
        bare = term[1:].strip() if term[0] in "!&" else term
        if not bare:
            raise SelectionError(f"--limit: {term!r} names nothing after {term[0]!r}")
        hit = _match(bare, model)
        if not hit:
            raise _term_error(term, bare, model)
        hits.append((term[0], hit))
    plain = [hit for prefix, hit in hits if prefix not in "!&"]
    chosen: set[str] = set().union(*plain) if plain else set(model.devices)
    for prefix, hit in hits:
        if prefix == "&":
            chosen &= hit
        elif prefix == "!":
            chosen -= hit
    if not chosen:
        raise SelectionError(f"--limit {pattern!r} selects no device")
    return sorted(chosen)
