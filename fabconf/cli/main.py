"""The ``fabconf`` command line: parse arguments into typed options and hand them to the commands."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fabconf.cli.pipes import EXIT_BROKEN_PIPE, ReaderGone, guarded_stdout, silence_stdout
from fabconf.compile.problems import InputError
from fabconf.errors import FabconfError

# Start-up imports only what a command needs: the compile stack (Jinja2, jsonschema, YAML) is imported when
# `validate` or `render` runs, the device stack when a device command's parser is built; `--version` and the
# parsing of a compile command load neither (`python -X importtime -m fabconf --version`; bench/bench_startup.py).

EXIT_OK, EXIT_ERROR = 0, 1
# commands that touch no device: their parser is built alone, without importing the device stack (NAPALM with
# every driver, netmiko, paramiko, Nornir: half a second of a `fabconf render --limit` of one leaf)
COMPILE_COMMANDS = ("validate", "render")
# first words that the compile commands' parser answers alone: `fabconf --version` builds no device parser
LIGHT_WORDS = (*COMPILE_COMMANDS, "--version")
# commands that touch no device either, whose parser is built beside the compile commands' alone (CI runs
# `fabconf report merge` and `fabconf audit` after every shard): the module that adds it
LIGHT_COMMANDS = {"audit": "fabconf.cli.auditlog", "report": "fabconf.cli.report_merge"}
# the other commands by first word, each with the group of parsers that defines it, in `fabconf --help`'s order:
# a run of one builds its group's parsers alone. No parser imports a job or a device library (NAPALM, netmiko,
# paramiko, Nornir): a handler imports what its run needs, so `fabconf diff --help`, a usage error and
# `fabconf lab status` load none of them (issue 42)
DEVICE_COMMANDS = {
    "diff": "devices",
    "verify": "devices",
    "push": "devices",
    "drift": "drift",
    "preflight": "preflight",
    "monitoring": "monitoring",
    "run": "run",
    "lab": "lab",
    "init": "init",
    "onboard": "onboard",
    "docs": "docs",
    "plan": "plan",
    "sot": "sot",
}
# each group's module, the function that adds its parsers, and whether it takes the --inventory argument
PARSERS = {
    "devices": ("fabconf.cli.devices", "add_parsers", True),
    "drift": ("fabconf.cli.drift_parser", "add_parser", True),
    "preflight": ("fabconf.cli.preflight", "add_parser", True),
    "monitoring": ("fabconf.cli.monitoring", "add_parser", True),
    "lab": ("fabconf.cli.lab", "add_parser", False),
    "init": ("fabconf.cli.init", "add_parser", False),
    "onboard": ("fabconf.cli.onboard", "add_parser", True),
    "docs": ("fabconf.cli.onboard", "add_docs_parser", True),
    "plan": ("fabconf.cli.plan", "add_parser", False),
    "sot": ("fabconf.cli.sot", "add_parser", True),
}


def _version() -> str:
    from importlib import metadata  # only for --version: importing it costs a tenth of a `render --limit`

    try:
        return metadata.version("fabconf")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """``--version``, whose version is looked up only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(
            option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help="show the version and exit"
        )

    def __call__(self, parser: argparse.ArgumentParser, *_args: object, **_kwargs: object) -> None:
        print(f"fabconf {_version()}")  # on stdout, as argparse's own "version" action
        parser.exit()


def _inventory_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-i", "--inventory", default="inventory", metavar="DIR", help="inventory directory (default: ./inventory)"
    )


def _run_book(args: argparse.Namespace) -> int:
    from fabconf.cli import devices, runbook, runvars
    from fabconf.cli.lab import lab_network
    from fabconf.jobs.target import Target

    options = runbook.RunOptions(
        check=args.check,
        yes=args.yes,
        inventory=Path(args.inventory) if args.inventory else None,
        limit=args.limit,
        target=Target(
            Path("inventory"),
            None,
            args.lab,
            Path(args.state),
            lab_network(args.network, Path(args.state)),
            devices.quiet_start,
        ),
        timeout=args.timeout,
        variables=runvars.parse(args.extra_vars),
    )
    return runbook.run(args.file, options)


def _validate(args: argparse.Namespace) -> int:
    from fabconf.cli.compile import run_validate

    return run_validate(Path(args.inventory))


