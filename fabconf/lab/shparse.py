"""Lexer and parser of the lab hosts' shell subset (see ``fabconf.lab.hostshell`` for what is supported)."""

from __future__ import annotations

import re
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
_REDIRECTS = ("&>>", "&>", ">>", ">&", ">", "<<-", "<<", "<")


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
            m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[j:])
            if not m:
                lit("$")
                return j
            name, j = m.group(0), j + m.end()
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
        matched = next((op for op in (*_REDIRECTS[:-1], "&&", "||", "<") if text.startswith(op, i)), None)
        if matched is None and ch in ";|&\n":
            matched = ch
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
    try:
        lex(text, at_eof_ok=False)
    except Incomplete:
        return True
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


def parse(tokens: list[Word | Op]) -> list[AndOr]:
    statements: list[AndOr] = []
    current: AndOr = []
    pipeline: Pipeline = []
    simple = Simple()
    connector = ""
    it = iter(tokens)

    def flush_simple() -> None:
        nonlocal simple
        if simple.words or simple.redirects:
            pipeline.append(simple)
        simple = Simple()

    def flush_pipeline(next_connector: str) -> None:
        nonlocal pipeline, connector
        flush_simple()
        if pipeline:
            current.append((connector, pipeline))
        pipeline = []
        connector = next_connector

    for tok in it:
        if isinstance(tok, Word):
            simple.words.append(tok)
            continue
        op = tok.op
        if op in ("\n", ";", "&"):
            flush_pipeline("")
            if current:
                statements.append(current)
            current = []
        elif op in ("&&", "||"):
            flush_pipeline(op)
        elif op == "|":
            flush_simple()
        elif op in ("<<", "<<-"):
            simple.redirects.append(Redirect("<<", heredoc=tok.heredoc))
        elif op in ("2>&1", "1>&2"):
            simple.redirects.append(Redirect(op))
        else:
            target = next(it, None)
            if not isinstance(target, Word):
                raise SyntaxError(f"syntax error near unexpected token `{op}'")
            simple.redirects.append(Redirect(op, target=target))
    flush_pipeline("")
    if current:
        statements.append(current)
    return statements
