"""Reading a large inventory's files in forked workers (``fabconf.compile.inventory._read_files``, issue 42) gives
the same values, digests, entries and problems, in the same order, as reading them one after another."""

from __future__ import annotations

import shutil
from pathlib import Path

import jinja2
import pytest
from pristine import EXAMPLE

from fabconf.compile import inventory
from fabconf.compile.problems import Problems
from fabconf.compile.render import environment


def _load(inv: Path) -> tuple[inventory.RawInventory, list[str]]:
    problems = Problems()
    raw = inventory.load(inv, problems)
    return raw, [str(p) for p in problems]


@pytest.mark.parametrize("broken", [False, True])
def test_files_read_in_workers_read_the_same(broken: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABCONF_CACHE", "off")
    inv = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, inv)
    if broken:  # a problem in two files: both reported, in the files' order, with their places
        (inv / "hosts.yaml").write_text("leaf1:\n  hostname: [1.2.3.4\n")
        (inv / "fabric.yaml").write_text("mtu: 1\nmtu: 2\n")
    one, one_problems = _load(inv)
    monkeypatch.setattr(inventory, "PARALLEL_BYTES", 0)
    many, many_problems = _load(inv)
    assert many_problems == one_problems
    assert len(one_problems) == (2 if broken else 0)
    assert many.data == one.data and many.digests == one.digests and many.entries == one.entries
    assert list(many.data) == list(one.data) and list(many.hosts) == list(one.hosts)


def test_a_dict_key_reads_as_jinja2_reads_it() -> None:
    """The renderer reads ``item.key`` of a dict by key first (no AttributeError raised and caught): every lookup
    renders what Jinja2's own Environment renders, a dict method's name included."""
    plain = jinja2.Environment(undefined=jinja2.StrictUndefined)
    ours = environment()
    data = {
        "d": {"a": 1, "items": "shadowed?", "keys": 2, "nested": {"b": [1, 2]}, 3: "int key"},
        "s": "text",
        "n": None,
    }
    for source in (
        "{{ d.a }}",
        "{{ d['items'] }}",
        "{{ d.items() | list | length }}",
        "{{ d.keys is callable }}",
        "{{ d.get('a') }}",
        "{{ d.nested.b[1] }}",
        "{{ s.upper() }}",
        "{{ d.nested.missing is defined }}",
    ):
        assert ours.from_string(source).render(data) == plain.from_string(source).render(data), source
    for source in ("{{ d.missing }}", "{{ n.a }}"):
        with pytest.raises(jinja2.UndefinedError) as want:
            plain.from_string(source).render(data)
        with pytest.raises(jinja2.UndefinedError) as got:
            ours.from_string(source).render(data)
        assert str(got.value) == str(want.value)


def test_the_quote_filter_writes_what_json_dumps_writes() -> None:
    """``| q`` of a str takes the JSON encoder's string function directly: the same text as ``json.dumps``, for
    every kind of value a template quotes."""
    import json

    from fabconf.compile.render import _quote

    class Name(str):
        pass

    for value in (
        "",
        "leaf1",
        'say "hi"',
        "back\\slash",
        "é ü ß",
        "日本",
        "\U0001f600",
        "/",
        Name("x"),
        3,
        2.5,
        True,
        None,
    ):
        assert _quote(value) == json.dumps(value), value
