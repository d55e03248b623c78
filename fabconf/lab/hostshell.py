"""A small POSIX-shell subset for lab Linux hosts: lexer, parser and executor over an in-memory file system.

Supported (enough for what configuration tools send over SSH; anything else is an error, not a guess):

- words with ``'single'``, ``"double"`` quotes and ``\\`` escapes; ``$?``, ``$VAR``, ``${VAR}`` expansion
  (not inside single quotes); pathname globs ``* ? [..]`` in unquoted words (no match: the word stays);
  ``#`` comments; ``\\``-newline continuation.
- lists: ``;``, newline, ``&&``, ``||``; pipelines ``a | b``; a trailing ``&`` runs in the foreground.
- redirections: ``> FILE``, ``>> FILE``, ``< FILE``, ``2> FILE``, ``2>> FILE``, ``2>&1``, ``>&2``, ``&> FILE``,
  ``/dev/null``; here-documents ``<<EOF``, ``<<'EOF'`` (no expansion), ``<<-EOF`` (leading tabs stripped).
  Redirections are performed with the privileges of the SHELL, not of ``sudo`` (``sudo echo 1 > /sys/x``
  fails for a non-root user exactly as in bash; use ``echo 1 | sudo tee /sys/x``).
- ``set -e`` (stop at the first failing list), ``exit [N]``, ``VAR=value`` assignments and ``export``.
- builtins and core utilities: ``echo [-n] [-e]``, ``printf FORMAT ARGS`` (``%s %d %%`` and ``\\n``),
  ``cat``, ``tee [-a]``, ``rm [-f] [-r]``, ``test``/``[ ]`` (``-f -e -d -s -n -z = != -eq -ne -lt -gt``, ``!``),
  ``ls [-1] [-l] [-a]``, ``mkdir [-p]``, ``touch``, ``chmod``, ``chown``, ``sync``, ``true``, ``false``, ``:``,
  ``cd``, ``pwd``, ``sleep`` (at most 5 s), ``grep [-q] [-v] [-c] [-l] [-s] [-E] [-F] [-i] [-H|-h]`` (file name
  prefixes with several files, so ``grep -H . /sys/.../enable/*`` reads a whole table), ``head|tail -n N|-c N``,
  ``wc -l``, ``whoami``, ``id -u``, ``which``/``command -v``, ``sudo [-n] [-E] [-s|-i] [CMD]``,
  ``bash|sh -c STRING``, ``bash|sh FILE``, and running a script by its path.
- compound commands: ``for NAME in WORDS; do ...; done`` and ``if LIST; then ...; [elif ...; then ...;] [else ...;]
  fi`` (also over several lines); ``! CMD`` negates a simple command.
- NOT supported: ``while``/``until``/``case``, functions, ``$(...)`` and backquotes, arithmetic, ``[[ ]]``,
  background jobs (a syntax error says so).
- a host adds its own commands (``commands``: name -> ``fn(Invocation) -> Result``).

An unknown command prints ``bash: X: command not found`` with status 127.
"""

from __future__ import annotations

import contextlib
import fnmatch
import posixpath
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from fabconf.lab.memfs import FileSystem, FsError, MemoryFs, VirtualFiles
from fabconf.lab.shparse import (
    AndOr,
    ForNode,
    IfNode,
    Incomplete,
    Node,
    Pipeline,
    Simple,
    Word,
    is_incomplete,
    lex,
    parse,
)

__all__ = [
    "CommandFn",
    "FileSystem",
    "FsError",
    "Invocation",
    "MemoryFs",
    "Output",
    "Result",
    "Shell",
    "ShellExit",
    "VirtualFiles",
    "is_incomplete",
]


