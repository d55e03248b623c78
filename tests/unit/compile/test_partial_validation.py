"""A broken file does not hide the cross-checks of the others (issue #40), and never ends in a traceback.

Property-based: hypothesis mutates the example inventory's hosts, groups, defaults or cabling file (a wrong type
at any path, a key removed, an unknown key added) while fabric.yaml carries a cross-check error that no device
is needed to judge. ``fabconf validate`` exits 1, every line is ``FILE: path: message`` naming an inventory
file, and the cross-check error is among them: in the same round as the schema errors.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pristine import EXAMPLE

from fabconf.cli import main

MUTATED = ("hosts.yaml", "groups.yaml", "defaults.yaml", "cabling.yaml")
FILES = (*MUTATED, "fabric.yaml")
DOCS = {name: yaml.safe_load((EXAMPLE / name).read_text()) for name in FILES}
CROSS_CHECK = "fabric.yaml: mtu.host: host MTU 9216 exceeds switch MTU 9000"
PROBLEM = re.compile(r"^(?P<file>\S.*?\.yaml): (?P<path>[^\n]+?): (?P<message>\S[^\n]*)$")
SUMMARY = re.compile(r"^fabconf: \d+ error\(s\); nothing was rendered or changed$")
EXCEPTION = re.compile(r"Traceback|\b[A-Z][A-Za-z]*(Error|Exception)\b|File \"")


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*path, i))


TARGETS = [(name, path) for name in MUTATED for path in _paths(DOCS[name])]
WRONG = st.sampled_from([None, True, 7, -1, 2.5, "x", "", [], [1, "a"], {}, {"k": "v"}])


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


@st.composite
def _mutation(draw: st.DrawFn) -> tuple[str, Any]:
    name, path = draw(st.sampled_from(TARGETS))
    doc = yaml.safe_load(yaml.safe_dump(DOCS[name]))  # a deep copy
    how = draw(st.sampled_from(["replace", "delete", "add"]))
    if not path:
        return name, draw(WRONG)
    parent, last = _at(doc, path[:-1]), path[-1]
    if how == "delete":
        del parent[last]
    elif how == "add" and isinstance(_at(doc, path), dict):
        _at(doc, path)["unknwn"] = draw(WRONG)
    else:
        parent[last] = draw(WRONG)
    return name, doc


@settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(mutation=_mutation())
def test_a_broken_file_does_not_hide_the_cross_checks(
    mutation: tuple[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    name, doc = mutation
    with tempfile.TemporaryDirectory(prefix="fabconf-partial-") as tmp:
        inv = Path(tmp) / "inventory"
        shutil.copytree(EXAMPLE, inv)
        fabric = yaml.safe_load((inv / "fabric.yaml").read_text())
        fabric["mtu"].update({"host": 9216, "switch": 9000})
        (inv / "fabric.yaml").write_text(yaml.safe_dump(fabric, sort_keys=False))
        (inv / name).write_text(yaml.safe_dump(doc, sort_keys=False))
        capsys.readouterr()
        rc = main(["validate", "-i", str(inv)])
        out, err = capsys.readouterr()
        assert not EXCEPTION.search(out + err), out + err
        assert rc == 1, err
        lines = err.splitlines()
        assert lines and SUMMARY.match(lines[-1]), err
        files = {str(inv / n) for n in FILES}
        for line in lines[:-1]:
            match = PROBLEM.match(line)
            assert match, f"not a `FILE: path: message` line: {line!r}"
            assert match["file"] in files, line
        assert any(line.startswith(f"{inv}/{CROSS_CHECK}") for line in lines), err
