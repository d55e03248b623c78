"""The README's two commands (issue #40): the first works on a stock Debian or Ubuntu, whose system Python refuses a
plain ``pip install`` (PEP 668), so it makes and uses a virtual environment in the same line; the test command
uses that environment and runs every layer; the getting-started page shows the same two lines; and ``.ci/run``
runs them, read from the README, as an ordinary user (``.ci/unprivileged``)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _commands(page: Path, heading: str = "## The two commands") -> list[str]:
    text = page.read_text()
    section = text[text.index(heading) :]
    block = re.search(r"^```sh\n(.*?)^```$", section, re.S | re.M)
    assert block, f"{page}: no ```sh block under {heading}"
    return block.group(1).splitlines()


def test_the_first_command_makes_its_own_virtual_environment() -> None:
    first, second = _commands(ROOT / "README.md")
    steps = [s.strip() for s in first.split("#", 1)[0].split("&&")]
    assert steps == ["python3 -m venv .venv", ". .venv/bin/activate", "pip install .", "fabconf diff --lab"]
    steps = [s.strip() for s in second.split("#", 1)[0].split("&&")]
    assert steps[0] == ". .venv/bin/activate"  # a new shell has it too
    assert steps[1] == "fabconf lab down"  # the editable install must not replace the code under the running lab
    assert [s for s in steps if "pytest" in s] == [
        "python -m pytest tests/unit",
        "python -m pytest -n 4 --dist worksteal tests/lab tests/e2e",
        "python -m pytest -n 4 --dist worksteal tests/sot",
    ]


def test_getting_started_shows_the_readme_s_two_commands() -> None:
    assert _commands(ROOT / "docs" / "getting-started.md") == _commands(ROOT / "README.md")


def test_ci_runs_the_readme_s_commands_as_written() -> None:
    """.ci/unprivileged reads the two lines from the README itself (they cannot drift), and .ci/run runs it instead
    of a pytest of its own: the suite runs once, as an ordinary user."""
    script = (ROOT / ".ci" / "unprivileged").read_text()
    assert "README.md" in script and "## The two commands" in script
    run = (ROOT / ".ci" / "run").read_text()
    assert ".ci/unprivileged" in run
    assert not re.search(r"^python -m pytest (tests/unit|-n 4 .*tests/(lab|e2e|sot))", run, re.M)
    extracted = subprocess.run(
        ["bash", "-c", "sed -n '/^## The two commands/,/^## /p' README.md | sed -n '/^```sh$/,/^```$/p' | sed '1d;$d'"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert extracted == _commands(ROOT / "README.md")
