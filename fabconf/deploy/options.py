"""Typed options of the deploy layer, one object per concern, built by the CLI and the runbook runner alike
(no ``argparse.Namespace`` travels past the command line, no module-level settings)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceOptions:
    """How devices are reached and how many are worked on at once."""

    workers: int = 20  # switches at once
    host_workers: int = 50  # GPU hosts at once (their own pool, side by side with the switches)
    timeout: int = 60  # per-device connection timeout, seconds
    allow_fw_reset: bool = False  # GPU hosts: run mlxfwreset so pending mlxconfig changes take effect now
    # a timeout or dropped connection before anything is committed is tried again, this many times, while the
    # device's budget (``timeout`` seconds from its start) lasts (fabconf.deploy.transient)
    retries: int = 2
    insecure: bool = False  # --insecure: TLS certificates and SSH host keys are not checked (fabconf.drivers.trust)
    # --allow-inventory-transport: the inventory's weakening connection settings are honoured, each device announced
    # (fabconf.drivers.inventory_transport); never from the environment
    allow_inventory_transport: bool = False
    # --processes: the read-only runs (diff, verify, drift) over this many processes, 1 = this one only; None: the
    # environment's FABCONF_PROCESSES, else sized to the run and the cores (fabconf.deploy.processes)
    processes: int | None = None

    def __post_init__(self) -> None:
        if self.workers < 1 or self.host_workers < 1:
            raise ValueError("--workers and --host-workers must be at least 1")
        if self.processes is not None and self.processes < 1:
            raise ValueError("--processes must be at least 1 (1: one process)")
        if self.retries < 0:
            raise ValueError("--retries must be 0 or more")
        if self.timeout < 1:
            raise ValueError("--timeout must be at least 1 second")


@dataclass(frozen=True)
class VerifyOptions:
    bgp_wait: float = 10.0  # seconds to wait for BGP sessions to come up
    cabling: bool = False  # check every planned link by LLDP (switches and GPU hosts)


@dataclass(frozen=True)
class PushOptions:
    canary: int = 1  # devices pushed first, alone
    batch: str = "25%"  # devices per batch after the canary: N or N%
    max_fail: int = 0  # failures tolerated before the rollout stops
    confirm_timeout: int = 300  # seconds before an unconfirmed commit reverts by itself (revert-timer devices)
    bgp_wait: float = 30.0  # seconds verify waits for BGP sessions

    def __post_init__(self) -> None:
        if self.canary < 0:
            raise ValueError("--canary must be 0 or more")
        if self.max_fail < 0:
            raise ValueError("--max-fail must be 0 or more")
        if self.confirm_timeout < 1:
            raise ValueError("--confirm-timeout must be at least 1 second")
