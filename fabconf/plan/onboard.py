"""Onboarding a rack from inventory: its leaves and GPU hosts added to ``hosts.yaml`` and their links to
``cabling.yaml``, computed from the fabric's ``onboarding`` intent (names, management pool, the rack's shape:
``onboarding.rack``, or ``onboarding.pods.<pod>.rack`` for a pod whose racks differ). A leaf or spine template's
``os_version`` becomes the new switch's ``data.os_version``.

The rack's leaves get the next free leaf ids, its hosts the next free host ids, and management addresses the
first free ones of ``onboarding.management_pool``. Leaf uplink *i* goes to the pod's spine *i* (by id), on
that spine's first port (natural order) that no link uses; host NIC of rail *r* goes to the rack's rail-*r*
leaf, on that leaf's next host port. Link addresses and ASNs then follow from the ids as for every device.

The files are only ever appended to, so every existing byte (comments, order, style) stays as it was; both
files are written to temporary copies, the whole inventory is compiled from them, and only when it is valid
are they moved into place (both or neither). Onboarding a rack that is already there changes nothing.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fabconf.compile.model import Model, expand_ports, natural_key
from fabconf.compile.pipeline import Compiled, compile_inventory
from fabconf.compile.problems import InputError
from fabconf.errors import FabconfError


class OnboardError(FabconfError):
    """The rack cannot be onboarded as asked; nothing was written."""


@dataclass
class NewDevice:
    name: str
    hostname: str
    groups: list[str]
    data: dict[str, Any]


@dataclass
class RackPlan:
    pod: str
    rack: str
    pod_id: int = 0  # the pod's id (naming rules may use {pod_id})
    devices: list[NewDevice] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)  # ("DEV:PORT", "DEV:PORT")

    @property
    def empty(self) -> bool:
        return not self.devices and not self.links


def _spec(compiled: Compiled) -> dict[str, Any]:
    spec = compiled.model.fabric.get("onboarding")
    if not spec:
        raise OnboardError("fabric.yaml has no onboarding: section (names, management_pool and the rack's shape)")
    return spec


def _next_ids(compiled: Compiled, role: str, count: int) -> list[int]:
    used = {d.id for d in compiled.model.devices.values() if d.role == role and d.id is not None}
    out: list[int] = []
    candidate = 1
    while len(out) < count:
        if candidate not in used:
            out.append(candidate)
        candidate += 1
    return out


def _addresses(compiled: Compiled, pools: str | dict[str, str], role: str, count: int, taken: set[str]) -> list[str]:
    """The first ``count`` free management addresses of the role's pool (one pool for all roles, or per role)."""
    pool_text = pools if isinstance(pools, str) else pools.get(role)
    if pool_text is None:
        raise OnboardError(f"onboarding.management_pool names no pool for {role}")
    pool = ipaddress.IPv4Network(pool_text)
    used = {d.hostname for d in compiled.model.devices.values()} | taken
    free = [str(a) for a in pool.hosts() if str(a) not in used]
    if len(free) < count:
        raise OnboardError(f"onboarding.management_pool {pool} has {len(free)} free address(es), {count} needed")
    taken.update(free[:count])
    return free[:count]


def _used_ports(compiled: Compiled) -> set[tuple[str, str]]:
    return {(ep.device, ep.port) for link in compiled.model.links for ep in (link.a, link.b)}


def rack_shape(spec: dict[str, Any], pod: str) -> dict[str, Any]:
    """The shape of a new rack of ``pod``: ``onboarding.pods.<pod>.rack`` where the pod has its own, else
    ``onboarding.rack``."""
    own = ((spec.get("pods") or {}).get(pod) or {}).get("rack")
    return dict(own or spec["rack"])


