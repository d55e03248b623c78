"""The lab's registry of simulators: each simulator package (``fabconf_lab/<package>/__init__.py``) registers the
platform it simulates, its class, the services it answers on, its port arguments and its metrics. The orchestrator,
the port planner and the exporters ask this table, never a platform name.

The packages are discovered on first use (every subpackage of ``fabconf_lab`` is imported; those that simulate a
platform call ``register``), not at import, so importing one simulator package first never sees a half-filled
table.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal


@dataclass(frozen=True)
class LabPlatform:
    platform: str  # the fabconf platform it simulates (fabconf.platforms)
    simulator: tuple[str, str]  # (module, class), imported when a device of the platform starts
    services: tuple[str, ...]  # what it answers on: "https" (eAPI, NX-API or NVUE REST) and/or "ssh"
    # the simulator's port keyword arguments: (argument, service), e.g. (("port", "https"), ("ssh_port", "ssh"))
    port_args: tuple[tuple[str, str], ...]
    exporter: Literal["host", "switch"]  # its metrics: node_exporter (hosts) or snmp_exporter (switches)
    https_port: int | None = None  # per-address layouts: a fixed HTTPS port of its own (else 443 or its twin)
    snmp_pfc: bool = False  # snmp_exporter shows its per-priority PFC counters (fabconf_cumulus_pfc)
    # a switch's running configuration (``Simulator.running_config``) -> the metric sources it enables, of
    # ``"snmp"`` (an SNMP agent) and ``"gnmi"`` (a gNMI server): the lab's exporters answer only for those
    # (``fabconf_lab.metrics``); None: every source (hosts)
    metric_sources: Callable[[str], frozenset[str]] | None = None
    # what the lab adds to the connection extras of the platform's section (fabconf_lab.orchestrator)
    connection_extras: dict[str, Any] = field(default_factory=dict)


_TABLE: dict[str, LabPlatform] = {}


def register(entry: LabPlatform) -> None:
    """Called by a simulator package's ``__init__``."""
    if entry.platform in _TABLE and _TABLE[entry.platform] != entry:
        raise ValueError(f"lab platform {entry.platform!r} is registered twice")
    _TABLE[entry.platform] = entry


@cache
def table() -> dict[str, LabPlatform]:
    """Every simulated platform, after importing every simulator package."""
    package = importlib.import_module("fabconf_lab")
    for info in pkgutil.iter_modules(package.__path__, "fabconf_lab."):
        if info.ispkg:
            importlib.import_module(info.name)
    return dict(sorted(_TABLE.items()))


def lab_platform(name: str) -> LabPlatform:
    try:
        return table()[name]
    except KeyError:
        raise KeyError(f"the lab has no simulator for platform {name!r} (has: {', '.join(table())})") from None
