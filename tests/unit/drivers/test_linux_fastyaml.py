"""The GPU host's comparable documents printed without PyYAML's emitter: byte for byte what yaml.dump prints."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabconf.compile.yamlc import SAFE_LOADER
from fabconf.platform.linux import fastyaml
from fabconf.platform.linux.state import block_yaml, comparable_data, comparable_documents, same

WORDS = [
    "",
    "dscp",
    "pcp",
    "0,0,0,1,0,0,0,0",
    "True",
    "False",
    "true",
    "yes",
    "no",
    "off",
    "null",
    "~",
    "0",
    "1",
    "010",
    "0x1f",
    "1.5",
    "1e3",
    "1_000",
    "0b101",
    "1.",
    "6.0e+3",
    "0x_1",
    "1__0",
    "x=y",
    "a-",
    "a.",
    "/",
    "_",
    "ON",
    "Null",
    "NO",
    "y",
    "n",
    "0o7",
    "1:20",
    "0.0.0.0/0",
    "a b:",
    "a :b",
    "a:b c",
    "yes no",
    "1 2",
    "a b c",
    "2026-12-05 12:30:00",
    "2026-12-05t12:30:00z",
    "1:2:3",
    "x/y: z",
    "a, b",
    "a - b",
    "a ,b",
    "a :",
    "x" * 60 + " " + "y" * 45,
    ".inf",
    "2026-12-05",
    "12:30",
    "10.0.0.1/31",
    "ens1f0np0",
    "mlx5_0",
    "leaf1:Ethernet1",
    "a: b",
    "a #b",
    "#c",
    "- x",
    "-x",
    "? q",
    ":x",
    "x:",
    "[a]",
    "{a}",
    "a,b",
    "*ref",
    "&anchor",
    "!tag",
    "|",
    ">",
    "'quoted'",
    '"dq"',
    "it's",
    "back\\slash",
    "%pct",
    "@at",
    "`tick",
    " lead",
    "trail ",
    "two  spaces",
    "tab\there",
    "é unicode",
    "日本",
    "\u2028sep",
    "bell\x07",
    "NCCL_IB_HCA=mlx5_0,mlx5_1\nNCCL_IB_TC=106\n",
    "one\n",
    "no trailing\nbreak",
    "two breaks\n\n",
    "\nleading break\n",
    "  indented\nblock\n",
    "trailing space \nline\n",
    "empty\n\nline\n",
    "10.0.0.0/8 via 10.1.0.1 dev ens1f0np0 table 101",
    "32765: from 10.1.0.2 lookup 101",
    "net.ipv4.conf.ens1f0np0.arp_announce",
    "x" * 90,
    "word " * 30,
    "y" * 130,
]
KEYS = [*[w for w in WORDS if "\n" not in w][:40], "hostname", "nics", "qos", "mlxconfig", "ADVANCED_PCI_SETTINGS"]


def _scalar(rng: random.Random) -> Any:
    kind = rng.random()
    if kind < 0.55:
        return rng.choice(WORDS[:-3] if rng.random() < 0.95 else WORDS)
    if kind < 0.75:
        return rng.choice([0, 1, -1, 7, 9000, 4096, 10**12])
    if kind < 0.85:
        return rng.choice([True, False])
    if kind < 0.995:
        return None
    return rng.choice([1.5, 0.0])  # outside the fast path's shapes: printed by PyYAML


def _doc(rng: random.Random, depth: int) -> Any:
    kind = rng.random()
    if depth > 3 or kind < 0.4:
        return _scalar(rng)
    if kind < 0.7:
        return {rng.choice(KEYS): _doc(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    if kind < 0.85:
        return [_scalar(rng) for _ in range(rng.randint(0, 5))]  # mostly flow
    return [_doc(rng, depth + 1) for _ in range(rng.randint(0, 4))]


@pytest.mark.parametrize("seed", range(8))
def test_block_dump_prints_what_yaml_dump_prints(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(400):
        doc = {rng.choice(KEYS): _doc(rng, 0) for _ in range(rng.randint(0, 6))}
        assert fastyaml.block_dump(doc, block_yaml) == block_yaml(doc), doc


def test_block_dump_takes_the_fast_path_for_a_host_document() -> None:
    doc = {
        "hostname": "gpu-001",
        "nics": [
            {"netdev": "ens1f0np0", "rdma": "mlx5_0", "mtu": 9000, "address": "10.1.0.2/31"},
            {"netdev": "ens2f0np0", "rdma": "mlx5_1", "mtu": 9000, "address": None, "mlxconfig": {}},
        ],
        "qos": {"trust": "dscp", "pfc": "0,0,0,1,0,0,0,0", "dscp2prio": [[d, d >> 3] for d in range(64)]},
        "ecn": {"roce_np_enable": [3], "roce_rp_enable": [], "cnp_dscp": 48},
        "roce_tos": {"cma_roce_tos": 106, "traffic_class": 0},
        "mlxconfig": {"ROCE_CC_PRIO_MASK_P1": "255", "LINK_TYPE_P1": "ETH(2)", "ADVANCED_PCI_SETTINGS": "True"},
        "nccl_conf": "NCCL_IB_HCA=mlx5_0,mlx5_1\nNCCL_IB_TC=106\n",
        "routing": {"rules": ["32765: from 10.1.0.2 lookup 101"], "routes": []},
        "sysctl": {"net.ipv4.conf.ens1f0np0.arp_announce": 2},
    }
    calls: list[Any] = []

    def dump(value: Any) -> str:
        calls.append(value)
        return block_yaml(value)

    assert fastyaml.block_dump(doc, dump) == block_yaml(doc)
    assert doc not in calls  # each scalar asked once, never the whole document
    again = len(calls)
    assert fastyaml.block_dump(doc, dump) == block_yaml(doc)
    assert len(calls) == again  # the second host's document asks nothing


def test_comparable_documents_unchanged() -> None:
    running = {"hostname": "h", "qos": {"trust": "pcp", "pfc": "0,0,0,0,0,0,0,0"}, "roce_tos": 0, "extra": 1}
    desired = {"hostname": "h", "qos": {"trust": "dscp", "pfc": "0,0,0,1,0,0,0,0"}, "roce_tos": 106}
    before, after = comparable_documents(running, desired)
    assert before == "hostname: h\nqos:\n  trust: pcp\n  pfc: 0,0,0,0,0,0,0,0\nroce_tos: 0\n"
    assert after == "hostname: h\nqos:\n  trust: dscp\n  pfc: 0,0,0,1,0,0,0,0\nroce_tos: 106\n"


# -- reading ---------------------------------------------------------------------------------------------------------

GOLDEN = sorted(Path(__file__).parents[2].glob("golden/**/devices/*gpu*.yaml"))
TRICKY = [
    '"x"',
    '"a\\"b"',
    '"\\u00e9"',
    "'single'",
    "x",
    "yes",
    "Yes",
    "No",
    "NULL",
    "~",
    "010",
    "0x10",
    "0o7",
    "1_000",
    "+1",
    "-0",
    "1.5",
    ".inf",
    "2026-12-05",
    "[1,2]",
    "[1, x]",
    '["a", "b"]',
    "{a: 1}",
    "{}",
    "[]",
    "|",
    "|-",
    "|2",
    ">",
    "&a 1",
    "*a",
    "!!str 1",
    "1 # c",
    '"x" # c',
    "- 1",
    "true",
    "false",
    "null",
    "-1",
    "7",
    '"a: b"',
    '""',
    ":",
    "? k",
    "%x",
    "@x",
    "`x",
]


def _strict(value: Any) -> Any:
    """A value with every type and every mapping's key order made visible, for an exact comparison."""
    if isinstance(value, dict):
        return ("dict", [(_strict(k), _strict(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_strict(v) for v in value])
    return (type(value).__name__, value)


def _both(text: str) -> tuple[Any, Any]:
    try:
        expected = _strict(yaml.load(text, Loader=SAFE_LOADER))
    except yaml.YAMLError:
        expected = "error"
    try:
        got = _strict(fastyaml.load(text, SAFE_LOADER))
    except yaml.YAMLError:
        got = "error"
    return got, expected


def _mutate(rng: random.Random, text: str, tricky: list[str] = TRICKY) -> str:
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    kind = rng.randrange(7)
    if kind == 0:  # a tricky value or key
        line = lines[i]
        if ": " in line:
            key, _, _value = line.partition(": ")
            lines[i] = (
                key + ": " + rng.choice(tricky)
                if rng.random() < 0.7
                else line.replace(key.strip(), rng.choice(tricky), 1)
            )
        else:
            lines[i] = line[: len(line) - len(line.lstrip())] + "- " + rng.choice(tricky)
    elif kind == 1:  # indentation
        lines[i] = " " * rng.choice([0, 1, 2, 3, 4, 6]) + lines[i].lstrip(" ")
    elif kind == 2:
        lines.insert(i, lines[i])
    elif kind == 3:
        del lines[i]
    elif kind == 4:
        lines.insert(i, " " * rng.choice([0, 2, 4]) + rng.choice(["# c", "", " ", "---", "...", "\t", "- x", "k: |"]))
    else:  # a character
        line = lines[i]
        at = rng.randrange(len(line) + 1)
        lines[i] = line[:at] + rng.choice(" :#-\"'[]{},|>&*!%@`\\\t\re\u00e9\x07") + line[at + rng.randrange(2) :]
    return "\n".join(lines)


def test_load_reads_every_rendered_host_document_itself() -> None:
    assert GOLDEN
    for path in GOLDEN:
        text = path.read_text()
        assert _strict(fastyaml._Reader(text).document()) == _strict(yaml.load(text, Loader=SAFE_LOADER)), path


@pytest.mark.parametrize("seed", range(6))
def test_load_reads_what_yaml_load_reads(seed: int) -> None:
    rng = random.Random(seed)
    texts = [path.read_text() for path in GOLDEN]
    fast = 0
    for _ in range(300):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            text = _mutate(rng, text)
        got, expected = _both(text)
        assert got == expected, text
        try:
            fastyaml._Reader(text).document()
            fast += 1
        except (fastyaml._Outside, yaml.YAMLError):
            pass
    assert fast > 20  # the mutations that stay in the subset were read without PyYAML


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\n",
        "a:\n",
        "a:\nb: 2\n",
        "a:\n  - 1\n  - [1, 2]\n  - []\n  - {}\n  - x: 1\n    y:\n      z: null\n",
        "a:\n  []\n",
        "a:\n  {}\n",
        "a:\n  []\n  b: 1\n",
        "a: |\n  x\n  # y\n   z\nb: 1\n",
        "a: |\n  x\n# c\nb: 1\n",
        "a:\n  - k: |\n      x\n    j: 1\n",
        "a:\n  - k: |\n    x\n",
        "a: |\n x\n",
        "a: |\nb: 1\n",
        '"a": 1\n"a": 2\nb: 3\n',
        '"": 1\n',
        "a: 1",
        "# only a comment\n",
        "- 1\n",
        "a:\n- 1\n",
        "a:\n  - 1\n - 2\n",
        "a: b: c\n",
        "a:  1\n",
        "a:1\n",
        'A_1: "x y"\n',
        "a: [1, true, null, -3]\n",
        "a: [1,2]\n",
        "  a: 1\n",
        "a: 1\n  b: 2\n",
    ],
)
def test_load_constructs(text: str) -> None:
    got, expected = _both(text)
    assert got == expected


