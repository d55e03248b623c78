"""Runbook variables, as ``ansible-playbook --extra-vars`` takes them: ``-e rack=rack9 -e pod=pod1`` (each value a
string) or ``-e @vars.yaml`` (a YAML mapping: its values keep their YAML types); later ones win.

A runbook names a variable as ``{{ rack }}`` in any of its values (keys are never substituted). A value that is
nothing but one variable takes that variable's value as it is (an integer from a vars file stays an integer);
within a longer string it is written as text. Only names are substituted: there are no filters, expressions or
lookups, so a runbook never evaluates anything. A variable the runbook uses and nobody set is a problem in the
usual ``file: path: message`` form, every one of them, before any step runs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fabconf.compile.inventory import display_name, load_yaml
from fabconf.compile.problems import InputError, PathPart, Problems
from fabconf.errors import UsageError

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TEMPLATE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
WHOLE = re.compile(r"\s*\{\{\s*([^{}]*?)\s*\}\}\s*")


def parse(extra: list[str]) -> dict[str, Any]:
    """``-e`` arguments in order: ``NAME=VALUE`` or ``@FILE`` (a YAML mapping of names); a UsageError or an
    InputError (the file's own problems) otherwise."""
    out: dict[str, Any] = {}
    for arg in extra:
        if arg.startswith("@"):
            out |= _from_file(Path(arg[1:]))
            continue
        name, eq, value = arg.partition("=")
        if not eq or not NAME.fullmatch(name):
            raise UsageError(f"-e {arg}: expected NAME=VALUE or @FILE (NAME: letters, digits and _)")
        out[name] = value
    return out


def _from_file(path: Path) -> dict[str, Any]:
    problems = Problems()
    shown = display_name(path)
    if not path.is_file():
        raise UsageError(f"-e @{path}: no such file")
    ok, doc = load_yaml(path, shown, problems)
    if ok and doc is not None and not isinstance(doc, dict):
        problems.add(shown, [], "expected a mapping of variable names to values")
    if ok and isinstance(doc, dict):
        for key in doc:
            if not isinstance(key, str) or not NAME.fullmatch(key):
                problems.add(shown, [str(key)], "not a variable name (letters, digits and _)")
    if problems:
        raise InputError(problems)
    return dict(doc or {})


def substitute(doc: Any, variables: dict[str, Any], shown: str) -> Any:
    """``doc`` with every ``{{ name }}`` filled in from ``variables``; an InputError naming each place that uses a
    variable nobody set (or writes something other than a name between the braces)."""
    problems = Problems()
    out = _walk(doc, [], variables, shown, problems)
    if problems:
        raise InputError(problems)
    return out


def _walk(value: Any, path: list[PathPart], variables: dict[str, Any], shown: str, problems: Problems) -> Any:
    if isinstance(value, dict):
        return {k: _walk(v, [*path, k], variables, shown, problems) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, [*path, i], variables, shown, problems) for i, v in enumerate(value)]
    if not isinstance(value, str) or "{{" not in value:
        return value
    for name in TEMPLATE.findall(value):
        if not NAME.fullmatch(name):
            problems.add(shown, path, f"{{{{ {name} }}}}: only a variable name goes between the braces")
        elif name not in variables:
            problems.add(shown, path, f"undefined variable {name!r} (set it with -e {name}=VALUE)")
    whole = WHOLE.fullmatch(value)
    if whole and whole.group(1) in variables:
        return variables[whole.group(1)]
    return TEMPLATE.sub(lambda m: str(variables.get(m.group(1), m.group(0))), value)
