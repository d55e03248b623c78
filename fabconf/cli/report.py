"""Reports of a run: per-device diffs, a summary table, JSON (the exit statuses are the jobs', ``fabconf.jobs``).

One list of Outcomes feeds every reporter; a device that failed is never shown as green.
"""

from __future__ import annotations

import base64
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from fabconf.deploy.job import Outcome, State
from fabconf.drivers.textdiff import counts

STYLE = {
    State.UNCHANGED: "green",
    State.VERIFIED: "green",
    State.APPLIED: "green",
    State.CHANGES: "yellow",
    State.UNTOUCHED: "yellow",
    State.CONFLICT: "red",
    State.ROLLED_BACK: "red",
    State.UNREACHABLE: "red",
    State.FAILED: "bold red",
}


def summary(outcomes: list[Outcome]) -> dict[str, int]:
    return dict(sorted(Counter(str(o.state) for o in outcomes).items()))


# The JSON reports' shape and its version: diff, verify, push and drift share the top level (schema, command,
# exit_code, summary, devices) and each device's fields (Outcome.as_dict); a command adds fields, never renames.
SCHEMA = "fabconf.report/1"


def as_dict(
    outcomes: list[Outcome],
    command: str,
    exit_code: int,
    device_fields: Callable[[Outcome], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The JSON report; ``device_fields`` adds a command's own fields to each device's entry."""
    return {
        "schema": SCHEMA,
        "command": command,
        "exit_code": exit_code,
        "summary": summary(outcomes),
        "devices": [{**o.as_dict(), **(device_fields(o) if device_fields else {})} for o in outcomes],
    }


def as_json(outcomes: list[Outcome], command: str, exit_code: int) -> str:
    return json.dumps(as_dict(outcomes, command, exit_code), indent=2)


def line_style(line: str) -> str | None:
    if line.startswith(("+++ ", "--- ")):
        return "bold"
    if line.startswith("@@"):
        return "cyan"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    return None


def evidence_text(evidence: dict[str, Any]) -> str:
    """What a passed verify read, in a few words: ``MTU 6/6, LLDP 6/6, BGP 4/4 up, ECMP 3/3 targets at width,
    adaptive routing 2/2 ports``."""
    parts = []
    if "mtu" in evidence:
        parts.append(f"MTU {evidence['mtu']['at_intended_mtu']}/{evidence['mtu']['ports']}")
    if "lldp" in evidence:
        parts.append(f"LLDP {evidence['lldp']['seen_as_cabled']}/{evidence['lldp']['links']}")
    bgp = evidence.get("bgp")
    if bgp and bgp.get("checked"):
        parts.append(f"BGP {bgp['established']}/{bgp['checked']} up")
    ecmp = evidence.get("ecmp")
    if ecmp:
        at_width = sum(c["paths"] == c["designed"] for c in ecmp)
        parts.append(f"ECMP {at_width}/{len(ecmp)} targets at width")
    adaptive = evidence.get("adaptive_routing")
    if adaptive:
        parts.append(f"adaptive routing {adaptive['on']}/{adaptive['ports']} ports")
    if not parts and evidence:  # preflight: the checks it ran (their values: --format json)
        parts.append(f"{len(evidence)} check(s) passed: {', '.join(sorted(evidence))}")
    return ", ".join(parts)


def changed_lines(o: Outcome) -> str:
    """``+A -R``: lines the diff adds and removes."""
    added, removed = counts(o.diff)
    return f"+{added} -{removed} line(s)"


def name_ranges(names: list[str]) -> str:
    """``gpu01-gpu08`` for a run of names that differ only in a consecutive number of the same width, else the
    names joined: "gpu01-gpu04, leaf1, leaf3"."""
    runs: list[list[tuple[str, int, str]]] = []
    for name in names:
        found = re.fullmatch(r"(.*?)(\d+)", name)
        key = (found.group(1), int(found.group(2)), found.group(2)) if found else (name, -2, "")
        last = runs[-1][-1] if runs else None
        if last and found and last[0] == key[0] and last[1] + 1 == key[1] and len(last[2]) == len(key[2]):
            runs[-1].append(key)
        else:
            runs.append([key])
    shown = []
    for run in runs:
        first, last = run[0], run[-1]
        text = f"{first[0]}{first[2]}"
        shown.append(f"{text}-{last[0]}{last[2]}" if len(run) > 2 else ", ".join(f"{k[0]}{k[2]}" for k in run))
    return ", ".join(shown)


_FILE_WRITE = re.compile(r"^printf %s ([A-Za-z0-9+/=]+) \| base64 -d \| (sudo -n )?tee (\S+) >/dev/null$")


def readable_commands(text: str) -> str:
    """A host's commands for people: each file written as base64 (``printf %s … | base64 -d | sudo -n tee F``,
    what is sent, so that no quoting can break it) is shown decoded, line by line under a ``# write F`` header.
    The JSON report keeps the commands exactly as sent."""
    out: list[str] = []
    for line in text.splitlines():
        found = _FILE_WRITE.match(line)
        if found is None:
            out.append(line)
            continue
        try:
            content = base64.b64decode(found.group(1), validate=True).decode()
        except (ValueError, UnicodeDecodeError):
            out.append(line)
            continue
        out.append(f"# write {found.group(3)} ({'sudo -n ' if found.group(2) else ''}tee), contents:")
        out += [f"    {row}" for row in content.splitlines()]
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def print_text(
    outcomes: list[Outcome],
    title: str,
    stream: TextIO | None = None,
    commands: bool = False,
    diffs: bool = True,
) -> None:
    """Per change its diff (``commands``: what is sent instead), -/+ coloured on a terminal, shown once for all
    the devices that share it ("gpu01-gpu08: the same change"), then a table. ``diffs`` False: the table only
    (the diffs were shown already, in the plan a push asked about)."""
    console = Console(file=stream or sys.stdout, highlight=False, soft_wrap=True)
    groups: dict[str, list[Outcome]] = {}
    for o in outcomes if diffs else ():
        text = readable_commands(o.commands) if commands else o.diff
        if text:
            groups.setdefault(text, []).append(o)
    for text, same in groups.items():
        names = name_ranges([o.device for o in same])
        platforms = ", ".join(sorted({o.platform for o in same}))
        what = ": commands" if commands else ""
        shared = ": the same change" if len(same) > 1 else ""
        console.rule(f"{names} ({platforms}){what}{shared}", style="cyan")
        for line in text.rstrip("\n").splitlines():
            console.print(line, markup=False, style=None if commands else line_style(line))
    table = Table(title=title, show_lines=False)
    for col in ("device", "platform", "state", "detail"):
        table.add_column(col, overflow="fold")
    for o in outcomes:
        detail = o.message
        if o.checks:
            first = o.checks[0].splitlines()[0].rstrip(":")
            detail = "" if detail.startswith(first) else detail  # the message is the first check: list them once
            detail = (detail + ": " if detail else "") + "; ".join(c.splitlines()[0].rstrip(":") for c in o.checks)
        if o.state is State.CHANGES:
            detail = detail or f"{changed_lines(o)} would change"
        elif o.state is State.APPLIED and o.diff:
            detail = (detail + "; " if detail else "") + f"{changed_lines(o)} changed"
        if o.evidence and o.state in (State.VERIFIED, State.APPLIED, State.UNCHANGED):
            shown = evidence_text(o.evidence)
            detail = (detail + "; " if detail and shown else detail) + (f"evidence: {shown}" if shown else "")
        # a message is text, never markup: "[gid] ..." or "[U]" must print as written
        table.add_row(escape(o.device), o.platform, f"[{STYLE[o.state]}]{o.state}[/]", escape(detail))
    console.print(table)
    counts = ", ".join(f"{n} {state}" for state, n in summary(outcomes).items())
    console.print(f"{len(outcomes)} device(s): {counts}")
