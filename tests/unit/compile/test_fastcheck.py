"""The compiled yes/no schema check (``fabconf.compile.fastcheck``, issue 42) never calls a document valid that
jsonschema finds a problem in: every validation case's files, and thousands of mutated copies of the examples'
files, are checked both ways. Where it says "not sure", jsonschema runs and its messages are reported as before
(``test_validation.py`` checks them word for word)."""

from __future__ import annotations

import copy
import math
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from pristine import EXAMPLE
from test_validation import CASES, ROOT, case_inventory

from fabconf.compile import schema
from fabconf.compile.fastcheck import Unsupported, compile_schema
from fabconf.compile.inventory import FILES

KINDS = list(FILES)
EXAMPLES = [EXAMPLE, ROOT / "examples" / "two-pods", ROOT / "examples" / "sonic-mix"]


def _agree(kind: str, doc: Any) -> None:
    fast = schema._fast(kind)
    assert fast is not None
    errors = list(schema.validator(kind).iter_errors(doc))
    if fast(doc):
        assert not errors, f"{kind}: the fast check passed a document jsonschema refuses: {errors[0].message}"


def _docs(directory: Path) -> dict[str, Any]:
    return {
        kind: yaml.safe_load((directory / name).read_text()) or {}
        for kind, (name, _required) in FILES.items()
        if (directory / name).exists()
    }


def test_every_inventory_schema_compiles() -> None:
    for kind in KINDS:
        assert schema._fast(kind) is not None, kind  # a keyword fastcheck does not know turns the fast path off


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_the_examples_pass_the_fast_check(example: Path) -> None:
    for kind, doc in _docs(example).items():
        fast = schema._fast(kind)
        assert fast is not None and fast(doc), kind  # a valid file never needs jsonschema
        assert not list(schema.validator(kind).iter_errors(doc))


# every case that edits a file (the others remove files or test what comes after the schema)
FILE_CASES = [c for c in CASES if {*c.get("write", {}), *c.get("set", {}), *c.get("delete", {}), *c.get("append", {})}]


@pytest.mark.parametrize("case", FILE_CASES, ids=[c["name"] for c in FILE_CASES])
def test_every_validation_case_is_refused_by_the_fast_check_where_jsonschema_refuses_it(
    case: dict[str, Any], tmp_path: Path
) -> None:
    inv = case_inventory(case, tmp_path)
    for kind, (name, _required) in FILES.items():
        try:
            doc = yaml.safe_load((inv / name).read_text())
        except (OSError, yaml.YAMLError):
            continue  # a case about reading the file: never reaches a schema
        _agree(kind, {} if doc is None else doc)


# values that sit on the edges of fabconf's types: a bool is not an integer, a float is not an integer, nan and
# inf are not numbers, an empty string, a huge one, a control character, a key that is not a string
ODD: list[Any] = [
    True,
    False,
    0,
    1,
    -1,
    3,
    7,
    8,
    26,
    65535,
    2**40,
    3.0,
    0.5,
    math.nan,
    math.inf,
    -math.inf,
    "",
    "x",
    "leaf1",
    "leaf1:swp1",
    "a" * 300,
    "10.0.0.0/8",
    "a\nb",
    None,
    [],
    [1, 1],
    [1, True],
    ["a", "a"],
    [3],
    {},
    {"x": 1},
    {1: "a"},
]


def _mutate(doc: Any, rnd: random.Random) -> Any:
    """A copy of ``doc`` with one value somewhere replaced by an odd one (or one key dropped or added)."""
    doc = copy.deepcopy(doc)
    node, path = doc, []
    while True:
        if isinstance(node, dict) and node:
            key = rnd.choice(list(node))
        elif isinstance(node, list) and node:
            key = rnd.randrange(len(node))
        else:
            break
        path.append((node, key))
        if rnd.random() < 0.3:
            break
        node = node[key]
    if not path:
        return rnd.choice(ODD)
    parent, key = path[-1]
    roll = rnd.random()
    if roll < 0.1 and isinstance(parent, dict):
        del parent[key]
    elif roll < 0.2 and isinstance(parent, dict):
        parent[rnd.choice(["bogus", 7, "mtu", "platform"])] = rnd.choice(ODD)
    else:
        parent[key] = copy.deepcopy(rnd.choice(ODD))
    return doc


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_mutated_files_are_never_passed_where_jsonschema_refuses_them(example: Path) -> None:
    rnd = random.Random(42)
    for kind, doc in _docs(example).items():
        for _ in range(120):
            _agree(kind, _mutate(doc, rnd))


@pytest.mark.parametrize(
    "schema_doc",
    [
        {"type": "object", "patternProperties": {"^a": {"type": "string"}}},
        {"oneOf": [{"type": "string"}]},
        {"$ref": "#/$defs/x", "$defs": {"x": {"type": "string"}}},
        {"type": "string", "format": "ipv4"},
        {"type": "array", "items": [{"type": "string"}]},
        {"type": "widget"},
    ],
)
def test_a_keyword_it_does_not_know_turns_the_fast_path_off(schema_doc: dict[str, Any]) -> None:
    with pytest.raises(Unsupported):
        compile_schema(schema_doc)
