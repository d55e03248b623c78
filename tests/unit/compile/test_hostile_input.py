"""Hostile input (issue 16): mutated inventories never end in a traceback.

Property-based: starting from the two example inventories, hypothesis mutates one file — a wrong type
at any path, a number out of range, a key removed or added, unicode and control characters, huge
strings, deep nesting, alias bombs, bytes that are not text — writes it to a temporary copy and runs
the real CLI in-process. Either ``fabconf validate`` exits 1 and every line it prints is a problem
``FILE: path: message`` naming an inventory file, or the mutation happened to be valid: it exits 0 and
``fabconf render`` renders every device. No output ever names an exception class.

The profile is derandomized, so CI runs the same examples every time (a few seconds in all). To explore
further: ``FABCONF_HYPOTHESIS=explore pytest tests/test_hostile_input.py -n 0`` (random, 500 examples a
test).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pristine import EXAMPLE

from fabconf.cli import main
from fabconf.compile import limits

ROOT = Path(__file__).resolve().parents[3]
BASES = {"inventory": EXAMPLE, "two-pods": ROOT / "examples" / "two-pods"}
FILES = ("hosts.yaml", "groups.yaml", "defaults.yaml", "fabric.yaml", "cabling.yaml")

_COMMON: dict[str, Any] = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
}
settings.register_profile("hostile", max_examples=30, derandomize=True, **_COMMON)
settings.register_profile("hostile-explore", max_examples=500, **_COMMON)
PROFILE = settings.get_profile("hostile-explore" if os.environ.get("FABCONF_HYPOTHESIS") == "explore" else "hostile")

DOCS: dict[str, dict[str, Any]] = {
    base: {name: yaml.safe_load((path / name).read_text()) for name in FILES} for base, path in BASES.items()
}
TEXTS: dict[str, dict[str, str]] = {
    base: {name: (path / name).read_text() for name in FILES} for base, path in BASES.items()
}


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*path, i))


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


PATHS = {(b, f): list(_paths(DOCS[b][f])) for b in BASES for f in FILES}
TARGETS = sorted(PATHS)  # (base, file)


def _leaves(kind: type) -> list[tuple[str, str, tuple[Any, ...]]]:
    return [
        (b, f, p)
        for (b, f), paths in PATHS.items()
        for p in paths
        if p and isinstance(_at(DOCS[b][f], p), kind) and not isinstance(_at(DOCS[b][f], p), bool)
    ]


INT_LEAVES = _leaves(int)
STR_LEAVES = _leaves(str)
MAPPINGS = [(b, f, p) for (b, f), paths in PATHS.items() for p in paths if isinstance(_at(DOCS[b][f], p), dict)]

# ---- what a mutation may put into an inventory -------------------------------------------------------------
HOSTILE_TEXT = st.sampled_from(
    [
        "",
        " ",
        "\n",
        "a\nb",
        "\r\n- set: {system: {hostname: evil}}",
        "\tx",
        "\x00",
        "\x1b[2J",
        "x;reboot",
        "$(reboot)",
        "`id`",
        "a|b&c>d",
        "\u202eevil",  # right-to-left override
        "\ufeff",
        "\u2028",
        "\U0001f642",
        "é" * 3,
        "\uff21\uff22\uff23",  # fullwidth ABC
        "x" * 5000,
        "y" * 300_000,
        "~",
        "null",
        "yes",
        "0x1F",
        "1e400",
        ".nan",
        "2024-13-45",
        "*alias",
        "&anchor",
        "!!python/object/apply:os.system ['id']",
        "{{ 7*7 }}",
        "{% raw %}",
    ]
)
NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 7, 8, 63, 64, 255, 256, 4094, 4095, 4096, 65535, 65536, 2**31, 2**32, 2**63, 10**4000]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-10, max_value=10_000).map(float),  # 26.0: an integer to JSON Schema, a float in YAML
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=20), HOSTILE_TEXT)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12) | HOSTILE_TEXT, inner, max_size=4),
    max_leaves=8,
)


def _deep(levels: int, mapping: bool) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = {"k": value} if mapping else [value]
    return value


# nested in block style by the dumper (the text edits below nest in flow style)
DEEP = st.builds(_deep, st.integers(min_value=limits.MAX_DEPTH - 8, max_value=150), st.booleans())


# ---- running the CLI and judging its output -------------------------------------------------------------
PROBLEM = re.compile(r"^(?P<file>\S.*?\.yaml): (?P<path>[^\n]+?): (?P<message>\S[^\n]*)$")
SUMMARY = re.compile(r"^fabconf: \d+ error\(s\); nothing was rendered or changed$")
EXCEPTION = re.compile(r"Traceback|\b[A-Z][A-Za-z]*(Error|Exception)\b|File \"")


@contextmanager
def _copy(base: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="fabconf-hostile-") as tmp:
        inv = Path(tmp) / "inventory"
        shutil.copytree(BASES[base], inv)
        yield inv


def _write(inv: Path, name: str, doc: Any) -> None:
    (inv / name).write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10**6), encoding="utf-8")


def _judge(inv: Path, capsys: pytest.CaptureFixture[str]) -> int:
    """Validate the inventory as the CLI does; assert a clean refusal or a valid inventory that renders."""
    capsys.readouterr()
    rc = main(["validate", "-i", str(inv)])
    out, err = capsys.readouterr()
    assert not EXCEPTION.search(out + err), out + err
    assert rc in (0, 1), (rc, err)
    event("refused" if rc else "valid, rendered")
    if rc == 1:
        lines = err.splitlines()
        assert lines and SUMMARY.match(lines[-1]), err
        problems = lines[:-1]
        assert problems, err
        files = {str(inv / name) for name in FILES}
        for line in problems:
            match = PROBLEM.match(line)
            assert match, f"not a `FILE: path: message` line: {line!r}"
            assert match["file"] in files, line
        assert max(map(len, lines)) < 1000, "a problem line prints a whole value"
        return rc
    with tempfile.TemporaryDirectory(prefix="fabconf-rendered-") as out_dir:
        rendered = main(["render", "-i", str(inv), "-o", out_dir])
        out, err = capsys.readouterr()
        assert rendered == 0, err
        assert not EXCEPTION.search(out + err), out + err
        rendered_files = list(Path(out_dir).iterdir())
        assert rendered_files
        for path in rendered_files:
            assert not re.search("[\x00-\x09\x0b-\x1f\x7f\u2028\u2029]", path.read_text(encoding="utf-8")), path
    return rc


# ---- properties ------------------------------------------------------------------------------------------------
@PROFILE
@given(target=st.sampled_from(TARGETS), data=st.data(), value=VALUES | DEEP)
def test_any_value_at_any_path(
    target: tuple[str, str], data: st.DataObject, value: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wrong type, an out-of-range value, a hostile string or a structure, anywhere in any file."""
    base, name = target
    path = data.draw(st.sampled_from(PATHS[target]), label="path")
    doc = yaml.safe_load(TEXTS[base][name])
    if path:
        _at(doc, path[:-1])[path[-1]] = value
    else:
        doc = value
    with _copy(base) as inv:
        _write(inv, name, doc)
        _judge(inv, capsys)


