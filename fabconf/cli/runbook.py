"""``fabconf run FILE [--check]``: Ansible-style runbooks — a device selection and a sequence of steps.

A runbook is validated like the inventory (every problem with file and path, no traceback). Steps run
in order and the run stops at the first step that does not succeed; with ``--check`` every ``push``
becomes a ``diff`` (a dry run). A ``diff`` or ``drift`` step that finds changes (exit 2) does not stop the run.
Each step's options become the same typed options the commands use (``fabconf.deploy.options``).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fabconf.cli import runvars
from fabconf.cli.compile import run_validate
from fabconf.cli.devices import Output, run_diff, run_push
from fabconf.cli.drift import DriftOptions, emit
from fabconf.cli.drift import check as drift_check
from fabconf.cli.drift_report import as_dict as drift_dict
from fabconf.cli.lab import drop_view, lab_running, start_lab, sync_lab
from fabconf.cli.onboard import onboard_rack
from fabconf.compile.inventory import display_name, load_yaml
from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.problems import InputError, Problems
from fabconf.compile.schema import describe_errors, validator
from fabconf.compile.selection import SelectionError, select
from fabconf.deploy.options import DeviceOptions, PushOptions
from fabconf.errors import UsageError
from fabconf.jobs.target import Target
from fabconf.plan import onboard
from fabconf.plan.onboard import OnboardError

PUSH_KEYS = ("canary", "batch", "max_fail", "confirm_timeout", "bgp_wait")


@dataclass(frozen=True)
class RunOptions:
    check: bool = False  # every push becomes a diff
    yes: bool = False  # push steps do not ask for confirmation
    inventory: Path | None = None  # overrides the runbook's
    limit: str | None = None  # overrides the runbook's
    target: Target = field(default_factory=lambda: Target(Path("inventory")))  # lab settings; inventory/limit per step
    timeout: int = DeviceOptions().timeout
    variables: dict[str, Any] = field(default_factory=dict)  # -e NAME=VALUE / -e @FILE


def load(path: Path, variables: dict[str, Any] | None = None) -> dict[str, Any]:
    """The runbook, its ``{{ name }}`` variables filled in (``fabconf.cli.runvars``), validated."""
    problems = Problems()
    shown = display_name(path)
    ok, doc = load_yaml(path, shown, problems)
    if ok:
        doc = runvars.substitute(doc, variables or {}, shown)
        for err in sorted(validator("runbook").iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
            for where, message in describe_errors(err):
                problems.add(shown, where, message)
    if problems:
        raise InputError(problems)
    return doc


def check_limits(path: Path, book: dict[str, Any], inventory: Path, limit: str | None) -> None:
    """Every selection the runbook will use, checked before its first step: the run-wide ``limit`` and each
    step's own. Selections after an ``onboard`` step are checked against the inventory as it will be with the rack
    (onboarded into nothing: ``fabconf.plan.onboard.with_rack``), so they may name the new rack, and an onboarding
    that would be refused is refused here. A typo never runs half a runbook."""
    wanted: list[tuple[int, str, str | None]] = [(-1, "limit", limit)]
    onboards: list[tuple[int, dict[str, Any]]] = []
    for i, step in enumerate(book["steps"]):
        kind, settings = next(iter(step.items()))
        if kind == "onboard":
            onboards.append((i, settings))
        if "limit" in settings:
            wanted.append((i, f"steps[{i}].{kind}.limit", settings["limit"]))
        elif kind in ("diff", "push", "drift") and onboards:  # the run-wide limit, after the rack exists
            wanted.append((i, "limit", limit))
    if all(pattern is None or pattern == "all" for _, _, pattern in wanted) or not inventory.is_dir():
        return
    shown, problems = display_name(path), Problems()
    models = [(-1, compile_inventory(inventory).model)]
    for i, settings in onboards:
        try:
            models.append((i, onboard.with_rack(inventory, settings["pod"], settings.get("rack")).model))
        except (OnboardError, InputError) as exc:
            problems.add(shown, f"steps[{i}].onboard", str(exc).replace("\n", "; "))
            break
    for at, where, pattern in wanted:
        model = next((m for i, m in reversed(models) if i < at), None)
        if model is None or pattern is None or pattern == "all":
            continue  # after an onboarding that is refused (said above)
        try:
            select(model, pattern)
        except SelectionError as exc:
            problems.add(shown, where, str(exc))
    if problems:
        raise InputError(problems)


def _device_options(step: dict[str, Any], timeout: int) -> DeviceOptions:
    defaults = DeviceOptions()
    return DeviceOptions(
        workers=step.get("workers", defaults.workers),
        host_workers=step.get("host_workers", defaults.host_workers),
        timeout=timeout,
    )


def _drift_step(target: Target, settings: dict[str, Any], timeout: int, documents: list[dict[str, Any]] | None) -> int:
    """``drift:`` — ``fabconf drift`` (read only: no remediation in a runbook); its JSON report joins the
    runbook's document when the runbook prints JSON."""
    backup = settings.get("backup_dir")
    options = DriftOptions(fmt="json" if documents is not None else "text", backup_dir=Path(backup) if backup else None)
    options = replace(options, git=bool(settings.get("git")) and backup is not None)
    run = drift_check(target, _device_options(settings, timeout), options)
    if documents is not None:
        documents.append(drift_dict(run))
    else:
        emit(run, options)
    return run.exit_code


