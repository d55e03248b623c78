"""The documentation site's promises that need no mkdocs to check: the schema page is what the schemas say, every
page of the nav exists, the README stays a map, and every docs page the code cites (with its section) exists.

`mkdocs build --strict` in .ci/run checks the rest (links, anchors, the theme)."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "mkdocs.yml").exists())
DOCS = ROOT / "docs"


def _generator() -> ModuleType:
    path = DOCS / "hooks" / "schema_reference.py"
    spec = importlib.util.spec_from_file_location("schema_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _nav_pages(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for item in node:
            yield from _nav_pages(item)
    elif isinstance(node, dict):
        for value in node.values():
            yield from _nav_pages(value)


def test_the_schema_rules_page_is_generated_from_the_schemas() -> None:
    gen = _generator()
    assert gen.schema_files(), "no schema found with the glob"
    assert not gen.stale(), "run `python docs/hooks/schema_reference.py` to rewrite docs/reference/schema-rules.md"


def test_every_schema_has_its_section() -> None:
    gen = _generator()
    page = (DOCS / "reference" / "schema-rules.md").read_text(encoding="utf-8")
    for path in gen.schema_files():
        assert f"## `{path.stem}.yaml`" in page


def test_every_page_of_the_nav_exists() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    generated = {"changelog.md": "CHANGELOG.md", "contributing.md": "CONTRIBUTING.md"}  # docs/hooks/root_pages.py
    pages = list(_nav_pages(config["nav"]))
    assert len(pages) >= 25
    for page in pages:
        assert (ROOT / generated[page]).exists() if page in generated else (DOCS / page).exists(), page


def test_the_theme_builds_offline() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["theme"]["font"] is False  # no Google Fonts
    plugins = [p if isinstance(p, str) else next(iter(p)) for p in config.get("plugins", [])]
    assert set(plugins) <= {"search"}, plugins  # nothing that fetches (social cards, …)


def test_the_readme_is_a_map() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


def test_every_docs_page_the_code_cites_exists_with_its_section() -> None:
    cited = re.compile(r"(docs/[A-Za-z0-9_/.-]+\.md)((?:\s*(?:§|section )[0-9.]+(?:\s*(?:,|and)\s*§?[0-9.]+)*)?)")
    sources = [p for d in ("fabconf", "fabconf_lab", "tests", "bench") for p in (ROOT / d).rglob("*.py")]
    assert sources
    for source in sources:
        for match in cited.finditer(source.read_text(encoding="utf-8")):
            page = ROOT / match.group(1)
            assert page.exists(), f"{source.relative_to(ROOT)} cites {match.group(1)}, which does not exist"
            headings = {m.group(1) for m in re.finditer(r"^#+ ([0-9]+(?:\.[0-9]+)*)\.? ", page.read_text(), re.M)}
            for number in re.findall(r"[0-9]+(?:\.[0-9]+)?", match.group(2)):
                assert number in headings, f"{source.relative_to(ROOT)} cites §{number} of {match.group(1)}"


def test_a_cited_section_names_its_page_by_path() -> None:
    """A bare page name with a section once pointed at a file outside the repository: a citation names its docs path."""
    bare = re.compile(r"(?<![\w/.-])([\w-]+\.md)\s*(?:§|section )")
    for source in [p for d in ("fabconf", "fabconf_lab", "tests", "bench") for p in (ROOT / d).rglob("*.py")]:
        found = bare.findall(source.read_text(encoding="utf-8"))
        assert not found, f"{source.relative_to(ROOT)} cites {found} without its path (docs/...)"
