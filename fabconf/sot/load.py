"""``fabconf sot import``: ``hosts.yaml`` and ``cabling.yaml`` rebuilt from one Nautobot Location.

Nautobot's own fields win: a device's role, platform, device type (model), rack and pod are written into its
``hosts.yaml`` entry only where they differ from what its groups and ``defaults.yaml`` already give, so an
exported inventory comes back as it was, and a device edited in Nautobot comes back edited. fabconf's custom
fields give what Nautobot has no field for: the device's id, its groups (inferred from its role and platform when
the field is empty and exactly one set of groups fits), and the rest of its own entry.

Everything is read and checked first; the two files are compiled with the rest of the inventory in a scratch
copy, and only when the whole inventory validates are both moved into place. A device or cable fabconf cannot
represent is an error naming the Nautobot object; nothing is dropped.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fabconf.compile.model import natural_key
from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.problems import InputError
from fabconf.platforms import PLATFORMS
from fabconf.sot.client import SotError, api_errors, ref
from fabconf.sot.desired import NO_MODEL, ROLE_ORDER, device_order

ROLES = tuple(ROLE_ORDER)


# What the source of truth never sets: how fabconf connects to a device beyond its primary address (which is the
# fabric's data). A device's port and connection_options come from the hosts.yaml being rewritten, never from
# Nautobot; platform and groups come from Nautobot's own fields (``fabconf.drivers.inventory_transport``).
NOT_FROM_EXTRA = ("hostname", "port", "connection_options", "platform", "groups", "username", "password")
CONNECTION_KEYS = ("port", "connection_options")


@dataclass
class Imported:
    hosts: dict[str, dict[str, Any]]
    links: list[tuple[str, str]]
    ignored: list[str] = field(default_factory=list)  # devices whose fabconf_extra said how to connect (dropped)


def _yaml(directory: Path, name: str) -> dict[str, Any]:
    path = directory / name
    if not path.exists():
        return {}
    try:
        loaded = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise SotError(f"{path}: not valid YAML ({' '.join(str(exc).split())[:200]})") from None
    return loaded if isinstance(loaded, dict) else {}


def fabric_name(directory: Path) -> str:
    """fabric.yaml's ``name``: the Location to import from (hosts.yaml may be empty or missing)."""
    name = _yaml(directory, "fabric.yaml").get("name")
    if not isinstance(name, str) or not name:
        raise SotError(f"{directory / 'fabric.yaml'}: name: is required (the Nautobot Location to import from)")
    return name


def inherited(groups: dict[str, Any], defaults: dict[str, Any], names: list[str]) -> tuple[str | None, dict[str, Any]]:
    """(platform, data) a host with these groups gets from groups.yaml and defaults.yaml, as Nornir resolves them:
    the groups in order, each group's own groups after it (depth first), then the defaults; data key by key."""
    order: list[str] = []

    def walk(name: str) -> None:
        if name in order or name not in groups:
            return
        order.append(name)
        for parent in (groups.get(name) or {}).get("groups") or []:
            walk(parent)

    for name in names:
        walk(name)
    platform: str | None = None
    data: dict[str, Any] = {}
    for entry in [groups.get(n) or {} for n in order] + [defaults]:
        if platform is None and entry.get("platform"):
            platform = str(entry["platform"])
        for key, value in (entry.get("data") or {}).items():
            data.setdefault(key, value)
    return platform, data


def _infer_groups(
    groups: dict[str, Any], defaults: dict[str, Any], role: str, platform: str, model: str | None, pod: str | None
) -> list[str] | None:
    """The groups of a device entered in Nautobot without fabconf_groups: one role group (its data.role, and its
    data.pod where it sets one) and, unless that group gives the platform too, one hardware group (platform and
    data.model). None when no single choice fits."""

    def own(name: str) -> tuple[str | None, dict[str, Any]]:
        return inherited(groups, {}, [name])

    def chain(name: str) -> list[str]:
        return [name] + [g for parent in (groups.get(name) or {}).get("groups") or [] for g in chain(parent)]

    cands = [n for n in groups if own(n)[1].get("role") == role and own(n)[0] in (None, platform)]
    with_pod = [n for n in cands if pod is not None and own(n)[1].get("pod") == pod]
    role_groups = with_pod or [n for n in cands if "pod" not in own(n)[1]]
    role_groups = [n for n in role_groups if not any(n in chain(o)[1:] for o in role_groups)]  # the most specific
    if len(role_groups) != 1:
        return None
    chosen = role_groups[0]
    plat, data = inherited(groups, defaults, [chosen])
    if plat == platform and (model is None or data.get("model") == model):
        return [chosen]
    hardware = [
        n for n in groups if own(n)[0] == platform and own(n)[1].get("model") == model and "role" not in own(n)[1]
    ]
    if len(hardware) != 1:
        return None
    return [chosen, hardware[0]]


