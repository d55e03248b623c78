"""Core of the indented-CLI config model: the tree, dialects, parse/render, the CLI editor and diffs.

Import from ``fabconf_lab.cliconf`` (the public API, documented there); this module holds the machinery and
``fabconf_lab.cliconf.dialects`` the EOS and NX-OS grammars.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

# ---------------------------------------------------------------------------------------------------------------
# tree


@dataclass(eq=False)
class Node:
    text: str
    children: list[Node] = field(default_factory=list)

    def find(self, text: str) -> Node | None:
        for child in self.children:
            if child.text == text:
                return child
        return None

    def section(self, *path: str) -> Node | None:
        node: Node | None = self
        for text in path:
            if node is None:
                return None
            node = node.find(text)
        return node

    def copy(self) -> Node:
        return Node(self.text, [c.copy() for c in self.children])

    def walk(self, depth: int = 0) -> Iterator[tuple[int, Node]]:
        for child in self.children:
            yield depth, child
            yield from child.walk(depth + 1)

    def leaves(self) -> list[str]:
        return [c.text for c in self.children if not c.children]

    def same(self, other: Node) -> bool:
        """Structural equality (text and children, in order)."""
        return (
            self.text == other.text
            and len(self.children) == len(other.children)
            and all(a.same(b) for a, b in zip(self.children, other.children, strict=True))
        )


class CliError(Exception):
    """A configuration line the device refuses."""

    def __init__(self, line: str, message: str, token: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.message = message
        self.token = token


# ---------------------------------------------------------------------------------------------------------------
# dialects


def _compile(patterns: Iterable[str]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in patterns)


_LITERAL = re.compile(r"[a-z][a-z0-9-]*")
_MISSING = object()
_ANSWERS_MAX = 1 << 16  # remembered (question, mode, line) answers per dialect; all are forgotten past it


def _literal_words(pattern: str) -> tuple[str, ...]:
    """The leading literal keywords of a pattern string (``'mtu \\d+'`` -> ``('mtu',)``)."""
    words = []
    for token in pattern.split(" "):
        if _LITERAL.fullmatch(token):
            words.append(token)
        else:
            break
    return tuple(words)


def _split_tokens(pattern: str) -> list[str]:
    """Split a pattern on spaces outside parentheses/brackets."""
    tokens, depth, cur = [], 0, ""
    for ch in pattern:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == " " and depth == 0:
            tokens.append(cur)
            cur = ""
        else:
            cur += ch
    tokens.append(cur)
    return tokens


def _prefix_ok(pattern: str, words: list[str]) -> bool:
    """Whether ``words`` can start a line the pattern matches, checked token by token until a token that may
    span several words (``.+``, a group with a space)."""
    tokens = _split_tokens(pattern)
    for i, word in enumerate(words):
        if i >= len(tokens):
            return False
        tok = tokens[i]
        if " " in tok or ".+" in tok or ".*" in tok:
            return True
        if not re.fullmatch(tok, word):
            return False
    return True


@dataclass(frozen=True)
class Dialect:
    """Per-platform CLI knowledge. Tables map a mode name to regular expressions (full match)."""

    name: str
    indent: int
    separators: bool  # EOS puts '!' between sections
    trailer: str | None  # EOS ends a running-config with 'end'
    openers: dict[str, tuple[tuple[str, str], ...]]  # mode -> ((pattern, child mode), ...)
    commands: dict[str, tuple[str, ...]]  # mode -> leaf command patterns
    # mode -> patterns; a line matching one replaces siblings matching the same one with equal capturing groups
    # (so capture only what keys the value, e.g. the neighbor address; use (?:...) for everything else)
    single_valued: dict[str, tuple[str, ...]]
    stored_negations: dict[str, tuple[str, ...]]  # mode -> 'no X' patterns kept in the config as lines
    ranges: tuple[tuple[str, int, int], ...] = ()  # (pattern with one group, lo, hi), checked in every mode
    comment: str = "!"

    def extend(
        self,
        *,
        openers: dict[str, tuple[tuple[str, str], ...]] | None = None,
        commands: dict[str, tuple[str, ...]] | None = None,
        single_valued: dict[str, tuple[str, ...]] | None = None,
        stored_negations: dict[str, tuple[str, ...]] | None = None,
        ranges: tuple[tuple[str, int, int], ...] = (),
        **changes: object,
    ) -> Dialect:
        """A copy with extra rules appended (modes merged)."""

        def merge(base: dict, extra: dict | None) -> dict:
            out = dict(base)
            for k, v in (extra or {}).items():
                out[k] = tuple(out.get(k, ())) + tuple(v)
            return out

        new = replace(
            self,
            openers=merge(self.openers, openers),
            commands=merge(self.commands, commands),
            single_valued=merge(self.single_valued, single_valued),
            stored_negations=merge(self.stored_negations, stored_negations),
            ranges=self.ranges + tuple(ranges),
            **changes,  # type: ignore[arg-type]
        )
        new._cache.clear()
        new._answers.clear()
        return new

    @property
    def _cache(self) -> dict:
        cache = self.__dict__.get("_compiled")
        if cache is None:
            cache = {}
            object.__setattr__(self, "_compiled", cache)
        return cache

    def _get(self, table: str, mode: str) -> tuple[re.Pattern[str], ...]:
        key = (table, mode)
        cache = self._cache
        if key not in cache:
            if table == "openers":
                cache[key] = _compile(p for p, _m in self.openers.get(mode, ()))
            else:
                cache[key] = _compile(getattr(self, table).get(mode, ()))
        return cache[key]

    @property
    def _answers(self) -> dict:
        """(question, mode, line) -> answer (``check_ranges``: mode ""). The answers depend on nothing else (the
        tables do not change), and a switch asks them again for every sibling of every line it sets: ``single_key``
        alone was a sixth of an EOS switch's CPU in a push."""
        answers = self.__dict__.get("_answered")
        if answers is None:
            answers = {}
            object.__setattr__(self, "_answered", answers)
        return answers

    def _ask(self, question: str, mode: str, text: str, work_out: Callable[[str, str], Any]) -> Any:
        """The answer to ``question`` about ``text`` in ``mode``: remembered, or worked out and remembered."""
        key = (question, mode, text)
        answers = self._answers
        answer = answers.get(key, _MISSING)
        if answer is _MISSING:
            answer = work_out(mode, text)
            if len(answers) >= _ANSWERS_MAX:
                answers.clear()
            answers[key] = answer
        return answer

    # -- questions ------------------------------------------------------------------------------------------
    def opens(self, mode: str, text: str) -> str | None:
        """The sub-mode that ``text`` opens when entered in ``mode``, else None."""
        return self._ask("opens", mode, text, self._opens)  # type: ignore[no-any-return]

    def _opens(self, mode: str, text: str) -> str | None:
        for pat, (_p, child) in zip(self._get("openers", mode), self.openers.get(mode, ()), strict=True):
            if pat.fullmatch(text):
                return child
        return None

    def is_command(self, mode: str, text: str) -> bool:
        return self._ask("command", mode, text, self._is_command)  # type: ignore[no-any-return]

    def is_stored_negation(self, mode: str, text: str) -> bool:
        return self._ask("negation", mode, text, self._is_stored_negation)  # type: ignore[no-any-return]

    def single_key(self, mode: str, text: str) -> tuple[int, tuple[str | None, ...]] | None:
        return self._ask("single", mode, text, self._single_key)  # type: ignore[no-any-return]

    def _single_key(self, mode: str, text: str) -> tuple[int, tuple[str | None, ...]] | None:
        for i, p in enumerate(self._get("single_valued", mode)):
            m = p.fullmatch(text)
            if m:
                return i, m.groups()
        return None

    def _is_command(self, mode: str, text: str) -> bool:
        return any(p.fullmatch(text) for p in self._get("commands", mode))

    def _is_stored_negation(self, mode: str, text: str) -> bool:
        return any(p.fullmatch(text) for p in self._get("stored_negations", mode))

    def negatable(self, mode: str, body: str) -> bool:
        """Whether ``no BODY`` / ``default BODY`` is accepted in ``mode``: BODY is a command, or a keyword prefix
        of one (``no mtu``, ``no neighbor 10.0.0.1``)."""
        if self.is_command(mode, body) or self.opens(mode, body):
            return True
        words = body.split()
        if not words:
            return False
        patterns = list(self.commands.get(mode, ())) + [p for p, _m in self.openers.get(mode, ())]
        return any(_prefix_ok(p, words) for p in patterns)

    def known_keyword(self, word: str) -> bool:
        for table in (self.commands, self.stored_negations):
            for pats in table.values():
                if any(_literal_words(p)[:1] == (word,) for p in pats):
                    return True
        return any(_literal_words(p)[:1] == (word,) for rules in self.openers.values() for p, _m in rules)

    def check_ranges(self, text: str) -> str | None:
        return self._ask("ranges", "", text, self._check_ranges)  # type: ignore[no-any-return]

    def _check_ranges(self, _mode: str, text: str) -> str | None:
        for pattern, lo, hi in self.ranges:
            m = re.search(pattern, text)
            if m and not lo <= int(m.group(1)) <= hi:
                return m.group(1)
        return None

    def mode_path(self, path: list[Node]) -> str | None:
        """The mode entered by the chain of section lines ``path`` from the root, or None if unknown."""
        mode = "root"
        for node in path:
            child = self.opens(mode, node.text)
            if child is None:
                return None
            mode = child
        return mode


