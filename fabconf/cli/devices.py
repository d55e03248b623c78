"""``fabconf diff``, ``verify`` and ``push``: the commands that talk to devices.

The argparse layer (``add_parsers``, ``cmd_*``) only turns arguments into typed options; ``run_diff``,
``run_verify`` and ``run_push`` do the work and are what the runbook runner calls too.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from fabconf.cli import report
from fabconf.cli.auditlog import warn_unfinished
from fabconf.cli.lab import DEFAULT_NETWORK, DEFAULT_STATE, NETWORK_HELP, lab_network, start_lab
from fabconf.cli.progress import RunProgress
from fabconf.cli.transport import gate
from fabconf.compile.pipeline import Compiled, compile_inventory
from fabconf.compile.render import render
from fabconf.compile.selection import select
from fabconf.deploy import audit, overlay, peers, rollout
from fabconf.deploy.audit import audit_path
from fabconf.deploy.interrupt import Interrupt
from fabconf.deploy.job import Job, Outcome, State
from fabconf.deploy.lock import DeviceLocks, lock_address
from fabconf.deploy.options import DeviceOptions, PushOptions, VerifyOptions
from fabconf.deploy.private import private_dir
from fabconf.deploy.processors import Progress
from fabconf.deploy.tasks import bgp_configured
from fabconf.drivers.inventory_transport import ALLOW_FLAG
from fabconf.drivers.trust import INSECURE_WARNING, Trust
from fabconf.errors import UsageError
from fabconf.platforms import Revert
from fabconf.platforms import platform as platform_spec


@dataclass(frozen=True)
class Target:
    """Which devices a command works on, and where they are."""

    inventory: Path
    limit: str | None = None
    lab: bool = False  # run against the built-in lab (started if needed)
    state: Path = Path(DEFAULT_STATE)  # the lab's state directory
    network: str = DEFAULT_NETWORK  # the lab's loopback range


def jobs_for(compiled: Compiled, pattern: str | None) -> list[Job]:
    names = select(compiled.model, pattern)
    return [Job(compiled.model.devices[n], compiled.data[n], render(compiled.data[n])) for n in names]


def _lab_endpoints(target: Target) -> dict[str, dict[str, Any]]:
    """Start the lab if needed (from ``-i``) and take its credentials; returns, per lab device, where it
    answers (hostname, port, connection options). The intent always comes from ``-i``."""
    rc = start_lab(target.inventory, target.state, target.network, quiet=True)
    if rc != 0:
        raise UsageError("the lab could not be started")
    os.environ.update(overlay.lab_env(target.state))
    return overlay.lab_endpoints(target.state)


def _at_lab(jobs: list[Job], endpoints: dict[str, dict[str, Any]], target: Target) -> list[Job]:
    missing = sorted(j.name for j in jobs if j.name not in endpoints)
    if missing:
        raise UsageError(
            f"{', '.join(missing)}: in {target.inventory} but not in the running lab ({target.state}); "
            f"let it follow the inventory: fabconf lab sync -i {target.inventory} --state {target.state}"
        )
    out = []
    for job in jobs:
        entry = endpoints[job.name]
        device = dataclasses.replace(
            job.device,
            hostname=str(entry.get("hostname", job.device.hostname)),
            port=entry.get("port"),
            connection_options=dict(entry.get("connection_options") or {}),
            connection_origin=(str(target.state / "inventory" / "hosts.yaml"), [job.name, "connection_options"]),
        )
        out.append(Job(device, job.data, job.rendered))
    return out


def pending_peers(
    compiled: Compiled, jobs: list[Job], target: Target, options: DeviceOptions, ecmp: bool = False
) -> dict[str, set[str]]:
    """Per selected device, its peers outside the run that have not received fabconf's intent (read only;
    ``fabconf.deploy.peers``; ``ecmp``: ECMP targets too, for verify): a greenfield fabric pushed in parts
    verifies each part."""
    names = sorted(peers.outside_peers(jobs, ecmp))
    if not names:
        return {}
    outside = [Job(compiled.model.devices[n], compiled.data[n], "") for n in names]
    if target.lab:  # started, and its credentials taken, by ``prepare``: only where the peers answer is read here
        endpoints = overlay.lab_endpoints(target.state)
        outside = _at_lab([j for j in outside if j.name in endpoints], endpoints, target)
    seen = peers.configured(outside, lambda job: bgp_configured(job, options))
    return peers.pending(jobs, outside, seen)


def prepare(target: Target, options: DeviceOptions) -> tuple[Compiled, list[Job]]:
    """What every device command starts with: the compiled inventory of ``-i``, the selection, and with
    ``--lab`` the lab's addresses, ports and credentials for the selected devices; their connection settings
    checked (``fabconf.cli.transport``: refused, or announced when the operator allowed them)."""
    if not target.inventory.is_dir():
        raise UsageError(f"{target.inventory}: no such inventory directory")
    compiled = compile_inventory(target.inventory)
    jobs = rollout.push_order(jobs_for(compiled, target.limit))
    if target.lab:
        jobs = _at_lab(jobs, _lab_endpoints(target), target)
    gate((job.device for job in jobs), Trust.from_env(options.insecure, options.allow_inventory_transport))
    return compiled, jobs


@contextlib.contextmanager
def progress(command: str, jobs: list[Job], fmt: str) -> Iterator[Progress | None]:
    """Progress on stderr for text reports (a JSON report stays the only output of a machine's run)."""
    if fmt != "text" or not jobs:
        yield None
        return
    with RunProgress(command, len(jobs), sys.stderr) as shown:
        yield shown


EXIT_INTERRUPTED = 130


@contextlib.contextmanager
def interruptible() -> Iterator[Interrupt]:
    """Ctrl-C during a run: acknowledged at once on stderr; the first stops new devices from starting,
    the second rolls back the devices in flight, a third gives up at once (KeyboardInterrupt)."""
    interrupt = Interrupt()
    if threading.current_thread() is not threading.main_thread():
        yield interrupt
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if interrupt.aborting:
            raise KeyboardInterrupt
        print(f"fabconf: {interrupt.request()}", file=sys.stderr, flush=True)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield interrupt
    finally:
        signal.signal(signal.SIGINT, previous)


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

    def emit(self, outcomes: list[Outcome], command: str, code: int, title: str) -> int:
        if self.fmt == "json" and self.documents is not None:
            self.documents.append(report.as_dict(outcomes, command, code))
        elif self.fmt == "json":
            print(report.as_json(outcomes, command, code))
        else:
            report.print_text(outcomes, title, commands=self.commands, diffs=self.diffs)
        return code


def run_diff(target: Target, options: DeviceOptions, out: Output | None = None) -> int:
    out = out or Output()
    _, jobs = prepare(target, options)
    with interruptible() as interrupt, progress("diff", jobs, out.fmt) as shown:
        outcomes = rollout.diff(jobs, options, shown, interrupt)
    code = EXIT_INTERRUPTED if interrupt.stopping else report.diff_exit_code(outcomes)
    return out.emit(outcomes, "diff", code, "fabconf diff (dry run: nothing was changed)")


def run_verify(target: Target, options: DeviceOptions, verify_options: VerifyOptions, out: Output | None = None) -> int:
    out = out or Output()
    compiled, jobs = prepare(target, options)
    warn_unfinished(jobs, audit_context(target))
    with interruptible() as interrupt, progress("verify", jobs, out.fmt) as shown:
        waiting = pending_peers(compiled, jobs, target, options, ecmp=True)
        outcomes = rollout.verify(jobs, set(compiled.model.devices), options, verify_options, shown, interrupt, waiting)
    code = 0 if all(o.state is State.VERIFIED for o in outcomes) else 1
    code = EXIT_INTERRUPTED if interrupt.stopping else code
    resolve_unfinished("verify", jobs, outcomes, audit_context(target))
    return out.emit(outcomes, "verify", code, "fabconf verify (read only)")


def check_confirm_timeout(jobs: list[Job], seconds: int) -> None:
    """Refused before any device is touched: a --confirm-timeout shorter than a selected platform's commit timer
    accepts (the platform table's ``confirm_timeout_s``; NX-OS takes 30-3600 s), which that device would refuse
    at commit time, after the devices before it had changed."""
    short = sorted(
        {j.spec.name for j in jobs if j.spec.revert is Revert.TIMER and seconds < j.spec.confirm_timeout_s[0]}
    )
    if short:
        limits = ", ".join(f"{name} at least {platform_spec(name).confirm_timeout_s[0]} s" for name in short)
        raise UsageError(f"--confirm-timeout {seconds}: too short for the selected devices' commit timers ({limits})")


READ_BACK = (State.VERIFIED, State.APPLIED, State.UNCHANGED, State.ROLLED_BACK)


def resolve_unfinished(command: str, jobs: list[Job], outcomes: list[Outcome], context: dict[str, str]) -> None:
    """Close the unfinished commits of the devices this run read back (verified, applied, unchanged, rolled
    back, or a verify that read them and found them wrong)."""
    address = {j.name: j.device.hostname for j in jobs}
    read = [o for o in outcomes if o.state in READ_BACK or (o.state is State.FAILED and o.checks)]
    audit.resolve(command, [(o.device, str(o.state), address[o.device]) for o in read], context)


def confirm(question: str) -> bool:
    """Ask on the terminal (the prompt on stderr, so a JSON stdout stays one document)."""
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    return input().strip().lower() in ("y", "yes")


def audit_context(target: Target) -> dict[str, str]:
    """Where a push points, for every audit record: lab rehearsals and real changes are told apart."""
    context = {"inventory": str(target.inventory.resolve()), "mode": "lab" if target.lab else "devices"}
    if target.lab:
        context["lab_state"] = str(target.state.resolve())
    return context


def run_push(
    target: Target,
    options: DeviceOptions,
    push_options: PushOptions,
    out: Output | None = None,
    yes: bool = False,
) -> int:
    out = out or Output()
    compiled, jobs = prepare(target, options)
    check_confirm_timeout(jobs, push_options.confirm_timeout)
    warn_unfinished(jobs, audit_context(target))
    the_plan = rollout.plan(jobs, canary=push_options.canary, batch=push_options.batch)
    if push_options.confirm_timeout < push_options.bgp_wait + 30:
        print(
            f"fabconf: warning: --confirm-timeout {push_options.confirm_timeout}s leaves little time to verify "
            f"(--bgp-wait {push_options.bgp_wait:g}s): devices with a revert timer may revert before they are "
            "confirmed",
            file=sys.stderr,
        )
    private_dir(audit_path().parent)  # an audit log others could tamper with is refused before anything starts
    with DeviceLocks([(j.name, j.platform, lock_address(j.device.hostname, j.device.port)) for j in jobs]):
        if not yes:
            if not sys.stdin.isatty():
                raise UsageError("push needs --yes when not run interactively")
            preview = rollout.diff(jobs, options)
            report.print_text(preview, "fabconf push: planned changes", stream=out.side, commands=out.commands)
            for label, wave in zip(the_plan.labels(), the_plan.waves, strict=True):
                print(f"{label}: {', '.join(j.name for j in wave)}", file=out.side)
            if report.diff_exit_code(preview) == 1:
                raise UsageError("some devices failed the dry run; fix them or --limit them out")
            if not confirm("apply these changes?"):
                print("nothing was changed", file=sys.stderr)
                return 1
            out = dataclasses.replace(out, diffs=False)  # each diff is shown once, in the plan
        with interruptible() as interrupt, progress("push", jobs, out.fmt) as shown:
            outcomes = rollout.push(
                the_plan,
                set(compiled.model.devices),
                push_options,
                options,
                shown,
                interrupt,
                audit_context(target),
                pending_peers(compiled, jobs, target, options),
            )
    code = EXIT_INTERRUPTED if interrupt.stopping else report.push_exit_code(outcomes)
    resolve_unfinished("push", jobs, outcomes, audit_context(target))
    return out.emit(outcomes, "push", code, "fabconf push")


# -- the argparse layer -------------------------------------------------------------------------------------------
def target_of(args: argparse.Namespace) -> Target:
    return Target(Path(args.inventory), args.limit, args.lab, Path(args.state), lab_network(args.network))


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
    d.set_defaults(func=cmd_diff)
    v = sub.add_parser(
        "verify",
        help="read-only checks: config at intent, MTU, LLDP vs cabling, BGP sessions up",
        description="Read-only: check that every selected device holds intent and is healthy.",
    )
    common(v)
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
    p.set_defaults(func=cmd_push)
