"""A scripted fake device and driver for the deploy layer's unit tests: no sockets, no lab.

``FakeDevice`` holds what a device would: its running configuration, a pending (revert-timer) commit, and
a log of what was done to it. ``FakeDriver`` satisfies the driver contract (``fabconf.drivers.contract``)
and fails where the test's ``Script`` says: at open, load, commit (before or after applying: a connection
dropped mid-commit), verify (a wrong MTU, a BGP session down), confirm, reconnect or rollback.
``FakeTimerDriver`` adds the ``RevertTimer`` capability.

The seam is the driver factory (``fabconf.deploy.tasks.build_driver``): everything between it and the
report — tasks, steps, rollout, processors — is fabconf's own code, unmodified.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from napalm.base.exceptions import CommitError, ConnectionException

from fabconf.drivers.contract import RevertTimer


@dataclass
class Script:
    """Where a device fails. Every flag is off by default (a healthy device)."""

    unreachable: bool = False  # open() is refused
    reconnect_fails: bool = False  # every open() after the first is refused
    load_fails: bool = False  # load_merge_candidate raises
    commit_fails: bool = False  # commit raises, nothing applied
    commit_drops: bool = False  # commit applies, then the connection drops (the caller cannot know)
    wrong_mtu: bool = False  # the getters report a wrong MTU: verify fails
    bgp_down: bool = False  # every BGP session reported down: verify fails where sessions are required
    confirm_fails: bool = False  # confirm_commit raises (the device keeps its pending timer)
    rollback_fails: bool = False  # rollback raises and changes nothing
    rollback_noop: bool = False  # rollback says it worked but the device keeps the change
    preflight: list[str] = field(default_factory=list)  # problems a Preflight driver reports
    pending_firmware: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    timeouts_on_open: int = 0  # the first N open() calls time out (a loaded device or controller)
    timeouts_on_read: int = 0  # the first N get_config() calls time out
    changed_by_other: str = ""  # another changer commits this configuration right after the first read
    os_version: str = ""  # what get_facts reports ("": nothing, the identity check has nothing to compare)
    model: str = ""


@dataclass
class FakeDevice:
    name: str
    running: str
    script: Script = field(default_factory=Script)
    mtus: dict[str, int] = field(default_factory=dict)  # what get_interfaces reports when healthy
    checkpoint: str | None = None  # the configuration before the last commit
    pending: bool = False  # a commit waits for confirm (revert timer armed)
    opens: int = 0
    reads: int = 0
    log: list[str] = field(default_factory=list)

    def expire_timer(self) -> None:
        """The device's revert timer runs out: back to the configuration before the commit."""
        if self.pending and self.checkpoint is not None:
            self.running, self.pending = self.checkpoint, False
            self.log.append("timer expired")


class FakeDriver:
    """A contract-conforming driver over a FakeDevice."""

    def __init__(self, device: FakeDevice) -> None:
        self.device = device
        self.hostname = device.name
        self._candidate: str | None = None

    # -- connection --------------------------------------------------------------------------------------
    def open(self) -> None:
        d = self.device
        d.opens += 1
        if d.opens <= d.script.timeouts_on_open:
            raise TimeoutError(f"{d.name}: timed out")
        if d.script.unreachable or (d.script.reconnect_fails and d.opens > 1):
            raise ConnectionException(f"{d.name}: connection refused")
        d.log.append("open")

    def close(self) -> None:
        self.device.log.append("close")

    # -- candidate ---------------------------------------------------------------------------------------
    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        if self.device.script.load_fails:
            raise CommitError(f"{self.device.name}: % Invalid input")
        self._candidate = config

    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        self.load_merge_candidate(filename, config)

    def compare_config(self) -> str:
        if self._candidate is None or self._candidate == self.device.running:
            return ""
        return f"- {self.device.running}\n+ {self._candidate}\n"

    def discard_config(self) -> None:
        self._candidate = None

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        d = self.device
        if d.script.commit_fails:
            raise CommitError(f"{d.name}: commit refused")
        assert self._candidate is not None, "commit without a candidate"
        d.checkpoint, d.running = d.running, self._candidate
        d.pending = revert_in is not None
        d.log.append(f"commit revert_in={revert_in}")
        self._candidate = None
        if d.script.commit_drops:
            raise ConnectionException(f"{d.name}: connection reset during commit")

    def rollback(self) -> None:
        d = self.device
        if d.script.rollback_fails:
            raise CommitError(f"{d.name}: rollback failed")
        if d.checkpoint is not None and not d.script.rollback_noop:
            d.running, d.pending = d.checkpoint, False
        d.log.append("rollback")

    # -- getters -----------------------------------------------------------------------------------------
    def get_facts(self) -> dict[str, Any]:
        script = self.device.script
        return {"hostname": self.device.name, "vendor": "fake", "model": script.model, "os_version": script.os_version}

    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False) -> dict[str, str]:
        d = self.device
        d.reads += 1
        if d.reads <= d.script.timeouts_on_read:
            raise ConnectionException(f"{d.name}: Socket error during eAPI connection: timed out")
        running = d.running
        if d.script.changed_by_other and d.reads == 1 + d.script.timeouts_on_read:
            d.running = d.script.changed_by_other  # after this read: the diff is computed from a stale state
            d.log.append("changed by another run")
        return {"running": running, "startup": "", "candidate": self._candidate or ""}

    def get_interfaces(self) -> dict[str, dict[str, Any]]:
        bump = 1 if self.device.script.wrong_mtu else 0
        return {name: {"mtu": mtu - bump, "is_up": True} for name, mtu in self.device.mtus.items()}

    def get_lldp_neighbors(self) -> dict[str, list[dict[str, str]]]:
        return {}

    def get_bgp_neighbors(self) -> dict[str, Any]:
        return {"global": {"router_id": "", "peers": _Peers(not self.device.script.bgp_down)}}


class _Peers(dict[str, Any]):
    """Every address asked for is a peer, up or down as scripted."""

    def __init__(self, up: bool) -> None:
        super().__init__()
        self.up = up

    def get(self, key: str, default: Any = None) -> Any:
        return {"is_up": self.up}


class FakeTimerDriver(FakeDriver, RevertTimer):
    """A fake whose device reverts an unconfirmed commit by itself (like EOS and Cumulus)."""

    def confirm_commit(self) -> None:
        d = self.device
        if d.script.confirm_fails:
            raise ConnectionException(f"{d.name}: connection lost before confirm")
        d.pending = False
        d.log.append("confirm")

    def has_pending_commit(self) -> bool:
        return self.device.pending


class FakeHostDriver(FakeDriver):
    """A fake with the GPU host capabilities: preflight and pending firmware."""

    def preflight(self, config: str | None = None) -> list[str]:
        return list(self.device.script.preflight)

    def pending_firmware(self) -> dict[str, dict[str, dict[str, str]]]:
        return self.device.script.pending_firmware
