"""SONiC's configuration as fabconf changes it: the target CONFIG_DB for merge and replace mode, and the RFC 6902
JSON Patch from the running CONFIG_DB to it, as ``config apply-patch`` takes it (docs/reference/sonic.md).

Ownership (fabconf's choice, the SONiC counterpart of the owned sections of the other platforms):

- routing tables (``INTERFACE``, ``LOOPBACK_INTERFACE``, ``BGP_NEIGHBOR``, ``VLAN``, ``VLAN_MEMBER``,
  ``VLAN_INTERFACE``): fabconf owns every row, so a row it does not render is removed;
- per-port QoS tables (``PORT_QOS_MAP``, ``QUEUE``, ``BUFFER_PG``, ``PFC_WD``): the rows of the ports fabconf
  manages (and ``PFC_WD|GLOBAL``); other ports' rows are the device's;
- the named QoS tables (the maps, ``WRED_PROFILE``, ``SCHEDULER``): the rows named ``FABCONF_*``;
- ``PORT`` and ``DEVICE_METADATA``: only the fields fabconf renders (``lanes``, ``speed``, ``mac`` … are the
  device's and never removed);
- ``GNMI`` (the gNMI server, ``monitoring.telemetry``): only the fields fabconf renders of ``GNMI|gnmi``, and only
  when it renders them (the server is management plane: the operator's ``GNMI|certs`` and other fields stay).

Merge mode changes what fabconf owns and leaves everything else; replace mode also removes the fields fabconf does
not render from the rows it owns. Every other table (management interface, AAA, features …) is kept in both modes,
so a push never locks fabconf out.
"""

from __future__ import annotations

import copy
import json
from typing import Any

ConfigDb = dict[str, dict[str, dict[str, Any]]]

ROUTING = ("INTERFACE", "LOOPBACK_INTERFACE", "BGP_NEIGHBOR", "VLAN", "VLAN_MEMBER", "VLAN_INTERFACE")
PER_PORT = ("PORT_QOS_MAP", "QUEUE", "BUFFER_PG", "PFC_WD")
NAMED = (
    "DSCP_TO_TC_MAP",
    "TC_TO_QUEUE_MAP",
    "TC_TO_PRIORITY_GROUP_MAP",
    "MAP_PFC_PRIORITY_TO_QUEUE",
    "WRED_PROFILE",
    "SCHEDULER",
)
FIELDS_ONLY = ("PORT", "DEVICE_METADATA", "GNMI")
OWNED = ROUTING + PER_PORT + NAMED + FIELDS_ONLY
NAME_PREFIX = "FABCONF_"


class PatchError(ValueError):
    """The rendered document is not a CONFIG_DB fabconf can stage."""


