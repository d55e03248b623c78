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
- The jobs (``fabconf.jobs``), what the ``fabconf`` commands, runbooks and drift's remediation call:
  ``diff(target, options)``, ``verify(target, options, verify_options)``, ``push(target, options, push_options)``
  return a ``Result`` (``.outcomes``, ``.exit_code``); ``drift(target, options, drift_options)`` a ``DriftRun``;
  ``preflight_checks(target, options)`` a ``ChecksResult``; ``onboard_rack(directory, pod, rack, dry_run)`` a
  ``RackResult``. ``Target`` says which devices and where (``lab=True``: the lab at ``state``, which must be
  running unless ``start_lab`` is given); ``Hooks`` how a job shows progress and asks before a push (the default
  shows nothing and asks nothing: a push runs as ``--yes``). ``DeviceOptions``, ``PushOptions``, ``VerifyOptions``,
  ``DriftOptions``: the typed options.
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
    from fabconf.deploy.options import DeviceOptions, PushOptions, VerifyOptions
    from fabconf.deploy.tasks import diff_task, push_task, verify_task
    from fabconf.errors import FabconfError
    from fabconf.jobs.diff import diff
    from fabconf.jobs.drift import DriftOptions, DriftRun
    from fabconf.jobs.drift import check as drift
    from fabconf.jobs.onboard import RackResult, onboard_rack
    from fabconf.jobs.preflight import ChecksResult
    from fabconf.jobs.preflight import check as preflight_checks
    from fabconf.jobs.push import push
    from fabconf.jobs.target import Hooks, Result, Target
    from fabconf.jobs.verify import verify

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
    "DeviceOptions": "fabconf.deploy.options",
    "PushOptions": "fabconf.deploy.options",
    "VerifyOptions": "fabconf.deploy.options",
    "Target": "fabconf.jobs.target",
    "Hooks": "fabconf.jobs.target",
    "Result": "fabconf.jobs.target",
    "diff": "fabconf.jobs.diff",
    "verify": "fabconf.jobs.verify",
    "push": "fabconf.jobs.push",
    "DriftOptions": "fabconf.jobs.drift",
    "DriftRun": "fabconf.jobs.drift",
    "ChecksResult": "fabconf.jobs.preflight",
    "RackResult": "fabconf.jobs.onboard",
    "onboard_rack": "fabconf.jobs.onboard",
}
_NAMED = {"drift": ("fabconf.jobs.drift", "check"), "preflight_checks": ("fabconf.jobs.preflight", "check")}

__all__ = [
    "ChecksResult",
    "Compiled",
    "DeviceOptions",
    "DriftOptions",
    "DriftRun",
    "FabconfError",
    "Hooks",
    "InputError",
    "Outcome",
    "PushOptions",
    "RackResult",
    "Result",
    "SelectionError",
    "State",
    "Target",
    "VerifyOptions",
    "compile_inventory",
    "diff",
    "diff_task",
    "drift",
    "onboard_rack",
    "preflight_checks",
    "push",
    "push_task",
    "render",
    "select",
    "verify",
    "verify_task",
]


def __getattr__(name: str) -> Any:
    module, attribute = _NAMED.get(name) or (_WHERE.get(name), name)
    if module is None:
        raise AttributeError(f"module 'fabconf' has no attribute {name!r}")
    return getattr(importlib.import_module(module), attribute)


def __dir__() -> list[str]:
    return __all__
