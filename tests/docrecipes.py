"""The shell and Python blocks of README.md and docs/**/*.md, with the mark each carries: an HTML comment on the
line before the fence (an HTML comment is left out of the rendered page by Markdown and mkdocs alike).

    <!-- recipe: run -->                         run as written, in a scratch copy of the repository's inventories
    <!-- recipe: run lab-up -->                  the same, after `fabconf lab up` (the block says it needs one)
    <!-- recipe: run devices -->                 the lab stands in for ./inventory's devices (`fabconf lab up`, then
                                                 ./inventory is the lab's copy and lab.env's credentials are set)
    <!-- recipe: run devices=examples/two-pods --> the same for another inventory
    <!-- recipe: run fails=3 -->                 the 3rd command must exit 1 (it shows a failure: a rollback)
    <!-- recipe: run answer=y -->                each command on a terminal, where y is typed to every question
    <!-- recipe: skip REASON -->                 never run here: REASON says why and what runs it instead

Every other command must exit 0 or 2 (fabconf's "changes pending" / "drift found").
``tests/unit/test_docs_recipe_marks.py`` fails on a shell or Python block with no mark;
``tests/e2e/test_docs_recipes.py`` runs the ``run`` blocks."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LANGUAGES = {"sh": "sh", "bash": "sh", "shell": "sh", "console": "sh", "python": "python", "py": "python"}
MARK = re.compile(r"^<!--\s*recipe:\s*(?P<body>.*?)\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w+-]*)")
MODES = ("lab-up", "devices")
HOW = "<!-- recipe: run --> or <!-- recipe: skip REASON -->"
OPTIONS = "fails=N; answer=y|n"
SYSTEM_PATH = re.compile(
    r"(?<![\w./-])/(?:etc|var|usr|opt|srv|root|boot)(?:/[\w.-]*)*"
)  # run as root, it would write there


@dataclass
class Block:
    page: str  # relative to the repository
    line: int  # the fence's line, 1-based
    language: str  # "sh" | "python" | another fence language
    text: str
    mark: str | None  # the comment's body, None without one
    problems: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.mark is not None and self.mark.split()[0] == "run"

    def options(self) -> dict[str, str]:
        """The ``run`` mark's words: a mode (``lab-up``, ``devices[=DIR]``) and ``fails=N,…``."""
        found: dict[str, str] = {}
        for word in (self.mark or "").split()[1:]:
            key, _, value = word.partition("=")
            found[key] = value
        return found

    def commands(self) -> list[str]:
        """A shell block's commands: one a line (a backslash joins the next), blank and comment lines left out."""
        joined = re.sub(r"\s*\\\n\s*", " ", self.text)
        return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]

    def failing(self) -> set[int]:
        value = self.options().get("fails", "")
        return {int(n) for n in value.split(",") if n.strip().isdigit()}


def pages(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def blocks(root: Path = ROOT) -> list[Block]:
    """Every fenced block of every page, its mark checked for form (``Block.problems``)."""
    found: list[Block] = []
    for page in pages(root):
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            fence = FENCE.match(lines[i])
            if not fence:
                mark = MARK.match(lines[i].strip())
                if mark and not (i + 1 < len(lines) and FENCE.match(lines[i + 1])):
                    rel = str(page.relative_to(root))
                    found.append(Block(rel, i + 1, "", "", mark["body"], ["a recipe mark not followed by a fence"]))
                i += 1
                continue
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```")), len(lines))
            before = MARK.match(lines[i - 1].strip()) if i else None
            indent = len(fence["indent"])
            text = "\n".join(line[indent:] for line in lines[i + 1 : end]) + "\n"
            lang = LANGUAGES.get(fence["lang"], fence["lang"])
            block = Block(str(page.relative_to(root)), i + 1, lang, text, before["body"] if before else None)
            block.problems = _check(block)
            found.append(block)
            i = end + 1
    return found


def _check(block: Block) -> list[str]:
    if block.mark is None:
        if block.language in ("sh", "python"):
            return [
                "a shell or Python block with no recipe mark (<!-- recipe: run --> or <!-- recipe: skip REASON -->)"
            ]
        return []
    words = block.mark.split()
    if not words or words[0] not in ("run", "skip"):
        return [f"recipe mark {block.mark!r}: starts with run or skip"]
    if words[0] == "skip":
        return [] if len(words) >= 4 else [f"recipe mark {block.mark!r}: skip needs a reason of a few words"]
    problems = []
    for key, value in block.options().items():
        if key == "fails":
            if not value or not all(n.isdigit() for n in value.split(",")):
                problems.append(f"recipe mark {block.mark!r}: fails=N[,M] numbers the commands that exit 1")
            elif max(block.failing()) > len(block.commands()):
                problems.append(f"recipe mark {block.mark!r}: the block has {len(block.commands())} command(s)")
        elif key == "answer":
            if value not in ("y", "n"):
                problems.append(f"recipe mark {block.mark!r}: answer=y or answer=n")
        elif key not in MODES:
            problems.append(
                f"recipe mark {block.mark!r}: unknown {key!r} (modes: {', '.join(MODES)}; fails=N; answer=y|n)"
            )
        elif key == "devices" and value and not (ROOT / value).is_dir():
            problems.append(f"recipe mark {block.mark!r}: {value} is not a directory of the repository")
    if len([k for k in block.options() if k in MODES]) > 1:
        problems.append(f"recipe mark {block.mark!r}: one mode at most")
    if block.language not in ("sh", "python"):
        problems.append(f"a {block.language or 'plain'} block cannot run: only sh and python blocks do")
    system = SYSTEM_PATH.search(block.text)
    if system:
        problems.append(f"a recipe that runs names {system[0]}: a system path is the installed job's, skip it")
    return problems
