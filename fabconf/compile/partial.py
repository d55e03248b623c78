"""The cross-checks of an inventory whose files did not all pass their schema (issue #40: one broken file must
not need two rounds of ``validate``).

What failed is dropped, and what depends on it with it: a host, group or link entry that failed its schema (or
carries a credential or a control character), the hosts of a dropped group (and the groups below it), the links of
a dropped host; a broken ``defaults.yaml`` drops every host, since each one inherits it. What is left passed its
schema, so the model, the topology and the cross-checks run on it as on any valid inventory. A check whose result a
missing device could change (paths, pods, attachment, the platforms' own rules) is skipped when anything was
dropped: removing a device never adds a duplicate, an overlap or a wrong value, but it can cut a path. A broken or
missing ``fabric.yaml`` is what every cross-check reads, so none runs. Only errors are kept: the warnings of a
partial inventory are said again, whole, once it is fixed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fabconf.compile import checks, model, schema, topology
from fabconf.compile.inventory import RawInventory
from fabconf.compile.problems import Problems
from fabconf.compile.topology import Topology

# checks whose finding a dropped device or link could cause (a leaf without uplinks, a pod without a path)
_NEEDS_WHOLE: frozenset[Callable[[model.Model, Topology, Problems], None]] = frozenset(
    {checks.check_ecmp, checks.check_pods, checks.check_attachment, checks.check_platform_rules}
)


def _failed(raw: RawInventory, kind: str) -> list[list[Any]]:
    """The paths at which ``kind``'s file failed a per-file check (its schema, credentials, control characters)."""
    return [path for check in schema.FILE_CHECKS for path, _message in schema.findings(check, kind, raw)]


def _entries(doc: Any, failed: list[list[Any]]) -> dict[Any, Any] | None:
    """A mapping of named entries without those that failed; None when the file as a whole failed."""
    if not isinstance(doc, dict) or any(not path for path in failed):
        return None
    broken = {path[0] for path in failed}
    return {key: value for key, value in doc.items() if key not in broken}


def _groups_left(groups: dict[Any, Any], dropped: set[Any]) -> dict[Any, Any]:
    """``groups`` without the dropped ones and those that list one of them (to a fixed point)."""
    left = {k: v for k, v in groups.items() if k not in dropped}
    while True:
        gone = {k for k, v in left.items() if set((v or {}).get("groups") or ()) - set(left)}
        if not gone:
            return left
        left = {k: v for k, v in left.items() if k not in gone}


def _mapping(doc: Any) -> dict[Any, Any]:
    return doc if isinstance(doc, dict) else {}


def pruned(raw: RawInventory) -> tuple[RawInventory, bool] | None:
    """The inventory without what failed (and what depends on it), and whether anything was dropped; None when
    ``fabric.yaml`` is missing or failed."""
    if "fabric" not in raw.data or _failed(raw, "fabric"):
        return None
    all_groups = _mapping(raw.data.get("groups"))
    kept = _entries(raw.data["groups"], _failed(raw, "groups")) if "groups" in raw.data else all_groups
    groups = _groups_left(all_groups, set(all_groups) - set(kept or {}))
    defaults_ok = "defaults" not in raw.data or not _failed(raw, "defaults")
    all_hosts = _mapping(raw.data.get("hosts"))
    hosts: dict[Any, Any] = {}
    if "hosts" in raw.data and defaults_ok:
        hosts = _entries(raw.data["hosts"], _failed(raw, "hosts")) or {}
        hosts = {k: v for k, v in hosts.items() if not set((v or {}).get("groups") or ()) - set(groups)}
    listed = _mapping(raw.data.get("cabling")).get("links")
    listed = listed if isinstance(listed, list) else []
    links: list[Any] = []
    if "cabling" in raw.data:
        failed = _failed(raw, "cabling")
        if isinstance(raw.data["cabling"], dict) and all(len(p) > 1 for p in failed):
            broken = {p[1] for p in failed if p[0] == "links"}
            links = [
                link
                for i, link in enumerate(listed)
                if i not in broken and all(end.split(":", 1)[0] in hosts for end in link)
            ]
    dropped = (
        len(groups) != len(all_groups)
        or len(hosts) != len(all_hosts)
        or len(links) != len(listed)
        or not all(kind in raw.data for kind in ("hosts", "cabling"))
    )
    data = {"fabric": raw.data["fabric"], "groups": groups, "hosts": hosts, "cabling": {"links": links}}
    if "defaults" in raw.data and defaults_ok:
        data["defaults"] = raw.data["defaults"]
    return RawInventory(raw.directory, files=dict(raw.files), data=data), dropped


def cross_check(raw: RawInventory, problems: Problems) -> None:
    """Add the errors the cross-checks find in what passed its schema (see the module's docstring)."""
    left = pruned(raw)
    if left is None:
        return
    inventory, dropped = left
    found = Problems()
    resolved = model.build(inventory, found)
    topo = topology.derive(resolved, found)
    for check in checks.CHECKS:
        if not (dropped and check in _NEEDS_WHOLE):
            check(resolved, topo, found)
    problems.extend(found.errors)
