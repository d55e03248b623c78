"""Owned sections and remediation for the CLI platforms (EOS, NX-OS), with hier_config.

fabconf owns the sections it renders and nothing else (``Platform.owned`` in the platform table, plus every
interface the candidate renders). In merge mode the running config
is cut down to the owned sections, compared with the intended config as trees, and the remediation
(negate what runs but is not intended, add what is missing) is what gets loaded as a merge candidate.
Drift is the same computation: a device has drifted when its remediation is not empty.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hier_config import HConfig, Platform, WorkflowRemediation

from fabconf.drivers.cli.hconfig_load import parse
from fabconf.platforms import platform as platform_spec


@dataclass(frozen=True)
class Remediation:
    """What to send (``config``) and what it would undo (``rollback``), both as indented text. The rollback is
    worked out only when asked (a third of a switch's diff time): fabconf undoes a change with the device's own
    rollback or checkpoint, never with this text."""

    config: str
    undo: Callable[[], str] = field(repr=False, compare=False)

    @property
    def rollback(self) -> str:
        return self.undo()

    @property
    def empty(self) -> bool:
        return not self.config.strip()


def _dialect(platform: str) -> Platform:
    name = platform_spec(platform).remediation
    if name is None:
        raise ValueError(f"platform {platform!r} has no CLI remediation dialect")
    return Platform[name]


@functools.cache
def _roots(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """The platform table's root-line patterns as one anchored regex, compiled once per process."""
    return re.compile(r"^(?:" + "|".join(patterns) + r")$") if patterns else None


def _owned_test(platform: str, interfaces: list[str], rendered: list[str]) -> Callable[[str], bool]:
    """Whether a root line is owned: the platform table's ``owned`` patterns, or exactly ``interface I`` of a
    rendered interface, or exactly a rendered owned line. (One regex of all of them, compiled per device, was a
    tenth of an EOS switch's diff with its 64 interfaces: issue 42.)"""
    roots = _roots(tuple(platform_spec(platform).owned))
    exact = {f"interface {i}" for i in interfaces} | set(rendered)
    if roots is None:
        return exact.__contains__
    return lambda text: text in exact or roots.match(text) is not None


def rendered_interfaces(text: str) -> list[str]:
    """Every ``interface X`` root line of a rendered CLI configuration: the interfaces fabconf owns."""
    return [line[len("interface ") :].strip() for line in text.splitlines() if line.startswith("interface ")]


def rendered_owned(platform: str, text: str) -> list[str]:
    """The root lines of a rendered CLI configuration that fabconf owns because it renders them (the platform
    table's ``owned_when_rendered``: its gNMI server)."""
    pattern = _roots(tuple(platform_spec(platform).owned_when_rendered))
    if pattern is None:
        return []
    return [
        line.strip() for line in text.splitlines() if line and not line[0].isspace() and pattern.match(line.strip())
    ]


def _strip_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("!") and line.strip() != "end")


def owned_tree(platform: str, text: str, interfaces: list[str], rendered: list[str] | None = None) -> HConfig:
    """The part of ``text`` fabconf owns, as a hier_config tree (``rendered``: the owned-when-rendered root lines
    of the candidate)."""
    tree = parse(_dialect(platform), _strip_comments(text))
    owned = _owned_test(platform, interfaces, rendered or [])
    for child in list(tree.children):
        if not owned(child.text):
            child.delete()
    return tree


def owned_trees(platform: str, running: str, intended: str, whole: bool = False) -> tuple[HConfig, HConfig]:
    """(running, intended) as hier_config trees of what fabconf owns (``whole``: every section, for replace
    mode); the owned interfaces are those ``intended`` renders. Neither tree is changed by what reads it here
    (remediation, views), so one pair serves both."""
    if whole:
        return parse(_dialect(platform), _strip_comments(running)), parse(_dialect(platform), _strip_comments(intended))
    interfaces = rendered_interfaces(intended)
    rendered = rendered_owned(platform, intended)
    return owned_tree(platform, running, interfaces, rendered), owned_tree(platform, intended, interfaces, rendered)


SHARE = re.compile(r"^(no )?bandwidth (?:remaining )?percent (\d+)$")


def remediation_of(run_tree: HConfig, want_tree: HConfig) -> Remediation:
    """The remediation that turns ``run_tree`` into ``want_tree``, its queue shares lowered before any is raised
    (``lowered_first``). Two equal trees (``_same``: a converged device, every verify after a push) need none,
    without asking hier_config."""
    workflow = WorkflowRemediation(run_tree, want_tree)
    if _same(run_tree, want_tree):
        return Remediation("", lambda: _text(workflow.rollback_config))
    return Remediation(lowered_first(_text(workflow.remediation_config)), lambda: _text(workflow.rollback_config))


def _same(have: Any, want: Any) -> bool:
    """Whether two trees are the same lines in the same order, no two siblings alike. hier_config's remediation of
    such trees is empty: no running line is missing from the intended children (nothing negated), every intended
    line is found in the running children (nothing added) with the same children (no sectional overwrite, which
    acts only when children differ), and so on down. Siblings alike (a parent that allows duplicate children)
    would make hier_config pair the first of them with each, so they take the full computation."""
    have_kids, want_kids = list(have.children), list(want.children)
    if len(have_kids) != len(want_kids):
        return False
    seen: set[str] = set()
    for mine, theirs in zip(have_kids, want_kids, strict=True):
        if mine.text != theirs.text or mine.text in seen or mine.tags != theirs.tags:
            return False
        seen.add(mine.text)
        if not _same(mine, theirs):
            return False
    return True


