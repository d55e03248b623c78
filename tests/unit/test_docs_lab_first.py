"""The job pages show the lab's form of a command first and say which lines reach real devices (issue #40): the
push, drift and dry-run pages opened with commands that, without `--lab`, target the example's 192.0.2.x."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["docs/jobs/push.md", "docs/jobs/nightly-drift.md", "docs/jobs/dry-run-diff.md"]
CONNECTS = re.compile(r"^fabconf (push|diff|drift|verify|preflight)\b")


@pytest.mark.parametrize("page", PAGES)
def test_the_lab_form_comes_first_and_real_devices_are_named(page: str) -> None:
    text = (ROOT / page).read_text()
    lines = [
        line
        for block in re.findall(r"^```sh\n(.*?)^```$", text, re.S | re.M)
        for line in block.splitlines()
        if CONNECTS.match(line)
    ]
    assert lines, page
    assert "--lab" in lines[0].split("#")[0], f"{page}: the first command is not the lab's: {lines[0]}"
    for line in lines:
        command, _, comment = line.partition("#")
        assert "--lab" in command or "real devices" in comment, f"{page}: says not which it reaches: {line}"
    assert "192.0.2" in text and "--lab" in text
