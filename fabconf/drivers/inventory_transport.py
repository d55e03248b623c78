"""What an inventory (or a Nornir host, or the lab's generated inventory) may say about how fabconf connects.

``connection_options.<section>`` may set the device's ``port`` and, in ``extras``, only the keys below. Every other
key is refused: fabconf documents no other, and an unknown one would reach a driver's arguments (``verify``,
``ssl_verify``, ``ssh_strict``, ``context``, ...). Three documented settings weaken transport security and are
refused unless the operator passes ``--allow-inventory-transport`` on the command line (then announced on stderr
for every device they affect, on every run):

- ``extras.ca_file`` / ``extras.known_hosts`` (``ssh_known_hosts``): a CA or known-hosts file of the inventory's
  choosing, unless it is the very file the operator already trusts (``FABCONF_CA_FILE``, ``FABCONF_KNOWN_HOSTS``:
  the lab's inventory names the lab's own files, which ``lab.env`` sets);
- ``extras.optional_args.transport`` other than ``https``: plain HTTP, credentials in clear.

Turning verification off is never an inventory setting: it is ``--insecure`` (``fabconf.drivers.trust``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fabconf.drivers.trust import Trust
from fabconf.errors import FabconfError

ALLOW_FLAG = "--allow-inventory-transport"
SECTION_KEYS = frozenset({"port", "extras"})
EXTRAS_KEYS = frozenset({"ssh_port", "device_type", "ca_file", "known_hosts", "ssh_known_hosts", "optional_args"})
OPTIONAL_ARGS_KEYS = frozenset({"transport", "port"})
NAPALM_SECTION = "napalm"  # the only section whose extras carry optional_args (NAPALM's own drivers)
TRUST_FILES = {"ca_file": "ca_file", "known_hosts": "known_hosts", "ssh_known_hosts": "known_hosts"}


class TransportRefused(FabconfError):
    """A device's connection options weaken transport security and the operator did not allow it."""


@dataclass(frozen=True)
class Setting:
    """One connection setting that is refused, or (``weakens``) allowed only with ``--allow-inventory-transport``."""

    path: tuple[str, ...]  # under connection_options
    message: str
    weakens: bool  # False: not a setting fabconf takes at all (refused with or without the flag)

    def where(self) -> str:
        return ".".join(("connection_options", *self.path))


def _same_file(given: Any, trusted: str | None) -> bool:
    return trusted is not None and os.path.realpath(str(given)) == os.path.realpath(trusted)


def _unknown(path: tuple[str, ...], hint: str = "") -> Setting:
    return Setting(path, f"not a connection setting fabconf takes{hint}", weakens=False)


def _extras(section: str, extras: Mapping[str, Any], trust: Trust) -> list[Setting]:
    out: list[Setting] = []
    for key, value in extras.items():
        path = (section, "extras", str(key))
        if key not in EXTRAS_KEYS or (key == "optional_args" and section != NAPALM_SECTION):
            out.append(_unknown(path, "; TLS and host-key checks are turned off only by --insecure"))
        elif key in TRUST_FILES and value and not _same_file(value, getattr(trust, TRUST_FILES[key])):
            what = "CA file" if key == "ca_file" else "known_hosts file"
            out.append(Setting(path, f"a {what} chosen by the inventory decides whom this device is", weakens=True))
        elif key == "optional_args":
            if not isinstance(value, Mapping):
                out.append(_unknown(path, " unless it is a mapping"))
                continue
            for arg, given in value.items():
                where = (*path, str(arg))
                if arg not in OPTIONAL_ARGS_KEYS:
                    out.append(_unknown(where, "; TLS and host-key checks are turned off only by --insecure"))
                elif arg == "transport" and given != "https":
                    out.append(Setting(where, f"transport {given!r}: not TLS, credentials cross in clear", True))
    return out


def review(options: Mapping[str, Any] | None, trust: Trust, sections: tuple[str, ...] | None = None) -> list[Setting]:
    """Every setting of ``options`` (``{section: {"port": …, "extras": {…}}}``) that is not plain and safe:
    unknown keys and weakening ones, in the order written. ``sections``: only these (a driver reads one)."""
    out: list[Setting] = []
    for name, section in (options or {}).items():
        if sections is not None and name not in sections:
            continue
        if not isinstance(section, Mapping):
            continue
        extras = section.get("extras")
        if extras is None:
            continue
        if not isinstance(extras, Mapping):
            out.append(_unknown((str(name), "extras"), " unless it is a mapping"))
            continue
        out.extend(_extras(str(name), extras, trust))
    return out


def refused(settings: list[Setting], trust: Trust) -> list[Setting]:
    """The settings a run refuses: unknown ones always, weakening ones unless the operator allowed them."""
    return [s for s in settings if not s.weakens or not trust.inventory_transport]


def refusal_text(setting: Setting) -> str:
    if setting.weakens:
        return f"{setting.message}; refused unless the operator passes {ALLOW_FLAG}"
    return setting.message


def announcement(device: str, settings: list[Setting]) -> str:
    """The stderr line of a device whose weakening settings the operator allowed."""
    listed = "; ".join(f"{s.where()}: {s.message}" for s in settings if s.weakens)
    return f"fabconf: warning: {ALLOW_FLAG}: {device} connects as its inventory says: {listed}"


def check(options: Mapping[str, Any] | None, trust: Trust, section: str) -> None:
    """The driver factory's own check of the section it reads (the CLI checks earlier, naming the file): raises
    ``TransportRefused``, so that no path (a Nornir host, the lab overlay) reaches a driver with such settings."""
    found = review(options, trust, (section,))
    bad = refused(found, trust)
    if bad:
        raise TransportRefused("; ".join(f"{s.where()}: {refusal_text(s)}" for s in bad))