def invalid(line: str, dialect: Dialect) -> CliError:
    """The device's error for a line valid in no mode (EOS: ``% Invalid input``)."""
    words = line.split()
    if words and words[0] in ("no", "default"):
        words = words[1:]
        offset = 1
    else:
        offset = 0
    if not words:
        return CliError(line, "Incomplete command", None)
    if not dialect.known_keyword(words[0]):
        return CliError(line, f"Invalid input (at token {offset}: '{words[0]}')", offset)
    if len(words) == 1:
        return CliError(line, "Incomplete command", None)
    return CliError(line, f"Invalid input (at token {offset + 1}: '{words[1]}')", offset + 1)


# ---------------------------------------------------------------------------------------------------------------
# parse / render


def parse(text: str, dialect: Dialect) -> Node:
    """Parse indented config text into a tree; lenient (no validation)."""
    root = Node("")
    stack: list[tuple[int, Node]] = [(-1, root)]
    for raw in text.expandtabs(8).splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith(dialect.comment):
            continue
        width = len(raw) - len(raw.lstrip(" "))
        if stripped == "end" and width == 0:
            continue
        while stack[-1][0] >= width:
            stack.pop()
        node = Node(stripped)
        stack[-1][1].children.append(node)
        stack.append((width, node))
    return root


