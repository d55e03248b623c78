"""Every shell and Python block of README.md and docs/ is marked: run by tests/e2e/test_docs_recipes.py against the
lab, or skipped with a reason (the marks: tests/docrecipes.py). A new block with no mark fails here, so no recipe
goes untested by accident."""

from __future__ import annotations

from pathlib import Path

from docrecipes import Block, blocks

PAGE = "scratch.md"  # a page of a scratch docs folder


def test_every_shell_and_python_block_is_marked_run_or_skip() -> None:
    found = blocks()
    assert len([b for b in found if b.language in ("sh", "python")]) >= 20
    problems = [f"{b.where}: {p}" for b in found for p in b.problems]
    assert problems == [], "\n".join(problems)
    assert len([b for b in found if b.runs]) >= 10  # most recipes run


def _page(tmp_path: Path, text: str) -> list[Block]:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# x\n")
    (tmp_path / "docs" / PAGE).write_text(text)
    return [b for b in blocks(tmp_path) if b.page == "docs/" + PAGE]


def test_an_unmarked_block_and_a_bad_mark_are_reported(tmp_path: Path) -> None:
    text = (
        "```sh\nfabconf validate\n```\n\n"
        "<!-- recipe: skip because -->\n```python\nprint(1)\n```\n\n"
        "<!-- recipe: run fails=4 sometimes -->\n```sh\nfabconf lab up\nfabconf lab down\n```\n\n"
        "<!-- recipe: run -->\n```yaml\na: 1\n```\n\n"
        "<!-- recipe: run -->\n```sh\nfabconf drift -o /var/lib/x.prom\n```\n\n"
        "```yaml\nunmarked: fine\n```\n"
        "<!-- recipe: run -->\n\n"
    )
    problems = [(b.line, p) for b in _page(tmp_path, text) for p in b.problems]
    assert problems == [
        (1, "a shell or Python block with no recipe mark (<!-- recipe: run --> or <!-- recipe: skip REASON -->)"),
        (6, "recipe mark 'skip because': skip needs a reason of a few words"),
        (11, "recipe mark 'run fails=4 sometimes': the block has 2 command(s)"),
        (11, "recipe mark 'run fails=4 sometimes': unknown 'sometimes' (modes: lab-up, devices; fails=N; answer=y|n)"),
        (17, "a yaml block cannot run: only sh and python blocks do"),
        (22, "a recipe that runs names /var/lib/x.prom: a system path is the installed job's, skip it"),
        (29, "a recipe mark not followed by a fence"),
    ]


def test_commands_join_continuation_lines_and_leave_out_comments(tmp_path: Path) -> None:
    text = (
        "<!-- recipe: run devices fails=2 -->\n```sh\n# a comment\nfabconf drift \\\n    --git   # x\nfabconf a\n```\n"
    )
    [block] = _page(tmp_path, text)
    assert block.problems == [] and block.runs
    assert block.commands() == ["fabconf drift --git   # x", "fabconf a"]
    assert block.options() == {"devices": "", "fails": "2"} and block.failing() == {2}