def test_same_is_the_same_text() -> None:
    rng = random.Random(7)
    docs = [{rng.choice(KEYS): _doc(rng, 0) for _ in range(rng.randint(0, 4))} for _ in range(300)]
    docs += [{"a": 1}, {"a": True}, {"a": 1.0}, {"a": "1"}, {"a": 1, "b": 2}, {"b": 2, "a": 1}, {"a": [True]}]
    for a in docs:
        for b in [*docs[-8:], a, copy.deepcopy(a)]:
            if same(a, b):
                assert block_yaml(a) == block_yaml(b)
        assert same(a, copy.deepcopy(a))
    assert not same({"a": 1}, {"a": True}) and not same({"a": 1, "b": 2}, {"b": 2, "a": 1})
    before, after = comparable_data({"hostname": "h", "mtu": 9000, "x": 1}, {"hostname": "h", "mtu": 9000})
    assert same(before, after)


# -- NVUE's ``- set:`` form (Cumulus ``tree_yaml``): ``default_flow_style=False`` at the emitter's width of 80 --------
def _nvue_ref(tree: dict[str, Any]) -> str:
    from fabconf.compile.yamlc import SAFE_DUMPER
    from fabconf.platform.cumulus.plan import sort_tree

    if not tree:
        return ""
    return yaml.dump([{"set": sort_tree(tree)}], Dumper=SAFE_DUMPER, sort_keys=False, default_flow_style=False)


