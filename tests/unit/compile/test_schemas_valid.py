"""Every inventory schema fabconf ships is a valid JSON Schema once its platform markers are expanded.

`fabconf.compile.schema.validator` no longer checks this on every run (a fifth of a cold render's CPU): this
test does, for every schema file, so that a broken schema fails here rather than reaching a user.
"""

from __future__ import annotations

from importlib import resources

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from fabconf.compile.schema import load, validator

KINDS = sorted(
    p.name.removesuffix(".json")
    for p in resources.files("fabconf.compile.schemas").iterdir()
    if p.name.endswith(".json")
)


def test_every_schema_file_is_listed() -> None:
    assert {"cabling", "defaults", "fabric", "groups", "hosts", "runbook"} <= set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_the_schema_is_valid_json_schema(kind: str) -> None:
    Draft202012Validator.check_schema(load(kind))
    assert validator(kind).schema == load(kind)


def test_an_invalid_schema_is_refused_by_the_check() -> None:
    with pytest.raises(SchemaError):
        Draft202012Validator.check_schema({"type": "mapping"})  # not a JSON Schema type
