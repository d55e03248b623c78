"""``fabconf drift``'s arguments, apart from the run (``fabconf.cli.drift``): building the parser, for
``fabconf drift --help`` or a usage error, imports no job and no device library (issue 42)."""

from __future__ import annotations

import argparse
from typing import Any

from fabconf.cli.devices import add_device_args, add_processes_arg, add_report_args
from fabconf.deploy.options import PushOptions

FORMATS = ("text", "json", "junit", "prometheus")


def cmd_drift(args: argparse.Namespace) -> int:
    from fabconf.cli import drift  # the run: the drift job, hence the device stack

    return drift.cmd_drift(args)


def add_parser(sub: Any, inventory_arg: Any) -> None:
    push_defaults = PushOptions()
    p = sub.add_parser(
        "drift",
        help="nightly drift check: in sync, drifted (sections, diff), unreachable; backups; reports; remediation",
        description=(
            "Drift check (read only unless --remediate): what a dry-run push would change on every selected "
            "device. Exit 0 all in sync, 2 any drifted, 1 any device not checked."
        ),
    )
    add_report_args(p, inventory_arg, FORMATS)
    p.add_argument(
        "--backup-dir",
        metavar="DIR",
        help="write each device's running configuration (hosts: NIC state), secrets masked, as DIR/<device>.<ext>",
    )
    p.add_argument("--git", action="store_true", help="commit --backup-dir (a git repository, created if needed)")
    p.add_argument(
        "--remediate", action="store_true", help="push the drifted devices (as fabconf push: waves, verify, rollback)"
    )
    p.add_argument("-y", "--yes", action="store_true", help="--remediate does not ask for confirmation")
    p.add_argument("--canary", type=int, default=push_defaults.canary, help="--remediate: devices pushed first, alone")
    p.add_argument("--batch", default=push_defaults.batch, help="--remediate: devices per batch: N or N%%")
    p.add_argument("--max-fail", type=int, default=push_defaults.max_fail, help="--remediate: failures tolerated")
    p.add_argument(
        "--confirm-timeout", type=int, default=push_defaults.confirm_timeout, help="--remediate: revert timer, seconds"
    )
    p.add_argument(
        "--bgp-wait", type=float, default=push_defaults.bgp_wait, help="--remediate: seconds verify waits for BGP"
    )
    add_device_args(p)
    add_processes_arg(p)
    p.set_defaults(func=cmd_drift)