class ShellExit(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


# -- results ------------------------------------------------------------------------------------


@dataclass
class Result:
    out: str = ""
    err: str = ""
    status: int = 0


@dataclass
class Output:
    """What a shell run printed, in order, split by file descriptor (1 stdout, 2 stderr)."""

    chunks: list[tuple[int, str]] = field(default_factory=list)
    status: int = 0
    exited: bool = False  # the script ran `exit`

    def write(self, fd: int, text: str) -> None:
        if text:
            self.chunks.append((fd, text))

    @property
    def stdout(self) -> str:
        return "".join(t for fd, t in self.chunks if fd == 1)

    @property
    def stderr(self) -> str:
        return "".join(t for fd, t in self.chunks if fd == 2)

    @property
    def merged(self) -> str:
        return "".join(t for _fd, t in self.chunks)


# -- executor ------------------------------------------------------------------------------------------


@dataclass
class Invocation:
    argv: list[str]
    stdin: str
    root: bool
    shell: Shell


CommandFn = Callable[[Invocation], Result]


class Shell:
    """One shell: variables, ``$?``, working directory, privilege. ``run`` executes a whole script."""

    def __init__(
        self,
        fs: FileSystem,
        commands: dict[str, CommandFn] | None = None,
        *,
        user: str = "root",
        hostname: Callable[[], str] = lambda: "localhost",
        env: dict[str, str] | None = None,
    ) -> None:
        self.fs = fs
        self.commands = dict(commands or {})
        self.user = user
        self.root = user == "root"
        self.hostname = hostname
        self.home = "/root" if self.root else f"/home/{user}"
        self.cwd = self.home
        self.vars: dict[str, str] = {"HOME": self.home, "USER": user, "SHELL": "/bin/bash", **(env or {})}
        self.last_status = 0
        self.errexit = False
        self._in_condition = False
        self.depth = 0

    # -- public -------------------------------------------------------------------------------------
    def run(self, script: str, stdin: str = "", *, root: bool | None = None) -> Output:
        """Run ``script``; the shell's privilege may be raised for this run only (``root=True``)."""
        out = Output()
        saved = self.root
        if root is not None:
            self.root = root
        try:
            try:
                statements = parse(lex(script, at_eof_ok=True))
            except Incomplete as exc:
                out.write(2, f"bash: syntax error: unexpected end of file ({exc})\n")
                self.last_status = out.status = 2
                return out
            except SyntaxError as exc:
                out.write(2, f"bash: {exc}\n")
                self.last_status = out.status = 2
                return out
            try:
                self._nodes(statements, out, stdin)
            except ShellExit as exc:
                self.last_status = exc.status
                out.exited = True
            out.status = self.last_status
            return out
        finally:
            self.root = saved

    def path(self, name: str) -> str:
        return posixpath.normpath(posixpath.join(self.cwd, name))

    # -- internals -----------------------------------------------------------------------------------
    def _nodes(self, nodes: list[Node], out: Output, stdin: str) -> int:
        """Run statements in order; ``set -e`` ends the script at a failing one (not in conditions)."""
        status = 0
        for node in nodes:
            status, final = self._node(node, out, stdin)
            self.last_status = status
            if final and status != 0 and self.errexit and not self._in_condition:
                raise ShellExit(status)
        return status

    def _node(self, node: Node, out: Output, stdin: str) -> tuple[int, bool]:
        if isinstance(node, ForNode):
            status = 0
            for value in self._words(node.words):
                self.vars[node.name] = value
                status = self._nodes(node.body, out, stdin)
            return status, True
        if isinstance(node, IfNode):
            for cond, body in node.branches:
                saved, self._in_condition = self._in_condition, True
                try:
                    ok = self._nodes(cond, out, stdin) == 0
                finally:
                    self._in_condition = saved
                if ok:
                    return self._nodes(body, out, stdin), True
            return (self._nodes(node.otherwise, out, stdin) if node.otherwise is not None else 0), True
        return self._and_or(node, out, stdin)

    def _and_or(self, statement: AndOr, out: Output, stdin: str) -> tuple[int, bool]:
        """Status of the list, and whether its last pipeline ran (only then does ``set -e`` apply)."""
        status = self.last_status
        ran_last = False
        for index, (connector, pipeline) in enumerate(statement):
            if (connector == "&&" and status != 0) or (connector == "||" and status == 0):
                ran_last = False
                continue
            status = self._pipeline(pipeline, out, stdin)
            self.last_status = status
            ran_last = index == len(statement) - 1
        return status, ran_last

    def _pipeline(self, pipeline: Pipeline, out: Output, stdin: str) -> int:
        data = stdin
        status = 0
        for index, simple in enumerate(pipeline):
            last = index == len(pipeline) - 1
            piped = Output()
            status = self._simple(simple, piped, data)
            data = piped.stdout
            for fd, text in piped.chunks:
                if fd == 2 or last:
                    out.write(fd, text)
        return status

    def _expand(self, word: Word) -> str:
        parts = []
        for kind, text in word.segments:
            if kind == "lit":
                parts.append(text)
            elif text == "?":
                parts.append(str(self.last_status))
            else:
                parts.append(self.vars.get(text, ""))
        return "".join(parts)

    def _glob(self, pattern: str) -> list[str]:
        """Pathname expansion of an unquoted word; no match leaves the word as it is (bash's default)."""
        absolute = pattern.startswith("/")
        parts = [p for p in pattern.split("/") if p]
        found = ["/" if absolute else ""]
        for part in parts:
            nxt = []
            for base in found:
                if not any(c in part for c in "*?["):
                    nxt.append(posixpath.join(base, part) if base else part)
                    continue
                directory = self.path(base) if base else self.cwd
                with contextlib.suppress(FsError):
                    names = self.fs.listdir(directory) if self.fs.isdir(directory) else []
                    nxt.extend(posixpath.join(base, n) if base else n for n in names if fnmatch.fnmatchcase(n, part))
            found = nxt
        return sorted(found) or [pattern]

    def _words(self, words: list[Word]) -> list[str]:
        argv = []
        for word in words:
            text = self._expand(word)
            if not word.quoted and any(c in text for c in "*?[") and word.segments:
                argv.extend(self._glob(text))
            else:
                argv.append(text)
        return argv

    def _simple(self, simple: Simple, out: Output, stdin: str) -> int:
        argv = self._words(simple.words)
        # leading VAR=value assignments
        assigns = []
        while argv and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[0]):
            assigns.append(argv.pop(0))
        if not argv:
            for item in assigns:
                name, _, value = item.partition("=")
                self.vars[name] = value
        # input
        for red in simple.redirects:
            if red.op == "<<" and red.heredoc is not None:
                body = red.heredoc.body or ""
                if red.heredoc.expand:
                    body = re.sub(r"\$\?", str(self.last_status), body)
                    body = re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: self.vars.get(m.group(1), ""), body)
                stdin = body
            elif red.op == "<" and red.target is not None:
                path = self.path(self._expand(red.target))
                try:
                    stdin = self.fs.read(path)
                except FsError as exc:
                    out.write(2, f"bash: {self._expand(red.target)}: {exc}\n")
                    return 1
        # output routing, performed with the shell's own privilege
        fds: dict[int, tuple[str, ...]] = {1: ("out",), 2: ("err",)}
        files: dict[str, list[str]] = {}
        for red in simple.redirects:
            if red.op in ("<", "<<"):
                continue
            if red.op == "2>&1":
                fds[2] = fds[1]
                continue
            if red.op == "1>&2":
                fds[1] = fds[2]
                continue
            assert red.target is not None
            shown = self._expand(red.target)
            path = self.path(shown)
            append = red.op.endswith(">>")
            try:
                if append:
                    self.fs.write(path, "", append=True, root=self.root)
                else:
                    self._truncate(path)
            except FsError as exc:
                out.write(2, f"bash: {shown}: {exc}\n")
                return 1
            files.setdefault(path, [])
            target = ("file", path)
            if red.op.startswith("&"):
                fds[1] = fds[2] = target
            elif red.op.startswith("2"):
                fds[2] = target
            else:
                fds[1] = target
        if not argv:
            return 0
        result = self.execute(argv, stdin)
        for fd, text in ((1, result.out), (2, result.err)):
            dest = fds[fd]
            if dest[0] == "out":
                out.write(1, text)
            elif dest[0] == "err":
                out.write(2, text)
            else:
                files[dest[1]].append(text)
        for path, chunks in files.items():
            data = "".join(chunks)
            if data:
                try:
                    self.fs.write(path, data, append=True, root=self.root)
                except FsError as exc:
                    out.write(2, f"bash: echo: write error: {exc}\n")
                    return 1
        return result.status

    def _truncate(self, path: str) -> None:
        if path == "/dev/null":
            return
        if path.startswith(("/sys/", "/proc/")):
            # sysfs files cannot be truncated; the write happens when data arrives
            if not self.root:
                raise FsError("Permission denied")
            if not self.fs.exists(path):
                raise FsError("No such file or directory")
            return
        self.fs.write(path, "", append=False, root=self.root)

    def execute(self, argv: list[str], stdin: str = "", *, root: bool | None = None) -> Result:
        """Run one command (a builtin, a host command or a script file) with the given privilege."""
        as_root = self.root if root is None else root
        name = argv[0]
        inv = Invocation(argv, stdin, as_root, self)
        if "/" not in name:
            fn = self.commands.get(name) or _BUILTINS.get(name)
            if fn is None:
                return Result(err=f"bash: {name}: command not found\n", status=127)
            return fn(inv)
        path = self.path(name)
        base = posixpath.basename(name)
        system = posixpath.dirname(path) in ("/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin")
        fn = self.commands.get(base) or _BUILTINS.get(base)
        if system and fn is not None and not self.fs.exists(path):
            return fn(inv)
        return _run_script(inv, path)

    def nested(self, script: str, stdin: str, root: bool) -> Result:
        """``bash -c`` / script files: same variables and file system, own ``exit``."""
        if self.depth > 8:
            return Result(err="bash: maximum nesting level exceeded\n", status=1)
        saved_errexit, saved_status = self.errexit, self.last_status
        self.depth += 1
        self.errexit = False
        try:
            output = self.run(script, stdin, root=root)
            return Result(output.stdout, output.stderr, output.status)
        finally:
            self.depth -= 1
            self.errexit = saved_errexit
            self.last_status = saved_status


