"""``fabconf validate`` and ``fabconf render``: the commands of the compile half (no device is touched)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TextIO

from fabconf.compile.pipeline import Compiled, Selector, compile_inventory
from fabconf.compile.problems import Problems
from fabconf.compile.selection import select


def print_problems(problems: Problems) -> None:
    for p in problems:
        print(p, file=sys.stderr)


def _compile(inventory: Path, selector: Selector | None = None) -> Compiled:
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
    if limit:  # a few devices: designed in the compile, as the other commands do (the one-device edit's path)
        from fabconf.compile.parallel import write_all  # Jinja2: only when rendering, never for `validate`

        compiled = _compile(inventory, lambda model: select(model, limit))  # only the selected devices are designed
        output.mkdir(parents=True, exist_ok=True)
        write_all(compiled.data, output)
        count = len(compiled.data)
    else:  # every device: designed, checked and rendered on every usable core, then written (issue 42)
        from fabconf.compile.output import prepare
        from fabconf.compile.pipeline import validate

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