def plan_rack(compiled: Compiled, pod: str, rack: str | None = None) -> RackPlan:
    """What onboarding one rack into ``pod`` adds. An existing rack of that name: an empty plan."""
    spec = _spec(compiled)
    model = compiled.model
    pods = {d.pod for d in model.devices.values() if d.role in ("spine", "leaf")}
    if pod not in pods:
        raise OnboardError(f"pod {pod!r} has no switches (known: {', '.join(sorted(p for p in pods if p))})")
    racks = {str(d.data.get("rack")) for d in model.devices.values() if d.pod == pod and d.data.get("rack")}
    if rack is None:
        rack = next(f"rack{n}" for n in range(1, 10_000) if f"rack{n}" not in racks)
    elif rack in racks:
        return RackPlan(pod, rack)
    clash = _rack_clash(model, rack)
    if clash:
        raise OnboardError(
            f"rack name {rack!r} is already {clash}: a selection by the rack's name (--limit, a runbook's "
            "{{ rack }}) would pick other devices; choose another --rack"
        )
    shape = rack_shape(spec, pod)
    leaves_spec, host_count = shape["leaves"], int(shape["hosts"])
    leaf_ids = _next_ids(compiled, "leaf", len(leaves_spec))
    host_ids = _next_ids(compiled, "gpu_host", host_count)
    taken: set[str] = set()
    leaf_mgmt = iter(_addresses(compiled, spec["management_pool"], "leaf", len(leaf_ids), taken))
    host_mgmt = iter(_addresses(compiled, spec["management_pool"], "gpu_host", len(host_ids), taken))
    names = spec.get("names") or {}
    pod_of = compiled.topology.pods.get(pod)
    plan = RackPlan(pod, rack, pod_of.id if pod_of else 0)
    spines = sorted((d for d in model.devices.values() if d.role == "spine" and d.pod == pod), key=lambda d: d.id or 0)
    used = _used_ports(compiled)
    existing = set(model.devices)
    leaf_of_rail: dict[int, NewDevice] = {}
    host_ports: dict[str, list[str]] = {}
    for leaf_id, lspec in zip(leaf_ids, leaves_spec, strict=True):
        leaf = _new(names.get("leaf", "leaf{id}"), leaf_id, next(leaf_mgmt), lspec["groups"], plan)
        leaf.data |= {"os_version": lspec["os_version"]} if lspec.get("os_version") else {}
        plan.devices.append(leaf)
        leaf_of_rail[int(lspec["rail"])] = leaf
        host_ports[leaf.name] = [p for spec_ in lspec["host_ports"] for p in expand_ports(spec_)]
        uplinks = list(lspec["uplinks"])
        if len(uplinks) > len(spines):
            raise OnboardError(f"{leaf.name}: {len(uplinks)} uplinks but pod {pod} has {len(spines)} spine(s)")
        for port, spine in zip(uplinks, spines, strict=False):
            free = [p for p in sorted(spine.ports or (), key=natural_key) if (spine.name, p) not in used]
            if not free:
                raise OnboardError(f"{spine.name} has no free port for {leaf.name} (every declared port is cabled)")
            used.add((spine.name, free[0]))
            plan.links.append((f"{leaf.name}:{port}", f"{spine.name}:{free[0]}"))
    nics = _host_nics(compiled, shape["host_groups"])
    for host_id in host_ids:
        host = _new(names.get("gpu_host", "gpu{id:02d}"), host_id, next(host_mgmt), shape["host_groups"], plan)
        plan.devices.append(host)
        for nic in nics:
            rail_leaf = leaf_of_rail.get(int(nic["rail"]))
            if rail_leaf is None:
                raise OnboardError(f"{host.name}:{nic['netdev']} is on rail {nic['rail']}, which no rack leaf serves")
            if not host_ports[rail_leaf.name]:
                raise OnboardError(f"{rail_leaf.name} has no free host port for {host.name}")
            port = host_ports[rail_leaf.name].pop(0)
            plan.links.append((f"{host.name}:{nic['netdev']}", f"{rail_leaf.name}:{port}"))
    names_new = [d.name for d in plan.devices]
    clashes = sorted({n for n in names_new if n in existing or names_new.count(n) > 1})
    if clashes:
        raise OnboardError(f"name(s) already in the inventory: {', '.join(clashes)} (onboarding.names)")
    return plan