# -- builtins --------------------------------------------------------------------------------------


def _echo(inv: Invocation) -> Result:
    args = inv.argv[1:]
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        escapes = "e" in args[0]
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text = text.replace("\\n", "\n").replace("\\t", "\t")
    return Result(text + ("\n" if newline else ""))


def _printf(inv: Invocation) -> Result:
    if len(inv.argv) < 2:
        return Result(err="printf: usage: printf format [arguments]\n", status=2)
    fmt = inv.argv[1].replace("\\n", "\n").replace("\\t", "\t")
    args = list(inv.argv[2:])
    slots = len(re.findall(r"%[sd]", fmt))

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "%%":
            return "%"
        return args.pop(0) if args else ""

    out = re.sub(r"%%|%[sd]", sub, fmt)
    while slots and args:
        out += re.sub(r"%%|%[sd]", sub, fmt)
    return Result(out)


def _bang(inv: Invocation) -> Result:
    if len(inv.argv) < 2:
        return Result(status=1)
    result = inv.shell.execute(inv.argv[1:], inv.stdin)
    return Result(result.out, result.err, 0 if result.status else 1)


def _which(inv: Invocation) -> Result:
    """``which NAME`` / ``command -v NAME``: where a builtin or host command "lives"."""
    args = [a for a in inv.argv[1:] if not a.startswith("-")]
    out, status = [], 0
    for name in args:
        if name in inv.shell.commands:
            sbin = name in ("mlnx_qos", "mlxconfig", "mlxfwreset", "cma_roce_tos", "ip", "reboot", "lldpad")
            out.append(f"/usr/{'sbin' if sbin else 'bin'}/{name}\n")
        elif name in _BUILTINS and name not in ("exit", "set", "export", "cd", ":", "["):
            out.append(f"/usr/bin/{name}\n")
        elif inv.argv[0] == "command" and name in _BUILTINS:
            out.append(f"{name}\n")
        else:
            status = 1
    return Result("".join(out), status=status)


