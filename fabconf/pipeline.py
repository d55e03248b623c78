"""The one flow every command starts with: load -> schema -> model -> topology -> checks -> design."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fabconf import checks, inventory, model, schema, topology
from fabconf.design import design
from fabconf.problems import InputError, Problems


@dataclass
class Compiled:
    model: model.Model
    topology: topology.Topology
    data: dict[str, dict[str, Any]]  # device name -> device data (every device)
    problems: Problems  # warnings only, once compiled


def compile_inventory(directory: Path | str) -> Compiled:
    """Validate the inventory and design every device; raises InputError carrying every problem found."""
    problems = Problems()
    raw = inventory.load(directory, problems)
    schema.check_credentials(raw, problems)
    if not schema.check_files(raw, problems) or problems.errors:
        raise InputError(problems)
    resolved = model.build(raw, problems)
    topo = topology.derive(resolved, problems)
    checks.run(resolved, topo, problems)
    if problems.errors:
        raise InputError(problems)
    data = design(resolved, topo)
    checks.check_device_data(resolved, topo, problems, data)
    if problems.errors:
        raise InputError(problems)
    return Compiled(resolved, topo, data, problems)
