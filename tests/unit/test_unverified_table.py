"""docs/reference/unverified.md lists every [U] left in the platform table (the registry), the platform packages
(rows, design, drivers), the templates and the shared drivers: one row
per tagged line, found by file and a phrase of that line, and no row without its line (issue 29, "Open [U] items").
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "docs" / "reference" / "unverified.md"
SCANNED = [ROOT / "fabconf" / "platforms.py", *sorted((ROOT / "fabconf" / "platform").rglob("*.py"))]
SCANNED += sorted((ROOT / "templates").rglob("*.j2"))
SCANNED += sorted((ROOT / "fabconf" / "drivers").rglob("*.py"))
TAG = re.compile(r"\[U[]:]")
# lines that explain the tags rather than use one
LEGENDS = {
    ("fabconf/platforms.py", "Source tags:"),
    ("fabconf/platform/cumulus/getters.py", "they are marked [U] where"),
}


def tagged_lines() -> list[tuple[str, str]]:
    out = []
    for path in SCANNED:
        rel = path.relative_to(ROOT).as_posix()
        for line in path.read_text().splitlines():
            if TAG.search(line) and not any(rel == f and key in line for f, key in LEGENDS):
                out.append((rel, line))
    return out


def table_rows() -> list[tuple[str, str]]:
    rows = []
    for line in TABLE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`") and cells[0].endswith("`"):
            rows.append((cells[0].strip("`"), cells[1].replace("`", "")))
    return rows


def test_every_tagged_line_has_exactly_one_row() -> None:
    rows = table_rows()
    missing, doubled = [], []
    for rel, line in tagged_lines():
        found = [key for f, key in rows if f == rel and key in line.replace("`", "")]
        if not found:
            missing.append(f"{rel}: {line.strip()}")
        elif len(found) > 1:
            doubled.append(f"{rel}: {line.strip()} ({found})")
    assert not missing, "tagged [U] but not in docs/reference/unverified.md:\n" + "\n".join(missing)
    assert not doubled, "more than one row matches:\n" + "\n".join(doubled)


def test_every_row_still_has_its_tagged_line() -> None:
    lines = tagged_lines()
    stale = [
        (f, key) for f, key in table_rows() if sum(1 for r, ln in lines if r == f and key in ln.replace("`", "")) != 1
    ]
    assert not stale, f"rows whose tagged line is gone (or ambiguous): {stale}"


def test_the_table_is_not_empty_and_in_the_nav() -> None:
    assert len(table_rows()) == len(tagged_lines()) > 0
    assert "reference/unverified.md" in (ROOT / "mkdocs.yml").read_text()