def _rack_clash(model: Model, rack: str) -> str:
    """What else a new rack's name already names in a selection (``fabconf.compile.selection``): a device, a group,
    a pod, ``all``, or a glob that matches one of them; "" when nothing."""
    groups = set(model.groups) | {g for d in model.devices.values() for g in d.groups}
    pods = {str(d.pod) for d in model.devices.values() if d.pod}
    for what, names in (("a device", set(model.devices)), ("a group", groups), ("a pod", pods)):
        if rack in names:
            return f"the name of {what}"
    if rack == "all":
        return "the selection of every device"
    if any(c in rack for c in "*?[]!&,:"):
        return "a selection pattern, not a name"
    return ""


NAME_FIELD = re.compile(r"\{(id|pod_id)(?::0([1-6])d?)?\}|\{(pod|rack)\}|[{}]")


def device_name(pattern: str, *, id: int, pod: str, pod_id: int, rack: str) -> str:
    """A naming rule filled in: exactly the fields ``{id}``, ``{pod}``, ``{pod_id}``, ``{rack}``, the numbers
    optionally zero-padded to at most 6 digits (``{id:02d}``). Nothing reaches Python's formatter, so no
    attribute or index (``{id.__class__}``, ``{0}``) is ever looked up; ``validate`` refuses any other form
    (the schema's pattern), and a rule that slipped past it is an OnboardError, not a traceback."""
    numbers, texts = {"id": id, "pod_id": pod_id}, {"pod": pod, "rack": rack}

    def fill(found: re.Match[str]) -> str:
        if found.group(1):
            return str(numbers[found.group(1)]).zfill(int(found.group(2) or 0))
        if found.group(3):
            return texts[found.group(3)]
        raise OnboardError(f"naming rule {pattern!r}: only {{id}}, {{pod}}, {{pod_id}}, {{rack}} are filled in")

    return NAME_FIELD.sub(fill, pattern)


def _new(pattern: str, device_id: int, address: str, groups: list[str], plan: RackPlan) -> NewDevice:
    """A new device of the rack: its name from the naming rule, its data (id, pod, rack)."""
    name = device_name(str(pattern), id=device_id, pod=plan.pod, rack=plan.rack, pod_id=plan.pod_id)
    return NewDevice(name, address, list(groups), {"id": device_id, "pod": plan.pod, "rack": plan.rack})


def _host_nics(compiled: Compiled, groups: list[str]) -> list[dict[str, Any]]:
    for group in groups:
        nics = ((compiled.model.groups.get(group) or {}).get("data") or {}).get("nics")
        if nics:
            return list(nics)
    raise OnboardError(f"no NICs declared by the host groups {', '.join(groups)} (data.nics)")


# -- writing -----------------------------------------------------------------------------------------------


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, str) and _scalar(value) != value:  # "5.10" or "123" would read back as a number
        return json.dumps(value)
    return str(value)


