"""``fabconf sot export``: make one Nautobot Location hold the inventory.

Everything fabconf writes is inside the Location named after ``fabric.yaml``'s ``name`` (devices, racks, their
interfaces and cables) or in the IPAM namespace ``fabconf <name>`` (prefixes, addresses). Shared catalog objects
(the location type, roles, manufacturers, device types, platforms and fabconf's custom fields) are looked up by
name and created when missing, never changed. Each object is compared with what the inventory says and written
only when it differs, so a second run changes nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from fabconf.platforms import platform as platform_spec
from fabconf.sot.client import SotError, api_errors, ref
from fabconf.sot.desired import Desired

LOCATION_TYPE = "fabconf fabric"
CUSTOM_FIELDS = {
    # key: (type, label, content types, description)
    "fabconf_id": ("integer", "fabconf id", ["dcim.device"], "data.id: the device's number within its role"),
    "fabconf_groups": ("json", "fabconf groups", ["dcim.device"], "the device's groups in groups.yaml, in order"),
    "fabconf_pod": ("text", "fabconf pod", ["dcim.device"], "the pod of a spine, leaf or host"),
    "fabconf_asn": ("integer", "fabconf ASN", ["dcim.device"], "the switch's BGP ASN as fabconf derives it"),
    "fabconf_extra": ("json", "fabconf extra", ["dcim.device"], "the rest of the host's own hosts.yaml entry"),
}
ROLE_COLOR = {"super_spine": "9c27b0", "spine": "3f51b5", "leaf": "009688", "gpu_host": "ff9800"}


def namespace_name(location: str) -> str:
    return f"fabconf {location}"


@dataclass
class Report:
    created: Counter[str] = field(default_factory=Counter)
    updated: Counter[str] = field(default_factory=Counter)
    deleted: Counter[str] = field(default_factory=Counter)
    left_alone: list[str] = field(default_factory=list)

    @property
    def changes(self) -> int:
        return sum(self.created.values()) + sum(self.updated.values()) + sum(self.deleted.values())

    def summary(self) -> str:
        if not self.changes:
            return "no changes"
        parts = []
        for verb, counts in (("created", self.created), ("updated", self.updated), ("deleted", self.deleted)):
            if counts:
                parts.append(f"{verb} " + ", ".join(_count(n, kind) for kind, n in sorted(counts.items())))
        return "; ".join(parts)


def _count(n: int, kind: str) -> str:
    if n == 1:
        return f"1 {kind}"
    return f"{n} {kind}es" if kind.endswith(("ss", "x")) else f"{n} {kind}s"


def _differs(record: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
    """The fields of ``wanted`` the serialized ``record`` holds differently."""
    out = {}
    for key, value in wanted.items():
        have = record.get(key)
        if key == "custom_fields":
            have = {k: (have or {}).get(k) for k in value}
        elif key == "content_types":
            continue
        elif isinstance(have, dict):  # a related object ({"id": ...}) or a choice ({"value": ..., "label": ...})
            have = have.get("id", have.get("value"))
        if have != value:
            out[key] = value
    return out


class Exporter:
    def __init__(self, nb: Any, url: str, desired: Desired, status: str = "Active", new_only: set[str] | None = None):
        self.nb, self.url, self.want = nb, url, desired
        self.status_name = status
        self.report = Report()
        self.new_only = new_only  # onboarding --to: the devices created with `status` (others: Active)

    # -- generic helpers -----------------------------------------------------------------------------------------

    def _all(self, endpoint: Any, **filters: Any) -> list[dict[str, Any]]:
        return [dict(r) for r in endpoint.filter(**filters)] if filters else [dict(r) for r in endpoint.all()]

    def _named(self, endpoint: Any, kind: str, name: str, create: dict[str, Any], key: str = "name") -> str:
        """A shared catalog object by name: its id; created when missing, never changed."""
        found = list(endpoint.filter(**{key: name}))
        if found:
            return str(found[0].id)
        record, created = self._create_shared(
            endpoint, {key: name, **create}, lambda: list(endpoint.filter(**{key: name}))
        )
        self.report.created[kind] += created
        return str(record.id)

    @staticmethod
    def _create_shared(endpoint: Any, payload: dict[str, Any], lookup: Callable[[], list[Any]]) -> tuple[Any, bool]:
        """Create an object shared by every fabric (a custom field, a role, a platform, a device type): (the new
        record, True), or (the one another export created meanwhile, False) when Nautobot refuses ours with a
        uniqueness error (HTTP 400 or 500): two exports of different fabrics may run at once."""
        import pynautobot  # the `sot` extra

        try:
            return endpoint.create(payload), True
        except pynautobot.RequestError:
            found = lookup()
            if found:
                return found[0], False
            raise

    def _sync(
        self,
        endpoint: Any,
        kind: str,
        existing: dict[Any, dict[str, Any]],
        wanted: dict[Any, dict[str, Any]],
        create_only: Iterable[str] = (),
    ) -> dict[Any, str]:
        """Create what is missing, update what differs (except ``create_only`` fields); the ids by key."""
        ids = {k: str(r["id"]) for k, r in existing.items() if k in wanted}
        creates = [(k, w) for k, w in wanted.items() if k not in existing]
        updates = []
        for key, w in wanted.items():
            if key in existing:
                diff = _differs(existing[key], {f: v for f, v in w.items() if f not in create_only})
                if diff:
                    updates.append({"id": existing[key]["id"], **diff})
        if creates:
            made = endpoint.create([w for _, w in creates])
            for (key, _), record in zip(creates, made, strict=True):
                ids[key] = str(record.id)
            self.report.created[kind] += len(creates)
        if updates:
            endpoint.update(updates)
            self.report.updated[kind] += len(updates)
        return ids

    # -- the export ------------------------------------------------------------------------------------------------

    def run(self) -> Report:
        with api_errors(self.url):
            self._export()
        return self.report

    def _status(self, name: str) -> str:
        found = list(self.nb.extras.statuses.filter(name=name))
        if not found:
            raise SotError(f"{self.url}: Nautobot has no status named {name!r}")
        return str(found[0].id)

    def _export(self) -> None:
        nb, want = self.nb, self.want
        # bad input first, before anything is written: two devices of one name in the Location
        for found in nb.dcim.locations.filter(name=want.location):
            names = Counter(str(d.name) for d in nb.dcim.devices.filter(location=found.id))
            twice = sorted(n for n, c in names.items() if c > 1)
            if twice:
                raise SotError(f"Nautobot Location {want.location}: two or more devices named {', '.join(twice)}")
        active, connected = self._status("Active"), self._status("Connected")
        new_status = self._status(self.status_name)
        fields = {str(f.key) for f in nb.extras.custom_fields.all()}  # few; Nautobot filters them by label, not key
        for key, (type_, label, content_types, description) in CUSTOM_FIELDS.items():
            if key not in fields:
                _field, created = self._create_shared(
                    nb.extras.custom_fields,
                    {
                        "key": key,
                        "label": label,
                        "type": type_,
                        "content_types": content_types,
                        "description": description,
                    },
                    partial(_fields_keyed, nb, key),
                )
                self.report.created["custom field"] += created
        location_type = self._named(
            nb.dcim.location_types,
            "location type",
            LOCATION_TYPE,
            {
                "content_types": ["dcim.device", "dcim.rack", "dcim.rackgroup", "ipam.prefix", "ipam.namespace"],
                "description": "a fabric that fabconf exports",
            },
        )
        location = self._named(
            nb.dcim.locations, "location", want.location, {"location_type": location_type, "status": active}
        )
        namespace = self._named(
            nb.ipam.namespaces,
            "namespace",
            namespace_name(want.location),
            {"location": location, "description": f"addresses of the fabric {want.location}"},
        )
        roles = {
            r: self._named(nb.extras.roles, "role", r, {"content_types": ["dcim.device"], "color": ROLE_COLOR[r]})
            for r in sorted({d.role for d in want.devices.values()})
        }
        platforms: dict[str, str] = {}
        types: dict[tuple[str, str], str] = {}
        for dev in want.devices.values():
            maker = self._named(nb.dcim.manufacturers, "manufacturer", platform_spec(dev.platform).manufacturer, {})
            if dev.platform not in platforms:
                platforms[dev.platform] = self._named(
                    nb.dcim.platforms,
                    "platform",
                    dev.platform,
                    {"manufacturer": maker, "network_driver": platform_spec(dev.platform).network_driver},
                )
            if (maker, dev.model) not in types:

                def lookup(maker: str = maker, model: str = dev.model) -> list[Any]:
                    return list(nb.dcim.device_types.filter(manufacturer=maker, model=model))

                found = lookup()
                if found:
                    record = found[0]
                else:
                    height = 1 if dev.role != "gpu_host" else 0
                    payload = {"manufacturer": maker, "model": dev.model, "u_height": height}
                    record, created = self._create_shared(nb.dcim.device_types, payload, lookup)
                    self.report.created["device type"] += created
                types[(maker, dev.model)] = str(record.id)
        # racks, in a rack group per pod
        pods = sorted({d.pod or "" for d in want.devices.values() if d.rack})
        groups_have = {r["name"]: r for r in self._all(nb.dcim.rack_groups, location=location)}
        group_ids = self._sync(
            nb.dcim.rack_groups, "rack group", groups_have, {p: {"name": p, "location": location} for p in pods if p}
        )
        racks_have = {(ref(r.get("rack_group")), r["name"]): r for r in self._all(nb.dcim.racks, location=location)}
        racks_want = {}
        for dev in want.devices.values():
            if dev.rack:
                group = group_ids.get(dev.pod) if dev.pod else None
                racks_want[(group, dev.rack)] = {
                    "name": dev.rack,
                    "location": location,
                    "rack_group": group,
                    "status": active,
                }
        rack_ids = self._sync(nb.dcim.racks, "rack", racks_have, racks_want)
        # devices
        have_list = self._all(nb.dcim.devices, location=location)
        devices_have = {d["name"]: d for d in have_list}
        self.report.left_alone = sorted(n for n in devices_have if n not in want.devices)
        devices_want = {}
        for dev in want.devices.values():
            maker_id = self._named(nb.dcim.manufacturers, "manufacturer", platform_spec(dev.platform).manufacturer, {})
            rack = rack_ids.get((group_ids.get(dev.pod) if dev.pod else None, dev.rack)) if dev.rack else None
            status = new_status if self.new_only is None or dev.name in self.new_only else active
            devices_want[dev.name] = {
                "name": dev.name,
                "location": location,
                "role": roles[dev.role],
                "platform": platforms[dev.platform],
                "device_type": types[(maker_id, dev.model)],
                "rack": rack,
                "status": status,
                "custom_fields": {
                    "fabconf_id": dev.id,
                    "fabconf_groups": dev.groups,
                    "fabconf_pod": dev.pod,
                    "fabconf_asn": dev.asn,
                    "fabconf_extra": dev.extra or None,
                },
            }
        device_ids = self._sync(nb.dcim.devices, "device", devices_have, devices_want, create_only=("status",))
        # interfaces
        # by Location: Nautobot's `device` filter of interfaces matches device *names*, across Locations
        ifaces_have = {(ref(r["device"]), r["name"]): r for r in self._all(nb.dcim.interfaces, location=location)}
        ifaces_want = {}
        for (dev_name, port), iface in want.interfaces.items():
            ifaces_want[(device_ids[dev_name], port)] = {
                "device": device_ids[dev_name],
                "name": port,
                "type": iface.type,
                "status": active,
                "mtu": iface.mtu,
                "mgmt_only": iface.mgmt_only,
                "speed": iface.speed_gbps * 1_000_000 if iface.speed_gbps else None,
            }
        iface_ids = self._sync(nb.dcim.interfaces, "interface", ifaces_have, ifaces_want)
        # IPAM: prefixes, then addresses, then which interface holds each
        prefixes_have = {r["prefix"]: r for r in self._all(nb.ipam.prefixes, namespace=namespace)}
        self._sync(
            nb.ipam.prefixes,
            "prefix",
            prefixes_have,
            {
                p: {"prefix": p, "namespace": namespace, "type": t, "status": active}
                for p, t in sorted(want.prefixes.items(), key=lambda kv: int(kv[0].split("/")[1]))
            },
            create_only=("type",),
        )
        ips_have = {r["address"]: r for r in self._all(nb.ipam.ip_addresses, namespace=namespace)}
        ips_want = {}
        held: list[tuple[str, str]] = []
        for iface in want.interfaces.values():
            for address in iface.addresses:
                ips_want[address] = {"address": address, "namespace": namespace, "status": active, "type": "host"}
                held.append((address, iface_ids[(device_ids[iface.device], iface.name)]))
        ip_ids = self._sync(nb.ipam.ip_addresses, "IP address", ips_have, ips_want, create_only=("type", "namespace"))
        links_have = {}
        for chunk in _chunks(sorted(set(iface_ids.values())), 40):
            for r in self._all(nb.ipam.ip_address_to_interface, interface=chunk):
                links_have[(ref(r["ip_address"]), ref(r["interface"]))] = r
        self._sync(
            nb.ipam.ip_address_to_interface,
            "IP assignment",
            links_have,
            {(ip_ids[a], i): {"ip_address": ip_ids[a], "interface": i} for a, i in held},
        )
        primaries = {}
        for dev in want.devices.values():
            primaries[dev.name] = {"primary_ip4": ip_ids[dev.mgmt]}
        fresh = {d["name"]: d for d in self._all(nb.dcim.devices, location=location) if d["name"] in want.devices}
        updates = [
            {"id": fresh[n]["id"], **w}
            for n, w in primaries.items()
            if ref(fresh[n].get("primary_ip4")) != w["primary_ip4"]
        ]
        if updates:
            nb.dcim.devices.update(updates)
            self.report.updated["primary IPv4 address"] += len(updates)
        # cables
        self._cables(device_ids, iface_ids, connected, location)

    def _cables(self, device_ids: dict[Any, str], iface_ids: dict[Any, str], connected: str, location: str) -> None:
        nb, want = self.nb, self.want
        have: dict[frozenset[str], dict[str, Any]] = {}
        by_end: dict[str, dict[str, Any]] = {}
        for chunk in _chunks(sorted(device_ids.values()), 40):
            for r in self._all(nb.dcim.cables, device_id=chunk):
                if r["termination_a_type"] == "dcim.interface" and r["termination_b_type"] == "dcim.interface":
                    ends = frozenset((str(r["termination_a_id"]), str(r["termination_b_id"])))
                    have[ends] = r
                    for end in ends:
                        by_end[end] = r
        creates, deletes = [], {}
        for (ad, ap), (bd, bp) in want.cables:
            a, b = iface_ids[(device_ids[ad], ap)], iface_ids[(device_ids[bd], bp)]
            if frozenset((a, b)) in have:
                continue
            for end in (a, b):  # a cable to somewhere else on either interface: the inventory wins
                if end in by_end:
                    deletes[str(by_end[end]["id"])] = by_end[end]
            creates.append(
                {
                    "termination_a_type": "dcim.interface",
                    "termination_a_id": a,
                    "termination_b_type": "dcim.interface",
                    "termination_b_id": b,
                    "status": connected,
                }
            )
        if deletes:
            nb.dcim.cables.delete(list(deletes))
            self.report.deleted["cable"] += len(deletes)
        if creates:
            nb.dcim.cables.create(creates)
            self.report.created["cable"] += len(creates)


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def export(nb: Any, url: str, want: Desired, status: str = "Active", new_only: set[str] | None = None) -> Report:
    return Exporter(nb, url, want, status, new_only).run()


def _fields_keyed(nb: Any, key: str) -> list[Any]:
    """The custom fields with this key (Nautobot's API filters them by label, not key: read them all)."""
    return [f for f in nb.extras.custom_fields.all() if str(f.key) == key]
