"""``fabconf run FILE [--check]``: Ansible-style runbooks — a device selection and a sequence of steps.

A runbook is validated like the inventory (every problem with file and path, no traceback). Steps run
in order and the run stops at the first step that does not succeed; with ``--check`` every ``push``
becomes a ``diff`` (a dry run). A ``diff`` step that finds changes (exit 2) does not stop the run.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from fabconf import cli_run
from fabconf.inventory import display_name, load_yaml
from fabconf.problems import InputError, Problems
from fabconf.schema import describe_errors, validator

DEFAULTS: dict[str, dict[str, Any]] = {
    "diff": {"format": "text", "workers": 20},
    "push": {
        "format": "text",
        "workers": 20,
        "canary": 1,
        "batch": "25%",
        "max_fail": 0,
        "confirm_timeout": 300,
        "bgp_wait": 30.0,
    },
}


def load(path: Path) -> dict[str, Any]:
    problems = Problems()
    shown = display_name(path)
    ok, doc = load_yaml(path, shown, problems)
    if ok:
        for err in sorted(validator("runbook").iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
            for where, message in describe_errors(err):
                problems.add(shown, where, message)
    if problems:
        raise InputError(problems)
    return doc


def run(path: Path, args: argparse.Namespace) -> int:
    book = load(path)
    inventory = args.inventory or book.get("inventory") or "inventory"
    limit = args.limit or book.get("limit")
    if limit == "all":
        limit = None
    print(f"== runbook: {book['name']}{' (check mode: no changes)' if args.check else ''}")
    code = 0
    for i, step in enumerate(book["steps"], start=1):
        kind, options = next(iter(step.items()))
        if kind == "push" and args.check:
            kind = "diff"
        print(f"== step {i}: {kind}")
        ns = argparse.Namespace(
            inventory=inventory,
            limit=options.get("limit", limit),
            lab=args.lab,
            state=args.state,
            network=args.network,
            timeout=args.timeout,
            yes=True,
            allow_fw_reset=False,
            host_workers=options.get("host_workers", 50),
            **{k: options.get(k, v) for k, v in DEFAULTS.get(kind, {}).items()},
        )
        if kind == "validate":
            from fabconf.cli import cmd_validate

            code = cmd_validate(ns)
        elif kind == "diff":
            code = cli_run.cmd_diff(ns)
            if code == 2:
                continue
        else:
            code = cli_run.cmd_push(ns)
        if code != 0:
            print(f"== step {i} ({kind}) ended with exit status {code}; stopping")
            return code
    return code