def _scalar(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None


def _title(plan: RackPlan) -> str:
    if not plan.rack:
        return f"the spines of pod {plan.pod}, added by `fabconf onboard pod`"
    return f"rack {plan.rack} of pod {plan.pod}, added by `fabconf onboard rack`"


def hosts_text(plan: RackPlan) -> str:
    lines = [f"\n# {_title(plan)}"]
    for dev in plan.devices:
        lines += [f"{dev.name}:", f"  hostname: {dev.hostname}", f"  groups: {_flow(dev.groups)}"]
        lines.append(f"  data: {_flow(dev.data)}")
    return "\n".join(lines) + "\n"


def cabling_text(plan: RackPlan, indent: str) -> str:
    lines = [f"{indent}# {_title(plan)}"]
    lines += [f"{indent}- [{a}, {b}]" for a, b in plan.links]
    return "\n".join(lines) + "\n"


def _list_indent(text: str) -> str:
    """The indentation of the ``links`` list items, which must be the file's last block."""
    items = re.findall(r"^( *)- ", text, re.M)
    if not items or not re.search(r"^links:\s*$", text, re.M):
        raise OnboardError("cabling.yaml: expected a block list under `links:` to append to")
    return items[-1]


def appended(texts: dict[str, str], plan: RackPlan) -> dict[str, str]:
    """hosts.yaml and cabling.yaml texts with the plan appended (every existing byte kept)."""
    out = dict(texts)
    out["hosts.yaml"] = texts["hosts.yaml"].rstrip("\n") + "\n" + hosts_text(plan)
    cabling = texts["cabling.yaml"]
    out["cabling.yaml"] = cabling.rstrip("\n") + "\n" + cabling_text(plan, _list_indent(cabling))
    return out


def _read(directory: Path, names: tuple[str, ...] = ("hosts.yaml", "cabling.yaml", "fabric.yaml")) -> dict[str, str]:
    return {name: (directory / name).read_text() for name in names}


def _trial(directory: Path, texts: dict[str, str], tmp: Path) -> Compiled:
    """Compile the inventory with ``texts`` in place of its files, in a copy under ``tmp``."""
    trial = tmp / directory.name
    if trial.exists():
        shutil.rmtree(trial)
    shutil.copytree(directory, trial)
    for name, text in texts.items():
        (trial / name).write_text(text)
    try:
        return compile_inventory(trial)
    except InputError as exc:
        text = "; ".join(str(p) for p in exc.problems.errors)
        raise OnboardError(f"the onboarded inventory would not validate, nothing was written: {text}") from None


def commit(directory: Path, texts: dict[str, str]) -> None:
    """Replace the files with ``texts`` once the whole inventory validates with them; nothing otherwise."""
    with tempfile.TemporaryDirectory(prefix=".fabconf-onboard-", dir=directory.parent) as tmp:
        _trial(directory, texts, Path(tmp))
        staged = []
        for name, text in texts.items():
            temp = Path(tmp) / f"{name}.new"
            temp.write_text(text)
            with open(temp, "rb") as fh:
                os.fsync(fh.fileno())
            staged.append((temp, directory / name))
        # same file system (the temporary directory sits next to the inventory): each rename is atomic
        for temp, final in staged:
            os.replace(temp, final)


def rack_texts(directory: Path, plan: RackPlan) -> dict[str, str]:
    """The new texts of hosts.yaml and cabling.yaml with the rack appended (what ``write`` writes), checked: the
    whole inventory validates with them (an InputError otherwise), as ``write`` would check before writing."""
    texts = appended(_read(directory, ("hosts.yaml", "cabling.yaml")), plan)
    with tempfile.TemporaryDirectory(prefix=".fabconf-onboard-", dir=directory.parent) as tmp:
        _trial(directory, texts, Path(tmp))
    return texts


def with_rack(directory: Path, pod: str | None, rack: str | None) -> Compiled:
    """The inventory as it will be once the rack is onboarded (written nowhere): what a runbook's later selections
    are checked against before its first step. An OnboardError or InputError when onboarding would be refused."""
    compiled = compile_inventory(directory)
    plan = plan_rack(compiled, pod or only_pod(compiled), rack)
    if plan.empty:
        return compiled
    texts = appended(_read(directory, ("hosts.yaml", "cabling.yaml")), plan)
    with tempfile.TemporaryDirectory(prefix=".fabconf-onboard-", dir=directory.parent) as tmp:
        return _trial(directory, texts, Path(tmp))


def write(directory: Path, plan: RackPlan) -> None:
    """Append the plan to hosts.yaml and cabling.yaml; all or nothing, and only when the result validates."""
    commit(directory, rack_texts(directory, plan))


def only_pod(compiled: Compiled) -> str:
    """The fabric's pod when it has exactly one (``onboard rack`` then needs no ``--pod``)."""
    pods = sorted({d.pod for d in compiled.model.devices.values() if d.role in ("spine", "leaf") and d.pod})
    if len(pods) != 1:
        raise OnboardError(f"the fabric has {len(pods)} pods ({', '.join(pods) or 'none'}): name one with --pod")
    return pods[0]


# -- a whole pod ------------------------------------------------------------------------------------------------


def _insert_pod(fabric_text: str, pod: str, pod_id: int) -> str:
    """fabric.yaml with ``pod: {id: N}`` added as the last entry of its block ``pods:`` mapping."""
    lines = fabric_text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if ln.rstrip() == "pods:"), None)
    if start is None:
        raise OnboardError("fabric.yaml has no block `pods:` mapping to add a pod to (declare the pods first)")
    end, indent = start + 1, ""
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.strip() and not line.startswith((" ", "#")):
            break
        if line.strip() and not line.lstrip().startswith("#"):
            indent = indent or line[: len(line) - len(line.lstrip())]  # the pods' own keys, not their settings
            end = i + 1
    indent = indent or "  "
    entry = f"{indent}{pod}: {{id: {pod_id}}}   # added by `fabconf onboard pod`\n"
    return "".join([*lines[:end], entry, *lines[end:]])


