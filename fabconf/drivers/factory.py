"""Build the driver for a device from the platform table: NAPALM's own for CLI platforms (wrapped with
hier_config staging), fabconf's for NVUE and GPU hosts. The driver is returned unopened."""

from __future__ import annotations

import importlib
from typing import Any

from fabconf.drivers import inventory_transport
from fabconf.drivers.contract import Driver
from fabconf.drivers.trust import Trust
from fabconf.platforms import Revert
from fabconf.platforms import platform as platform_spec

DEFAULT_TIMEOUT = 60


def driver_for(
    platform: str,
    hostname: str,
    username: str,
    password: str,
    *,
    port: int | None = None,
    connection_options: dict[str, Any] | None = None,
    timeout: int = DEFAULT_TIMEOUT,
    extra_args: dict[str, Any] | None = None,
    trust: Trust | None = None,
) -> Driver:
    """A contract-conforming driver for one device, not yet opened.

    ``connection_options`` are Nornir's (``{section: {"port": …, "extras": {…}}}``); the platform table names
    the section. ``extras.ssh_port`` is a device's SSH port where the port names another service (NVUE's REST,
    NX-API: NX-OS's SCP then goes to ``ssh_port``). ``extra_args`` reach our own drivers' ``optional_args``
    (e.g. ``allow_fw_reset`` for hosts).
    ``trust``: how certificates and host keys are checked (``fabconf.drivers.trust``; default: verified, from
    the environment); the section's ``ca_file`` / ``known_hosts`` extras win for this device only where the
    operator allowed it (``Trust.inventory_transport``). A setting fabconf does not take, or one that weakens
    transport security without that allowance, raises ``TransportRefused`` (``fabconf.drivers.inventory_transport``).
    """
    spec = platform_spec(platform)
    base = trust or Trust.from_env()
    inventory_transport.check(connection_options, base, spec.connection_section)
    section = (connection_options or {}).get(spec.connection_section) or {}
    port = section.get("port") or port or spec.default_port
    extras = dict(section.get("extras") or {})
    trusted = base.for_device(extras)
    for key in ("ca_file", "known_hosts", "ssh_known_hosts"):
        extras.pop(key, None)  # given to the driver below in its own terms
    if spec.driver.startswith("napalm:"):
        import napalm  # here, not at module level: only device commands pay for importing NAPALM

        from fabconf.drivers.cli.staging import StagedCliDriver, StagedTimerDriver

        napalm_driver = spec.driver.partition(":")[2]
        ssh_port = int(extras.pop("ssh_port", None) or 22)  # NX-OS's SCP (fabconf's key, as for NVUE)
        optional_args = {
            **dict(extras.get("optional_args") or {}),  # transport and port only (checked above)
            **trusted.napalm_args(napalm_driver, hostname, ssh_port),  # how to verify: never the inventory's
        }
        if port is not None:
            optional_args.setdefault("port", port)
        optional_args.setdefault("transport", "https")
        cls = napalm.get_network_driver(napalm_driver)
        inner = cls(hostname, username, password, timeout=timeout, optional_args=optional_args)
        if spec.wrapper:
            module_name, _, class_name = spec.wrapper.partition(":")
            wrapper = getattr(importlib.import_module(module_name), class_name)
        else:
            wrapper = StagedTimerDriver if spec.revert is Revert.TIMER else StagedCliDriver
        staged: Driver = wrapper(inner, spec)
        return staged
    module_name, _, class_name = spec.driver.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    extras.pop("device_type", None)  # a netmiko key, meaningless to our drivers
    optional_args = {
        **({"port": port} if port is not None else {}),
        **extras,  # ssh_port only (checked above)
        **(extra_args or {}),
        **trusted.own_args(),  # how to verify: never the inventory's
    }
    driver: Driver = cls(hostname, username, password, timeout=timeout, optional_args=optional_args)
    return driver
