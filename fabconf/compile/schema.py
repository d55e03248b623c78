"""JSON Schema validation of every inventory file, with messages a network engineer can act on."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from fabconf.compile import cache as compile_cache
from fabconf.compile.fastcheck import Predicate, Unsupported, compile_schema
from fabconf.compile.inventory import FILES, RawInventory
from fabconf.compile.problems import Problems, brief, format_path
from fabconf.platforms import expand_schema

if TYPE_CHECKING:  # jsonschema is imported when a file is checked, not by a run whose files all come from the cache
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError


def _is_integer(_checker: Any, value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(_checker: Any, value: Any) -> bool:
    """A finite number: YAML's ``.nan`` and ``.inf`` are floats, but a threshold of nan is never crossed (``> nan``
    is always false) and every bound (``minimum``, ``maximum``) lets nan through."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def load(kind: str) -> Any:
    """The schema of inventory file ``kind``, its platform markers expanded from the registry."""
    text = resources.files("fabconf.compile.schemas").joinpath(f"{kind}.json").read_text(encoding="utf-8")
    return expand_schema(json.loads(text))


@cache
def _schema(kind: str) -> Any:
    """``load(kind)``, once per process, without jsonschema: what the compiled check, the entry-wise test and
    ``validator`` read, so that a valid inventory never imports jsonschema (issue 42). Never mutated."""
    return load(kind)


@cache
def validator(kind: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator, validators

    # JSON Schema counts 3.0 as an integer; in YAML it is a float, and arithmetic on it (dscp >> 3) fails later.
    checker = Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer).redefine("number", _is_number)
    strict = validators.extend(Draft202012Validator, type_checker=checker)
    # the schemas ship with fabconf: that each is a valid JSON Schema once expanded is checked by the unit tests
    # (tests/unit/compile/test_schemas_valid.py), not on every run (0.12 s of CPU, a fifth of a cold render of
    # 200 devices: bench/bench_ansible.py)
    validator: Draft202012Validator = strict(_schema(kind))
    return validator


def _type_name(value: Any) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "list",
        dict: "mapping",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _types(schema: Any) -> set[str]:
    declared = schema.get("type") if isinstance(schema, dict) else None
    names = [declared] if isinstance(declared, str) else list(declared or [])
    return {{"object": "mapping", "array": "list"}.get(n, n) for n in names}


def describe_errors(err: ValidationError) -> list[tuple[list[Any], str]]:
    """(path, message) pairs for one schema error, phrased for the inventory's author."""
    path = list(err.absolute_path)
    kind, schema, value = err.validator, err.schema, err.instance
    if kind == "additionalProperties" and isinstance(value, dict):
        known = set(schema.get("properties", {}))
        extras = [k for k in value if k not in known]
        hint = f"; expected one of: {', '.join(sorted(known))}" if known else ""
        return [([*path, k], f"unknown key{hint}") for k in extras]
    if kind == "required":
        missing = err.message.split("'")[1] if "'" in err.message else "?"
        return [([*path, missing], "is required")]
    if kind in ("minimum", "maximum") and "minimum" in schema and "maximum" in schema:
        return [(path, f"{brief(value)} is not in {schema['minimum']}..{schema['maximum']}")]
    if kind == "enum":
        return [(path, f"{brief(value)} is not one of: {', '.join(map(str, schema['enum']))}")]
    if kind == "type" and isinstance(value, float) and not math.isfinite(value):
        return [(path, f"expected a finite number, got {value}")]
    if kind == "type":
        names = [err.validator_value] if isinstance(err.validator_value, str) else err.validator_value
        want = " or ".join({"object": "mapping", "array": "list"}.get(n, n) for n in names)
        return [(path, f"expected {want}, got {_type_name(value)} {brief(value)}")]
    if kind == "pattern":
        if "x-allowed" in schema:
            return [(path, f"{brief(value)} is not allowed here: expected {schema['x-allowed']}")]
        return [(path, f"{brief(value)} does not match {schema['pattern']}")]
    if kind == "anyOf" and err.context:
        # the branch written for this value's type says what is wrong (a string against the string branch)
        branches = schema.get("anyOf") or []

        def branch(e: ValidationError) -> Any:  # the anyOf branch an error of the context comes from
            first = e.relative_schema_path[0] if e.relative_schema_path else None
            return branches[first] if isinstance(first, int) and first < len(branches) else e.schema

        same_type = [e for e in err.context if _type_name(value) in _types(branch(e))]
        if same_type:
            return describe_errors(same_type[0])
    # jsonschema's own messages start with the whole value (a 10 MB string, a list of a million items)
    message = err.message
    if len(message) > 200 and isinstance(value, str | list | dict):
        message = message.replace(repr(value), brief(value))
    if kind == "propertyNames":
        return [(path, f"invalid name: {message}")]
    return [(path, message)]


