"""fabconf: configuration-as-code for lossless RoCEv2 GPU fabrics.

The public API, the names that stay stable between releases (everything else is internal and may move):

- ``compile_inventory(directory, select=None) -> Compiled``: validate an inventory and design every device (or
  those ``select`` names); raises ``InputError`` carrying every problem as ``file: path: message``.
- ``Compiled``: ``.model``, ``.topology``, ``.data`` (device data per device), ``.problems`` (the warnings).
- ``render(data) -> str``: one device's configuration, as ``fabconf render`` writes it.
- ``select(model, pattern) -> list[str]``: the devices a ``--limit`` pattern names (``SelectionError`` when a
  term matches nothing).
- ``diff_task``, ``verify_task``, ``push_task``: the Nornir tasks; each host's ``Result.result`` is an
  ``Outcome`` (``State``, diff, message, checks, evidence).
- ``FabconfError`` (the one root exception), ``InputError``, ``SelectionError``.

Names are imported on first use, so ``import fabconf`` stays cheap: ``fabconf render`` never loads NAPALM.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fabconf.compile.pipeline import Compiled, compile_inventory
    from fabconf.compile.problems import InputError
    from fabconf.compile.render import render
    from fabconf.compile.selection import SelectionError, select
    from fabconf.deploy.job import Outcome, State
    from fabconf.deploy.tasks import diff_task, push_task, verify_task
    from fabconf.errors import FabconfError

_WHERE = {
    "Compiled": "fabconf.compile.pipeline",
    "compile_inventory": "fabconf.compile.pipeline",
    "InputError": "fabconf.compile.problems",
    "render": "fabconf.compile.render",
    "select": "fabconf.compile.selection",
    "SelectionError": "fabconf.compile.selection",
    "Outcome": "fabconf.deploy.job",
    "State": "fabconf.deploy.job",
    "diff_task": "fabconf.deploy.tasks",
    "verify_task": "fabconf.deploy.tasks",
    "push_task": "fabconf.deploy.tasks",
    "FabconfError": "fabconf.errors",
}

__all__ = [
    "Compiled",
    "FabconfError",
    "InputError",
    "Outcome",
    "SelectionError",
    "State",
    "compile_inventory",
    "diff_task",
    "push_task",
    "render",
    "select",
    "verify_task",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'fabconf' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return __all__
