"""What one device's deploy work is made of: the Job prepared before any connection, the State it can end
in, and the Outcome every step returns (a device problem is an Outcome, never an exception)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from fabconf.compile.model import Device
from fabconf.platforms import Platform, platform


class State(StrEnum):
    UNCHANGED = "unchanged"  # diff/push: the device already matches intent
    VERIFIED = "verified"  # verify: every check passed
    CHANGES = "changes"  # diff: something would change
    APPLIED = "applied"  # push: committed, verified, confirmed
    ROLLED_BACK = "rolled back"  # push: the change was undone; the device is as it was
    UNTOUCHED = "untouched"  # push: not reached (rollout stopped) or refused before any change
    # push: nothing committed, the device changed since its diff was computed (another changer was at work)
    CONFLICT = "conflict"
    UNREACHABLE = "unreachable"  # could not connect or authenticate
    FAILED = "failed"  # anything else; the message says what state the device is in

    @property
    def ok(self) -> bool:
        return self in (State.UNCHANGED, State.CHANGES, State.APPLIED, State.VERIFIED)


@dataclass
class Job:
    """Everything one device needs, prepared before any connection is opened."""

    device: Device
    data: dict[str, Any]
    rendered: str

    @property
    def name(self) -> str:
        return self.device.name

    @property
    def platform(self) -> str:
        return self.device.platform

    @property
    def spec(self) -> Platform:
        return platform(self.device.platform)

    @property
    def mode(self) -> str:
        return str(self.device.data.get("config_mode", "merge"))

    @property
    def interfaces(self) -> list[dict[str, Any]]:
        """The device data's fabric interfaces (switches)."""
        return list(self.data.get("interfaces", []))


@dataclass
class Outcome:
    device: str
    platform: str
    state: State
    diff: str = ""  # for people: the owned configuration, running -> intended (unified where the driver can)
    commands: str = ""  # exactly what is (or would be) sent to the device
    message: str = ""
    checks: list[str] = field(default_factory=list)  # failed verification checks
    seconds: float = 0.0
    config_before: str = ""  # push: SHA-256 of the device's running configuration before the change
    config_after: str = ""  # push: SHA-256 of it at the end (equal to config_before after a rollback)
    # what was read and found right: verify and a push's verify (``intent``, ``mtu``, ``lldp``, ``bgp``, ``ecmp``);
    # preflight (each check run -> the command -> the values it read)
    evidence: dict[str, Any] = field(default_factory=dict)
    # push: seconds each phase took (``commit``, ``verify``, ``confirm``), recorded in the audit log for the
    # estimates of later pushes (``fabconf.deploy.estimate``)
    phases: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = {
            "device": self.device,
            "platform": self.platform,
            "state": str(self.state),
            "diff": self.diff,
            "commands": self.commands,
            "message": self.message,
            "failed_checks": self.checks,
            "seconds": round(self.seconds, 3),
            "evidence": self.evidence,
        }
        if self.phases:
            out["phases"] = {k: round(v, 3) for k, v in self.phases.items()}
        return out
