"""One diff for people, whatever the platform: a unified diff of the device's own configuration text,
running -> intended, for what fabconf owns."""

from __future__ import annotations

import difflib


def unified(before: str, after: str, device: str, context: int = 3) -> str:
    """``--- DEVICE (running)`` / ``+++ DEVICE (intended)`` hunks; "" when the texts are equal."""
    lines = difflib.unified_diff(
        before.splitlines(),
        after.splitlines(),
        fromfile=f"{device} (running)",
        tofile=f"{device} (intended)",
        lineterm="",
        n=context,
    )
    text = "\n".join(lines)
    return text + "\n" if text else ""


def relabel(diff: str, device: str) -> str:
    """The same diff with its two header lines naming ``device`` (drivers know only the address)."""
    lines = diff.split("\n", 2)
    if len(lines) < 3 or not lines[0].startswith("--- ") or not lines[1].startswith("+++ "):
        return diff
    return f"--- {device} (running)\n+++ {device} (intended)\n{lines[2]}"


def counts(diff: str) -> tuple[int, int]:
    """Lines added and removed by a unified diff (headers not counted)."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++ "):
            added += 1
        elif line.startswith("-") and not line.startswith("--- "):
            removed += 1
    return added, removed
