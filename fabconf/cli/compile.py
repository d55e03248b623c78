"""``fabconf validate`` and ``fabconf render``: the commands of the compile half (no device is touched)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from fabconf.compile.problems import Problem, Problems

if TYPE_CHECKING:  # the pipeline (YAML, model, topology, checks) is imported by a run that compiles, not by a cache hit
    from fabconf.compile.pipeline import Compiled, Selector


def print_problems(problems: Problems) -> None:
    for p in problems:
        print(p, file=sys.stderr)


def _compile(inventory: Path, selector: Selector | None = None) -> Compiled:
    from fabconf.compile.pipeline import compile_inventory

    compiled = compile_inventory(inventory, selector)
    print_problems(compiled.problems)  # warnings (errors raise InputError)
    return compiled


def run_validate(inventory: Path, stream: TextIO | None = None) -> int:
    from fabconf.drivers.trust import Trust  # what a device command would refuse: `validate` says, `render` need not
    from fabconf.jobs.transport import reviewed

    compiled = _compile(inventory)
    devices = compiled.model.devices
    switches = sum(1 for d in devices.values() if d.is_switch)
    transport = Problems()  # connection settings that device commands refuse without --allow-inventory-transport
    reviewed(devices.values(), Trust.from_env(), transport, warn_only=True)
    print_problems(transport)
    warnings = len(compiled.problems.warnings) + len(transport.warnings)
    print(
        f"{inventory}: valid: {switches} switches, {len(devices) - switches} GPU hosts, "
        f"{len(compiled.model.links)} links, {warnings} warning(s)",
        file=stream or sys.stdout,
    )
    return 0


def run_render(inventory: Path, output: Path, limit: str | None) -> int:
    started = time.perf_counter()
    if limit:  # a few devices: designed in the compile, or taken from the compile cache (the one-device edit)
        from fabconf.compile.parallel import write_all  # Jinja2: only when rendering, never for `validate`

        data = _designed(inventory, limit)
        output.mkdir(parents=True, exist_ok=True)
        write_all(data, output)
        count = len(data)
    else:  # every device: designed, checked and rendered on every usable core, then written (issue 42)
        from fabconf.compile.output import prepare
        from fabconf.compile.pipeline import validate
        from fabconf.compile.selection import select

        validated = validate(inventory)
        output.mkdir(parents=True, exist_ok=True)
        model = validated.model
        with prepare(model, validated.topology, select(model, None), output, validated.problems) as pending:
            print_problems(validated.problems)  # warnings (a problem of the chain raised InputError with them)
            pending.write()
        count = pending.count
    elapsed = time.perf_counter() - started
    print(f"rendered {count} device(s) to {output}/ in {elapsed:.2f} s")
    return 0


def _designed(inventory: Path, limit: str) -> dict[str, dict[str, Any]]:
    """The device data of the devices ``limit`` selects, its warnings printed. A ``--limit`` run of an inventory,
    fabconf and pattern rendered before comes from the compile cache (``fabconf.compile.outcome``)."""
    from fabconf.compile import outcome

    hit = outcome.lookup(inventory, limit)
    if hit is not None:
        warnings, data = hit
        for warning in warnings:
            print(Problem(*warning), file=sys.stderr)
        return data
    from fabconf.compile.selection import select

    compiled = _compile(inventory, lambda model: select(model, limit))  # only the selected devices are designed
    found = [(p.file, p.path, p.message, p.severity) for p in compiled.problems]
    outcome.store(inventory, limit, compiled.read, compiled.loaded, found, compiled.data)
    return compiled.data