def parse(text: str, what: str = "configuration") -> ConfigDb:
    """A CONFIG_DB document (``show runningconfiguration all`` adds ``bgpraw``, FRR's text: dropped)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PatchError(f"{what}: not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise PatchError(f"{what}: a CONFIG_DB document is a JSON object of tables")
    doc.pop("bgpraw", None)
    for table, rows in doc.items():
        if not isinstance(rows, dict) or not all(isinstance(r, dict) for r in rows.values()):
            raise PatchError(f"{what}: {table}: a table is an object of rows, each an object of fields")
    return doc


def _owned_row(table: str, key: str, ports: set[str]) -> bool:
    if table in ROUTING:
        return True
    if table in PER_PORT:
        return key.split("|", 1)[0] in ports or key == "GLOBAL"
    if table in NAMED:
        return key.startswith(NAME_PREFIX)
    return False


def target(running: ConfigDb, rendered: ConfigDb, replace: bool) -> ConfigDb:
    """The CONFIG_DB the device should have: ``running`` with what fabconf owns taken from ``rendered``."""
    unknown = sorted(set(rendered) - set(OWNED))
    if unknown:
        raise PatchError(f"rendered configuration: tables fabconf does not own: {', '.join(unknown)}")
    out = copy.deepcopy(running)
    ports = set(rendered.get("PORT", {}))
    for table in OWNED:
        want = rendered.get(table, {})
        have = out.get(table, {})
        rows: dict[str, dict[str, Any]] = {}
        for key, fields in have.items():
            if table in FIELDS_ONLY or not _owned_row(table, key, ports):
                rows[key] = dict(fields)
        for key, fields in want.items():
            if table in FIELDS_ONLY or not replace:  # the device's other fields stay
                rows[key] = {**have.get(key, {}), **fields}
            else:
                rows[key] = dict(fields)
        if rows:
            out[table] = rows
        else:
            out.pop(table, None)
    return out


def _pointer(*parts: str) -> str:
    """RFC 6901: ``~`` as ``~0``, ``/`` as ``~1`` (a key such as ``Ethernet0|10.0.0.1/31`` holds a slash)."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def json_patch(running: ConfigDb, want: ConfigDb) -> list[dict[str, Any]]:
    """RFC 6902 operations from ``running`` to ``want``, table by table, row by row, field by field. A table
    left empty is removed whole and a new one added whole: GCU refuses a patch that leaves an empty table."""
    ops: list[dict[str, Any]] = []
    for table in sorted(set(running) | set(want)):
        have_t, want_t = running.get(table), want.get(table)
        if want_t is None:
            ops.append({"op": "remove", "path": _pointer(table)})
            continue
        if have_t is None:
            ops.append({"op": "add", "path": _pointer(table), "value": want_t})
            continue
        for key in sorted(set(have_t) | set(want_t)):
            have_r, want_r = have_t.get(key), want_t.get(key)
            if want_r is None:
                ops.append({"op": "remove", "path": _pointer(table, key)})
            elif have_r is None:
                ops.append({"op": "add", "path": _pointer(table, key), "value": want_r})
            else:
                for field in sorted(set(have_r) | set(want_r)):
                    if field not in want_r:
                        ops.append({"op": "remove", "path": _pointer(table, key, field)})
                    elif field not in have_r:
                        ops.append({"op": "add", "path": _pointer(table, key, field), "value": want_r[field]})
                    elif have_r[field] != want_r[field]:
                        ops.append({"op": "replace", "path": _pointer(table, key, field), "value": want_r[field]})
    return ops


def guarded(ops: list[dict[str, Any]], running: ConfigDb) -> list[dict[str, Any]]:
    """``ops`` behind RFC 6902 ``test`` operations on every table they touch that ``running`` had, with the value
    read: applied over a base that moved since (another changer's edit in one of those tables), the patch fails
    as a whole before it changes anything, and nothing of the other change is overwritten. A table the patch adds
    whole was absent when read: RFC 6902 cannot test that a path is absent, so it goes unguarded."""
    tables = sorted({_unpointer(op["path"])[0] for op in ops} & set(running))
    return [{"op": "test", "path": _pointer(t), "value": running[t]} for t in tables] + ops


def base_moved(error: str) -> bool:
    """GCU's refusal of a patch whose ``test`` failed (python-jsonpatch's ``JsonPatchTestFailed``, or
    jsonpointer's message for a tested path that is gone): the base moved, nothing was applied."""
    return "is not equal to tested value" in error or ("member '" in error and "not found in" in error)


def _unpointer(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def describe(ops: list[dict[str, Any]], running: ConfigDb) -> str:
    """The patch as people read it, as a diff: ``- TABLE|KEY field: old`` / ``+ TABLE|KEY field: new`` (a row or
    table added or removed: one line with its value)."""
    lines = []
    for op in ops:
        parts = _unpointer(op["path"])
        where = "|".join(parts[:2]) + (f" {parts[2]}" if len(parts) > 2 else "")
        if op["op"] == "remove":
            old: Any = running
            for p in parts:
                old = old[p]
            lines.append(f"- {where}: {json.dumps(old, sort_keys=True)}")
        elif op["op"] == "add":
            lines.append(f"+ {where}: {json.dumps(op['value'], sort_keys=True)}")
        else:
            old = running[parts[0]][parts[1]][parts[2]]  # a replaced value: the old line and the new one
            lines.append(f"- {where}: {json.dumps(old)}")
            lines.append(f"+ {where}: {json.dumps(op['value'])}")
    return "\n".join(lines) + ("\n" if lines else "")
