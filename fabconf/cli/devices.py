"""``fabconf diff``, ``verify`` and ``push``: the commands that talk to devices.

The argparse layer (``add_parsers``, ``cmd_*``) only turns arguments into typed options; ``run_diff``,
``run_verify`` and ``run_push`` call the jobs (``fabconf.jobs``) with the terminal's progress and approval, and
write their reports; the runbook runner calls them too.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabconf.cli.labdefaults import DEFAULT_STATE, NETWORK_HELP
from fabconf.deploy.options import DeviceOptions, PushOptions, VerifyOptions
from fabconf.drivers.inventory_transport import ALLOW_FLAG
from fabconf.drivers.trust import INSECURE_WARNING, Trust
from fabconf.errors import UsageError

# The device stack (the jobs, hence Nornir, NAPALM, netmiko, paramiko) is imported by the handlers that run
# a job, never at import: building the parser (`fabconf diff --help`, a usage error) loads none of it (issue 42).
# Nor does it load the report (rich), the progress bar, the lab's command module or the model (through the job
# descriptions): the functions that run a command import them.
if TYPE_CHECKING:
    from fabconf.deploy import rollout
    from fabconf.deploy.job import Job, Outcome
    from fabconf.deploy.processors import Progress
    from fabconf.jobs.target import ProgressFactory, Target


def progress_for(fmt: str) -> ProgressFactory:
    """Progress on stderr for text reports (a JSON report stays the only output of a machine's run)."""

    def factory(command: str, jobs: list[Job]) -> contextlib.AbstractContextManager[Progress | None]:
        return progress(command, jobs, fmt)

    return factory


@contextlib.contextmanager
def progress(command: str, jobs: list[Job], fmt: str) -> Iterator[Progress | None]:
    """Progress on stderr for text reports (a JSON report stays the only output of a machine's run)."""
    if fmt != "text" or not jobs:
        yield None
        return
    from fabconf.cli.progress import RunProgress

    with RunProgress(command, len(jobs), sys.stderr) as shown:
        yield shown


@dataclass
class Output:
    """Where a command's report goes: text or JSON on stdout, or (``documents``) collected for a caller
    that prints one JSON document for several commands (the runbook runner). Anything that is not the
    report itself (previews, prompts, warnings) goes to stderr whenever the report is JSON."""

    fmt: str = "text"
    documents: list[dict[str, Any]] | None = None
    commands: bool = False  # show what is sent instead of the configuration diff
    diffs: bool = True  # False once the diffs were shown (a push's plan): the report shows outcomes only

    @property
    def side(self) -> Any:
        return sys.stderr if self.fmt == "json" else sys.stdout

    def emit(
        self, outcomes: list[Outcome], command: str, code: int, title: str, extra: dict[str, Any] | None = None
    ) -> int:
        """The report; ``extra``: top-level fields a command adds to its JSON report (a push's ``waves``)."""
        from fabconf.cli import report

        if self.fmt == "json" and self.documents is not None:
            self.documents.append({**report.as_dict(outcomes, command, code), **(extra or {})})
        elif self.fmt == "json":
            print(json.dumps({**report.as_dict(outcomes, command, code), **(extra or {})}, indent=2))
        else:
            report.print_text(outcomes, title, commands=self.commands, diffs=self.diffs)
        return code


def confirm(question: str) -> bool:
    """Ask on the terminal (the prompt on stderr, so a JSON stdout stays one document)."""
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    return input().strip().lower() in ("y", "yes")


@dataclass
class TerminalApprover:
    """A push's approval on the terminal: the planned changes and the waves on ``stream``, then the question."""

    stream: Any
    commands: bool = False

    def show(self, preview: list[Outcome], plan: rollout.Plan) -> None:
        from fabconf.cli import report

        report.print_text(preview, "fabconf push: planned changes", stream=self.stream, commands=self.commands)
        for label, wave in zip(plan.labels(), plan.waves, strict=True):
            print(f"{label}: {', '.join(j.name for j in wave)}", file=self.stream)

    def ask(self) -> bool:
        if confirm("apply these changes?"):
            return True
        print("nothing was changed", file=sys.stderr)
        return False


def approver(out: Output, yes: bool) -> TerminalApprover | None:
    """None with ``--yes``; otherwise the terminal's approval, refused when there is no terminal to ask on."""
    if yes:
        return None
    if not sys.stdin.isatty():
        raise UsageError("push needs --yes when not run interactively")
    return TerminalApprover(out.side, out.commands)


def run_diff(target: Target, options: DeviceOptions, out: Output | None = None) -> int:
    from fabconf.jobs.diff import diff
    from fabconf.jobs.target import Hooks

    out = out or Output()
    result = diff(target, options, Hooks(progress_for(out.fmt)))
    return out.emit(result.outcomes, "diff", result.exit_code, "fabconf diff (dry run: nothing was changed)")


def run_verify(target: Target, options: DeviceOptions, verify_options: VerifyOptions, out: Output | None = None) -> int:
    from fabconf.jobs.target import Hooks
    from fabconf.jobs.verify import verify

    out = out or Output()
    result = verify(target, options, verify_options, Hooks(progress_for(out.fmt)))
    return out.emit(result.outcomes, "verify", result.exit_code, "fabconf verify (read only)")


def run_push(
    target: Target,
    options: DeviceOptions,
    push_options: PushOptions,
    out: Output | None = None,
    yes: bool = False,
) -> int:
    from fabconf.cli import pushplan
    from fabconf.jobs.push import push
    from fabconf.jobs.target import Hooks

    out = out or Output()
    result = push(target, options, push_options, Hooks(progress_for(out.fmt), approver(out, yes)))
    if result.declined:
        return result.exit_code
    if result.previewed:
        out = dataclasses.replace(out, diffs=False)  # each diff is shown once, in the plan
    waves = None if result.plan is None or result.estimate is None else pushplan.timing(result.plan, result.estimate)
    code = out.emit(
        result.outcomes, "push", result.exit_code, "fabconf push", None if waves is None else {"waves": waves}
    )
    if waves is not None and out.fmt == "text":  # the estimate against what each wave took
        pushplan.print_timing(waves)
    return code


# -- the argparse layer -------------------------------------------------------------------------------------------
def quiet_start(inventory: Path, state: Path, network: str) -> int:
    """How a ``--lab`` command starts the lab when it is not running (a running one is used as it is)."""
    from fabconf.cli.lab import start_lab

    return start_lab(inventory, state, network, quiet=True)


def target_of(args: argparse.Namespace) -> Target:
    from fabconf.cli.lab import lab_network
    from fabconf.jobs.target import Target

    return Target(
        Path(args.inventory),
        args.limit,
        args.lab,
        Path(args.state),
        lab_network(args.network, Path(args.state)),
        quiet_start,
    )


def device_options_of(args: argparse.Namespace) -> DeviceOptions:
    insecure = Trust.from_env(getattr(args, "insecure", False)).insecure
    if insecure:
        print(f"fabconf: {INSECURE_WARNING}", file=sys.stderr)
    return DeviceOptions(
        insecure=insecure,
        workers=args.workers,
        host_workers=args.host_workers,
        timeout=args.timeout,
        allow_fw_reset=getattr(args, "allow_fw_reset", False),
        retries=getattr(args, "retries", DeviceOptions().retries),
        allow_inventory_transport=getattr(args, "allow_inventory_transport", False),
        processes=getattr(args, "processes", None),
    )


def cmd_diff(args: argparse.Namespace) -> int:
    return run_diff(target_of(args), device_options_of(args), Output(args.format, commands=args.commands))


def cmd_verify(args: argparse.Namespace) -> int:
    return run_verify(
        target_of(args),
        device_options_of(args),
        VerifyOptions(bgp_wait=args.bgp_wait, cabling=args.cabling),
        Output(args.format),
    )


def push_options_of(args: argparse.Namespace) -> PushOptions:
    return PushOptions(
        canary=args.canary,
        batch=args.batch,
        max_fail=args.max_fail,
        confirm_timeout=args.confirm_timeout,
        bgp_wait=args.bgp_wait,
    )


def cmd_push(args: argparse.Namespace) -> int:
    push_options = push_options_of(args)
    if args.plan:
        from fabconf.cli import pushplan
        from fabconf.jobs.push import forecast

        return pushplan.run(forecast(target_of(args), device_options_of(args), push_options), args.format)
    out = Output(args.format, commands=args.commands)
    return run_push(target_of(args), device_options_of(args), push_options, out, args.yes)


def add_target_args(p: argparse.ArgumentParser) -> None:
    """--lab, --state and --network: where the devices are."""
    p.add_argument("--lab", action="store_true", help="run against the built-in lab (started if needed)")
    p.add_argument("--state", default=DEFAULT_STATE, metavar="DIR", help="lab state directory (with --lab)")
    p.add_argument("--network", default=None, metavar="CIDR", help=NETWORK_HELP)


def add_report_args(p: argparse.ArgumentParser, inventory_arg: Any, formats: tuple[str, ...]) -> None:
    """The inventory, the selection, and where the report goes, for commands with file reports (drift, preflight)."""
    inventory_arg(p)
    p.add_argument("-l", "--limit", metavar="PATTERN", help="devices: names, groups, globs; !x excludes")
    p.add_argument("--format", choices=formats, default="text", help="report format (default: text)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE (atomically) instead of stdout")


def add_device_args(p: argparse.ArgumentParser) -> None:
    """How devices are reached (``DeviceOptions``) and where (``Target``): every command that talks to devices."""
    defaults = DeviceOptions()
    p.add_argument(
        "--workers", type=int, default=defaults.workers, help=f"switches at once (default {defaults.workers})"
    )
    p.add_argument(
        "--host-workers",
        type=int,
        default=defaults.host_workers,
        help=f"GPU hosts worked on at once (default {defaults.host_workers})",
    )
    p.add_argument("--timeout", type=int, default=defaults.timeout, help="per-device connection timeout, seconds")
    p.add_argument(
        "--insecure",
        action="store_true",
        help="do not verify TLS certificates and SSH host keys (warns; for a first lab contact only)",
    )
    p.add_argument(
        ALLOW_FLAG,
        action="store_true",
        help="honour the inventory's connection settings that weaken transport security (its own CA or "
        "known_hosts file, plain HTTP); each affected device is announced on stderr",
    )
    p.add_argument(
        "--retries",
        type=int,
        default=defaults.retries,
        help=f"tries again after a timeout or dropped connection, before any commit (default {defaults.retries})",
    )
    add_target_args(p)


def add_processes_arg(p: argparse.ArgumentParser) -> None:
    """--processes: the read-only commands over more than one process (``fabconf.deploy.processes``)."""
    p.add_argument(
        "--processes",
        type=int,
        metavar="N",
        help="work on the devices in N processes (1: this one only, for debugging); default: $FABCONF_PROCESSES, "
        "else one per usable core from 64 devices on",
    )


def add_parsers(sub: Any, inventory_arg: Any) -> None:
    def common(p: argparse.ArgumentParser) -> None:
        inventory_arg(p)
        p.add_argument("-l", "--limit", metavar="PATTERN", help="devices: names, groups, globs; !x excludes")
        p.add_argument("--format", choices=("text", "json"), default="text")
        p.add_argument(
            "--commands",
            action="store_true",
            help="show exactly what is sent (remediation, nv set/unset, host commands) instead of the config diff",
        )
        add_device_args(p)

    d = sub.add_parser(
        "diff",
        help="dry-run diff of every selected device; exit 0 in sync, 2 changes, 1 failure",
        description="Dry run: what push would change. Nothing is left on any device.",
    )
    common(d)
    add_processes_arg(d)
    d.set_defaults(func=cmd_diff)
    v = sub.add_parser(
        "verify",
        help="read-only checks: config at intent, MTU, LLDP vs cabling, BGP sessions up",
        description="Read-only: check that every selected device holds intent and is healthy.",
    )
    common(v)
    add_processes_arg(v)
    v.add_argument("--bgp-wait", type=float, default=VerifyOptions().bgp_wait, help="seconds to wait for BGP sessions")
    v.add_argument(
        "--cabling",
        action="store_true",
        help="check every planned link by LLDP on switches and GPU hosts (lldpd): missing, miscabled, unexpected",
    )
    v.set_defaults(func=cmd_verify)
    push_defaults = PushOptions()
    p = sub.add_parser(
        "push",
        help="apply intent: canary, batches, commit-confirm, verify, rollback",
        description="Apply intent with commit-confirm, verification and rollback.",
    )
    common(p)
    p.add_argument("--canary", type=int, default=push_defaults.canary, help="devices pushed first, alone (default 1)")
    p.add_argument(
        "--batch", default=push_defaults.batch, help="devices per batch after the canary: N or N%% (default 25%%)"
    )
    p.add_argument("--max-fail", type=int, default=push_defaults.max_fail, help="failures tolerated before stopping")
    p.add_argument(
        "--confirm-timeout",
        type=int,
        default=push_defaults.confirm_timeout,
        help="seconds before an unconfirmed commit reverts by itself (devices with a revert timer)",
    )
    p.add_argument(
        "--bgp-wait", type=float, default=push_defaults.bgp_wait, help="seconds to wait for BGP sessions in verify"
    )
    p.add_argument(
        "--allow-fw-reset",
        action="store_true",
        help="GPU hosts: run mlxfwreset so pending mlxconfig changes take effect now (disrupts traffic)",
    )
    p.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument(
        "--plan",
        action="store_true",
        help="touch no device: print the waves, the failure budget and the estimated duration of each",
    )
    p.set_defaults(func=cmd_push)