@PROFILE
@given(leaf=st.sampled_from(INT_LEAVES), number=NUMBERS)
def test_numbers_out_of_range(
    leaf: tuple[str, str, tuple[Any, ...]], number: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    base, name, path = leaf
    doc = yaml.safe_load(TEXTS[base][name])
    _at(doc, path[:-1])[path[-1]] = number
    with _copy(base) as inv:
        _write(inv, name, doc)
        rc = _judge(inv, capsys)
    if isinstance(number, float):  # every one of these leaves is an integer: 9216.0 would render as "9216.0"
        assert rc == 1, (path, number)


@PROFILE
@given(leaf=st.sampled_from(STR_LEAVES), extra=st.text(max_size=8) | HOSTILE_TEXT, where=st.sampled_from("<>="))
def test_hostile_strings(
    leaf: tuple[str, str, tuple[Any, ...]], extra: str, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Unicode, control characters, shell and template metacharacters, huge strings in every string value."""
    base, name, path = leaf
    doc = yaml.safe_load(TEXTS[base][name])
    old = _at(doc, path)
    _at(doc, path[:-1])[path[-1]] = {"<": extra + old, ">": old + extra, "=": extra}[where]
    with _copy(base) as inv:
        _write(inv, name, doc)
        _judge(inv, capsys)


@PROFILE
@given(where=st.sampled_from(MAPPINGS), data=st.data(), key=st.text(min_size=1, max_size=12) | HOSTILE_TEXT)
def test_missing_unknown_and_renamed_keys(
    where: tuple[str, str, tuple[Any, ...]], data: st.DataObject, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    base, name, path = where
    doc = yaml.safe_load(TEXTS[base][name])
    mapping = _at(doc, path)
    op = data.draw(st.sampled_from(["delete", "add", "rename"] if mapping else ["add"]), label="op")
    if op == "add":
        mapping[key] = data.draw(VALUES, label="value")
    else:
        old = data.draw(st.sampled_from(sorted(mapping, key=str)), label="key")
        value = mapping.pop(old)
        if op == "rename":
            mapping[key] = value
    with _copy(base) as inv:
        _write(inv, name, doc)
        _judge(inv, capsys)


def _bomb(width: int, levels: int) -> str:
    lines = [f"l0: &l0 [{','.join(['lol'] * width)}]"]
    lines += [f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


TEXT_EDITS = st.one_of(
    st.tuples(st.just("bytes"), st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("nest"), st.integers(min_value=limits.MAX_DEPTH - 4, max_value=5000), st.booleans()),
    st.tuples(st.just("bomb"), st.integers(min_value=2, max_value=12), st.integers(min_value=3, max_value=12)),
    st.tuples(st.just("alias-chain"), st.integers(min_value=2, max_value=40), st.integers(min_value=2, max_value=40)),
    st.tuples(st.just("recursive"), st.booleans()),
    st.tuples(st.just("cut"), st.floats(min_value=0, max_value=1)),
    st.tuples(st.just("duplicate-line"), st.floats(min_value=0, max_value=1)),
    st.tuples(st.just("tab"), st.floats(min_value=0, max_value=1)),
    st.tuples(st.just("document"), st.sampled_from(["---\n", "...\n", "--- !!set\n", "%YAML 1.1\n---\n"])),
)


def _edit(text: str, edit: tuple[Any, ...], position: float) -> bytes:
    """Apply one text-level edit at ``position`` (0..1 of the file, at a line start when it matters)."""
    data = text.encode()
    starts = [0] + [m.end() for m in re.finditer(b"\n", data) if m.end() < len(data)]
    line = starts[min(int(position * len(starts)), len(starts) - 1)]
    kind = edit[0]
    if kind == "bytes":
        at = int(position * len(data))
        return data[:at] + edit[1] + data[at:]
    if kind == "nest":
        levels, mapping = edit[1], edit[2]
        value = "{k: " * levels + "x" + "}" * levels if mapping else "[" * levels + "x" + "]" * levels
        return data + f"deep_{levels}: {value}\n".encode()
    if kind == "bomb":
        return data + _bomb(edit[1], edit[2]).encode()
    if kind == "alias-chain":  # every level nests the one before: deep once expanded, short as text
        width, levels = edit[1], edit[2]
        lines = [f"c0: &c0 {'[' * width}x{']' * width}"]
        lines += [f"c{i}: &c{i} {'[' * width}*c{i - 1}{']' * width}" for i in range(1, levels + 1)]
        return data + ("\n".join(lines) + "\n").encode()
    if kind == "recursive":
        return data + (b"loop: &loop [1, *loop]\n" if edit[1] else b"loop: &loop {a: *loop}\n")
    if kind == "cut":
        return data[: int(edit[1] * len(data))]
    if kind == "duplicate-line":
        end = data.find(b"\n", line)
        return data[: end + 1] + data[line : end + 1] + data[end + 1 :] if end >= 0 else data + data
    if kind == "tab":
        return data[:line] + b"\t" + data[line:]
    return data + edit[1].encode()


@PROFILE
@given(target=st.sampled_from(TARGETS), edit=TEXT_EDITS, position=st.floats(min_value=0, max_value=1))
def test_hostile_yaml_text(
    target: tuple[str, str], edit: tuple[Any, ...], position: float, capsys: pytest.CaptureFixture[str]
) -> None:
    """Binary junk, bytes that are not UTF-8, deep nesting, alias bombs, recursion, truncation, tabs, more
    than one document: edits of the file's text that no dict could express."""
    base, name = target
    with _copy(base) as inv:
        (inv / name).write_bytes(_edit(TEXTS[base][name], edit, position))
        started = time.perf_counter()
        _judge(inv, capsys)
        assert time.perf_counter() - started < 30, "refusing took too long"


# ---- the limits, one by one, with their messages ---------------------------------------------------------
def _validate(inv: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    rc = main(["validate", "-i", str(inv)])
    err = capsys.readouterr().err
    assert rc == 1, err
    assert not EXCEPTION.search(err), err
    return [line.removeprefix(str(inv) + "/") for line in err.splitlines()[:-1]]


CASES: list[tuple[str, str, bytes, str]] = [
    (
        "deep list (was a RecursionError)",
        "fabric.yaml",
        b"name: " + b"[" * 999 + b"]" * 999 + b"\n",
        "fabric.yaml: line 1 column 70: too deeply nested (more than 64 levels)",
    ),
    (
        "deep list past libyaml's own limit",
        "fabric.yaml",
        b"name: " + b"[" * 100_000 + b"]" * 100_000 + b"\n",
        "fabric.yaml: line 1 column ",  # libyaml stops first; the message is ours
    ),
    (
        "deep mapping",
        "hosts.yaml",
        b"leaf1: " + b"{a: " * 70 + b"1" + b"}" * 70 + b"\n",
        "hosts.yaml: line 1 column 260: too deeply nested (more than 64 levels)",
    ),
    (
        "deep once aliases are expanded",
        "fabric.yaml",
        b"a: &a " + b"[" * 40 + b"x" + b"]" * 40 + b"\nb: " + b"[" * 40 + b"*a" + b"]" * 40 + b"\n",
        "fabric.yaml: line 2 column 44: too deeply nested (more than 64 levels, counting what *a expands to)",
    ),
    (
        "billion laughs",
        "fabric.yaml",
        _bomb(10, 9).encode(),
        "fabric.yaml: line 7 column 10: more than 2,000,000 values once aliases are expanded (*l5 alone is 1,111,111)",
    ),
    (
        "billion laughs through merge keys",
        "groups.yaml",
        b"m0: &m0 {a: 1, b: 2}\n"
        + b"".join(f"m{i}: &m{i} {{<<: [{', '.join([f'*m{i - 1}'] * 10)}]}}\n".encode() for i in range(1, 10)),
        "groups.yaml: line 7 column ",
    ),
    (
        "recursive alias",
        "fabric.yaml",
        b"name: &a [1, *a]\n",
        "fabric.yaml: line 1 column 14: the alias *a refers to a node that contains it: a recursive structure",
    ),
    (
        "not UTF-8",
        "hosts.yaml",
        b"leaf1:\n  hostname: caf\xe9\n",
        "hosts.yaml: line 2 column 16: not UTF-8 text (byte 0xe9): save the file as UTF-8",
    ),
    (
        "binary",
        "cabling.yaml",
        b"\x7fELF\x02\x01\x01\x00\x00\x00",
        "cabling.yaml: line 1 column 1: the character U+007F is not allowed in YAML (is this a text file?)",
    ),
    (
        "a NUL byte",
        "fabric.yaml",
        b"name: pod\x001\n",
        "fabric.yaml: line 1 column 10: the character U+0000 is not allowed in YAML (is this a text file?)",
    ),
    (
        "a tab in the indentation",
        "hosts.yaml",
        b"leaf1:\n\thostname: 192.0.2.11\n",
        "hosts.yaml: line 2 column 1: a tab character: YAML indents with spaces, never tabs",
    ),
    (
        "two documents",
        "fabric.yaml",
        b"name: a\n---\nname: b\n",
        "fabric.yaml: line 2 column 1: a second YAML document ('---'): an inventory file holds exactly one",
    ),
    (
        "a list, not a mapping",
        "hosts.yaml",
        b"- leaf1\n- leaf2\n",
        "hosts.yaml: (root): expected mapping, got list ['leaf1', 'leaf2']",
    ),
    (
        "a number as a key",
        "groups.yaml",
        b"1.5:\n  data: {role: leaf}\n",
        "groups.yaml: line 1 column 1: the key '1.5' is a number, not a name: put it in quotes if it is meant as one",
    ),
    (
        "a date as a host name",
        "hosts.yaml",
        b"2024-01-01:\n  hostname: 192.0.2.1\n",
        "hosts.yaml: line 1 column 1: the key '2024-01-01' is a date, not a name",
    ),
    (
        "a Python object",
        "fabric.yaml",
        b"name: !!python/object/apply:os.system ['id']\n",
        "fabric.yaml: line 1 column 7: the tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed",
    ),
    (
        "a list as a key",
        "hosts.yaml",
        b"? [a, b]\n: 1\n",
        "hosts.yaml: line 1 column 3: a key must be a name, not a list",
    ),
    (
        "a date that does not exist",
        "fabric.yaml",
        b"name: 2024-13-45\n",
        "fabric.yaml: line 1 column 7: cannot read the value '2024-13-45': month must be in 1..12",
    ),
    (
        "a 5000-digit number",
        "fabric.yaml",
        b"name: " + b"9" * 5000 + b"\n",
        "fabric.yaml: line 1 column 7: cannot read the value '9999999999",
    ),
    (
        "a huge string is shown by its start",
        "fabric.yaml",
        b"name: [" + b"a" * 1_000_000 + b"]\n",
        "fabric.yaml: name: expected string, got list ['aaaaaaaaaaaaa",
    ),
]


@pytest.mark.parametrize(("name", "file", "content", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_limit_and_refusal(
    name: str, file: str, content: bytes, expected: str, inventory_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (inventory_copy / file).write_bytes(content)
    started = time.perf_counter()
    problems = _validate(inventory_copy, capsys)
    assert time.perf_counter() - started < 5
    assert any(p.startswith(expected) for p in problems), problems
    assert all(len(p) < 300 for p in problems), problems


def test_an_alias_bomb_is_refused_before_anything_is_built(
    inventory_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """10**9 values in 500 bytes: refused by the event scan in milliseconds; the loader never runs."""
    (inventory_copy / "fabric.yaml").write_text(_bomb(10, 9))
    monkeypatch.setenv("FABCONF_CACHE", "off")  # the other files are parsed here, not taken from the compile cache
    calls: list[str] = []
    real_load = yaml.load

    def load(text, **kw):
        calls.append(text)
        return real_load(text, **kw)

    monkeypatch.setattr(yaml, "load", load)
    started = time.perf_counter()
    problems = _validate(inventory_copy, capsys)
    assert time.perf_counter() - started < 1
    assert any("more than 2,000,000 values" in p for p in problems)
    assert calls, "the other files were loaded"
    assert not [text for text in calls if "&l0" in text]


def test_sixteen_mib_is_refused_without_reading_it_whole(
    inventory_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with (inventory_copy / "hosts.yaml").open("wb") as f:
        f.truncate(limits.MAX_FILE_BYTES + 1)  # sparse: 16 MiB of NUL bytes, nothing written
    assert _validate(inventory_copy, capsys) == [
        "hosts.yaml: (file): larger than 16 MiB, the limit for one inventory file"
    ]


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_a_device_file_or_a_fifo_is_not_read(
    kind: str, inventory_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """hosts.yaml -> /dev/zero would be read forever; opening a FIFO blocks until someone writes to it."""
    (inventory_copy / "hosts.yaml").unlink()
    if kind == "fifo":
        os.mkfifo(inventory_copy / "hosts.yaml")
    else:
        (inventory_copy / "hosts.yaml").symlink_to(kind)
    assert _validate(inventory_copy, capsys) == ["hosts.yaml: (file): not a regular file"]


def test_the_largest_example_fits_the_limits_many_times() -> None:
    """The limits must hold a 32,768-GPU fabric with room to spare: its files, scaled from the examples."""
    spec = importlib.util.spec_from_file_location("genfabric", ROOT / "bench" / "genfabric.py")
    assert spec and spec.loader
    genfabric = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(genfabric)
    with tempfile.TemporaryDirectory() as tmp:
        counts = genfabric.generate(Path(tmp), hosts=512, rails=8)  # 1/8 of 32,768 GPUs
        assert counts["gpus"] == 4096
        cabling = Path(tmp) / "cabling.yaml"
        nodes = sum(1 for e in yaml.parse(cabling.read_text()) if isinstance(e, yaml.NodeEvent))
        assert cabling.stat().st_size * 8 * 4 < limits.MAX_FILE_BYTES
        assert nodes * 8 * 4 < limits.MAX_NODES


def test_merge_keys_still_work(inventory_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``<<: *anchor`` (a YAML merge) was refused by the duplicate-key loader; it merges, and may be overridden."""
    groups = inventory_copy / "groups.yaml"
    text = groups.read_text()
    assert "\nleaves:\n" in text
    groups.write_text(text.replace("\nleaves:\n", "\nleaves: &leaves\n", 1) + "extra_leaves:\n  <<: *leaves\n")
    assert main(["validate", "-i", str(inventory_copy)]) == 0, capsys.readouterr().err