def _command(inv: Invocation) -> Result:
    if len(inv.argv) > 1 and inv.argv[1] == "-v":
        return _which(inv)
    return inv.shell.execute(inv.argv[1:], inv.stdin) if len(inv.argv) > 1 else Result()


def _cat(inv: Invocation) -> Result:
    names = [a for a in inv.argv[1:] if a != "-"] or None
    if names is None:
        return Result(inv.stdin)
    out, err, status = [], [], 0
    for name in names:
        try:
            out.append(inv.shell.fs.read(inv.shell.path(name)))
        except FsError as exc:
            err.append(f"cat: {name}: {exc}\n")
            status = 1
    return Result("".join(out), "".join(err), status)


def _tee(inv: Invocation) -> Result:
    args = inv.argv[1:]
    append = "-a" in args
    err, status = [], 0
    for name in [a for a in args if not a.startswith("-")]:
        try:
            inv.shell.fs.write(inv.shell.path(name), inv.stdin, append=append, root=inv.root)
        except FsError as exc:
            err.append(f"tee: {name}: {exc}\n")
            status = 1
    return Result(inv.stdin, "".join(err), status)


def _rm(inv: Invocation) -> Result:
    flags = "".join(a[1:] for a in inv.argv[1:] if a.startswith("-"))
    err, status = [], 0
    for name in [a for a in inv.argv[1:] if not a.startswith("-")]:
        try:
            inv.shell.fs.remove(inv.shell.path(name), root=inv.root, recursive="r" in flags or "R" in flags)
        except FsError as exc:
            if "f" in flags and str(exc) == "No such file or directory":
                continue
            err.append(f"rm: cannot remove '{name}': {exc}\n")
            status = 1
    return Result("", "".join(err), status)