def _is_section(node: Node, dialect: Dialect, mode: str | None) -> bool:
    return bool(node.children) or (mode is not None and dialect.opens(mode, node.text) is not None)


def _render_children(node: Node, dialect: Dialect, depth: int, out: list[str], mode: str | None = "root") -> None:
    """EOS style: '!' between top-level sections (and between lines of different kinds), and an indented '!'
    before each nested section, empty ones included (``tx-queue 6`` with nothing under it)."""
    pad = " " * (dialect.indent * depth)
    prev: Node | None = None
    for child in node.children:
        child_mode = dialect.opens(mode, child.text) if mode is not None else None
        if dialect.separators and prev is not None:
            if depth == 0:
                if (
                    _is_section(child, dialect, mode)
                    or _is_section(prev, dialect, mode)
                    or child.text.split()[0] != prev.text.split()[0]
                ):
                    out.append("!")
            elif _is_section(child, dialect, mode):
                out.append(pad + "!")
        out.append(pad + child.text)
        _render_children(child, dialect, depth + 1, out, child_mode)
        prev = child


def render(root: Node, dialect: Dialect) -> str:
    """Render a tree in the device's own style (text ends with a newline)."""
    out: list[str] = []
    _render_children(root, dialect, 0, out)
    if dialect.separators:
        out.append("!")
    if dialect.trailer:
        out.append(dialect.trailer)
    return "\n".join(out) + "\n"


def lines_of(root: Node, dialect: Dialect) -> list[str]:
    """Indented command lines of a tree (no separators or trailer)."""
    return [" " * (dialect.indent * d) + n.text for d, n in root.walk()]


