"""The onboarding jobs: a rack into a pod of the inventory (or, as planned, into Nautobot), and a new pod
(``fabconf.plan.onboard`` does the planning; these read, validate and write). The CLI prints their results."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from fabconf.compile.pipeline import compile_inventory
from fabconf.plan import onboard
from fabconf.plan.onboard import RackPlan


@dataclass
class RackResult:
    """The rack's plan (``plan.empty``: it was already there, nothing done); ``texts``: the files' new texts
    (what a dry run would write); ``written``: the inventory's files were written; ``recorded``: the Nautobot
    export's summary line (``record_rack``)."""

    plan: RackPlan
    texts: dict[str, str] = field(default_factory=dict)
    written: bool = False
    recorded: str | None = None


@dataclass
class PodResult:
    """What happened, in a sentence, and the files' new texts (written unless a dry run)."""

    summary: str
    texts: dict[str, str]


def onboard_rack(directory: Path, pod: str | None, rack: str | None, dry_run: bool = False) -> RackResult:
    """Add a rack's leaves and GPU hosts to the inventory; validated before anything is written (both files or
    neither); a rack that is already there changes nothing."""
    compiled = compile_inventory(directory)
    plan = onboard.plan_rack(compiled, pod or onboard.only_pod(compiled), rack)
    if plan.empty:
        return RackResult(plan)
    if dry_run:
        return RackResult(plan, onboard.rack_texts(directory, plan))
    onboard.write(directory, plan)
    return RackResult(plan, written=True)


def record_rack(directory: Path, pod: str | None, rack: str | None, url: str) -> RackResult:
    """The inventory with the rack added, validated, exported into Nautobot with the rack's devices as Planned;
    the inventory's own files are not written."""
    from fabconf.sot import export_inventory

    compiled = compile_inventory(directory)
    plan = onboard.plan_rack(compiled, pod or onboard.only_pod(compiled), rack)
    if plan.empty:
        return RackResult(plan)
    texts = onboard.rack_texts(directory, plan)
    with tempfile.TemporaryDirectory(prefix=".fabconf-onboard-") as tmp:
        grown = Path(tmp) / directory.name
        shutil.copytree(directory, grown)
        for name, text in texts.items():
            (grown / name).write_text(text)
        line = export_inventory(grown, url, status="Planned", new_only={d.name for d in plan.devices})
    return RackResult(plan, texts, recorded=line)


def onboard_pod(directory: Path, pod: str | None, dry_run: bool = False) -> PodResult:
    """A new pod: its spines and ``onboarding.pod.racks`` racks (``fabconf.plan.onboard.onboard_pod``)."""
    summary, texts = onboard.onboard_pod(directory, pod, dry_run)
    return PodResult(summary, texts)