def onboard_pod(directory: Path, pod: str | None, dry_run: bool) -> tuple[str, dict[str, str]]:
    """A new pod: its spines (uplinks to the super-spines' first free ports) and ``onboarding.pod.racks``
    racks. Returns (what happened, the new file texts); writes them unless ``dry_run``."""
    compiled = compile_inventory(directory)
    spec = _spec(compiled)
    shape = spec.get("pod")
    if not shape:
        raise OnboardError("fabric.yaml onboarding: has no pod: shape (spines, racks)")
    declared = compiled.model.fabric.get("pods") or {}
    if pod is not None and any(d.pod == pod for d in compiled.model.devices.values() if d.role == "spine"):
        return f"pod {pod} is already in {directory}: nothing to do", {}
    pod_id = max((int(p["id"]) for p in declared.values()), default=0) + 1
    pod = pod or f"pod{pod_id}"
    if pod in declared:
        pod_id = int(declared[pod]["id"])
    supers = sorted((d for d in compiled.model.devices.values() if d.role == "super_spine"), key=lambda d: d.id or 0)
    spine_ids = _next_ids(compiled, "spine", len(shape["spines"]))
    mgmt = iter(_addresses(compiled, spec["management_pool"], "spine", len(spine_ids), set()))
    plan = RackPlan(pod, "", pod_id)
    used = _used_ports(compiled)
    names = spec.get("names") or {}
    for spine_id, sspec in zip(spine_ids, shape["spines"], strict=True):
        pattern = names.get("spine", "spine{id}")
        name = device_name(str(pattern), id=spine_id, pod=pod, pod_id=pod_id, rack="")
        data: dict[str, Any] = {"id": spine_id, "pod": pod}
        data |= {"os_version": sspec["os_version"]} if sspec.get("os_version") else {}
        plan.devices.append(NewDevice(name, next(mgmt), list(sspec["groups"]), data))
        if len(sspec["uplinks"]) > len(supers):
            raise OnboardError(
                f"{name}: {len(sspec['uplinks'])} uplinks but the fabric has {len(supers)} super-spine(s)"
            )
        for port, ss in zip(sspec["uplinks"], supers, strict=False):
            free = [p for p in sorted(ss.ports or (), key=natural_key) if (ss.name, p) not in used]
            if not free:
                raise OnboardError(f"{ss.name} has no free port for {name} (every declared port is cabled)")
            used.add((ss.name, free[0]))
            plan.links.append((f"{name}:{port}", f"{ss.name}:{free[0]}"))
    clashes = [d.name for d in plan.devices if d.name in compiled.model.devices]
    if clashes:
        raise OnboardError(f"name(s) already in the inventory: {', '.join(clashes)} (onboarding.names)")
    texts = _read(directory)
    if pod not in declared:
        texts["fabric.yaml"] = _insert_pod(texts["fabric.yaml"], pod, pod_id)
    texts = appended(texts, plan)
    added = [d.name for d in plan.devices]
    with tempfile.TemporaryDirectory(prefix=".fabconf-onboard-", dir=directory.parent) as tmp:
        for _ in range(int(shape.get("racks", 1))):
            rack = plan_rack(_trial(directory, texts, Path(tmp)), pod)
            texts = appended(texts, rack)
            added += [d.name for d in rack.devices]
        _trial(directory, texts, Path(tmp))  # the whole pod validates
    if not dry_run:
        commit(directory, texts)
    return f"onboarded pod {pod} (id {pod_id}): {len(added)} device(s) ({', '.join(added)})", texts