def _blocks(lines: list[str], depth: int) -> list[list[str]]:
    """Sibling blocks at ``depth`` (two spaces a level): each a line and the deeper lines under it."""
    blocks: list[list[str]] = []
    for line in lines:
        if blocks and len(line) - len(line.lstrip(" ")) > depth:
            blocks[-1].append(line)
        else:
            blocks.append([line])
    return blocks


def _share_change(block: list[str]) -> int:
    """How a queue block changes its share: the new ``bandwidth … percent`` minus the one it negates (0 when it
    sets or removes no share)."""
    old = new = 0
    for line in block[1:]:
        found = SHARE.match(line.strip())
        if found:
            if found.group(1):
                old = int(found.group(2))
            else:
                new = int(found.group(2))
    return new - old if old and new else -old if old else new


def lowered_first(text: str, depth: int = 0) -> str:
    """A remediation whose queue blocks lower their share before any raises its own: the device checks that a
    policy's shares add up to at most 100 % after every command (EOS tx-queue ``bandwidth percent``, NX-OS
    ``bandwidth remaining percent``), so 60/40 -> 50/50 must lower 60 to 50 before raising 40 to 50, or the first
    command asks for 110 % and is refused. Blocks that change no share keep their place and order."""
    if not text.strip():
        return text
    out: list[str] = []
    blocks = _blocks(text.rstrip("\n").split("\n"), depth)
    queue_blocks = [b for b in blocks if any(SHARE.match(line.strip()) for line in b[1:])]
    if len(queue_blocks) > 1:
        ordered = iter(sorted(queue_blocks, key=_share_change))  # stable: lowered, unchanged, raised
        blocks = [next(ordered) if b in queue_blocks else b for b in blocks]
    for block in blocks:
        out.append(block[0])
        if len(block) > 1:
            out.append(lowered_first("\n".join(block[1:]), depth + 2).rstrip("\n"))
    return "\n".join(out) + "\n"


def remediate(platform: str, running: str, intended: str) -> Remediation:
    """Remediation that turns the owned part of ``running`` into ``intended`` (the owned interfaces: those
    ``intended`` renders)."""
    return remediation_of(*owned_trees(platform, running, intended))


def _text(tree: HConfig) -> str:
    lines = [line for line in tree.dump_simple() if line.strip()]
    return "\n".join(lines) + ("\n" if lines else "")


def _lines(children: list[HConfig] | Any, depth: int, order: dict[str, Any] | None) -> list[str]:
    """Indented lines of a tree, children ordered like ``order`` (the intended tree's sibling order): a line
    the intended tree lacks stays right after the sibling it follows on the device, so a changed line
    shows as one -/+ pair in a unified diff instead of moving."""
    kids = list(children)
    known = {} if order is None else {text: i for i, text in enumerate(order)}
    keyed = []
    anchor = -1
    for i, child in enumerate(kids):
        if child.text in known:
            anchor = known[child.text]
            keyed.append(((anchor, 0, 0), child))
        else:
            keyed.append(((anchor, 1, i), child))
    out: list[str] = []
    for _, child in sorted(keyed, key=lambda kc: kc[0]):
        out.append("  " * depth + child.text)
        sub_order = None
        if order is not None and child.text in order:
            sub_order = order[child.text]
        out.extend(_lines(child.children, depth + 1, sub_order))
    return out


def _order(tree: Any) -> dict[str, Any]:
    return {child.text: _order(child) for child in tree.children}


def owned_views(run_tree: HConfig, want_tree: HConfig) -> tuple[str, str]:
    """The owned configuration (``owned_trees``) as it runs and as intended, as comparable text. Sibling
    order follows the intended configuration."""
    order = _order(want_tree)
    before = _lines(run_tree.children, 0, order)
    after = _lines(want_tree.children, 0, order)
    return "\n".join(before) + "\n", "\n".join(after) + "\n"


def future_config(platform: str, running: str, remediation: str) -> str:
    """The whole configuration the device would run after ``remediation`` is merged into ``running``, as a file
    ``configure replace`` can load. Sections keep their running order; new ones follow in the remediation's order
    (which is the rendered order: a ``feature`` line before what it enables)."""
    dialect = _dialect(platform)
    run_tree = parse(dialect, _strip_comments(running))
    future = run_tree.future(parse(dialect, remediation))
    existing = [child.text for child in run_tree.children]
    by_text = {child.text: child for child in future.children}
    ordered = [by_text[t] for t in existing if t in by_text]
    ordered += [child for child in future.children if child.text not in set(existing)]
    indent = "  " * 1
    lines: list[str] = []

    def emit(node: Any, depth: int) -> None:
        lines.append(indent * depth + node.text)
        for child in node.children:
            emit(child, depth + 1)

    for child in ordered:
        emit(child, 0)
    return "\n".join(lines) + "\n"


def _indented(node: Any, depth: int, width: int = 2) -> list[str]:
    out = []
    for child in node.children:
        out.append(" " * (width * depth) + child.text)
        out.extend(_indented(child, depth + 1, width))
    return out


def keep_management(platform: str, running: str, intended: str) -> str:
    """``intended`` plus every root section of ``running`` that belongs to the management plane (the platform
    table's ``management``) and that ``intended`` does not set: a replace keeps the API, users and management
    interface it runs over."""
    patterns = platform_spec(platform).management
    if not patterns:
        return intended
    pattern = re.compile(r"^(?:" + "|".join(patterns) + r")$")
    dialect = _dialect(platform)
    want = parse(dialect, _strip_comments(intended))
    have = {child.text for child in want.children}
    kept: list[str] = []
    for child in parse(dialect, _strip_comments(running)).children:
        if pattern.match(child.text) and child.text not in have:
            kept.append(child.text)
            kept.extend(_indented(child, 1))
    if not kept:
        return intended
    body = intended.rstrip("\n").removesuffix("end").rstrip("\n")
    return body + "\n!\n" + "\n".join(kept) + "\n"
