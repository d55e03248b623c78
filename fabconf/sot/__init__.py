"""The source of truth: the inventory exported into a Nautobot Location and imported back from it."""

from __future__ import annotations

from pathlib import Path

from fabconf.compile.pipeline import compile_inventory
from fabconf.sot import client, desired, export, load


def export_inventory(directory: Path, url: str, status: str = "Active", new_only: set[str] | None = None) -> str:
    """Write the inventory of ``directory`` into its Location; a one-line report ("no changes" on a second run)."""
    compiled = compile_inventory(directory)
    want = desired.desired(compiled, directory)
    with client.boundary(url):
        nb = client.connect(url)
        report = export.export(nb, url, want, status, new_only)
    line = f"exported {want.location} to {url}: {report.summary()}"
    if report.left_alone:
        line += f" ({len(report.left_alone)} device(s) of the Location not in the inventory left as they are: "
        line += ", ".join(report.left_alone[:10]) + (", ..." if len(report.left_alone) > 10 else "") + ")"
    return line


def import_inventory(url: str, directory: Path) -> str:
    """Rewrite hosts.yaml and cabling.yaml of ``directory`` from its Location (fabric.yaml's name)."""
    location = load.fabric_name(directory)
    with client.boundary(url):
        nb = client.connect(url)
        imported = load.read(nb, url, location, directory)
    texts = load.texts(imported, url, location)
    secret = client.token()
    if any(secret in text for text in texts.values()):
        raise client.SotError(f"{url}: an answer carries the API token; nothing was written")
    ignored = f"; how to connect ignored for {', '.join(imported.ignored)}" if imported.ignored else ""
    if not load.write(directory, texts):
        return f"imported {location} from {url}: no changes{ignored}"
    return (
        f"imported {location} from {url}: {len(imported.hosts)} device(s), {len(imported.links)} link(s) into "
        f"{directory}/hosts.yaml and cabling.yaml; {directory} validates{ignored}"
    )