Found = list[tuple[list[Any], str]]  # (path, message) of one file's problems
Compute = Callable[[str, Any], Found]  # (kind, document) -> what a check finds in it


def _found_order(item: tuple[list[Any], str]) -> tuple[list[str], str]:
    return list(map(str, item[0])), item[1]


@dataclass(frozen=True)
class _Check:
    """A check of one file at a time. ``entrywise(kind)``: what it finds in a mapping is what it finds in each
    one-entry mapping of it, put together (so a file read entry by entry is checked entry by entry, each result
    kept in ``fabconf.compile.cache``); ``ordered``: its findings are sorted by ``_found_order``."""

    name: str
    compute: Compute
    entrywise: Callable[[str], bool] = lambda _kind: True
    ordered: bool = False


def _per_file(check: _Check, kind: str, raw: RawInventory) -> Found:
    """What ``check`` finds in one file's document; for the same bytes checked before, from ``fabconf.compile.cache``
    (its key carries fabconf's code version, schemas included: a new fabconf checks again)."""
    digest = raw.digests.get(kind)
    store = f"{check.name}-{kind}"
    if digest is not None:
        cached = compile_cache.get(store, digest)
        if cached is not compile_cache.MISS:
            return cached
    entries = raw.entries.get(kind)
    if entries is not None and check.entrywise(kind):
        found = _per_entry(check, kind, raw, entries)
    else:
        found = check.compute(kind, raw.data[kind])
    if digest is not None:
        compile_cache.put(store, digest, found)
    return found


def _per_entry(check: _Check, kind: str, raw: RawInventory, entries: list[tuple[Any, str]]) -> Found:
    """``check`` over each entry of a file read entry by entry; an entry checked before (the same text) is not
    checked again."""
    store = compile_cache.EntryStore(f"{check.name}-{kind}-entries", str((raw.directory / FILES[kind][0]).resolve()))
    found: Found = []
    doc = raw.data[kind]
    for key, digest in entries:
        part = store.get(digest)
        if part is compile_cache.MISS:
            part = check.compute(kind, {key: doc[key]})
        store.keep(digest, part)
        found += part
    store.save()
    return sorted(found, key=_found_order) if check.ordered else found


def _report(check: _Check, kinds: Iterable[str], raw: RawInventory, problems: Problems) -> bool:
    """Run a per-file check over the loaded files of ``kinds``, adding what it finds; True when it finds nothing."""
    clean = True
    for kind in kinds:
        if kind in raw.data:
            found = _per_file(check, kind, raw)
            for path, message in found:
                problems.add(raw.files[kind], path, message)
            clean = clean and not found
    return clean


def check_files(raw: RawInventory, problems: Problems) -> bool:
    """Validate every loaded file against its schema; returns True when all of them pass (a file that is missing
    or could not be read was reported by the loader, and fails too)."""
    return _report(_SCHEMA, FILES, raw, problems) and all(kind in raw.data for kind in FILES)


@cache
def _fast(kind: str) -> Predicate | None:
    """The compiled yes/no check of ``kind``'s schema (``fabconf.compile.fastcheck``), None where it cannot be
    compiled."""
    try:
        return compile_schema(_schema(kind))
    except Unsupported:
        return None


