"""Lexer and parser of the lab hosts' shell subset (see ``fabconf_lab.host.shell`` for what is supported)."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field


class Incomplete(Exception):
    """The text ends inside a quote, a here-document or after ``&&``/``||``/``|``."""


# -- lexer -------------------------------------------------------------------------------------------

Segment = tuple[str, str]  # ("lit", text) | ("var", name)


@dataclass
class Word:
    segments: list[Segment] = field(default_factory=list)
    quoted: bool = False

    def literal(self) -> str:
        return "".join(text if kind == "lit" else "$" + text for kind, text in self.segments)


@dataclass
class HereDoc:
    delimiter: str
    strip_tabs: bool
    expand: bool
    body: str | None = None


@dataclass
class Op:
    op: str
    heredoc: HereDoc | None = None


_OPERATORS = ("&&", "||", ";", "|", "&", "\n")
_SPECIAL = frozenset(" \t\n'\"\\$<>&|;")  # what ends a run of plain word characters
_PLAIN = re.compile(r"[^ \t\n'\"\\$<>&|;]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REDIRECTS = ("&>>", "&>", ">>", ">&", ">", "<<-", "<<", "<")
# the operators that may start at a character, longest first (the redirections, then ``&&``, ``||`` and the
# one-character operators): looked up by that character instead of trying every operator
_OPS_AT = {ch: tuple(op for op in (*_REDIRECTS, "&&", "||", ";", "|", "&", "\n") if op[0] == ch) for ch in "&><|;\n"}


def lex(text: str, *, at_eof_ok: bool) -> list[Word | Op]:
    """Split ``text`` into words and operators, collecting here-document bodies."""
    tokens: list[Word | Op] = []
    pending: list[HereDoc] = []
    word: Word | None = None
    want_delim: Op | None = None
    i, n = 0, len(text)

    def end_word() -> None:
        nonlocal word, want_delim
        if word is None:
            return
        if want_delim is not None:
            delim = "".join(t for _k, t in word.segments)
            assert want_delim.heredoc is not None
            want_delim.heredoc.delimiter = delim
            want_delim.heredoc.expand = not word.quoted
            pending.append(want_delim.heredoc)
            want_delim = None
        else:
            tokens.append(word)
        word = None

    def lit(ch: str, quoted: bool = False) -> None:
        nonlocal word
        if word is None:
            word = Word()
        word.quoted = word.quoted or quoted
        if word.segments and word.segments[-1][0] == "lit":
            word.segments[-1] = ("lit", word.segments[-1][1] + ch)
        else:
            word.segments.append(("lit", ch))

    def var(at: int) -> int:
        """Parse a $-expansion at text[at] == '$'; returns the index after it."""
        nonlocal word
        j = at + 1
        if j < n and text[j] == "?":
            name, j = "?", j + 1
        elif j < n and text[j] == "{":
            close = text.find("}", j)
            if close < 0:
                raise Incomplete("${")
            name, j = text[j + 1 : close], close + 1
        else:
            m = _NAME.match(text, j)
            if not m:
                lit("$")
                return j
            name, j = m.group(0), m.end()
        if word is None:
            word = Word()
        word.segments.append(("var", name))
        return j

    def read_heredocs(start: int) -> int:
        """Bodies of pending here-documents start at ``start`` (just after a newline)."""
        pos = start
        while pending:
            doc = pending.pop(0)
            lines: list[str] = []
            while True:
                if pos >= n:
                    if not at_eof_ok:
                        raise Incomplete("here-document")
                    break
                nl = text.find("\n", pos)
                line = text[pos:] if nl < 0 else text[pos:nl]
                pos = n if nl < 0 else nl + 1
                check = line.lstrip("\t") if doc.strip_tabs else line
                if check == doc.delimiter:
                    break
                lines.append(check)
            doc.body = "".join(line + "\n" for line in lines)
        return pos

    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n and text[i + 1] == "\n":
            i += 2
            continue
        if ch in " \t":
            end_word()
            i += 1
            continue
        if ch == "#" and word is None:
            while i < n and text[i] != "\n":
                i += 1
            continue
        if ch == "'":
            close = text.find("'", i + 1)
            if close < 0:
                raise Incomplete("'")
            lit(text[i + 1 : close], quoted=True)
            i = close + 1
            continue
        if ch == '"':
            j = i + 1
            lit("", quoted=True)
            while True:
                if j >= n:
                    raise Incomplete('"')
                c = text[j]
                if c == '"':
                    j += 1
                    break
                if c == "\\" and j + 1 < n and text[j + 1] in '"\\$`\n':
                    if text[j + 1] != "\n":
                        lit(text[j + 1], quoted=True)
                    j += 2
                    continue
                if c == "$":
                    j = var(j)
                    continue
                lit(c, quoted=True)
                j += 1
            i = j
            continue
        if ch == "\\":
            if i + 1 < n:
                lit(text[i + 1], quoted=True)
            i += 2
            continue
        if ch == "$":
            i = var(i)
            continue
        # fd-prefixed redirections: 2>, 2>>, 2>&1, 1>&2
        if ch in "12" and word is None and text[i + 1 : i + 2] == ">":
            fd = ch
            i += 1
            if text.startswith(">&", i):
                target = text[i + 2 : i + 3]
                tokens.append(Op(f"{fd}>&{target}"))
                i += 3
            elif text.startswith(">>", i):
                tokens.append(Op(f"{fd}>>"))
                i += 2
            else:
                tokens.append(Op(f"{fd}>"))
                i += 1
            continue
        if ch not in _SPECIAL:  # a run of plain characters (a base64 file body is thousands) in one step
            run = _PLAIN.match(text, i)
            assert run is not None
            lit(run.group())
            i = run.end()
            continue
        matched = next((op for op in _OPS_AT.get(ch, ()) if text.startswith(op, i)), None)
        if matched is not None:
            end_word()
            if matched == ">&":
                target = text[i + 2 : i + 3]
                tokens.append(Op(f"1>&{target}"))
                i += 3
                continue
            if matched in ("<<", "<<-"):
                op = Op(matched, HereDoc("", matched == "<<-", True))
                tokens.append(op)
                want_delim = op
                i += len(matched)
                continue
            tokens.append(Op(matched))
            i += len(matched)
            if matched == "\n":
                i = read_heredocs(i)
            continue
        lit(ch)
        i += 1
    end_word()
    if want_delim is not None:
        raise Incomplete("here-document delimiter")
    if pending:
        if not at_eof_ok:
            raise Incomplete("here-document")
        for doc in pending:
            doc.body = ""
    # trailing connector means more input is needed
    meaningful = [t for t in tokens if not (isinstance(t, Op) and t.op == "\n")]
    if meaningful and isinstance(meaningful[-1], Op) and meaningful[-1].op in ("&&", "||", "|"):
        raise Incomplete(meaningful[-1].op)
    return tokens


def is_incomplete(text: str) -> bool:
    """True while an interactive shell should ask for more lines (open quote, here-document, loop, ``&&``...)."""
    try:
        parse(lex(text, at_eof_ok=False))
    except Incomplete:
        return True
    except SyntaxError:
        return False
    return False


# -- parser ------------------------------------------------------------------------------------------


@dataclass
class Redirect:
    op: str  # ">", ">>", "<", "<<", "2>", "2>>", "2>&1", "1>&2", "&>", "&>>"
    target: Word | None = None
    heredoc: HereDoc | None = None


@dataclass
class Simple:
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


Pipeline = list[Simple]
AndOr = list[tuple[str, Pipeline]]  # first connector is ""


@dataclass
class ForNode:
    """``for NAME in WORDS; do BODY; done``"""

    name: str
    words: list[Word]
    body: list[Node]


@dataclass
class IfNode:
    """``if C; then B; [elif C; then B;]... [else B;] fi``"""

    branches: list[tuple[list[Node], list[Node]]]
    otherwise: list[Node] | None = None


Node = AndOr | ForNode | IfNode

_SEPARATORS = ("\n", ";", "&")
_ENDS = ("\n", ";", "&", "&&", "||", "|")


class _Parser:
    def __init__(self, tokens: list[Word | Op]) -> None:
        self.toks = tokens
        self.i = 0

    def peek(self) -> Word | Op | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def at_word(self, *words: str) -> bool:
        tok = self.peek()
        return isinstance(tok, Word) and not tok.quoted and tok.literal() in words

    def reserved(self) -> str:
        """The next token when it is an unquoted word that may be a reserved one (else "")."""
        tok = self.peek()
        if not isinstance(tok, Word) or tok.quoted:
            return ""
        segments = tok.segments
        return segments[0][1] if len(segments) == 1 and segments[0][0] == "lit" else tok.literal()

    def expect_word(self, word: str) -> None:
        self.skip_separators()
        if not self.at_word(word):
            if self.peek() is None:
                raise Incomplete(word)
            raise SyntaxError(f"syntax error: expected `{word}'")
        self.i += 1

    def skip_separators(self) -> None:
        while isinstance(self.peek(), Op) and self.peek().op in _SEPARATORS:  # type: ignore[union-attr]
            self.i += 1

    def skip_newlines(self) -> None:
        while isinstance(self.peek(), Op) and self.peek().op == "\n":  # type: ignore[union-attr]
            self.i += 1

    def parse_list(self, stops: tuple[str, ...] = ()) -> list[Node]:
        nodes: list[Node] = []
        while True:
            self.skip_separators()
            if self.peek() is None:
                if stops:
                    raise Incomplete(stops[0])
                return nodes
            if stops and self.at_word(*stops):
                return nodes
            nodes.append(self.parse_statement())

    def parse_statement(self) -> Node:
        first = self.reserved()
        if first == "for":
            return self.parse_for()
        if first == "if":
            return self.parse_if()
        if first in ("while", "until", "case", "function", "select"):
            raise SyntaxError(f"{first}: not supported by the lab shell")
        return self.parse_and_or()

    def parse_for(self) -> ForNode:
        self.i += 1
        name = self.peek()
        if not isinstance(name, Word):
            raise Incomplete("for") if name is None else SyntaxError("syntax error near `for'")
        self.i += 1
        words: list[Word] = []
        if self.at_word("in"):
            self.i += 1
            while isinstance(self.peek(), Word):
                words.append(self.peek())  # type: ignore[arg-type]
                self.i += 1
        self.expect_word("do")
        body = self.parse_list(("done",))
        self.i += 1
        return ForNode(name.literal(), words, body)

    def parse_if(self) -> IfNode:
        self.i += 1
        node = IfNode([])
        while True:
            cond = self.parse_list(("then",))
            self.i += 1
            body = self.parse_list(("elif", "else", "fi"))
            node.branches.append((cond, body))
            word = self.peek()
            assert isinstance(word, Word)
            self.i += 1
            if word.literal() == "elif":
                continue
            if word.literal() == "else":
                node.otherwise = self.parse_list(("fi",))
                self.i += 1
            return node

    def parse_and_or(self) -> AndOr:
        items: AndOr = []
        connector = ""
        while True:
            items.append((connector, self.parse_pipeline()))
            tok = self.peek()
            if isinstance(tok, Op) and tok.op in ("&&", "||"):
                connector = tok.op
                self.i += 1
                self.skip_newlines()
                if self.peek() is None:
                    raise Incomplete(connector)
                continue
            return items

    def parse_pipeline(self) -> Pipeline:
        pipeline = [self.parse_simple()]
        while isinstance(self.peek(), Op) and self.peek().op == "|":  # type: ignore[union-attr]
            self.i += 1
            self.skip_newlines()
            if self.peek() is None:
                raise Incomplete("|")
            pipeline.append(self.parse_simple())
        return pipeline

    def parse_simple(self) -> Simple:
        simple = Simple()
        while True:
            tok = self.peek()
            if tok is None or (isinstance(tok, Op) and tok.op in _ENDS):
                break
            self.i += 1
            if isinstance(tok, Word):
                simple.words.append(tok)
            elif tok.op in ("<<", "<<-"):
                simple.redirects.append(Redirect("<<", heredoc=tok.heredoc))
            elif tok.op in ("2>&1", "1>&2"):
                simple.redirects.append(Redirect(tok.op))
            else:
                target = self.peek()
                if not isinstance(target, Word):
                    raise SyntaxError(f"syntax error near unexpected token `{tok.op}'")
                self.i += 1
                simple.redirects.append(Redirect(tok.op, target=target))
        if not simple.words and not simple.redirects:
            tok = self.peek()
            shown = "newline" if tok is None or (isinstance(tok, Op) and tok.op == "\n") else getattr(tok, "op", "")
            raise SyntaxError(f"syntax error near unexpected token `{shown}'")
        return simple


def parse(tokens: list[Word | Op]) -> list[Node]:
    """Statements of a script: and-or lists of pipelines, ``for`` loops and ``if`` blocks."""
    return _Parser(tokens).parse_list()


# -- parsed scripts, kept by shape ----------------------------------------------------------------------
# A controller's batched reads differ from host to host and run to run only by the random marker that frames
# each command's output (fabconf's ``@@<12 hex digits>:N`` lines). The statements of such a script are parsed once
# with the marker's digits replaced by ``PLACEHOLDER`` (as many plain word characters, so the text lexes into the
# same tokens) and kept; the shell puts the digits back as it expands each word (``Shape.restore``). A script
# without a marker, or holding the placeholder itself, is parsed as it is, every time.
PLACEHOLDER = "z" * 12
_MARKER = re.compile(r"@@([0-9a-f]{12}):")
_SHAPES: dict[str, list[Node]] = {}
SHAPES_KEPT = 256  # scripts' statements kept per process (a few KB each); the oldest goes first
# Every SSH session's thread of a lab process parses here. Reads need no lock; making room does: the oldest key was
# read from an iterator while another thread added one, which raised "dictionary changed size during iteration"
# and killed the session's thread with its channel open (issue 42: a full-size push, where each GPU host's commit
# has a shape of its own, lost 4-6 hosts to fabconf's 60 s timeout this way).
_SHAPES_LOCK = threading.Lock()


@dataclass(frozen=True)
class Shape:
    """A script's statements and the marker to put back into their words ("" when there is none)."""

    statements: list[Node]
    marker: str = ""

    def restore(self, text: str) -> str:
        """``text`` (a word, a here-document, a pipeline as the fault hooks see it) as the script wrote it."""
        return text.replace(PLACEHOLDER, self.marker) if self.marker and PLACEHOLDER in text else text


def parse_script(script: str) -> Shape:
    """``parse(lex(script))``, from the statements kept for the script's shape when there are (see above); raises
    Incomplete or SyntaxError exactly as parsing the script itself does."""
    found = _MARKER.search(script)
    if found is None or PLACEHOLDER in script:
        return Shape(parse(lex(script, at_eof_ok=True)))
    marker = found.group(1)
    shape = script.replace(marker, PLACEHOLDER)
    statements = _SHAPES.get(shape)
    if statements is None:
        try:
            statements = parse(lex(shape, at_eof_ok=True))
        except (Incomplete, SyntaxError):
            return Shape(parse(lex(script, at_eof_ok=True)))  # raises as the script itself does
        with _SHAPES_LOCK:
            while len(_SHAPES) >= SHAPES_KEPT:
                del _SHAPES[next(iter(_SHAPES))]
            _SHAPES[shape] = statements
    return Shape(statements, marker)
