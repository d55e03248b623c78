"""``fabconf report merge A.json B.json ... -o OUT.json``: one report from the JSON reports of shards.

A fabric too large for one controller is pushed (or diffed, or checked for drift) in shards, one ``--limit``
each (a pod per CI matrix job or Kubernetes Indexed Job). Each shard writes its JSON report; ``merge`` makes
them one report of the same shape: every device once, the summary counted again from the devices, and the exit
status the worst of the shards' (interrupted 130 > failed 1 > changes or drift 2 > ok 0), which is also
``merge``'s own exit status, so a pipeline gates on the merged run as on one run. Shards of different commands,
of another report schema, or that name the same device are refused, naming the file.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from fabconf.errors import UsageError

SCHEMA = "fabconf.report/1"  # fabconf.cli.report.SCHEMA, without importing the reporters (rich)
DRIFT_FIELDS = ("drift", "started", "duration_seconds", "notes", "backup", "remediation")  # merged, for drift
WORST = {0: 0, 2: 1, 1: 2, 130: 3}  # exit statuses, least to most severe; another one counts as a failure (1)


class MergeError(UsageError):
    """A shard's report that cannot be merged: ``file: path: message``."""


def _load(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise MergeError(f"{path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise MergeError(f"{path}: not a JSON report: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise MergeError(f"{path}: schema: expected {SCHEMA}, found {found!r}")
    if not isinstance(doc.get("devices"), list) or not all(isinstance(d, dict) for d in doc["devices"]):
        raise MergeError(f"{path}: devices: expected a list of devices")
    if not isinstance(doc.get("exit_code"), int):
        raise MergeError(f"{path}: exit_code: expected an integer")
    return doc


def worst(codes: list[int]) -> int:
    return max(codes, key=lambda c: WORST.get(c, WORST[1]), default=0)


def merge(paths: list[Path]) -> dict[str, Any]:
    """The shards' reports as one (see the module's description)."""
    if not paths:
        raise MergeError("report merge: no shard reports given")
    docs = [(path, _load(path)) for path in paths]
    command = docs[0][1].get("command")
    where: dict[str, Path] = {}
    devices: list[dict[str, Any]] = []
    for path, doc in docs:
        if doc.get("command") != command:
            raise MergeError(f"{path}: command: {doc.get('command')!r}, where {docs[0][0]} is {command!r}")
        for i, device in enumerate(doc["devices"]):
            name = str(device.get("device"))
            if name in where:
                raise MergeError(f"{path}: devices[{i}]: {name} is also in {where[name]}")
            where[name] = path
            devices.append(device)
    merged: dict[str, Any] = {
        "schema": SCHEMA,
        "command": command,
        "exit_code": worst([doc["exit_code"] for _, doc in docs]),
        "summary": dict(sorted(Counter(str(d.get("state")) for d in devices).items())),
        "devices": devices,
        # each shard's file, exit status, device count and the fields of its own run (a push's waves)
        "shards": [
            {"file": str(path), "exit_code": doc["exit_code"], "devices": len(doc["devices"]), **_own(doc)}
            for path, doc in docs
        ],
    }
    if command == "drift":  # drift's own top-level fields: its summary by drift state, the shards' times and notes
        merged["drift"] = merged["summary"]
        merged["started"] = min((d["started"] for _, d in docs if d.get("started")), default=None)
        merged["duration_seconds"] = max((d.get("duration_seconds") or 0 for _, d in docs), default=0)
        merged["notes"] = [n for _, d in docs for n in d.get("notes") or []]
        merged["backup"] = [d["backup"] for _, d in docs if d.get("backup")] or None
        merged["remediation"] = _remediations([d.get("remediation") for _, d in docs])
    return merged


def _own(doc: dict[str, Any]) -> dict[str, Any]:
    """A shard's top-level fields that describe its own run only (a push's ``waves``)."""
    merged_here = {"schema", "command", "exit_code", "summary", "devices", *DRIFT_FIELDS}
    return {k: v for k, v in doc.items() if k not in merged_here}


def _remediations(parts: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    pushed = [p for p in parts if p]
    if not pushed:
        return None
    devices = [d for p in pushed for d in p.get("devices", [])]
    return {
        **pushed[0],
        "exit_code": worst([int(p.get("exit_code", 1)) for p in pushed]),
        "summary": dict(sorted(Counter(str(d.get("state")) for d in devices).items())),
        "devices": devices,
    }


def add_parser(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser(
        "report",
        help="work with JSON reports: merge the reports of shards into one",
        description="Work with fabconf's JSON reports (push, diff, verify, drift).",
    )
    actions = r.add_subparsers(dest="report_command", required=True, metavar="ACTION")
    m = actions.add_parser(
        "merge",
        help="merge shards' JSON reports into one; exit status: the merged run's",
        description="Merge the JSON reports of shards (one --limit each) into one report of the same shape. "
        "Exits with the merged report's exit status (the worst shard's).",
    )
    m.add_argument("reports", nargs="+", type=Path, metavar="REPORT.json")
    m.add_argument("-o", "--output", type=Path, metavar="FILE", help="write it to FILE (atomically) instead of stdout")
    m.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    merged = merge(list(args.reports))
    text = json.dumps(merged, indent=2) + "\n"
    if args.output is None:
        print(text, end="")
    else:
        from fabconf.deploy.backup import atomic_write

        atomic_write(args.output, text)
        print(
            f"{args.output}: {len(merged['devices'])} device(s) from {len(merged['shards'])} shard(s), "
            f"exit status {merged['exit_code']}"
        )
    return int(merged["exit_code"])
