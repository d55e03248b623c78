"""Checks of the fabric's ``onboarding:`` intent that a schema cannot make: a template's ``os_version`` is a release
its platform (from the template's groups) renders for, and a pod with its own rack shape is a pod of the fabric."""

from __future__ import annotations

from typing import Any

from fabconf.compile.model import Model, _group_chain
from fabconf.compile.problems import PathPart, Problems
from fabconf.compile.topology import Topology
from fabconf.platforms import PLATFORMS


def _file(model: Model) -> str:
    return model.files.get("fabric", "fabric.yaml")


def check_onboarding(model: Model, topo: Topology, problems: Problems) -> None:
    spec = model.fabric.get("onboarding") or {}
    f = _file(model)
    templates: list[tuple[list[PathPart], dict[str, Any]]] = []
    shapes: list[tuple[list[PathPart], dict[str, Any]]] = [(["onboarding", "rack"], spec.get("rack") or {})]
    for pod, own in sorted((spec.get("pods") or {}).items()):
        if own.get("rack"):
            shapes.append((["onboarding", "pods", pod, "rack"], own["rack"]))
    for path, shape in shapes:
        templates += [([*path, "leaves", i], leaf) for i, leaf in enumerate(shape.get("leaves") or [])]
    spines = (spec.get("pod") or {}).get("spines") or []
    templates += [(["onboarding", "pod", "spines", i], spine) for i, spine in enumerate(spines)]
    for path, template in templates:
        version = template.get("os_version")
        platform = _from_groups(model, template.get("groups") or [], "platform")
        if not version or platform not in PLATFORMS:
            continue
        assume = _from_groups(model, template.get("groups") or [], "assume_release", data=True)
        try:
            PLATFORMS[platform].release_line(str(version), assume)
        except ValueError as exc:
            problems.add(f, [*path, "os_version"], str(exc))
    known = set(topo.pods) | set(model.fabric.get("pods") or {})
    known |= {str(d.pod) for d in model.devices.values() if d.pod}
    for pod in sorted(spec.get("pods") or {}):
        if pod not in known:
            problems.warn(
                f, ["onboarding", "pods", pod], f"no pod {pod} in the fabric (known: {', '.join(sorted(known)) or '-'})"
            )


def _from_groups(model: Model, groups: list[str], key: str, *, data: bool = False) -> str | None:
    """What a device of these groups gets for ``key`` (``data.<key>`` with ``data``): the first of its groups, in
    Nornir's order, that sets it (the platform, or a model group's ``assume_release``)."""
    seen: set[str] = set()
    for group in groups:
        for name in [group, *_group_chain(group, model.groups, seen)]:
            entry = model.groups.get(name) or {}
            value = (entry.get("data") or {}).get(key) if data else entry.get(key)
            if value:
                return str(value)
    return None