def read(nb: Any, url: str, location: str, directory: Path) -> Imported:
    """The Location's devices and cables as hosts.yaml entries and cabling.yaml links (nothing written)."""
    with api_errors(url):
        return _read(nb, url, location, directory)


def _read(nb: Any, url: str, location: str, directory: Path) -> Imported:
    groups, defaults = _yaml(directory, "groups.yaml"), _yaml(directory, "defaults.yaml")
    local = _yaml(directory, "hosts.yaml")  # each device's own connection settings stay as the operator wrote them
    ignored: list[str] = []
    found = list(nb.dcim.locations.filter(name=location))
    if not found:
        raise SotError(f"{url}: no Location named {location!r} (fabric.yaml's name; export the fabric first)")
    loc = str(found[0].id)
    devices = [dict(d) for d in nb.dcim.devices.filter(location=loc, depth=1)]
    names = Counter(d.get("name") for d in devices)
    twice = sorted(str(n) for n, c in names.items() if c > 1)
    if twice:
        raise SotError(f"Nautobot Location {location}: two or more devices named {', '.join(twice)}")
    hosts: dict[str, dict[str, Any]] = {}
    roles: dict[str, str] = {}
    for dev in devices:
        name = dev.get("name")
        what = f"Nautobot device {name or dev['id']} (Location {location})"
        if not name:
            raise SotError(f"Nautobot device {dev['id']} (Location {location}): has no name")
        role = (dev.get("role") or {}).get("name")
        platform = (dev.get("platform") or {}).get("name")
        address = (dev.get("primary_ip4") or {}).get("address")
        cf = dev.get("custom_fields") or {}
        for field_name, value in (
            ("role", role),
            ("platform", platform),
            ("primary IPv4 address", address),
            ("custom field fabconf_id", cf.get("fabconf_id")),
        ):
            if value in (None, ""):
                raise SotError(f"{what}: no {field_name} (required: fabconf needs it for hosts.yaml)")
        if role not in ROLES:
            raise SotError(f"{what}: role {role!r} is not one fabconf builds ({', '.join(ROLES)})")
        if platform not in PLATFORMS:
            raise SotError(f"{what}: platform {platform!r} is not one fabconf renders ({', '.join(PLATFORMS)})")
        model = (dev.get("device_type") or {}).get("model")
        model = None if model == NO_MODEL else model
        rack = (dev.get("rack") or {}).get("name")
        pod = cf.get("fabconf_pod") or ((dev.get("rack") or {}).get("rack_group") or {}).get("name")
        device_groups = cf.get("fabconf_groups")
        if not device_groups:
            device_groups = _infer_groups(groups, defaults, str(role), str(platform), model, pod)
            if device_groups is None:
                raise SotError(
                    f"{what}: custom field fabconf_groups is empty and no single set of groups in "
                    f"groups.yaml fits role {role}, platform {platform}, model {model}: set it"
                )
        if not isinstance(device_groups, list) or not all(isinstance(g, str) for g in device_groups):
            raise SotError(f"{what}: custom field fabconf_groups must be a list of group names")
        unknown = [g for g in device_groups if g not in groups]
        if unknown:
            raise SotError(f"{what}: group(s) {', '.join(unknown)} are not in groups.yaml")
        extra = cf.get("fabconf_extra") or {}
        if not isinstance(extra, dict):
            raise SotError(f"{what}: custom field fabconf_extra must be a JSON object")
        got_platform, got = inherited(groups, defaults, list(device_groups))
        entry: dict[str, Any] = {"hostname": str(address).split("/")[0], "groups": list(device_groups)}
        if platform != got_platform:
            entry["platform"] = platform
        data: dict[str, Any] = {"id": cf.get("fabconf_id")}
        for key, value in (("role", role), ("model", model), ("pod", pod), ("rack", rack)):
            if value is not None and got.get(key) != value:
                data[key] = value
        extra_data = extra.get("data") or {}
        if not isinstance(extra_data, dict):
            raise SotError(f"{what}: custom field fabconf_extra's data must be a JSON object")
        data.update(extra_data)
        entry.update({k: v for k, v in extra.items() if k != "data" and k not in NOT_FROM_EXTRA})
        if any(k in extra for k in NOT_FROM_EXTRA):
            ignored.append(str(name))
        own = local.get(str(name))
        if isinstance(own, dict):
            entry.update({k: own[k] for k in CONNECTION_KEYS if own.get(k) is not None})
        entry["data"] = data
        hosts[str(name)] = entry
        roles[str(name)] = str(role)
    ordered = {n: hosts[n] for n in sorted(hosts, key=lambda n: device_order(roles[n], n))}
    return Imported(ordered, _links(nb, location, loc, devices), ignored)