def _render(args: argparse.Namespace) -> int:
    from fabconf.cli.compile import run_render

    return run_render(Path(args.inventory), Path(args.output), args.limit)


def build_parser(compile_only: bool = False, only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line (``compile_only``: only ``COMPILE_COMMANDS``, for a run of one of them; ``only``:
    those and the one of ``LIGHT_COMMANDS`` or ``DEVICE_COMMANDS`` named, for a run of it)."""
    parser = argparse.ArgumentParser(
        prog="fabconf",
        description="Configuration-as-code for lossless RoCEv2 GPU fabrics (Cumulus, EOS, NX-OS, ConnectX hosts).",
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    v = sub.add_parser(
        "validate",
        help="validate the inventory: schemas and cross-checks, every problem at once",
        description="validate the inventory: schemas and cross-checks, every problem at once",
    )
    _inventory_arg(v)
    v.set_defaults(func=_validate)

    r = sub.add_parser(
        "render",
        help="render the candidate configuration of every selected device",
        description="render the candidate configuration of every selected device",
    )
    _inventory_arg(r)
    r.add_argument(
        "-o", "--output", default="rendered", metavar="OUTDIR", help="one file per device (default: ./rendered)"
    )
    r.add_argument(
        "-l",
        "--limit",
        metavar="PATTERN",
        help="devices to render: names, groups or globs, ',' separated; !x excludes, &x intersects",
    )
    r.set_defaults(func=_render)
    if compile_only:
        return parser
    if only in LIGHT_COMMANDS:
        importlib.import_module(LIGHT_COMMANDS[only]).add_parser(sub)
        return parser
    if only in DEVICE_COMMANDS:  # `fabconf diff ...`: that command's parser alone, its module alone
        _add_parsers(sub, DEVICE_COMMANDS[only])
        return parser
    for group in dict.fromkeys(DEVICE_COMMANDS.values()):  # every command: `fabconf --help`, a usage error
        _add_parsers(sub, group)
    for module in LIGHT_COMMANDS.values():
        importlib.import_module(module).add_parser(sub)
    return parser


def _add_parsers(sub: Any, group: str) -> None:
    """The parser(s) of one of ``PARSERS``' groups, importing only the module that defines them."""
    if group == "run":
        _add_run_parser(sub)
        return
    module, function, with_inventory = PARSERS[group]
    add = getattr(importlib.import_module(module), function)
    if with_inventory:
        add(sub, _inventory_arg)
    else:
        add(sub)


def _add_run_parser(sub: Any) -> None:
    from fabconf.cli import devices
    from fabconf.deploy.options import DeviceOptions

    b = sub.add_parser(
        "run",
        help="run an Ansible-style runbook (tasks/*.yaml)",
        description="Run a runbook: a device selection and a sequence of validate/diff/push steps.",
    )
    b.add_argument("file", type=Path)
    b.add_argument("--check", action="store_true", help="dry run: every push step becomes a diff")
    b.add_argument("-y", "--yes", action="store_true", help="push steps do not ask for confirmation")
    b.add_argument("-i", "--inventory", default=None, metavar="DIR", help="override the runbook's inventory")
    b.add_argument("-l", "--limit", default=None, metavar="PATTERN", help="override the runbook's selection")
    b.add_argument("--timeout", type=int, default=DeviceOptions().timeout)
    b.add_argument(
        "-e",
        "--extra-vars",
        action="append",
        default=[],
        metavar="NAME=VALUE|@FILE",
        help="a runbook variable, {{ NAME }} in its values (repeatable; @FILE: a YAML mapping of them)",
    )
    devices.add_target_args(b)
    b.set_defaults(func=_run_book)


# Libraries whose own log lines (a peer resetting an SSH socket, a retried HTTPS call) would reach the
# terminal through logging's last-resort handler: a device's failure is reported once, in its Outcome.
QUIET_LOGGERS = ("paramiko", "pyeapi", "urllib3", "ncclient", "netmiko", "napalm", "nornir", "pynautobot")


def log_path() -> Path:
    """``FABCONF_LOG``, else ``fabconf.log`` beside the audit log (``~/.local/state/fabconf/``)."""
    from fabconf.deploy.audit import audit_path

    return Path(os.environ.get("FABCONF_LOG") or audit_path().parent / "fabconf.log")


class _LogFile(logging.Handler):
    """The log file (``log_path()``, 0600, never through a link), opened when a library first logs a line: a
    command whose libraries say nothing (``render``, ``validate``) opens no file and imports nothing for it. A file
    that cannot be opened or written drops the lines, never shows them."""

    def __init__(self) -> None:
        super().__init__()
        self._stream: Any = None
        self._unusable = False

    def emit(self, record: logging.LogRecord) -> None:  # called under the handler's lock
        if self._unusable:
            return
        try:
            if self._stream is None:
                from fabconf.deploy.private import open_private

                self._stream = os.fdopen(open_private(log_path(), os.O_WRONLY | os.O_APPEND), "a", encoding="utf-8")
            self._stream.write(self.format(record) + "\n")
            self._stream.flush()
        except (OSError, ValueError, FabconfError):  # no usable log file (ValueError: a stream closed meanwhile)
            self._unusable = True

    def close(self) -> None:
        with self.lock:  # type: ignore[union-attr]
            if self._stream is not None:
                with contextlib.suppress(OSError):
                    self._stream.close()
                self._stream = None
        super().close()


def quiet_libraries() -> None:
    """Third-party loggers never print on the terminal (FABCONF_DEBUG lets them through): what they say, and a
    traceback a library's own thread dies with, goes to the log file (``log_path()``, 0600, opened at the first
    such line); a device's failure is reported once, in its Outcome."""
    debug = bool(os.environ.get("FABCONF_DEBUG"))
    handler: logging.Handler = _LogFile()
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(name)s %(levelname)s %(message)s"))
    handler.set_name("fabconf-log")
    for name in QUIET_LOGGERS:
        logger = logging.getLogger(name)
        for old in [h for h in logger.handlers if h.get_name() == "fabconf-log"]:
            logger.removeHandler(old)
            old.close()
        logger.setLevel(logging.DEBUG if debug else logging.WARNING)
        logger.propagate = debug  # never logging's last-resort handler on stderr
        logger.addHandler(handler)

    def thread_died(args: threading.ExceptHookArgs) -> None:
        if debug or not _from_library(args):
            threading.__excepthook__(args)  # fabconf's own threads: a bug is shown, never hidden
            return
        error = args.exc_value if args.exc_value is not None else args.exc_type()
        logging.getLogger("paramiko").error("thread %s died", getattr(args.thread, "name", "?"), exc_info=error)

    threading.excepthook = thread_died


def _from_library(args: threading.ExceptHookArgs) -> bool:
    """A thread of a quiet library (paramiko's transport thread) or a traceback that ends in one."""
    if type(args.thread).__module__.split(".")[0] in QUIET_LOGGERS:
        return True
    files, tb = [], args.exc_traceback
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return bool(files) and any(f"/{name}/" in files[-1] for name in QUIET_LOGGERS)


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    first = words[0] if words else ""
    named = first in LIGHT_COMMANDS or first in DEVICE_COMMANDS
    parser = build_parser(compile_only=first in LIGHT_WORDS, only=first if named else None)
    args = parser.parse_args(words)
    quiet_libraries()  # after parsing: `--version`, `--help` and a usage error open no log file
    try:
        with guarded_stdout():
            code = int(args.func(args))
            # flushed here, while guarded: a block-buffered stdout (a pipe, without PYTHONUNBUFFERED) would otherwise
            # meet the closed pipe only at the interpreter's final flush ("Exception ignored ... BrokenPipeError",
            # exit 120)
            sys.stdout.flush()
            return code
    except InputError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        print(f"fabconf: {len(exc.problems.errors)} error(s); nothing was rendered or changed", file=sys.stderr)
        return EXIT_ERROR
    except (ReaderGone, BrokenPipeError):  # `fabconf diff | head`: the reader is gone; exit quietly, as shell tools do
        silence_stdout()
        return EXIT_BROKEN_PIPE
    except (FabconfError, ValueError) as exc:
        print(f"fabconf: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        print(f"fabconf: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("fabconf: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if not _template_error(exc):
            raise
        print(f"fabconf: template error (a fabconf bug, please report): {exc}", file=sys.stderr)
        return EXIT_ERROR


def _template_error(exc: Exception) -> bool:
    """A Jinja2 template error; Jinja2 is never imported for this: a run that did not load it raised none."""
    jinja2 = sys.modules.get("jinja2")
    return jinja2 is not None and isinstance(exc, jinja2.TemplateError)


if __name__ == "__main__":
    sys.exit(main())
