"""The Cumulus plan's comparisons made cheaper for issue 42 (``same`` without building canonical forms, a cached
``natural_key``) against what they were: ``canonical(a) == canonical(b)`` and the uncached list key, on random
NVUE-like trees with text and number keys, booleans, numbers as text and the reverse."""

from __future__ import annotations

import random
import re
from typing import Any

from fabconf.platform.cumulus.plan import MISSING, canonical, changed_paths, diff_lines, natural_key, same


def _old_natural_key(text: str) -> list[Any]:
    return [(0, int(tok), "") if tok.isdigit() else (1, 0, tok) for tok in re.split(r"(\d+)", text) if tok]


LEAVES: list[Any] = [True, False, "on", "off", 9216, "9216", 1.5, "1.5", None, "None", "", "swp1", 0, "0"]
KEYS: list[Any] = ["swp1", "swp2", "swp10", "swp1s0", "mtu", "vrf", "default", "10", 10, "bond0", "ipv4"]


def _tree(rng: random.Random, depth: int = 0) -> Any:
    if depth > 3 or rng.random() < 0.3:
        return rng.choice(LEAVES)
    return {rng.choice(KEYS): _tree(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _mutate(rng: random.Random, node: Any) -> Any:
    if not isinstance(node, dict) or not node or rng.random() < 0.2:
        return rng.choice([*LEAVES, {}, MISSING]) if rng.random() < 0.5 else node
    out = dict(node)
    key = rng.choice(list(out))
    out[key] = _mutate(rng, out[key])
    if rng.random() < 0.2:
        out[rng.choice(KEYS)] = rng.choice(LEAVES)
    return out


def test_same_is_canonical_equality() -> None:
    rng = random.Random(42)
    seen = set()
    for _ in range(3000):
        a = _tree(rng)
        b = a if rng.random() < 0.2 else _mutate(rng, a) if rng.random() < 0.7 else _tree(rng)
        expected = canonical(a) == canonical(b)
        assert same(a, b) is expected, (a, b)
        assert same(b, a) is expected, (b, a)
        seen.add(expected)
    assert seen == {True, False}


def test_changed_paths_and_diff_lines_keep_their_order() -> None:
    rng = random.Random(7)
    for _ in range(300):
        a = _text_keys({k: _tree(rng) for k in rng.sample(KEYS, 4)})
        b = _text_keys(_mutate(rng, a))
        if not isinstance(b, dict):
            continue
        paths = changed_paths(a, b)
        assert all(not same(_at(a, p), _at(b, p)) for p in paths)
        assert diff_lines(a, b) == diff_lines(a, b)


def _text_keys(node: Any) -> Any:
    """A tree as the driver holds one: text keys (``_clean``), leaves as they came."""
    if isinstance(node, dict):
        return {str(k): _text_keys(v) for k, v in node.items()}
    return node


def _at(tree: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(tree, dict) or part not in tree:
            return MISSING
        tree = tree[part]
    return tree


def test_natural_key_orders_as_before() -> None:
    rng = random.Random(3)
    names = [f"{rng.choice(['swp', 'bond', 'vlan', 'Ethernet', ''])}{rng.randint(0, 70)}{rng.choice(['', 's1', '/1'])}"]
    names += [f"swp{rng.randint(0, 70)}s{rng.randint(0, 3)}" for _ in range(200)] + ["", "a", "10", "swp", "1a2b"]
    for _ in range(50):
        rng.shuffle(names)
        assert sorted(names, key=natural_key) == sorted(names, key=_old_natural_key)
    assert natural_key("swp10") == tuple(_old_natural_key("swp10"))
