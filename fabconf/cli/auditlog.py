"""``fabconf audit``: commits whose outcome was never written (fabconf killed between commit and the end of the
device's push), from the audit log; and the warning push and verify print for such devices."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable

from fabconf.deploy import audit
from fabconf.deploy.job import Job
from fabconf.errors import UsageError

EXIT_OK, EXIT_UNFINISHED = 0, 2


def add_parser(sub: argparse._SubParsersAction) -> None:
    a = sub.add_parser(
        "audit",
        help="list commits that never finished (fabconf killed mid-push); exit 2 when there are any",
        description="Read the audit log (FABCONF_AUDIT_LOG) for `committing` records without an outcome.",
    )
    a.add_argument("--format", choices=("text", "json"), default="text")
    a.add_argument("--ack", metavar="DEVICE", help="acknowledge DEVICE's unfinished commits (checked by hand)")
    a.add_argument("--note", metavar="TEXT", help="with --ack: what was checked (required)")
    a.add_argument("--target", help="with --ack: only the commits at this target (default: every target)")
    a.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.ack:
        if not args.note:
            raise UsageError("--ack needs --note TEXT: what was checked on the device")
        closed = audit.acknowledge(args.ack, args.note, args.target)
        print(f"{args.ack}: {closed} unfinished commit(s) acknowledged" if closed else f"{args.ack}: nothing to ack")
        return EXIT_OK
    entries = audit.unfinished()
    lost = [e for e in entries if not e["in_progress"]]
    if args.format == "json":
        print(json.dumps({"audit_log": str(audit.audit_path()), "unfinished": entries}, indent=2))
    elif not entries:
        print(f"no unfinished commits in {audit.audit_path()}")
    for e in entries if args.format == "text" else ():
        what = "in progress (a live run holds its lock)" if e["in_progress"] else "outcome never recorded"
        print(
            f"{e.get('time')}  {e.get('device')} ({e.get('platform')}) at {e.get('target', '?')}  run {e.get('run')} "
            f"by {e.get('user')}: committed over config {str(e.get('config_before_sha256'))[:12]}…, {what}"
        )
    return EXIT_UNFINISHED if lost else EXIT_OK


def warn_unfinished(jobs: Iterable[Job], context: dict[str, str]) -> None:
    """One warning per selected device with an unfinished commit at this run's target: its state is whatever
    the device did then (a revert timer restored it, or the change stayed); check it before trusting a diff. A
    commit a live run is making (its lock is held) is not reported."""
    wanted = {j.name: audit.target_of(context, j.device.hostname) for j in jobs}
    for e in audit.unfinished():
        device = str(e.get("device"))
        if e["in_progress"] or device not in wanted:
            continue
        if "target" in e and e["target"] != wanted[device]:
            continue  # another lab's (or another fabric's) device of that name
        print(
            f"fabconf: warning: {e['device']}: a commit of run {e.get('run')} at {e.get('time')} never recorded "
            "its outcome (fabconf was killed?); the next push cleans what it left on the device first, and a later "
            "push or verify resolves it, or `fabconf audit --ack`",
            file=sys.stderr,
        )