def _follow(options: RunOptions, source: Path, inventory: Path, cleanup: contextlib.ExitStack) -> Path:
    """After an ``onboard`` step with ``--lab``: the lab follows the inventory (``fabconf lab sync``), so the next
    steps find the new devices there; returns the lab state directory they use. With ``--check`` the user's lab is
    left as it is (its devices, their addresses, its inventory): the new devices run in a scratch view of it, which
    goes when the run ends. A lab that is not running is started by the next step, with every device."""
    state = options.target.state
    if not options.check:
        if lab_running(state):
            changes = sync_lab(inventory, state)
            print(f"== the lab follows {inventory}: added {', '.join(changes['added']) or 'nothing'}", file=sys.stderr)
        return state
    if start_lab(source, state, options.target.network, quiet=True) != 0:
        raise UsageError("the lab could not be started")
    view = inventory.parent / "lab-view"
    cleanup.callback(drop_view, state, view)
    changes = sync_lab(inventory, state, view=view)
    added = ", ".join(changes["added"]) or "none"
    print(
        f"== check mode: the lab's own devices stay as they are; new devices in a scratch view of it: {added}",
        file=sys.stderr,
    )
    return view


def run(path: Path, options: RunOptions) -> int:
    """Run the steps in order. Headers go to stderr; the steps' reports to stdout — as ONE JSON document
    (``{"runbook", "exit_code", "steps": [...]}``) when any step asks for JSON. A push asks for
    confirmation as ``fabconf push`` does, unless ``--yes`` (or ``--check``)."""
    book = load(path, options.variables)
    inventory = options.inventory or Path(book.get("inventory") or "inventory")
    limit = options.limit or book.get("limit")
    if limit == "all":
        limit = None
    kinds = [next(iter(step)) for step in book["steps"]]
    pushes = "push" in kinds and not options.check
    if pushes and not options.yes and not sys.stdin.isatty():
        raise UsageError(f"{path}: this runbook pushes; it needs --yes when not run interactively")
    as_json = any(next(iter(step.values())).get("format") == "json" for step in book["steps"])
    documents: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    say = f"== runbook: {book['name']}{' (check mode: no changes)' if options.check else ''}"
    print(say, file=sys.stderr)
    check_limits(path, book, inventory, limit)
    with contextlib.ExitStack() as cleanup:
        code = _steps(book, options, inventory, limit, as_json, documents, steps, cleanup)
    if as_json:
        print(json.dumps({"runbook": book["name"], "exit_code": code, "steps": steps}, indent=2))
    return code


def _steps(
    book: dict[str, Any],
    options: RunOptions,
    inventory: Path,
    limit: str | None,
    as_json: bool,
    documents: list[dict[str, Any]],
    steps: list[dict[str, Any]],
    cleanup: contextlib.ExitStack,
) -> int:
    code = 0
    lab_state = options.target.state  # with --check, a scratch view of the lab once a step onboards
    for i, step in enumerate(book["steps"], start=1):
        kind, settings = next(iter(step.items()))
        if kind == "push" and options.check:
            kind = "diff"
        print(f"== step {i}: {kind}", file=sys.stderr)
        target = replace(options.target, inventory=inventory, state=lab_state, limit=settings.get("limit", limit))
        out = Output(settings.get("format", "text"), documents if as_json else None)
        before = len(documents)
        if kind == "validate":
            code = run_validate(inventory, stream=sys.stderr if as_json else sys.stdout)
        elif kind == "onboard":
            source = inventory
            if options.check:  # a check run onboards into a scratch copy: later steps see the rack, nothing is written
                scratch = Path(tempfile.mkdtemp(prefix="fabconf-check-")) / inventory.name
                cleanup.callback(shutil.rmtree, scratch.parent, ignore_errors=True)
                shutil.copytree(inventory, scratch)
                inventory = scratch
                print(f"== check mode: onboarding into a scratch copy of the inventory ({scratch})", file=sys.stderr)
            code = onboard_rack(inventory, settings["pod"], settings.get("rack"), bool(settings.get("dry_run")))
            if code == 0 and options.target.lab:
                lab_state = _follow(options, source, inventory, cleanup)
        elif kind == "diff":
            code = run_diff(target, _device_options(settings, options.timeout), out)
        elif kind == "drift":
            code = _drift_step(target, settings, options.timeout, documents if as_json else None)
        else:
            push = PushOptions(**{k: settings[k] for k in PUSH_KEYS if k in settings})
            code = run_push(target, _device_options(settings, options.timeout), push, out, yes=options.yes)
        steps.append(
            {
                "step": i,
                "kind": kind,
                "exit_code": code,
                **({"report": documents[-1]} if len(documents) > before else {}),
            }
        )
        if code != 0 and not (kind in ("diff", "drift") and code == 2):
            print(f"== step {i} ({kind}) ended with exit status {code}; stopping", file=sys.stderr)
            break
    return code
