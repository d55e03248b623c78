"""The corpus of real tool output (tests/captures/<command>/<name>.txt, issue 37): the first line of a file names
its source (repository + path + commit, or URL, or where it was found) and any change made; the rest is the
output as published. docs/reference/captures.md lists them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parent / "captures"


@dataclass(frozen=True)
class Capture:
    command: str  # the directory: the command as fabconf runs it, spaces as dashes ("mlxconfig-query")
    name: str
    source: str  # the first line, without "source: "
    text: str  # the output


def load(command: str, name: str) -> Capture:
    path = ROOT / command / f"{name}.txt"
    first, _, text = path.read_text(encoding="utf-8").partition("\n")
    if not first.startswith("source: "):
        raise ValueError(f"{path}: the first line must name the source ('source: ...')")
    return Capture(command, name, first.removeprefix("source: "), text)


def every(command: str | None = None) -> list[Capture]:
    folders = [ROOT / command] if command else sorted(p for p in ROOT.iterdir() if p.is_dir())
    return [load(folder.name, path.stem) for folder in folders for path in sorted(folder.glob("*.txt"))]
