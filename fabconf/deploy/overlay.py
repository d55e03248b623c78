"""Your own inventory, pointed at the lab: a Nornir transform function.

A Nornir script reads the user's ``./inventory`` (the live intent: every edit is seen), and
``transform_function="fabconf_lab"`` overlays only where each device answers in the lab and how to log in,
from the lab's state directory (``STATE/inventory/hosts.yaml`` and ``STATE/lab.env``, as ``fabconf lab up``
wrote them)::

    nr = InitNornir(inventory={"plugin": "SimpleInventory", "options": {...},
                               "transform_function": "fabconf_lab",
                               "transform_function_options": {"state": ".fabconf-lab"}})

The overlay (applied by Nornir to each host) sets its ``hostname``, ``port`` and ``connection_options`` and,
from ``lab.env``, its ``username`` and ``password``; the lab's CA file and known_hosts go into the process
environment, where the drivers' transport security reads them (``FABCONF_CA_FILE``, ``FABCONF_KNOWN_HOSTS``). A
device of the inventory that the running lab lacks is an error that says what to do, as ``fabconf … --lab`` does.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import yaml
from nornir.core.inventory import ConnectionOptions, Host

from fabconf.errors import UsageError

TRANSFORM_NAME = "fabconf_lab"
SECRET_KEYS = ("FABCONF_USERNAME", "FABCONF_PASSWORD")
# The only keys taken from lab.env (a file): the lab's credentials and the files that say whom its devices are.
# Anything else it holds (FABCONF_INSECURE=1, say) never reaches the environment: it would change how every
# device is connected to, silently.
LAB_ENV_KEYS = (*SECRET_KEYS, "FABCONF_CA_FILE", "FABCONF_KNOWN_HOSTS")


def lab_env(state: Path) -> dict[str, str]:
    """``STATE/lab.env`` as a mapping (its lines are ``KEY=value``): the keys of ``LAB_ENV_KEYS`` only."""
    path = state / "lab.env"
    if not path.is_file():
        raise UsageError(f"{state}: no running lab (no lab.env); start it with: fabconf lab up --state {state}")
    pairs = (line.partition("=") for line in path.read_text().splitlines())
    return {key: value for key, _, value in pairs if key in LAB_ENV_KEYS}


def lab_endpoints(state: Path) -> dict[str, dict[str, Any]]:
    """Per lab device, its entry of ``STATE/inventory/hosts.yaml``: hostname, port, connection options."""
    path = state / "inventory" / "hosts.yaml"
    if not path.is_file():
        raise UsageError(f"{state}: no running lab (no inventory); start it with: fabconf lab up --state {state}")
    hosts = yaml.safe_load(path.read_text()) or {}
    return {name: entry for name, entry in hosts.items() if isinstance(entry, dict)}


def _options(raw: dict[str, Any]) -> dict[str, ConnectionOptions]:
    return {
        name: ConnectionOptions(
            hostname=section.get("hostname"),
            port=section.get("port"),
            username=section.get("username"),
            password=section.get("password"),
            platform=section.get("platform"),
            extras=section.get("extras"),
        )
        for name, section in raw.items()
        if isinstance(section, dict)
    }


@functools.cache
def _lab(state: Path, stamp: tuple[float, float]) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The lab's endpoints and lab.env, read once per state directory and version of its files (``stamp``)."""
    return lab_endpoints(state), lab_env(state)


def _stamp(state: Path) -> tuple[float, float]:
    files = (state / "inventory" / "hosts.yaml", state / "lab.env")
    return (files[0].stat().st_mtime, files[1].stat().st_mtime) if all(f.is_file() for f in files) else (0.0, 0.0)


def lab_overlay(host: Host, state: str | Path = ".fabconf-lab") -> None:
    """Nornir transform function (per host): the lab's address, port and credentials over the user's own
    inventory entry."""
    where = Path(state).resolve()
    endpoints, env = _lab(where, _stamp(where))
    entry = endpoints.get(host.name)
    if entry is None:
        raise UsageError(
            f"{host.name}: in the inventory but not in the running lab ({state}); let it follow the inventory: "
            f"fabconf lab sync -i INVENTORY --state {state}"
        )
    for key, value in env.items():
        if key not in SECRET_KEYS:
            os.environ[key] = value
    host.hostname = str(entry.get("hostname", host.hostname))
    host.port = entry.get("port")
    host.connection_options = _options(dict(entry.get("connection_options") or {}))
    host.username = env.get("FABCONF_USERNAME", host.username)
    host.password = env.get("FABCONF_PASSWORD", host.password)


def connection_options(host: Any) -> dict[str, Any]:
    """A Nornir host's connection options in the inventory's own shape (``{section: {"port": …, "extras": …}}``),
    as fabconf's drivers take them."""
    out: dict[str, Any] = {}
    for name, opts in (getattr(host, "connection_options", None) or {}).items():
        section = {key: getattr(opts, key, None) for key in ("hostname", "port", "username", "platform", "extras")}
        out[name] = {key: value for key, value in section.items() if value is not None}
    return out
