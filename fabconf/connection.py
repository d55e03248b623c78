"""Open the right driver for a device: NAPALM's own for EOS and NX-OS, fabconf's for Cumulus and Linux."""

from __future__ import annotations

from typing import Any

import napalm

from fabconf.credentials import Credentials
from fabconf.model import Device

# Platforms whose driver can commit with a revert timer that the device itself enforces.
REVERT_TIMER = frozenset({"eos", "cumulus"})
DEFAULT_TIMEOUT = 60


def _section(device: Device, name: str) -> tuple[int | None, dict[str, Any]]:
    section = device.connection_options.get(name) or {}
    return section.get("port") or device.port, dict(section.get("extras") or {})


def driver_for(
    device: Device, creds: Credentials, timeout: int = DEFAULT_TIMEOUT, host_options: dict[str, Any] | None = None
) -> Any:
    """A NAPALM-shaped driver for ``device``, not yet opened. ``host_options`` reach the linux driver
    (``allow_fw_reset``)."""
    if device.platform in ("eos", "nxos"):
        port, extras = _section(device, "napalm")
        optional_args = dict(extras.get("optional_args") or {})
        if port is not None:
            optional_args.setdefault("port", port)
        optional_args.setdefault("transport", "https")
        cls = napalm.get_network_driver(device.platform)
        return cls(device.hostname, creds.username, creds.password, timeout=timeout, optional_args=optional_args)
    if device.platform == "cumulus":
        from fabconf.drivers.cumulus import CumulusDriver

        port, extras = _section(device, "nvue")
        return CumulusDriver(
            device.hostname,
            creds.username,
            creds.password,
            timeout=timeout,
            optional_args={"port": port or 8765, **extras},
        )
    if device.platform == "linux":
        from fabconf.drivers.linux import LinuxDriver

        port, extras = _section(device, "netmiko")
        extras.pop("device_type", None)
        return LinuxDriver(
            device.hostname,
            creds.username,
            creds.password,
            timeout=timeout,
            optional_args={"port": port or 22, **extras, **(host_options or {})},
        )
    raise ValueError(f"no driver for platform {device.platform!r}")