def _test(inv: Invocation) -> Result:
    args = inv.argv[1:]
    if inv.argv[0] == "[":
        if not args or args[-1] != "]":
            return Result(err="bash: [: missing `]'\n", status=2)
        args = args[:-1]
    negate = False
    if args and args[0] == "!":
        negate, args = True, args[1:]
    fs, path = inv.shell.fs, inv.shell.path
    ok: bool
    if not args:
        ok = False
    elif len(args) == 1:
        ok = args[0] != ""
    elif len(args) == 2:
        op, val = args
        tests: dict[str, Callable[[], bool]] = {
            "-f": lambda: fs.exists(path(val)) and not fs.isdir(path(val)),
            "-e": lambda: fs.exists(path(val)),
            "-d": lambda: fs.isdir(path(val)),
            "-s": lambda: fs.exists(path(val)) and not fs.isdir(path(val)) and bool(fs.read(path(val))),
            "-x": lambda: fs.exists(path(val)),
            "-r": lambda: fs.exists(path(val)),
            "-n": lambda: val != "",
            "-z": lambda: val == "",
        }
        if op not in tests:
            return Result(err=f"bash: test: {op}: unary operator expected\n", status=2)
        ok = tests[op]()
    elif len(args) == 3:
        a, op, b = args
        if op in ("=", "=="):
            ok = a == b
        elif op == "!=":
            ok = a != b
        elif op in ("-eq", "-ne", "-lt", "-gt", "-le", "-ge"):
            try:
                x, y = int(a), int(b)
            except ValueError:
                return Result(err=f"bash: test: {a}: integer expression expected\n", status=2)
            ok = {"-eq": x == y, "-ne": x != y, "-lt": x < y, "-gt": x > y, "-le": x <= y, "-ge": x >= y}[op]
        else:
            return Result(err=f"bash: test: {op}: binary operator expected\n", status=2)
    else:
        return Result(err="bash: test: too many arguments\n", status=2)
    return Result(status=0 if ok != negate else 1)


def _ls(inv: Invocation) -> Result:
    flags = "".join(a[1:] for a in inv.argv[1:] if a.startswith("-"))
    names = [a for a in inv.argv[1:] if not a.startswith("-")] or ["."]
    out, err, status = [], [], 0
    fs = inv.shell.fs
    for name in names:
        target = inv.shell.path(name)
        if not fs.exists(target):
            err.append(f"ls: cannot access '{name}': No such file or directory\n")
            status = 2
            continue
        if fs.isdir(target):
            entries = fs.listdir(target)
            if len(names) > 1:
                out.append(f"{name}:\n")
        else:
            entries = [name]
        for entry in entries:
            if "l" in flags:
                full = target if entry == name else posixpath.join(target, entry)
                kind = "d" if fs.isdir(full) else "-"
                size = 0 if kind == "d" else len(fs.read(full).encode())
                out.append(f"{kind}rw-r--r-- 1 root root {size:>6} Jan  1 00:00 {entry}\n")
            else:
                out.append(entry + "\n")
    return Result("".join(out), "".join(err), status)


def _mkdir(inv: Invocation) -> Result:
    err, status = [], 0
    for name in [a for a in inv.argv[1:] if not a.startswith("-")]:
        path = inv.shell.path(name)
        try:
            parts = path.strip("/").split("/")
            for depth in range(1, len(parts) + 1):
                inv.shell.fs.mkdir("/" + "/".join(parts[:depth]), root=inv.root)
        except FsError as exc:
            err.append(f"mkdir: cannot create directory '{name}': {exc}\n")
            status = 1
    return Result("", "".join(err), status)


