"""The one flow every command starts with: load -> schema -> model -> topology -> checks -> design."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabconf.compile import checks, derived, inventory, model, partial, schema, topology
from fabconf.compile.design.device import design
from fabconf.compile.problems import InputError, Problems


@dataclass
class Compiled:
    model: model.Model
    topology: topology.Topology
    data: dict[str, dict[str, Any]]  # device name -> device data (every device, or those ``select`` chose)
    problems: Problems  # warnings only, once compiled
    # what was read: kind -> SHA-256 of the file's bytes, and the kinds loaded (an optional file that is not there
    # is loaded without a digest): what ``fabconf.compile.outcome`` keys a result by
    read: dict[str, str] = field(default_factory=dict)
    loaded: frozenset[str] = frozenset()


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Compiling allocates millions of small acyclic objects; generational GC passes over them made
    loading a 32k-GPU fabric ~3x slower (bench/README.md). Reference counting still frees everything.
    The long-lived result is then frozen so later collections skip it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


Selector = Callable[[model.Model], list[str]]


def compile_inventory(directory: Path | str, select: Selector | None = None) -> Compiled:
    """Validate the inventory and design every device (with ``select``: only the devices it names, so that
    rendering one leaf of a 32k-GPU fabric does not design 5,000 others); raises InputError carrying every
    problem found. Files, schemas, model, topology and cross-checks always cover the whole inventory; the
    priority chain is read back from the designed devices."""
    with _no_cyclic_gc():
        return _compile(directory, select)


def validate(directory: Path | str) -> Compiled:
    """``compile_inventory`` without the design: files, schemas, model, topology and cross-checks over the whole
    inventory (``InputError`` carrying every problem), and ``data`` empty. ``fabconf render`` designs the devices
    where it renders them (``fabconf.compile.output``) and checks their priority chain there."""
    with _no_cyclic_gc():
        return _validated(directory)


def _validated(directory: Path | str) -> Compiled:
    problems = Problems()
    raw = inventory.load(directory, problems)
    schema.check_credentials(raw, problems)
    schema.check_text(raw, problems)
    if not schema.check_files(raw, problems) or problems.errors:
        partial.cross_check(raw, problems)  # what can still be judged, in the same round (issue #40)
        raise InputError(problems)
    resolved = model.build(raw, problems)
    topo = derived.derive_and_check(raw, resolved, problems)  # topology and checks, from the cache across MTU edits
    if problems.errors:
        raise InputError(problems)
    return Compiled(resolved, topo, {}, problems, dict(raw.digests), frozenset(raw.data))


def _compile(directory: Path | str, select: Selector | None = None) -> Compiled:
    compiled = _validated(directory)
    resolved, topo, problems = compiled.model, compiled.topology, compiled.problems
    data = design(resolved, topo, None if select is None else select(resolved))
    checks.check_device_data(resolved, topo, problems, data)
    if problems.errors:
        raise InputError(problems)
    return Compiled(resolved, topo, data, problems, compiled.read, compiled.loaded)
