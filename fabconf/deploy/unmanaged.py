"""Unmanaged changes: what changed on a device since its last backup, outside what fabconf owns.

Not drift (fabconf would not touch it, and the exit status does not change), but worth a line in the nightly
report: somebody changed the switch. Both backups are read as settings, one per line with its place in the
configuration, and compared as sets (the order a device prints things in does not matter):
- CLI text: ``interface Ethernet5/1 > description spare`` (ancestors by indentation);
- YAML documents: ``interface/swp5/link/mtu: 9000`` (NVUE tree), ``nics[ens1f0np0]/mtu: 9000`` (host).

A setting is fabconf's own — drift covers it, whether it drifted or is at intent — when:
- CLI: its root line matches the platform's owned sections (``Platform.owned``) or is a root line of the
  rendered configuration (the interfaces fabconf renders);
- NVUE: its path is under an owned path (``Platform.owned``, ``*`` any key) and not the management plane;
- host: its key path is one the rendered NIC-state document sets.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from fabconf.deploy.backup import load_yaml
from fabconf.deploy.job import Job
from fabconf.deploy.sections import changed_paths, nv_paths
from fabconf.platforms import Candidate


def cli_settings(text: str) -> set[str]:
    """Every line of a CLI configuration with its ancestors (``root > child > line``)."""
    # the diff reader's ancestor tracking, on a hunk that adds every line of the document
    return set(changed_paths("@@\n" + "\n".join("+" + line for line in text.splitlines())))


def _merged(base: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    """``more`` merged into ``base`` key by key, at every depth (as NVUE applies several ``set`` items)."""
    out = dict(base)
    for key, value in more.items():
        old = out.get(key)
        out[key] = _merged(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
    return out


def _unwrap(doc: Any) -> Any:
    """NVUE's ``[{set: TREE}, ...]`` (startup.yaml form) -> one TREE, the items merged at every depth."""
    if isinstance(doc, list) and doc and all(isinstance(x, dict) and set(x) == {"set"} for x in doc):
        merged: dict[str, Any] = {}
        for item in doc:
            merged = _merged(merged, item["set"] or {})
        return merged
    return doc


def _flatten(doc: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(doc, dict) and doc:
        for key, value in doc.items():
            yield from _flatten(value, f"{path}/{key}" if path else str(key))
    elif isinstance(doc, list) and doc and all(isinstance(x, dict) and "netdev" in x for x in doc):
        for item in doc:
            rest = {k: v for k, v in item.items() if k != "netdev"}
            yield from _flatten(rest, f"{path}[{item['netdev']}]")
    elif isinstance(doc, str) and "\n" in doc:
        for line in doc.splitlines():
            yield path, line
    else:
        yield path, json.dumps(doc, sort_keys=True) if not isinstance(doc, str) else doc


def tree_settings(text: str) -> dict[str, set[str]]:
    """Key path -> the values under it, from a YAML document."""
    out: dict[str, set[str]] = {}
    for path, value in _flatten(_unwrap(load_yaml(text)), ""):
        out.setdefault(path, set()).add(value)
    return out


def _tree_lines(text: str) -> set[str]:
    return {f"{path}: {value}" for path, values in tree_settings(text).items() for value in values}


def _path_matches(path: str, pattern: str) -> bool:
    parts, wanted = path.split("/"), pattern.split("/")
    return len(parts) >= len(wanted) and all(w in ("*", p) for w, p in zip(wanted, parts, strict=False))


def _owned(job: Job, setting: str, rendered: dict[str, set[str]]) -> bool:
    candidate = job.spec.candidate
    if candidate is Candidate.CLI:
        root = setting.split(" > ", 1)[0]
        root = re.sub(r"^no ", "", root)
        if any(re.fullmatch(p, root) for p in job.spec.owned):
            return True
        return root in {line.rstrip() for line in job.rendered.splitlines() if line and not line[0].isspace()}
    path = setting.split(": ", 1)[0]
    if candidate is Candidate.NVUE_TREE:
        if any(_path_matches(path, m) for m in job.spec.management):
            return False
        return any(_path_matches(path, p) and _rendered_here(path, p, rendered) for p in job.spec.owned)
    return any(path == key or path.startswith(key + "/") for key in rendered)


def _rendered_here(path: str, pattern: str, rendered: dict[str, set[str]]) -> bool:
    """An owned pattern with ``*`` (``interface/*``) owns the keys the rendered tree has there (its interfaces)."""
    if "*" not in pattern:
        return True
    prefix = "/".join(path.split("/")[: len(pattern.split("/"))])
    return any(key == prefix or key.startswith(prefix + "/") for key in rendered)


def settings(job: Job, text: str) -> set[str]:
    return cli_settings(text) if job.spec.candidate is Candidate.CLI else _tree_lines(text)


def _in_drift(setting: str, drift_paths: list[str]) -> bool:
    path = setting.split(": ", 1)[0]
    return any(path == p or path.startswith(p + "/") for p in drift_paths)


def unmanaged_changes(job: Job, previous: str | None, current: str, commands: str = "") -> list[str]:
    """``- setting`` (gone) and ``+ setting`` (new) since ``previous`` (the last backup; None: no history, so
    nothing to report), outside what fabconf owns and outside the drift (``commands``: the dry run's commands;
    an NVUE path they set or unset, such as a stale SVI, is fabconf's); sorted by setting, removal first."""
    if previous is None:
        return []
    before, after = settings(job, previous), settings(job, current)
    changed = [(s, "-") for s in before - after] + [(s, "+") for s in after - before]
    rendered = {} if job.spec.candidate is Candidate.CLI else tree_settings(job.rendered)
    drift_paths = [p.replace(" ", "/") for p in nv_paths(commands)] if job.spec.candidate is Candidate.NVUE_TREE else []
    ordered = sorted(changed, key=lambda c: (c[0], c[1] != "-"))
    return [f"{sign} {s}" for s, sign in ordered if not _owned(job, s, rendered) and not _in_drift(s, drift_paths)]