def _touch(inv: Invocation) -> Result:
    err, status = [], 0
    for name in [a for a in inv.argv[1:] if not a.startswith("-")]:
        path = inv.shell.path(name)
        try:
            inv.shell.fs.write(path, "", append=True, root=inv.root)
        except FsError as exc:
            err.append(f"touch: cannot touch '{name}': {exc}\n")
            status = 1
    return Result("", "".join(err), status)


def _noop(inv: Invocation) -> Result:
    return Result()


def _false(inv: Invocation) -> Result:
    return Result(status=1)


def _exit(inv: Invocation) -> Result:
    try:
        status = int(inv.argv[1]) if len(inv.argv) > 1 else inv.shell.last_status
    except ValueError:
        status = 2
    raise ShellExit(status & 0xFF)


def _set(inv: Invocation) -> Result:
    for arg in inv.argv[1:]:
        if arg.startswith("-") and "e" in arg:
            inv.shell.errexit = True
        elif arg.startswith("+") and "e" in arg:
            inv.shell.errexit = False
    return Result()


def _export(inv: Invocation) -> Result:
    for arg in inv.argv[1:]:
        name, eq, value = arg.partition("=")
        if eq:
            inv.shell.vars[name] = value
    return Result()


def _cd(inv: Invocation) -> Result:
    target = inv.shell.path(inv.argv[1]) if len(inv.argv) > 1 else inv.shell.home
    if not inv.shell.fs.isdir(target):
        return Result(err=f"bash: cd: {inv.argv[1]}: No such file or directory\n", status=1)
    inv.shell.cwd = target
    return Result()


def _pwd(inv: Invocation) -> Result:
    return Result(inv.shell.cwd + "\n")


def _sleep(inv: Invocation) -> Result:
    with contextlib.suppress(ValueError, IndexError):
        time.sleep(min(float(inv.argv[1]), 5.0))
    return Result()


def _lines_of(inv: Invocation, names: list[str]) -> tuple[list[str], str, int]:
    if not names:
        return inv.stdin.splitlines(), "", 0
    lines, err, status = [], "", 0
    for name in names:
        try:
            lines.extend(inv.shell.fs.read(inv.shell.path(name)).splitlines())
        except FsError as exc:
            err += f"{inv.argv[0]}: {name}: {exc}\n"
            status = 2
    return lines, err, status


def _grep(inv: Invocation) -> Result:
    args = inv.argv[1:]
    flags = ""
    while args and args[0].startswith("-") and len(args[0]) > 1:
        flags += args.pop(0)[1:]
    if not args:
        return Result(err="Usage: grep [OPTION]... PATTERNS [FILE]...\n", status=2)
    pattern = args.pop(0)
    if "F" in flags:
        pattern = re.escape(pattern)
    elif "E" not in flags:
        pattern = pattern.replace(r"\|", "|").replace(r"\(", "(").replace(r"\)", ")")
    rx = re.compile(pattern, re.IGNORECASE if "i" in flags else 0)
    prefix = ("H" in flags or len(args) > 1) and "h" not in flags
    sources: list[tuple[str, str]] = []
    err = ""
    if not args:
        sources.append(("(standard input)", inv.stdin))
    for name in args:
        try:
            sources.append((name, inv.shell.fs.read(inv.shell.path(name))))
        except FsError as exc:
            err += f"grep: {name}: {exc}\n"
    out, total = [], 0
    for name, text in sources:
        hits = [ln for ln in text.splitlines() if bool(rx.search(ln)) != ("v" in flags)]
        total += len(hits)
        if "c" in flags:
            out.append(f"{name}:{len(hits)}\n" if prefix else f"{len(hits)}\n")
        elif "l" in flags:
            out.extend([f"{name}\n"] if hits else [])
        else:
            out.extend(f"{name}:{h}\n" if prefix else f"{h}\n" for h in hits)
    status = 2 if err and "s" not in flags else 0 if total else 1
    if "q" in flags:
        return Result(status=0 if total else status)
    return Result("".join(out), "" if "s" in flags else err, status)


