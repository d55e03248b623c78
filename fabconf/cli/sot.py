"""``fabconf sot export -i DIR --to URL`` and ``fabconf sot import --from URL -i DIR``: Nautobot as the source of
truth (the token in ``FABCONF_NAUTOBOT_TOKEN``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction, inventory_arg: Callable[[argparse.ArgumentParser], None]) -> None:
    s = sub.add_parser("sot", help="export the inventory into Nautobot, import it back (the source of truth)")
    what = s.add_subparsers(dest="what", required=True, metavar="WHAT")
    e = what.add_parser(
        "export",
        help="write the inventory into the Nautobot Location named after fabric.yaml's name",
        description="Write the devices, interfaces, cables, addresses and ASNs of the inventory into one Nautobot "
        "Location (fabric.yaml's name). Only what differs is written; a second run reports no changes. The API "
        "token is read from FABCONF_NAUTOBOT_TOKEN.",
    )
    inventory_arg(e)
    e.add_argument("--to", required=True, metavar="URL", help="the Nautobot, e.g. http://127.0.0.1:8080")
    e.set_defaults(func=run_export)
    i = what.add_parser(
        "import",
        help="rewrite hosts.yaml and cabling.yaml from the Nautobot Location",
        description="Rewrite hosts.yaml and cabling.yaml of the inventory from its Nautobot Location, keeping "
        "fabric.yaml, groups.yaml and defaults.yaml. Written only when the whole inventory validates (both "
        "files or neither). The API token is read from FABCONF_NAUTOBOT_TOKEN.",
    )
    inventory_arg(i)
    i.add_argument("--from", dest="source", required=True, metavar="URL", help="the Nautobot")
    i.set_defaults(func=run_import)


def run_export(args: argparse.Namespace) -> int:
    from fabconf.sot import export_inventory

    print(export_inventory(Path(args.inventory), args.to))
    return 0


def run_import(args: argparse.Namespace) -> int:
    from fabconf.sot import import_inventory

    print(import_inventory(args.source, Path(args.inventory)))
    return 0
