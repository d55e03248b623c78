"""Ansible-style device selection for ``--limit``.

A pattern is a list of terms separated by ``,`` or ``:``. Each term is a device name, a group name, a pod
name (``data.pod``: ``--limit pod2`` pushes a new pod), a rack name (``data.rack``) or a shell glob over any
of them (``leaf*``, ``gpu0[1-4]``); ``!term`` removes what it matches and ``&term`` keeps only what it also
matches. Terms without a prefix are unioned, then ``&`` and ``!`` apply in order.
"""

from __future__ import annotations

import difflib
import fnmatch
import re

from fabconf.errors import FabconfError
from fabconf.model import Model


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
    """ "; did you mean …?" with the closest device and group names, or ""."""
    known = sorted(
        set(model.devices)
        | {g for dev in model.devices.values() for g in dev.groups}
        | {dev.pod for dev in model.devices.values() if dev.pod}
        | {str(dev.data["rack"]) for dev in model.devices.values() if dev.data.get("rack")}
    )
    close = difflib.get_close_matches(term, known, n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def select(model: Model, pattern: str | None) -> list[str]:
    """Sorted device names matching ``pattern`` (all devices when None/empty)."""
    if not pattern:
        return sorted(model.devices)
    terms = [t.strip() for t in re.split(r"[,:]", pattern) if t.strip()]
    chosen: set[str] = set()
    plain = [t for t in terms if t[0] not in "!&"]
    for term in plain:
        hit = _match(term, model)
        if not hit:
            raise SelectionError(f"--limit: {term!r} matches no device or group{_suggest(term, model)}")
        chosen |= hit
    if not plain:
        chosen = set(model.devices)
    for term in terms:
        if term[0] == "&":
            chosen &= _match(term[1:], model)
        elif term[0] == "!":
            chosen -= _match(term[1:], model)
    if not chosen:
        raise SelectionError(f"--limit {pattern!r} selects no device")
    return sorted(chosen)