def _links(nb: Any, location: str, location_id: str, devices: list[dict[str, Any]]) -> list[tuple[str, str]]:
    name_of = {str(d["id"]): str(d["name"]) for d in devices}
    ifaces: dict[str, tuple[str, str]] = {}
    ids = sorted(name_of)
    cables: dict[str, dict[str, Any]] = {}
    # by Location: Nautobot's `device` filter of interfaces matches device *names*, across Locations
    for r in nb.dcim.interfaces.filter(location=location_id):
        owner = name_of.get(str(ref(dict(r)["device"])))
        if owner is not None:
            ifaces[str(r.id)] = (owner, str(r.name))
    for i in range(0, len(ids), 40):
        chunk = ids[i : i + 40]
        for r in nb.dcim.cables.filter(device_id=chunk):
            cables[str(r.id)] = dict(r)
    links = []
    for cable_id, cable in sorted(cables.items()):
        label = cable.get("label") or cable_id
        ends = []
        for side in ("a", "b"):
            kind, end = cable.get(f"termination_{side}_type"), str(cable.get(f"termination_{side}_id"))
            if kind != "dcim.interface":
                raise SotError(
                    f"Nautobot cable {label} (Location {location}): its {side} end is a {kind}; fabconf's "
                    "cabling.yaml holds interface-to-interface links only"
                )
            if end not in ifaces:
                raise SotError(
                    f"Nautobot cable {label} (Location {location}): its {side} end is an interface of a "
                    "device outside the Location"
                )
            ends.append(f"{ifaces[end][0]}:{ifaces[end][1]}")
        links.append((ends[0], ends[1]))
    links.sort(key=lambda ab: (natural_key(ab[0]), natural_key(ab[1])))
    return links


def texts(imported: Imported, url: str, location: str) -> dict[str, str]:
    head = f"# written by `fabconf sot import` from the Nautobot Location {location} at {url}\n"
    hosts = head
    for name, entry in imported.hosts.items():
        hosts += yaml.safe_dump({name: entry}, default_flow_style=None, sort_keys=False, width=1 << 20)
    cabling = head + yaml.safe_dump(
        {"links": [list(link) for link in imported.links]}, default_flow_style=None, sort_keys=False, width=1 << 20
    )
    return {"hosts.yaml": hosts, "cabling.yaml": cabling}


def write(directory: Path, new: dict[str, str]) -> bool:
    """Replace the files when the whole inventory validates with them (both or neither); False when they are
    already what they would become."""
    if all((directory / n).exists() and (directory / n).read_text() == t for n, t in new.items()):
        return False
    with tempfile.TemporaryDirectory(prefix=".fabconf-sot-", dir=directory.parent) as tmp:
        trial = Path(tmp) / directory.name
        shutil.copytree(directory, trial)
        for name, text in new.items():
            (trial / name).write_text(text)
        try:
            compile_inventory(trial)
        except InputError as exc:
            problems = "; ".join(str(p) for p in exc.problems.errors)
            raise SotError(f"the imported inventory would not validate, nothing was written: {problems}") from None
        for name, text in new.items():
            staged = Path(tmp) / f"{name}.new"
            staged.write_text(text)
            with open(staged, "rb") as fh:
                os.fsync(fh.fileno())
        for name in new:
            os.replace(Path(tmp) / f"{name}.new", directory / name)
    return True
