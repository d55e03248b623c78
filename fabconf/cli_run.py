"""``fabconf diff`` and ``fabconf push``: the commands that talk to devices."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from fabconf import report, rollout
from fabconf.cli_lab import DEFAULT_STATE, start_lab
from fabconf.lock import DeviceLocks, LockedError
from fabconf.pipeline import Compiled, compile_inventory
from fabconf.render import render
from fabconf.select import select
from fabconf.steps import Job, Outcome, State


class UsageError(Exception):
    pass


def use_lab(args: argparse.Namespace) -> None:
    """``--lab``: start the lab for the inventory if needed, then target its inventory and credentials."""
    state = Path(args.state)
    rc = start_lab(Path(args.inventory), state, args.network, quiet=True)
    if rc != 0:
        raise UsageError("the lab could not be started")
    for line in (state / "lab.env").read_text().splitlines():
        key, _, value = line.partition("=")
        if key:
            os.environ[key] = value
    args.inventory = str(state / "inventory")


def jobs_for(compiled: Compiled, pattern: str | None) -> list[Job]:
    names = select(compiled.model, pattern)
    return [Job(compiled.model.devices[n], compiled.data[n], render(compiled.data[n])) for n in names]


def _progress(fmt: str):
    if fmt != "text" or not sys.stderr.isatty():
        return None

    def show(o: Outcome) -> None:
        print(f"  {o.device}: {o.state}", file=sys.stderr, flush=True)

    return show


def _emit(outcomes: list[Outcome], command: str, fmt: str, code: int, title: str) -> int:
    if fmt == "json":
        print(report.as_json(outcomes, command, code))
    else:
        report.print_text(outcomes, title)
    return code


def _pools(args: argparse.Namespace) -> dict[str, Any]:
    """The concurrency, timeout and progress options every device command passes to the rollout."""
    return {
        "workers": args.workers,
        "host_workers": args.host_workers,
        "timeout": args.timeout,
        "progress": _progress(args.format),
    }


def _prepare(args: argparse.Namespace) -> tuple[Compiled, list[Job]]:
    """What every device command starts with: the lab if asked, the compiled inventory, the selection."""
    if args.lab:
        use_lab(args)
    compiled = compile_inventory(Path(args.inventory))
    return compiled, jobs_for(compiled, args.limit)


def cmd_diff(args: argparse.Namespace) -> int:
    _, jobs = _prepare(args)
    outcomes = rollout.diff(jobs, **_pools(args))
    code = report.diff_exit_code(outcomes)
    return _emit(outcomes, "diff", args.format, code, "fabconf diff (dry run: nothing was changed)")


def cmd_verify(args: argparse.Namespace) -> int:
    compiled, jobs = _prepare(args)
    outcomes = rollout.verify(jobs, set(compiled.model.devices), bgp_wait=args.bgp_wait, **_pools(args))
    code = 0 if all(o.state is State.VERIFIED for o in outcomes) else 1
    return _emit(outcomes, "verify", args.format, code, "fabconf verify (read only)")


def cmd_push(args: argparse.Namespace) -> int:
    compiled, jobs = _prepare(args)
    the_plan = rollout.plan(jobs, canary=args.canary, batch=args.batch)
    if args.confirm_timeout < args.bgp_wait + 30:
        print(
            f"fabconf: warning: --confirm-timeout {args.confirm_timeout}s leaves little time to verify "
            f"(--bgp-wait {args.bgp_wait:g}s): EOS and Cumulus devices may revert before they are confirmed",
            file=sys.stderr,
        )
    if args.allow_fw_reset:
        rollout.HOST_OPTIONS["allow_fw_reset"] = True
    with DeviceLocks([j.name for j in jobs]):
        if not args.yes:
            if not sys.stdin.isatty():
                raise UsageError("push needs --yes when not run interactively")
            preview = rollout.diff(jobs, **{**_pools(args), "progress": None})
            report.print_text(preview, "fabconf push: planned changes")
            for i, wave in enumerate(the_plan.waves):
                label = "canary" if i == 0 and args.canary else f"batch {i if args.canary else i + 1}"
                print(f"{label}: {', '.join(j.name for j in wave)}")
            if report.diff_exit_code(preview) == 1:
                raise UsageError("some devices failed the dry run; fix them or --limit them out")
            if input("apply these changes? [y/N] ").strip().lower() not in ("y", "yes"):
                print("nothing was changed")
                return 1
        outcomes = rollout.push(
            the_plan,
            set(compiled.model.devices),
            canary=args.canary,
            max_fail=args.max_fail,
            revert_in=args.confirm_timeout,
            bgp_wait=args.bgp_wait,
            **_pools(args),
        )
    code = report.push_exit_code(outcomes)
    return _emit(outcomes, "push", args.format, code, "fabconf push")


def add_parsers(sub: argparse._SubParsersAction, inventory_arg) -> None:
    def common(p: argparse.ArgumentParser) -> None:
        inventory_arg(p)
        p.add_argument("-l", "--limit", metavar="PATTERN", help="devices: names, groups, globs; !x excludes")
        p.add_argument("--format", choices=("text", "json"), default="text")
        p.add_argument("--workers", type=int, default=20, help="switches worked on at once (default 20)")
        p.add_argument("--host-workers", type=int, default=50, help="GPU hosts worked on at once (default 50)")
        p.add_argument("--timeout", type=int, default=60, help="per-device connection timeout, seconds")
        p.add_argument("--lab", action="store_true", help="run against the built-in lab (started if needed)")
        p.add_argument("--state", default=DEFAULT_STATE, metavar="DIR", help="lab state directory (with --lab)")
        p.add_argument("--network", default="127.77.0.0/16", help=argparse.SUPPRESS)

    d = sub.add_parser(
        "diff",
        help="dry-run diff of every selected device; exit 0 in sync, 2 changes, 1 failure",
        description="Dry run: what push would change. Nothing is left on any device.",
    )
    common(d)
    d.set_defaults(func=cmd_diff)
    v = sub.add_parser(
        "verify",
        help="read-only checks: config at intent, MTU, LLDP vs cabling, BGP sessions up",
        description="Read-only: check that every selected device holds intent and is healthy.",
    )
    common(v)
    v.add_argument("--bgp-wait", type=float, default=10.0, help="seconds to wait for BGP sessions (default 10)")
    v.set_defaults(func=cmd_verify)
    p = sub.add_parser(
        "push",
        help="apply intent: canary, batches, commit-confirm, verify, rollback",
        description="Apply intent with commit-confirm, verification and rollback.",
    )
    common(p)
    p.add_argument("--canary", type=int, default=1, help="devices pushed first, alone (default 1)")
    p.add_argument("--batch", default="25%", help="devices per batch after the canary: N or N%% (default 25%%)")
    p.add_argument("--max-fail", type=int, default=0, help="failures tolerated before the rollout stops")
    p.add_argument(
        "--confirm-timeout",
        type=int,
        default=300,
        help="seconds before an unconfirmed commit reverts by itself (EOS, Cumulus)",
    )
    p.add_argument("--bgp-wait", type=float, default=30.0, help="seconds to wait for BGP sessions in verify")
    p.add_argument(
        "--allow-fw-reset",
        action="store_true",
        help="GPU hosts: run mlxfwreset so pending mlxconfig changes take effect now (disrupts traffic)",
    )
    p.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(func=cmd_push)


__all__ = ["LockedError", "UsageError", "add_parsers"]
