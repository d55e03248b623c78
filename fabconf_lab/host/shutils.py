"""Builtins and core utilities of the lab shell (echo, cat, tee, test, grep, sudo, bash -c, ...)."""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import posixpath
import re
import time
from collections.abc import Callable

from fabconf_lab.host.memfs import FsError
from fabconf_lab.host.shtypes import CommandFn, Invocation, Result, ShellExit


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
        elif name in BUILTINS and name not in ("exit", "set", "export", "cd", ":", "["):
            out.append(f"/usr/bin/{name}\n")
        elif inv.argv[0] == "command" and name in BUILTINS:
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


def _sha256sum(inv: Invocation) -> Result:
    """GNU coreutils ``sha256sum [FILE...]`` (no options): a line ``HEX  NAME`` per file (``-`` or none: stdin);
    a file that cannot be read is ``sha256sum: NAME: REASON`` on stderr and exit status 1, the others still
    printed [3P: coreutils sha256sum(1): "checksum, a space, a character indicating input mode ... and name",
    manpages.debian.org/bookworm/coreutils/sha256sum.1.en.html]."""
    names = inv.argv[1:] or ["-"]
    out, err, status = [], [], 0
    for name in names:
        if name.startswith("-") and name != "-":
            return Result(err=f"sha256sum: unrecognized option '{name}'\n", status=1)
        try:
            data = inv.stdin if name == "-" else inv.shell.fs.read(inv.shell.path(name))
        except FsError as exc:
            err.append(f"sha256sum: {name}: {exc}\n")
            status = 1
            continue
        out.append(f"{hashlib.sha256(data.encode('utf-8', 'surrogateescape')).hexdigest()}  {name}\n")
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


def _base64(inv: Invocation) -> Result:
    """GNU coreutils ``base64 [-d] [-w COLS] [FILE|-]``: encode (wrapped at 76 columns) or decode stdin/FILE.
    Decoding ignores newlines; other garbage is ``base64: invalid input`` with status 1."""
    args = list(inv.argv[1:])
    decode, wrap, names = False, 76, []
    while args:
        arg = args.pop(0)
        if arg in ("-d", "--decode"):
            decode = True
        elif arg in ("-w", "--wrap") and args:
            wrap = int(args.pop(0))
        elif arg.startswith("-") and arg != "-":
            return Result(err=f"base64: invalid option -- '{arg.lstrip('-')}'\n", status=1)
        else:
            names.append(arg)
    if len(names) > 1:
        return Result(err=f"base64: extra operand '{names[1]}'\n", status=1)
    data = inv.stdin
    if names and names[0] != "-":
        try:
            data = inv.shell.fs.read(inv.shell.path(names[0]))
        except FsError as exc:
            return Result(err=f"base64: {names[0]}: {exc}\n", status=1)
    if decode:
        try:
            return Result(base64.b64decode("".join(data.split()), validate=True).decode("utf-8", "surrogateescape"))
        except (binascii.Error, ValueError):
            return Result(err="base64: invalid input\n", status=1)
    text = base64.b64encode(data.encode("utf-8", "surrogateescape")).decode()
    if wrap:
        text = "\n".join(text[i : i + wrap] for i in range(0, len(text), wrap))
    return Result(text + "\n")


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
    """coreutils mkdir: without ``-p`` an existing directory or a missing parent is an error (a lock directory
    is taken by exactly one of two racing sessions); with ``-p`` parents are made and existing ones are fine."""
    err, status = [], 0
    parents = any(a.startswith("-") and "p" in a for a in inv.argv[1:])
    for name in [a for a in inv.argv[1:] if not a.startswith("-")]:
        path = inv.shell.path(name)
        try:
            if parents:
                parts = path.strip("/").split("/")
                for depth in range(1, len(parts) + 1):
                    inv.shell.fs.mkdir("/" + "/".join(parts[:depth]), root=inv.root)
            else:
                inv.shell.fs.mkdir(path, root=inv.root, exist_ok=False)
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
        return run_script(inv, inv.shell.path(args[0]))
    return inv.shell.nested(inv.stdin, "", inv.root)


def run_script(inv: Invocation, path: str) -> Result:
    fs = inv.shell.fs
    if not fs.exists(path):
        return Result(err=f"bash: {inv.argv[0]}: No such file or directory\n", status=127)
    if fs.isdir(path):
        return Result(err=f"bash: {inv.argv[0]}: Is a directory\n", status=126)
    return inv.shell.nested(fs.read(path), inv.stdin, inv.root)


BUILTINS: dict[str, CommandFn] = {
    "echo": _echo,
    "printf": _printf,
    "cat": _cat,
    "tee": _tee,
    "sha256sum": _sha256sum,
    "base64": _base64,
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