def _head_tail(inv: Invocation) -> Result:
    args = inv.argv[1:]
    count, chars = 10, None
    names = []
    while args:
        arg = args.pop(0)
        if arg in ("-n", "-c") and args and args[0].isdigit():
            value = int(args.pop(0))
            count, chars = (value, chars) if arg == "-n" else (count, value)
        elif re.fullmatch(r"-n?\d+", arg):
            count = int(arg.lstrip("-n"))
        elif re.fullmatch(r"-c\d+", arg):
            chars = int(arg[2:])
        elif arg.startswith("-"):
            return Result(err=f"{inv.argv[0]}: invalid option -- '{arg.lstrip('-')}'\n", status=1)
        else:
            names.append(arg)
    if chars is not None:
        text, err, status = _text_of(inv, names)
        return Result(text[:chars] if inv.argv[0] == "head" else text[-chars:] if chars else "", err, status)
    lines, err, status = _lines_of(inv, names)
    picked = lines[:count] if inv.argv[0] == "head" else lines[-count:] if count else []
    return Result("".join(x + "\n" for x in picked), err, 1 if status else 0)


def _text_of(inv: Invocation, names: list[str]) -> tuple[str, str, int]:
    if not names:
        return inv.stdin, "", 0
    try:
        return "".join(inv.shell.fs.read(inv.shell.path(n)) for n in names), "", 0
    except FsError as exc:
        return "", f"{inv.argv[0]}: {names[0]}: {exc}\n", 1


def _wc(inv: Invocation) -> Result:
    lines, err, status = _lines_of(inv, [a for a in inv.argv[1:] if not a.startswith("-")])
    return Result(f"{len(lines)}\n", err, 1 if status else 0)


def _whoami(inv: Invocation) -> Result:
    return Result(("root" if inv.root else inv.shell.user) + "\n")


def _id(inv: Invocation) -> Result:
    if "-u" in inv.argv:
        return Result("0\n" if inv.root else "1000\n")
    if inv.root:
        return Result("uid=0(root) gid=0(root) groups=0(root)\n")
    user = inv.shell.user
    return Result(f"uid=1000({user}) gid=1000({user}) groups=1000({user}),27(sudo)\n")


def _sudo(inv: Invocation) -> Result:
    args = inv.argv[1:]
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-s", "-i") and not args:
            return Result()  # an interactive root shell: sessions handle this themselves
        if flag == "-u" and args:
            args.pop(0)
    if not args:
        return Result(err="usage: sudo -h | -K | -k | -V\n", status=1)
    if args[0] in ("su", "-s") and len(args) == 1:
        return Result()
    return inv.shell.execute(args, inv.stdin, root=True)


def _bash(inv: Invocation) -> Result:
    args = inv.argv[1:]
    while args and args[0] in ("-e", "-x", "-eu", "-ex", "-l", "--login", "--norc"):
        args = args[1:]
    if args and args[0] == "-c":
        if len(args) < 2:
            return Result(err=f"{inv.argv[0]}: -c: option requires an argument\n", status=2)
        return inv.shell.nested(args[1], inv.stdin, inv.root)
    if args:
        return _run_script(inv, inv.shell.path(args[0]))
    return inv.shell.nested(inv.stdin, "", inv.root)


def _run_script(inv: Invocation, path: str) -> Result:
    fs = inv.shell.fs
    if not fs.exists(path):
        return Result(err=f"bash: {inv.argv[0]}: No such file or directory\n", status=127)
    if fs.isdir(path):
        return Result(err=f"bash: {inv.argv[0]}: Is a directory\n", status=126)
    return inv.shell.nested(fs.read(path), inv.stdin, inv.root)


_BUILTINS: dict[str, CommandFn] = {
    "echo": _echo,
    "printf": _printf,
    "cat": _cat,
    "tee": _tee,
    "rm": _rm,
    "test": _test,
    "[": _test,
    "ls": _ls,
    "mkdir": _mkdir,
    "touch": _touch,
    "chmod": _noop,
    "chown": _noop,
    "sync": _noop,
    "true": _noop,
    ":": _noop,
    "false": _false,
    "exit": _exit,
    "set": _set,
    "export": _export,
    "cd": _cd,
    "pwd": _pwd,
    "sleep": _sleep,
    "grep": _grep,
    "head": _head_tail,
    "tail": _head_tail,
    "wc": _wc,
    "whoami": _whoami,
    "id": _id,
    "sudo": _sudo,
    "which": _which,
    "!": _bang,
    "command": _command,
    "bash": _bash,
    "sh": _bash,
}
