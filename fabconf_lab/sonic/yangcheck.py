"""A CONFIG_DB document checked against SONiC's own YANG models (``sonic-yang-models``), with yangson.

SONiC stores its configuration as CONFIG_DB tables (``{"TABLE": {"key|key2": {"field": "value"}}}``, every value a
string or a list of strings); its YANG models describe the same data as ``sonic-<x>:sonic-<x>/TABLE/TABLE_LIST``
lists whose keys are the ``|``-separated parts of the CONFIG_DB key, and the QoS map tables as a nested list (one
entry per map key). ``to_instance`` does that translation (as SONiC's own ``sonic_yang_ext`` does) using the schema
for the JSON types (integers up to 32 bits as numbers, 64-bit ones as strings, booleans), and ``Validator.check``
returns the model's complaints: schema (unknown table or field, a value outside its type or pattern) and semantics
(``must`` expressions, ``leafref`` to a row that is not there).

The model files are vendored under ``tests/sonic_yang/`` with the commit they come from (its README); the lab's
SONiC simulator uses this module to refuse what the models refuse when yangson is installed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

YANG_DIR = Path(__file__).resolve().parents[2] / "tests" / "sonic_yang"

_MODULE = re.compile(r"^\s*module\s+([\w-]+)", re.M)
_REVISION = re.compile(r"^\s*revision\s+\"?(\d{4}-\d{2}-\d{2})", re.M)
_INT_TYPES = {"int8", "int16", "int32", "uint8", "uint16", "uint32"}


def available() -> bool:
    try:
        import yangson  # noqa: F401
    except ImportError:
        return False
    return YANG_DIR.is_dir()


def _library(directory: Path) -> str:
    modules = []
    for path in sorted(directory.glob("*.yang")):
        text = path.read_text()
        name = _MODULE.search(text)
        if name is None:
            continue
        revision = _REVISION.search(text)
        modules.append(
            {
                "name": name.group(1),
                "revision": revision.group(1) if revision else "",
                "namespace": "",
                "conformance-type": "implement",
            }
        )
    for module in modules:
        text = (directory / f"{module['name']}.yang").read_text()
        ns = re.search(r"^\s*namespace\s+\"([^\"]+)\"", text, re.M)
        module["namespace"] = ns.group(1) if ns else ""
    return json.dumps({"ietf-yang-library:modules-state": {"module-set-id": "fabconf-sonic", "module": modules}})


class Validator:
    """One loaded data model (loading takes a second or two: keep the instance)."""

    def __init__(self, directory: Path = YANG_DIR) -> None:
        import tempfile

        from yangson import DataModel
        from yangson.schemanode import ContainerNode

        # yangson's XPath has no text() node test; SONiC writes ``leaf-list[text()='x']`` where XPath 1.0 also allows
        # ``leaf-list[.='x']`` (the same node set): the models are read through that one rewrite, nothing else.
        with tempfile.TemporaryDirectory(prefix="fabconf-sonic-yang-") as tmp:
            for path in directory.glob("*.yang"):
                (Path(tmp) / path.name).write_text(path.read_text().replace("text()", "."))
            # yangson looks a module up as NAME@REVISION.yang or NAME.yang: the vendored files carry no revision
            self.dm = DataModel(_library(directory), [tmp])
        self.tables: dict[str, tuple[str, Any]] = {}  # CONFIG_DB table -> (module, its container schema node)
        for top in self.dm.schema.children:
            for table in top.children:
                if isinstance(table, ContainerNode):
                    self.tables.setdefault(table.name, (top.ns, table))

    # -- CONFIG_DB -> YANG instance (JSON encoding, RFC 7951) --------------------------------------------------------
    @staticmethod
    def _leaf(node: Any, value: Any) -> Any:
        kind = _base_type(node)
        if isinstance(value, list):
            return [Validator._scalar(kind, v) for v in value]
        return Validator._scalar(kind, value)

    @staticmethod
    def _scalar(kind: str, value: Any) -> Any:
        if kind in _INT_TYPES:
            try:
                return int(value)
            except (TypeError, ValueError):
                return value  # left as it is: the model refuses it
        if kind == "boolean" and value in ("true", "false"):
            return value == "true"
        if kind == "empty":
            return [None]
        return str(value)

    def _row(self, lst: Any, key_parts: list[str], fields: dict[str, Any]) -> dict[str, Any]:
        from yangson.schemanode import ListNode

        row: dict[str, Any] = {}
        keys = [k[0] for k in getattr(lst, "keys", [])]
        for name, part in zip(keys, key_parts, strict=False):
            row[name] = self._leaf(lst.get_child(name), part)
        for field, value in fields.items():
            child = lst.get_child(field)
            if child is None:
                row[field] = value  # unknown: the model refuses it
            elif isinstance(child, ListNode):  # the nested map lists (DSCP_TO_TC_MAP/AZURE/{"0": "1"})
                continue
            else:
                row[field] = self._leaf(child, value)
        return row

    def to_instance(self, config_db: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The YANG instance of ``config_db``, and the tables no model covers."""
        from yangson.schemanode import ListNode

        out: dict[str, dict[str, Any]] = {}
        unknown: list[str] = []
        for table, rows in config_db.items():
            if table not in self.tables:
                unknown.append(table)
                continue
            module, node = self.tables[table]
            lists = [c for c in node.children if isinstance(c, ListNode)]
            body: dict[str, list[dict[str, Any]]] = {}
            for key, fields in rows.items():
                parts = key.split("|")
                if not lists:  # a table of fixed rows (DEVICE_METADATA|localhost): a container per row
                    fixed = node.get_child(key)
                    if fixed is None:
                        body[key] = fields  # type: ignore[assignment]  # unknown: the model refuses it
                    else:
                        body[key] = self._row(fixed, [], fields)  # type: ignore[assignment]
                    continue
                lst = next((li for li in lists if len(li.keys) == len(parts)), lists[0])
                nested = [c for c in lst.children if isinstance(c, ListNode)]
                if (
                    nested
                    and all(not isinstance(v, (dict, list)) for v in fields.values())
                    and fields
                    and not any(lst.get_child(f) is not None for f in fields)
                ):
                    inner = nested[0]
                    ikey, ivalue = inner.keys[0][0], next(c.name for c in inner.children if c.name != inner.keys[0][0])
                    row = self._row(lst, parts, {})
                    row[inner.name] = [
                        {ikey: self._leaf(inner.get_child(ikey), k), ivalue: self._leaf(inner.get_child(ivalue), v)}
                        for k, v in fields.items()
                    ]
                else:
                    row = self._row(lst, parts, fields)
                body.setdefault(lst.name, []).append(row)
            out.setdefault(f"{module}:{module}", {})[table] = body
        return out, unknown

    def check(self, config_db: dict[str, Any]) -> list[str]:
        """Every complaint of the models about ``config_db`` (empty: valid)."""
        from yangson.enumerations import ContentType, ValidationScope
        from yangson.exceptions import YangsonException

        instance, unknown = self.to_instance(config_db)
        problems = [f"{t}: no SONiC YANG model has this table" for t in unknown]
        try:
            inst = self.dm.from_raw(instance)
            inst.validate(ValidationScope.all, ContentType.config)
        except YangsonException as exc:
            problems.append(str(exc))
        except (ValueError, TypeError, KeyError) as exc:  # raw values yangson cannot even cast
            problems.append(f"{type(exc).__name__}: {exc}")
        return problems


def _base_type(node: Any) -> str:
    t = getattr(node, "type", None)
    name = type(t).__name__ if t is not None else ""
    return {
        "Int8Type": "int8",
        "Int16Type": "int16",
        "Int32Type": "int32",
        "Uint8Type": "uint8",
        "Uint16Type": "uint16",
        "Uint32Type": "uint32",
        "BooleanType": "boolean",
        "EmptyType": "empty",
    }.get(name, "string")
