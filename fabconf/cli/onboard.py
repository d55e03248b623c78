"""``fabconf onboard rack --pod P [--rack R] [--dry-run]``: add a rack to the inventory from its intent; and
``fabconf docs [-o DIR]``: the documents that go with it (cabling plan, pages, diagram). The onboarding itself is
``fabconf.jobs.onboard``'s; this module parses the arguments and prints."""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable
from pathlib import Path

from fabconf.compile.pipeline import compile_inventory
from fabconf.jobs import onboard as jobs
from fabconf.plan import cabling as docs


def add_parser(sub: argparse._SubParsersAction, inventory_arg: Callable[[argparse.ArgumentParser], None]) -> None:
    o = sub.add_parser("onboard", help="add a rack to the inventory (names, addresses, ids, ports, links)")
    what = o.add_subparsers(dest="what", required=True, metavar="WHAT")
    r = what.add_parser(
        "rack",
        help="a rack of the shape fabric.yaml's onboarding: section describes, into a pod",
        description="Add a rack's leaves and GPU hosts to hosts.yaml and their links to cabling.yaml. Existing "
        "lines are never changed; the result is validated before anything is written (both files or neither). "
        "A rack that is already there changes nothing.",
    )
    inventory_arg(r)
    r.add_argument("--pod", help="the pod the rack joins (needed when the fabric has more than one)")
    r.add_argument("--rack", help="the rack's name (default: the next free rackN); an existing rack is a no-op")
    r.add_argument("--dry-run", action="store_true", help="print what would be added, write nothing")
    r.add_argument(
        "--to",
        metavar="URL",
        help="record the rack in that Nautobot as planned (the inventory's files stay as they are; "
        "`fabconf sot import` brings it back); the token is read from FABCONF_NAUTOBOT_TOKEN",
    )
    r.set_defaults(func=run_rack)
    p = what.add_parser(
        "pod",
        help="a new pod: its spines (to the super-spines) and the racks fabric.yaml's onboarding: pod shape asks for",
        description="Add a pod: declare it under pods: in fabric.yaml, add its spines (uplinks to the super-spines' "
        "first free ports) and onboarding.pod.racks racks. Written only when the whole result validates.",
    )
    inventory_arg(p)
    p.add_argument("--pod", help="the new pod's name (default: pod<next id>); an existing pod is a no-op")
    p.add_argument("--dry-run", action="store_true", help="print what would be added, write nothing")
    p.set_defaults(func=run_pod)


def run_pod(args: argparse.Namespace) -> int:
    directory = Path(args.inventory)
    result = jobs.onboard_pod(directory, args.pod, args.dry_run)
    if args.dry_run and result.texts:
        print_diffs(directory, result.texts)
    print(result.summary)
    return 0


def print_diffs(directory: Path, texts: dict[str, str]) -> None:
    """``--dry-run``: the exact unified diff of every file onboarding would write (``patch -p1`` applies it)."""
    for name, text in sorted(texts.items()):
        before = (directory / name).read_text()
        if text == before:
            continue
        lines = difflib.unified_diff(
            before.splitlines(keepends=True), text.splitlines(keepends=True), f"a/{name}", f"b/{name}"
        )
        sys.stdout.writelines(lines)


def add_docs_parser(sub: argparse._SubParsersAction, inventory_arg: Callable[[argparse.ArgumentParser], None]) -> None:
    d = sub.add_parser(
        "docs",
        help="write the cabling plan (CSV), a Markdown page per device, pod and fabric, and a diagram",
    )
    inventory_arg(d)
    d.add_argument(
        "-o",
        "--output",
        default="fabric-docs",  # not ./docs: in a clone that is the project's own documentation site
        metavar="DIR",
        help="output directory (default: ./fabric-docs)",
    )
    d.set_defaults(func=run_docs)


def run_docs(args: argparse.Namespace) -> int:
    written = docs.write(compile_inventory(Path(args.inventory)), Path(args.output))
    svg = any(p.suffix == ".svg" for p in written)
    note = "" if svg else " (no fabric.svg: Graphviz `dot` is not installed)"
    print(f"wrote {len(written)} file(s) to {args.output}/{note}")
    return 0


def run_rack(args: argparse.Namespace) -> int:
    if args.to:
        return record_rack(Path(args.inventory), args.pod, args.rack, args.to)
    return onboard_rack(Path(args.inventory), args.pod, args.rack, args.dry_run)


def record_rack(directory: Path, pod: str | None, rack: str | None, url: str) -> int:
    """``onboard rack --to URL``: the inventory with the rack added, validated, exported into Nautobot with the
    rack's devices as Planned; the inventory's own files are not written."""
    result = jobs.record_rack(directory, pod, rack, url)
    plan = result.plan
    if plan.empty:
        print(f"rack {plan.rack} of pod {plan.pod} is already in {directory}: nothing to record")
        return 0
    print(
        f"recorded rack {plan.rack} of pod {plan.pod} in Nautobot as planned: {len(plan.devices)} device(s) "
        f"({', '.join(d.name for d in plan.devices)}), {len(plan.links)} link(s)"
    )
    print(result.recorded)
    return 0


def onboard_rack(directory: Path, pod: str | None, rack: str | None, dry_run: bool) -> int:
    result = jobs.onboard_rack(directory, pod, rack, dry_run)
    plan = result.plan
    if plan.empty:
        print(f"rack {plan.rack} of pod {plan.pod} is already in {directory}: nothing to do")
        return 0
    if dry_run:
        print_diffs(directory, result.texts)
        return 0
    print(
        f"onboarded rack {plan.rack} into pod {plan.pod}: {len(plan.devices)} device(s) "
        f"({', '.join(d.name for d in plan.devices)}), {len(plan.links)} link(s); {directory} validates"
    )
    return 0