def _schema_problems(kind: str, doc: Any) -> Found:
    fast = _fast(kind)
    if fast is not None and fast(doc):
        return []  # certainly valid; anything else is checked by jsonschema, which says what is wrong
    found = [
        (list(path), message) for err in validator(kind).iter_errors(doc) for path, message in describe_errors(err)
    ]
    return sorted(found, key=_found_order)


# keywords of a file's top-level schema that judge each entry on its own (and minProperties, which a file read
# entry by entry always meets: it has two entries at least)
_ENTRYWISE_KEYWORDS = frozenset(
    {
        "$schema",
        "$id",
        "$defs",
        "title",
        "description",
        "type",
        "minProperties",
        "propertyNames",
        "additionalProperties",
    }
)


@cache
def _schema_entrywise(kind: str) -> bool:
    schema = _schema(kind)
    return isinstance(schema, dict) and schema.get("type") == "object" and set(schema) <= _ENTRYWISE_KEYWORDS


_SCHEMA = _Check("schema", _schema_problems, _schema_entrywise, ordered=True)


CREDENTIAL_KEYS = frozenset({"password", "secret", "enable_password", "username", "token", "api_key", "passwd"})


def check_credentials(raw: RawInventory, problems: Problems) -> None:
    """Credentials come from the environment or a secret helper, never from inventory files."""
    _report(_CREDENTIALS, ("hosts", "groups", "defaults", "fabric"), raw, problems)


def _credential_problems(_kind: str, doc: Any) -> Found:
    found: Found = []

    def walk(node: Any, path: list[Any]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, str) and key.lower() in CREDENTIAL_KEYS:
                    found.append(
                        (
                            [*path, key],
                            "credentials are not allowed in inventory files; set FABCONF_USERNAME/FABCONF_PASSWORD "
                            "or a credentials command",
                        )
                    )
                else:
                    walk(value, [*path, key])
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, [*path, i])

    walk(doc, [])
    return found


# Characters that end a line or a command in some target syntax (CLI, NVUE YAML, nccl.conf, a shell): never
# valid anywhere in an inventory, whatever the field. JSON Schema patterns cannot promise it on their own:
# the ``$`` anchor of Python's re (which jsonschema uses) also matches before a trailing newline.
_CONTROL = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


def _control_name(char: str) -> str:
    names = {"\n": "a line break", "\r": "a carriage return", "\t": "a tab", "\x00": "a NUL byte"}
    return names.get(char, f"the control character U+{ord(char):04X}")


def check_text(raw: RawInventory, problems: Problems) -> None:
    """No key or string value in any inventory file carries a line break or another control character:
    no inventory string can add a line, a key or a command to a device, whatever template it reaches."""
    _report(_TEXT, list(raw.data), raw, problems)


def _text_problems(_kind: str, doc: Any) -> Found:
    found: Found = []

    def walk(node: Any, path: list[Any]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, str) and (hit := _CONTROL.search(key)):
                    found.append(([*path, brief(key)], f"the name contains {_control_name(hit.group())}"))
                walk(value, [*path, key])
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, [*path, i])
        elif isinstance(node, str) and (hit := _CONTROL.search(node)):
            found.append((path, f"{brief(node)} contains {_control_name(hit.group())}, which no device accepts"))

    walk(doc, [])
    return found


_CREDENTIALS = _Check("credentials", _credential_problems)
_TEXT = _Check("text", _text_problems)
FILE_CHECKS = (_SCHEMA, _CREDENTIALS, _TEXT)  # every check of one file at a time, in the order a compile runs them


def findings(check: _Check, kind: str, raw: RawInventory) -> Found:
    """What the per-file ``check`` finds in ``kind``'s file (nothing for a file that was not loaded)."""
    return _per_file(check, kind, raw) if kind in raw.data else []


__all__ = [
    "FILE_CHECKS",
    "check_credentials",
    "check_files",
    "check_text",
    "describe_errors",
    "findings",
    "format_path",
    "validator",
]