@pytest.mark.parametrize("seed", range(6))
def test_tree_yaml_prints_what_yaml_dump_prints(seed: int) -> None:
    """Random trees (lists in block style, empty lists and mappings, deep nesting that reaches the width, every
    awkward scalar and key): the same text as PyYAML's emitter."""
    from fabconf.platform.cumulus.plan import tree_yaml

    rng = random.Random(1000 + seed)
    for _ in range(300):
        tree = {rng.choice(KEYS): _doc(rng, rng.choice([0, 0, 1, 2])) for _ in range(rng.randint(0, 6))}
        assert tree_yaml(tree) == _nvue_ref(tree), tree


def test_tree_yaml_takes_the_fast_path_for_every_golden_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every rendered Cumulus golden prints the same as PyYAML, and once its scalars are known without asking
    PyYAML for the whole document."""
    from fabconf.platform.cumulus import plan

    goldens = [p for p in Path("tests/golden").rglob("*.yaml") if "- set:" in p.read_text()]
    assert goldens
    trees = [plan.parse_document(p.read_text()) for p in goldens]
    for tree in trees:
        assert plan.tree_yaml(tree) == _nvue_ref(tree)
    asked: list[Any] = []
    dump = plan._dump

    def counted(doc: Any) -> str:
        asked.append(doc)
        return dump(doc)

    monkeypatch.setattr(plan, "_dump", counted)
    for tree in trees:
        assert plan.tree_yaml(tree) == _nvue_ref(tree)
    assert not [doc for doc in asked if isinstance(doc, list)]  # never the whole document


# -- reading NVUE's ``- set:`` form (Cumulus ``parse_document``: ``plan._NvueLoader``'s YAML 1.2 rules) ----------------
def _nvue_goldens() -> list[str]:
    texts = [p.read_text() for p in sorted(Path("tests/golden").rglob("*.yaml"))]
    return [t for t in texts if "- set:" in t]


def _nvue_both(text: str) -> tuple[Any, Any]:
    from fabconf.platform.cumulus import fastread, plan

    try:
        expected = _strict(yaml.load(text, Loader=plan._NvueLoader))
    except yaml.YAMLError:
        expected = "error"
    fast = fastread.read(text)
    return (expected if fast is None else _strict(fast)), expected


def test_fastread_reads_every_rendered_switch_document_itself() -> None:
    from fabconf.platform.cumulus import fastread, plan

    goldens = _nvue_goldens()
    assert goldens
    for text in goldens:
        fast = fastread.read(text)
        assert fast is not None
        assert _strict(fast) == _strict(yaml.load(text, Loader=plan._NvueLoader))


NVUE_TRICKY = [*TRICKY, "true", "on", "off", "null", "Null", "-0", "+1", "007", "1.5", "1e3", "a-b", "x_y", "9a", "{}"]


@pytest.mark.parametrize("seed", range(6))
def test_fastread_reads_what_the_nvue_loader_reads(seed: int) -> None:
    """Mutated switch documents (values and keys YAML 1.1 and 1.2 read differently, indentation, duplicates,
    comments, blank lines, stray characters): what fastread reads is what PyYAML's NVUE loader reads, and text PyYAML
    refuses is never read by it."""
    from fabconf.platform.cumulus import fastread

    rng = random.Random(2000 + seed)
    goldens = _nvue_goldens()
    fast = 0
    for _ in range(300):
        text = rng.choice(goldens)
        for _ in range(rng.randint(1, 3)):
            text = _mutate(rng, text, NVUE_TRICKY)
        got, expected = _nvue_both(text)
        assert got == expected, text
        fast += fastread.read(text) is not None
    assert fast > 30  # the fast path read a good share of the mutated documents itself


@pytest.mark.parametrize("word", NVUE_TRICKY)
def test_fastread_reads_each_word_as_the_nvue_loader_does(word: str) -> None:
    """Every tricky word as a key and as a value (``NULL`` as a key is null, ``true`` a string, ``+1`` the number
    1 to the NVUE loader): read the same, or left to PyYAML."""
    for text in (f"- set:\n    system:\n      {word}: 1\n", f"- set:\n    system:\n      hostname: {word}\n"):
        got, expected = _nvue_both(text)
        assert got == expected, text
