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

Modules: ``shparse`` (lexer, parser), ``memfs`` (file system), ``shtypes`` (Result, Output, Invocation),
``shutils`` (builtins and utilities), this one (the executor, ``Shell``).
"""

from __future__ import annotations

import contextlib
import fnmatch
import posixpath
import re
from collections.abc import Callable

from fabconf_lab.host.memfs import FileSystem, FsError, MemoryFs, VirtualFiles
from fabconf_lab.host.shparse import (
    AndOr,
    ForNode,
    IfNode,
    Incomplete,
    Node,
    Pipeline,
    Shape,
    Simple,
    Word,
    is_incomplete,
    parse_script,
)
from fabconf_lab.host.shtypes import CommandFn, Invocation, Output, Result, ShellExit
from fabconf_lab.host.shutils import BUILTINS, run_script

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


# Called before every pipeline a shell runs (the lab's step faults inside a script), with the pipeline as a command
# line: None runs it as it is; (stdout, stderr, status) answers instead of running it; a callable runs it and is
# given its stdout, returning what is printed instead (a garbled reply; a delayed one sleeps in it).
PipelineHook = Callable[[str], "tuple[str, str, int] | Callable[[str], str] | None"]


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
        self.around_pipeline: PipelineHook | None = None
        self._shape = Shape([])  # the running script's statements and marker (``shparse.parse_script``)

    # -- public -------------------------------------------------------------------------------------
    def run(self, script: str, stdin: str = "", *, root: bool | None = None) -> Output:
        """Run ``script``; the shell's privilege may be raised for this run only (``root=True``)."""
        out = Output()
        saved = self.root
        if root is not None:
            self.root = root
        try:
            try:
                shape = parse_script(script)
            except Incomplete as exc:
                out.write(2, f"bash: syntax error: unexpected end of file ({exc})\n")
                self.last_status = out.status = 2
                return out
            except SyntaxError as exc:
                out.write(2, f"bash: {exc}\n")
                self.last_status = out.status = 2
                return out
            saved_shape, self._shape = self._shape, shape  # a script run from this one has its own
            try:
                self._nodes(shape.statements, out, stdin)
            except ShellExit as exc:
                self.last_status = exc.status
                out.exited = True
            finally:
                self._shape = saved_shape
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
                self.vars[self._shape.restore(node.name)] = value
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
        if self.around_pipeline is None:
            return self._run_pipeline(pipeline, out, stdin)
        shown = " | ".join(" ".join(w.literal() for w in simple.words) for simple in pipeline)
        action = self.around_pipeline(self._shape.restore(shown))
        if action is None:
            return self._run_pipeline(pipeline, out, stdin)
        if isinstance(action, tuple):
            stdout, stderr, status = action
            out.write(1, stdout)
            out.write(2, stderr)
            return status
        own = Output()
        status = self._run_pipeline(pipeline, own, stdin)
        for fd, text in own.chunks:
            if fd != 1:
                out.write(fd, text)
        out.write(1, action(own.stdout))
        return status

    def _run_pipeline(self, pipeline: Pipeline, out: Output, stdin: str) -> int:
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
                parts.append(self._shape.restore(text))
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
                body = self._shape.restore(red.heredoc.body or "")
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
            fn = self.commands.get(name) or BUILTINS.get(name)
            if fn is None:
                return Result(err=f"bash: {name}: command not found\n", status=127)
            return fn(inv)
        path = self.path(name)
        base = posixpath.basename(name)
        system = posixpath.dirname(path) in ("/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin")
        fn = self.commands.get(base) or BUILTINS.get(base)
        if system and fn is not None and not self.fs.exists(path):
            return fn(inv)
        return run_script(inv, path)

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