# ---------------------------------------------------------------------------------------------------------------
# applying commands


@dataclass
class _Frame:
    node: Node
    mode: str
    indent: int


class Editor:
    """Applies configuration commands to a tree like the device's CLI does (config mode, sub-modes)."""

    def __init__(self, root: Node, dialect: Dialect) -> None:
        self.root = root
        self.dialect = dialect
        self.stack: list[_Frame] = [_Frame(root, "root", -1)]
        self.ended = False

    @property
    def mode(self) -> str:
        return self.stack[-1].mode

    def apply_all(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.apply(line)

    def apply_indented(self, lines: Iterable[str]) -> None:
        """Apply lines that keep their indentation: a line closes every open section indented as deep or deeper."""
        for raw in lines:
            raw = raw.expandtabs(8).rstrip()
            text = raw.strip()
            if not text or text.startswith(self.dialect.comment):
                continue
            width = len(raw) - len(raw.lstrip(" "))
            while len(self.stack) > 1 and self.stack[-1].indent >= width:
                self.stack.pop()
            self.apply(text, indent=width)

    def apply(self, line: str, indent: int | None = None) -> None:
        text = " ".join(line.split())
        if not text or text.startswith(self.dialect.comment):
            return
        if text == "exit":
            if len(self.stack) > 1:
                self.stack.pop()
            return
        if text == "end":
            del self.stack[1:]
            self.ended = True
            return
        for depth in range(len(self.stack) - 1, -1, -1):
            if self._try(depth, text, indent):
                return
        raise invalid(text, self.dialect)

    # -- internals ------------------------------------------------------------------------------------------
    def _try(self, depth: int, text: str, indent: int | None) -> bool:
        frame = self.stack[depth]
        d = self.dialect
        words = text.split()
        neg = words[0] if words[0] in ("no", "default") else None
        body = " ".join(words[1:]) if neg else text
        if neg is None:
            child_mode = d.opens(frame.mode, text)
            if child_mode is not None:
                self._check_range(text)
                del self.stack[depth + 1 :]
                node = frame.node.find(text)
                if node is None:
                    node = Node(text)
                    _insert(frame.node, node, section=True)
                width = indent if indent is not None else depth
                self.stack.append(_Frame(node, child_mode, width))
                return True
            if d.is_command(frame.mode, text):
                self._check_range(text)
                del self.stack[depth + 1 :]
                self._set(frame, text)
                return True
            return False
        if neg == "no" and d.is_stored_negation(frame.mode, text):
            del self.stack[depth + 1 :]
            self._set(frame, text)
            return True
        if body and d.negatable(frame.mode, body):
            del self.stack[depth + 1 :]
            self._remove(frame, body, neg == "default")
            return True
        return False

    def _check_range(self, text: str) -> None:
        bad = self.dialect.check_ranges(text)
        if bad is not None:
            words = text.split()
            token = words.index(bad) if bad in words else len(words) - 1
            raise CliError(text, f"Invalid input (at token {token}: '{bad}')", token)

    def _set(self, frame: _Frame, text: str) -> None:
        """Add a leaf line; a single-valued command (or the opposite stored form) is replaced in place."""
        parent = frame.node
        if parent.find(text) is not None:
            return
        key = self.dialect.single_key(frame.mode, text)
        opposite = text[3:] if text.startswith("no ") else "no " + text
        at: int | None = None
        keep: list[Node] = []
        for child in parent.children:
            replaced = child.text == opposite or (
                key is not None and not child.children and self.dialect.single_key(frame.mode, child.text) == key
            )
            if replaced:
                if at is None:
                    at = len(keep)
                continue
            keep.append(child)
        parent.children = keep
        if at is not None:
            parent.children.insert(at, Node(text))
        else:
            _insert(parent, Node(text), section=False)

    def _remove(self, frame: _Frame, body: str, default: bool) -> None:
        parent = frame.node
        key = self.dialect.single_key(frame.mode, body)
        keep = []
        for child in parent.children:
            t = child.text
            gone = t == body or t.startswith(body + " ")
            if not gone and key is not None and not child.children:
                gone = self.dialect.single_key(frame.mode, t) == key
            if not gone and default and (t == "no " + body or t.startswith("no " + body + " ")):
                gone = True
            if not gone:
                keep.append(child)
        parent.children = keep


def _insert(parent: Node, node: Node, *, section: bool) -> None:
    """Insert keeping like lines together: after the last sibling with the same first keyword, else leaves
    before sections (a new leaf goes before the first section), else at the end."""
    first = node.text.split()[0]
    if first == "no" and len(node.text.split()) > 1:
        first = node.text.split()[1]
    last_same = None
    for i, child in enumerate(parent.children):
        words = child.text.split()
        cfirst = words[1] if words[0] == "no" and len(words) > 1 else words[0]
        if cfirst == first and bool(child.children) == section:
            last_same = i
    if last_same is not None:
        parent.children.insert(last_same + 1, node)
        return
    if not section:
        for i, child in enumerate(parent.children):
            if child.children:
                parent.children.insert(i, node)
                return
    parent.children.append(node)


def load(text: str, dialect: Dialect) -> Node:
    """Build a validated tree from full config text (as ``configure replace`` does). Raises CliError."""
    root = Node("")
    ed = Editor(root, dialect)
    raw_lines = [ln for ln in text.expandtabs(8).splitlines() if ln.strip() != "end" or ln.startswith(" ")]
    ed.apply_indented(raw_lines)
    return root


def validate(root: Node, dialect: Dialect) -> list[CliError]:
    """Every line of a tree that the device would refuse (lines under an unknown section are not checked)."""
    errors: list[CliError] = []

    def visit(node: Node, mode: str) -> None:
        for child in node.children:
            text = child.text
            sub = dialect.opens(mode, text)
            if sub is not None:
                visit(child, sub)
                continue
            words = text.split()
            ok = (
                dialect.is_command(mode, text)
                or dialect.is_stored_negation(mode, text)
                or (words[0] in ("no", "default") and len(words) > 1 and dialect.negatable(mode, " ".join(words[1:])))
            )
            if not ok or dialect.check_ranges(text) is not None:
                errors.append(invalid(text, dialect))

    visit(root, "root")
    return errors


# ---------------------------------------------------------------------------------------------------------------
# diffs


def unified_diff(old: Node, new: Node, dialect: Dialect, fromfile: str, tofile: str, context: int = 3) -> str:
    a = render(old, dialect).splitlines()
    b = render(new, dialect).splitlines()
    out = list(difflib.unified_diff(a, b, fromfile=fromfile, tofile=tofile, n=context, lineterm=""))
    return "\n".join(out) + ("\n" if out else "")


def tree_diff(old: Node, new: Node, dialect: Dialect) -> str:
    """Hierarchical diff: changed lines with '+'/'-' and their parent sections as ' ' context."""
    out: list[str] = []

    def subtree(node: Node, depth: int, sign: str) -> None:
        out.append(sign + " " * (dialect.indent * depth) + node.text)
        for child in node.children:
            subtree(child, depth + 1, sign)

    def common(a: Node, b: Node, depth: int) -> None:
        pos = len(out)
        out.append(" " + " " * (dialect.indent * depth) + b.text)
        if not walk(a, b, depth + 1):
            del out[pos:]

    def walk(a: Node, b: Node, depth: int) -> bool:
        mark = len(out)
        a_texts = [c.text for c in a.children]
        b_texts = [c.text for c in b.children]
        a_set, b_set = set(a_texts), set(b_texts)
        matcher = difflib.SequenceMatcher(a=a_texts, b=b_texts, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    common(a.children[i], b.children[j], depth)
                continue
            for i in range(i1, i2):
                if a.children[i].text not in b_set:
                    subtree(a.children[i], depth, "-")
            for j in range(j1, j2):
                child = b.children[j]
                if child.text in a_set:
                    before = a.find(child.text)
                    assert before is not None
                    common(before, child, depth)
                else:
                    subtree(child, depth, "+")
        return len(out) > mark

    walk(old, new, 0)
    return "\n".join(out) + ("\n" if out else "")
