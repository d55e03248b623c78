"""Plain ``python -m pytest`` collects the whole suite: pytest's default (``prepend``) import mode imports each test
module by its basename from a folder without ``__init__.py``, so two test modules with one basename (in unit/ and
e2e/, say) stop the collection with "import file mismatch"."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_module_has_its_own_basename() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(TESTS.rglob("test_*.py")):
        where[path.name].append(str(path.relative_to(TESTS)))
    shared = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not shared, f"rename one of each: {shared}"
