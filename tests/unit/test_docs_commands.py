"""The docs against the code (issue #40): the options page is written from the argparse parser and must be
current, the commands page names every command, and every link from the code, the examples and the units into
the docs resolves (fabric.yaml and the systemd timer pointed at README sections that no longer existed)."""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from fabconf.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ["fabconf", "fabconf_lab", "contrib", "examples", "inventory", "tasks", "templates", "scripts", "bench"]
TEXT = {".py", ".yaml", ".yml", ".j2", ".service", ".timer", ".md", ".cfg", ""}
DOC_LINK = re.compile(r"(?<![\w/.])(docs/[\w/.-]+\.md)(?:#([\w-]+)|,? \"([^\"]+)\")?")
README_SECTION = re.compile(r"(?<![\w/.])README(?:\.md)?,? \"([^\"]+)\"")


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "commands_reference", ROOT / "docs" / "hooks" / "commands_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_options_page_is_generated_from_the_parser() -> None:
    assert not _generator().stale(), (
        "run `python docs/hooks/commands_reference.py` to rewrite docs/reference/options.md"
    )


def test_the_options_page_has_the_options_the_commands_page_lacked() -> None:
    page = (ROOT / "docs" / "reference" / "options.md").read_text()
    monitoring = page.split("## fabconf monitoring\n", 1)[1].split("\n## ", 1)[0]
    for option in ("`--lab`", "`--state`", "`--textfile-target`"):
        assert option in monitoring
    assert "`--nccl`" in page.split("## fabconf preflight\n", 1)[1].split("\n## ", 1)[0]


def test_the_commands_page_names_every_command() -> None:
    page = (ROOT / "docs" / "reference" / "commands.md").read_text()
    parser = build_parser()
    commands = next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [name for name in commands if f"`fabconf {name}" not in page]
    assert not missing, f"docs/reference/commands.md lacks: {missing}"
    assert "(options.md)" in page


def _headings(page: Path) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^#{1,6} (.+)$", page.read_text(), re.M)]


def _slug(heading: str) -> str:  # mkdocs' default (Python-Markdown's toc): lower case, words joined by '-'
    text = re.sub(r"[^\w\s-]", "", heading.lower())
    return re.sub(r"[-\s]+", "-", text).strip("-")


def _sources() -> list[Path]:
    return [
        path
        for top in SOURCES
        for path in sorted((ROOT / top).rglob("*"))
        if path.is_file() and path.suffix in TEXT and "__pycache__" not in path.parts
    ]


def test_every_link_from_the_code_into_the_docs_resolves() -> None:
    broken = []
    for path in _sources():
        text = path.read_text(errors="replace")
        where = path.relative_to(ROOT)
        for m in DOC_LINK.finditer(text):
            page, anchor, section = ROOT / m.group(1), m.group(2), m.group(3)
            if not page.is_file():
                broken.append(f"{where}: {m.group(0)}: no such page")
            elif anchor and anchor not in {_slug(h) for h in _headings(page)}:
                broken.append(f"{where}: {m.group(0)}: no such heading")
            elif section and section not in _headings(page):
                broken.append(f"{where}: {m.group(0)}: no such section")
        for m in README_SECTION.finditer(text):
            if m.group(1) not in _headings(ROOT / "README.md"):
                broken.append(f"{where}: {m.group(0)}: no such README section")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("text", ['See README.md "Inventory format" for every key.', "docs" + "/nope.md"])
def test_the_link_check_sees_a_broken_link(text: str) -> None:
    assert DOC_LINK.search(text) or README_SECTION.search(text)
