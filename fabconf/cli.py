"""The ``fabconf`` command line."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import jinja2

from fabconf import cli_lab, cli_run, runbook
from fabconf.pipeline import Compiled, compile_inventory
from fabconf.problems import InputError, Problems
from fabconf.render import filename, render
from fabconf.select import SelectionError, select

EXIT_OK, EXIT_ERROR = 0, 1


def _print_problems(problems: Problems) -> None:
    for p in problems:
        print(p, file=sys.stderr)


def _compile(args: argparse.Namespace) -> Compiled:
    return compile_inventory(Path(args.inventory))


def cmd_validate(args: argparse.Namespace) -> int:
    compiled = _compile(args)
    _print_problems(compiled.problems)
    devices = compiled.model.devices
    switches = sum(1 for d in devices.values() if d.is_switch)
    print(
        f"{args.inventory}: valid: {switches} switches, {len(devices) - switches} GPU hosts, "
        f"{len(compiled.model.links)} links, {len(compiled.problems.warnings)} warning(s)"
    )
    return EXIT_OK


def cmd_render(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    compiled = _compile(args)
    _print_problems(compiled.problems)
    names = select(compiled.model, args.limit)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        data = compiled.data[name]
        (out / filename(name, data["platform"])).write_text(render(data), encoding="utf-8")
    elapsed = time.perf_counter() - started
    print(f"rendered {len(names)} device(s) to {out}/ in {elapsed:.2f} s")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fabconf",
        description="Configuration-as-code for lossless RoCEv2 GPU fabrics (Cumulus, EOS, NX-OS, ConnectX hosts).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def inventory_arg(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "-i", "--inventory", default="inventory", metavar="DIR", help="inventory directory (default: ./inventory)"
        )

    def add(name: str, func: Callable[[argparse.Namespace], int], help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(func=func)
        inventory_arg(p)
        return p

    add("validate", cmd_validate, "validate the inventory: schemas and cross-checks, every problem at once")
    p = add("render", cmd_render, "render the candidate configuration of every selected device")
    p.add_argument(
        "-o",
        "--output",
        default="rendered",
        metavar="OUTDIR",
        help="directory for one file per device (default: ./rendered)",
    )
    p.add_argument(
        "-l",
        "--limit",
        metavar="PATTERN",
        help="devices to render: names, groups or globs, ',' separated; !x excludes, &x intersects",
    )
    cli_run.add_parsers(sub, inventory_arg)
    r = sub.add_parser(
        "run",
        help="run an Ansible-style runbook (tasks/*.yaml)",
        description="Run a runbook: a device selection and a sequence of validate/diff/push steps.",
    )
    r.add_argument("file", type=Path)
    r.add_argument("--check", action="store_true", help="dry run: every push step becomes a diff")
    r.add_argument("-i", "--inventory", default=None, metavar="DIR", help="override the runbook's inventory")
    r.add_argument("-l", "--limit", default=None, metavar="PATTERN", help="override the runbook's selection")
    r.add_argument("--lab", action="store_true", help="run against the built-in lab (started if needed)")
    r.add_argument("--state", default=cli_lab.DEFAULT_STATE, metavar="DIR")
    r.add_argument("--network", default="127.77.0.0/16", help=argparse.SUPPRESS)
    r.add_argument("--timeout", type=int, default=60)
    r.set_defaults(func=lambda a: runbook.run(a.file, a))
    cli_lab.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except InputError as exc:
        _print_problems(exc.problems)
        print(f"fabconf: {len(exc.problems.errors)} error(s); nothing was rendered or changed", file=sys.stderr)
        return EXIT_ERROR
    except (SelectionError, cli_run.UsageError, cli_run.LockedError, ValueError) as exc:
        print(f"fabconf: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except jinja2.TemplateError as exc:
        print(f"fabconf: template error (a fabconf bug, please report): {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        print(f"fabconf: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("fabconf: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
