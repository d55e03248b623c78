"""``fabconf audit``: commits whose outcome was never written (fabconf killed between commit and the end of the
device's push), from the audit log; and the warning push and verify print for such devices."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable

from fabconf.deploy import audit

EXIT_OK, EXIT_UNFINISHED = 0, 2


def add_parser(sub: argparse._SubParsersAction) -> None:
    a = sub.add_parser(
        "audit",
        help="list commits that never finished (fabconf killed mid-push); exit 2 when there are any",
        description="Read the audit log (FABCONF_AUDIT_LOG) for `committing` records without an outcome.",
    )
    a.add_argument("--format", choices=("text", "json"), default="text")
    a.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    entries = audit.unfinished()
    if args.format == "json":
        print(json.dumps({"audit_log": str(audit.audit_path()), "unfinished": entries}, indent=2))
    elif not entries:
        print(f"no unfinished commits in {audit.audit_path()}")
    for e in entries if args.format == "text" else ():
        print(
            f"{e.get('time')}  {e.get('device')} ({e.get('platform')})  run {e.get('run')} by {e.get('user')}: "
            f"committed over config {str(e.get('config_before_sha256'))[:12]}…, outcome never recorded"
        )
    return EXIT_UNFINISHED if entries else EXIT_OK


def warn_unfinished(devices: Iterable[str]) -> None:
    """One warning per selected device with an unfinished commit: its state is whatever the device did then
    (a revert timer restored it, or the change stayed); check it before trusting a diff."""
    wanted = set(devices)
    for e in audit.unfinished():
        if e.get("device") in wanted:
            print(
                f"fabconf: warning: {e['device']}: a commit of run {e.get('run')} at {e.get('time')} never recorded "
                "its outcome (fabconf was killed?); see `fabconf audit`",
                file=sys.stderr,
            )
