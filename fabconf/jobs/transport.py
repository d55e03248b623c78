"""The command line's side of the inventory's connection settings (``fabconf.drivers.inventory_transport``): before
any device is contacted, a setting that weakens transport security is refused as ``file: path: message`` unless
``--allow-inventory-transport`` was given, and then announced on stderr for every device it affects."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO

from fabconf.compile.model import Device
from fabconf.compile.problems import InputError, Problems
from fabconf.drivers.inventory_transport import announcement, refusal_text, refused, review
from fabconf.drivers.trust import Trust
from fabconf.platforms import platform as platform_spec


def reviewed(devices: Iterable[Device], trust: Trust, problems: Problems, warn_only: bool = False) -> list[str]:
    """Add each refused setting of ``devices`` to ``problems`` (as warnings with ``warn_only``: ``validate``);
    returns the announcement lines of the devices whose weakening settings the operator allowed."""
    lines: list[str] = []
    for device in devices:
        section = platform_spec(device.platform).connection_section
        found = review(device.connection_options, trust, (section,))
        file, path = device.connection_origin
        for setting in refused(found, trust):
            where = [*path, *setting.path]
            message = refusal_text(setting)
            if warn_only:
                problems.warn(file, where, f"{message} (device commands refuse it)")
            else:
                problems.add(file, where, message)
        if trust.inventory_transport and any(s.weakens for s in found):
            lines.append(announcement(device.name, found))
    return lines


def gate(devices: Iterable[Device], trust: Trust, stream: TextIO | None = None) -> None:
    """Refuse the run (``InputError``: every problem, nothing contacted) or announce what the operator allowed."""
    problems = Problems()
    lines = reviewed(devices, trust, problems)
    if problems.errors:
        raise InputError(problems)
    for line in lines:
        print(line, file=stream or sys.stderr)
