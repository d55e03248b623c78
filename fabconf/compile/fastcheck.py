"""A fast yes/no check of a document against an inventory schema, compiled once into plain Python (issue 42).

jsonschema walks the schema for every value (``descend``, ``evolve``, a type check per keyword): 65,536 links of
``cabling.yaml`` cost over a second. ``compile_schema`` turns a schema into one predicate of nested closures that
answers only "valid": it is conservative, True only where jsonschema with fabconf's type checker
(``fabconf.compile.schema``: an integer is not a bool, a number is finite) finds no error, and False whenever
it is not sure (``enum`` of mixed types, ``uniqueItems`` over lists, ...). A document it does not call valid is
checked again by jsonschema, which says what is wrong, so every problem is still reported word for word.

A schema using a keyword this module does not know (``$ref``, ``oneOf``, ``patternProperties``, ``format``...)
is not compiled at all (``Unsupported``): that file is checked by jsonschema alone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

Predicate = Callable[[Any], bool]

# keywords that say nothing about validity
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "default", "examples", "x-allowed"})


class Unsupported(ValueError):
    """The schema uses a keyword this module does not compile."""


def _integer(v: Any) -> bool:
    return type(v) is int


def _number(v: Any) -> bool:
    return type(v) is int or (type(v) is float and math.isfinite(v))


_TYPES: dict[str, Predicate] = {
    "string": lambda v: type(v) is str,
    "integer": _integer,
    "number": _number,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _enum(members: list[Any]) -> Predicate:
    """True only for a string, a non-bool integer or a bool equal to a member of the same kind: anything else
    (floats, lists, mappings, null) is left to jsonschema, whose equality has its own rules."""
    strings = frozenset(m for m in members if isinstance(m, str))
    ints = frozenset(m for m in members if _is_int(m))
    bools = frozenset(m for m in members if isinstance(m, bool))

    def check(v: Any) -> bool:
        t = type(v)
        if t is str:
            return v in strings
        if t is int:
            return v in ints
        if t is bool:
            return v in bools
        return False

    return check


def _unique(v: list[Any]) -> bool:
    """True when the items are certainly distinct: hashable scalars only (1, 1.0 and True collide here, which
    is the conservative side)."""
    try:
        return len(set(v)) == len(v) and all(type(x) in (str, int, float, bool) or x is None for x in v)
    except TypeError:
        return False


def compile_schema(schema: Any) -> Predicate:
    """A predicate that is True only for values ``schema`` certainly accepts; raises Unsupported."""
    if schema is True:
        return lambda _v: True
    if schema is False:
        return lambda _v: False
    if not isinstance(schema, dict):
        raise Unsupported(f"schema {schema!r}")
    unknown = set(schema) - _ANNOTATIONS - set(_KEYWORDS) - {"$defs"}  # $defs alone: only a $ref reads it
    if unknown:
        raise Unsupported(", ".join(sorted(unknown)))
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else list(declared) if declared is not None else []
    if any(n not in _TYPES for n in names):
        raise Unsupported(f"type {declared!r}")
    checks: list[Predicate] = []
    if names:
        tests = [_TYPES[n] for n in names]
        checks.append(tests[0] if len(tests) == 1 else lambda v: any(t(v) for t in tests))
    only = names[0] if len(names) == 1 else None  # the checks below may then skip their own type test
    for keyword, value in schema.items():
        if keyword in _KEYWORDS:
            check = _KEYWORDS[keyword](value, schema, only)
            if check is not None:
                checks.append(check)
    if not checks:
        return lambda _v: True
    if len(checks) == 1:
        return checks[0]
    first, *rest = checks
    return lambda v: first(v) and all(c(v) for c in rest)


Builder = Callable[[Any, dict[str, Any], str | None], Predicate | None]


def _guarded(kind: str, only: str | None, test: Predicate) -> Predicate:
    """``test`` where the value is of JSON type ``kind``; any other value passes (as jsonschema's keywords do)."""
    if only == kind:
        return test
    is_kind = _TYPES[kind]
    return lambda v: not is_kind(v) or test(v)


def _properties(value: Any, _schema: dict[str, Any], only: str | None) -> Predicate:
    props = {k: compile_schema(s) for k, s in value.items()}

    def check(v: dict[str, Any]) -> bool:
        for k, item in v.items():
            p = props.get(k)
            if p is not None and not p(item):
                return False
        return True

    return _guarded("object", only, check)


def _additional(value: Any, schema: dict[str, Any], only: str | None) -> Predicate:
    known = frozenset(schema.get("properties", {}))
    if value is False:
        return _guarded("object", only, lambda v: known.issuperset(v))
    extra = compile_schema(value)
    return _guarded("object", only, lambda v: all(extra(item) for k, item in v.items() if k not in known))


def _required(value: Any, _schema: dict[str, Any], only: str | None) -> Predicate:
    keys = tuple(value)
    return _guarded("object", only, lambda v: all(k in v for k in keys))


def _property_names(value: Any, _schema: dict[str, Any], only: str | None) -> Predicate:
    name = compile_schema(value)
    return _guarded("object", only, lambda v: all(map(name, v)))


def _min_properties(value: Any, _schema: dict[str, Any], only: str | None) -> Predicate:
    return _guarded("object", only, lambda v: len(v) >= value)


def _items(value: Any, _schema: dict[str, Any], only: str | None) -> Predicate:
    item = compile_schema(value)
    return _guarded("array", only, lambda v: all(map(item, v)))


def _min_items(value: Any, _schema: dict[str, Any], only: str | None) -> Predicate:
    return _guarded("array", only, lambda v: len(v) >= value)


def _max_items(value: Any, _schema: dict[str, Any], only: str | None) -> Predicate:
    return _guarded("array", only, lambda v: len(v) <= value)


def _unique_items(value: Any, _schema: dict[str, Any], only: str | None) -> Predicate | None:
    return _guarded("array", only, _unique) if value else None


def _pattern(value: Any, _schema: dict[str, Any], only: str | None) -> Predicate:
    search = re.compile(value).search  # jsonschema: re.search(pattern, instance)
    return _guarded("string", only, lambda v: search(v) is not None)


def _min_length(value: Any, _schema: dict[str, Any], only: str | None) -> Predicate:
    return _guarded("string", only, lambda v: len(v) >= value)


def _max_length(value: Any, _schema: dict[str, Any], only: str | None) -> Predicate:
    return _guarded("string", only, lambda v: len(v) <= value)


def _minimum(value: Any, _schema: dict[str, Any], only: str | None) -> Predicate:
    return lambda v: not _number(v) or v >= value


def _maximum(value: Any, _schema: dict[str, Any], only: str | None) -> Predicate:
    return lambda v: not _number(v) or v <= value


def _exclusive_minimum(value: Any, _schema: dict[str, Any], only: str | None) -> Predicate:
    return lambda v: not _number(v) or v > value


def _enum_keyword(value: Any, _schema: dict[str, Any], _only: str | None) -> Predicate:
    return _enum(list(value))


def _any_of(value: Any, _schema: dict[str, Any], _only: str | None) -> Predicate:
    branches = [compile_schema(s) for s in value]
    return lambda v: any(b(v) for b in branches)


_KEYWORDS: dict[str, Builder] = {
    "type": lambda _value, _schema, _only: None,  # compiled first, in compile_schema
    "properties": _properties,
    "additionalProperties": _additional,
    "required": _required,
    "propertyNames": _property_names,
    "minProperties": _min_properties,
    "items": _items,
    "minItems": _min_items,
    "maxItems": _max_items,
    "uniqueItems": _unique_items,
    "pattern": _pattern,
    "minLength": _min_length,
    "maxLength": _max_length,
    "minimum": _minimum,
    "maximum": _maximum,
    "exclusiveMinimum": _exclusive_minimum,
    "enum": _enum_keyword,
    "anyOf": _any_of,
}
