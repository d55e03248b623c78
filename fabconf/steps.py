"""The per-device steps: stage a candidate, diff, push (commit with revert, verify, confirm or roll back).

Each function works on ONE already-open driver (one connection per device) and returns an Outcome; the
rollout runs them concurrently over devices with Nornir. Nothing here raises for a device problem:
every failure becomes an Outcome whose state says where the device ended up.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from fabconf.connection import REVERT_TIMER
from fabconf.credentials import REDACTOR
from fabconf.model import Device
from fabconf.remediation import Remediation, remediate

CLI_PLATFORMS = ("eos", "nxos")


class State(StrEnum):
    UNCHANGED = "unchanged"  # diff/push: the device already matches intent
    VERIFIED = "verified"  # verify: every check passed
    CHANGES = "changes"  # diff: something would change
    APPLIED = "applied"  # push: committed, verified, confirmed
    ROLLED_BACK = "rolled back"  # push: the change was undone; the device is as it was
    UNTOUCHED = "untouched"  # push: not reached (rollout stopped) or refused before any change
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
    def mode(self) -> str:
        return str(self.device.data.get("config_mode", "merge"))

    @property
    def interfaces(self) -> list[str]:
        return [i["name"] for i in self.data.get("interfaces", [])]


@dataclass
class Outcome:
    device: str
    platform: str
    state: State
    diff: str = ""
    message: str = ""
    checks: list[str] = field(default_factory=list)  # failed verification checks
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "platform": self.platform,
            "state": str(self.state),
            "diff": self.diff,
            "message": self.message,
            "failed_checks": self.checks,
            "seconds": round(self.seconds, 3),
        }


def _normalize(text: str) -> str:
    lines = [ln.rstrip() for ln in text.splitlines()]
    return "\n".join(ln for ln in lines if ln and not ln.lstrip().startswith("!") and ln.strip() != "end")


def _remediation(job: Job, driver: Any, running: str | None = None) -> Remediation:
    """hier_config remediation of the owned sections, from ``running`` or the device's running config."""
    if running is None:
        running = driver.get_config(retrieve="running")["running"]
    return remediate(job.platform, running, job.rendered, job.interfaces)


def stage(job: Job, driver: Any, running: str | None = None) -> str:
    """Load the candidate that brings the device to intent; returns the diff ("" = nothing to do).

    CLI platforms in merge mode load hier_config's remediation of the owned sections; the diff shown is
    the device's own (EOS config session) or, for NX-OS whose NAPALM merge diff omits negations, the
    remediation itself. Our drivers take the full rendered document and stage only what fabconf owns.
    ``running`` spares a second read when the caller has just fetched the running config.
    """
    if job.platform in CLI_PLATFORMS and job.mode == "merge":
        rem = _remediation(job, driver, running)
        if rem.empty:
            return ""
        driver.load_merge_candidate(config=rem.config)
        diff = rem.config if job.platform == "nxos" else driver.compare_config()
    else:
        if job.mode == "replace":
            driver.load_replace_candidate(config=job.rendered)
        else:
            driver.load_merge_candidate(config=job.rendered)
        diff = driver.compare_config()
    if not diff.strip():
        driver.discard_config()
        return ""
    return REDACTOR(diff)


def diff_device(job: Job, driver: Any) -> Outcome:
    """Dry run: stage, compare, discard. Nothing is left on the device."""
    try:
        diff = stage(job, driver)
    finally:
        _quietly(driver.discard_config)
    return Outcome(job.name, job.platform, State.CHANGES if diff else State.UNCHANGED, diff=diff)


def verify_device(job: Job, driver: Any, ctx: VerifyContext) -> Outcome:
    """Read-only: does the device hold intent and is it healthy (config, MTU, LLDP, BGP)?"""
    failed = verify(job, driver, ctx)
    return Outcome(
        job.name,
        job.platform,
        State.FAILED if failed else State.VERIFIED,
        checks=failed,
        message="verification failed" if failed else "",
    )


@dataclass
class VerifyContext:
    required_peers: set[str]  # devices whose BGP sessions must be up (already applied, or outside the run)
    bgp_wait: float = 30.0


def _remaining(job: Job, driver: Any) -> str:
    """What would still change. CLI platforms: the remediation of the owned sections, computed from the
    running config alone (EOS cannot open another config session while a commit timer is pending)."""
    if job.platform in CLI_PLATFORMS:
        return _remediation(job, driver).config
    try:
        return stage(job, driver)
    finally:
        _quietly(driver.discard_config)


def _lldp_name(text: str) -> str:
    """Compare LLDP names leniently: case, a domain suffix and Eth/Ethernet abbreviations do not matter."""
    text = text.strip().lower()
    return text.replace("ethernet", "eth")


def _miscabled(job: Job, driver: Any) -> list[str]:
    """Ports whose LLDP neighbour is another device or port than the cabling says. A port that reports
    no neighbour (yet) is not a failure: LLDP may still be converging or be off on the far end."""
    if job.platform == "linux":
        return []
    seen = driver.get_lldp_neighbors()
    out = []
    for itf in job.data.get("interfaces", []):
        device, _, port = itf["peer"].partition(":")
        found = seen.get(itf["name"]) or []
        if not found:
            continue
        if not any(
            _lldp_name(n.get("hostname", "")).split(".")[0] == _lldp_name(device)
            and _lldp_name(n.get("port", "")) == _lldp_name(port)
            for n in found
        ):
            got = ", ".join(f"{n.get('hostname')}:{n.get('port')}" for n in found)
            out.append(f"{itf['name']}: LLDP sees {got}, the cabling says {itf['peer']} (miscabled?)")
    return out


def verify(job: Job, driver: Any, ctx: VerifyContext) -> list[str]:
    """Read the device back with its getters; every failed check is one message."""
    failed: list[str] = []
    left = _remaining(job, driver)
    if left:
        failed.append("configuration did not land: remaining diff:\n" + left)
    interfaces = driver.get_interfaces()
    if job.platform == "linux":
        wanted = {n["netdev"]: n["mtu"] for n in job.data.get("nics", [])}
    else:
        wanted = {i["name"]: i["mtu"] for i in job.data.get("interfaces", [])}
    for name, mtu in sorted(wanted.items()):
        got = (interfaces.get(name) or {}).get("mtu")
        if got is not None and int(got) != int(mtu):
            failed.append(f"{name}: MTU {got}, intended {mtu}")
        elif got is None:
            failed.append(f"{name}: interface not reported by the device")
    failed += _miscabled(job, driver)
    needed = [n for n in job.data.get("bgp", {}).get("neighbors", []) if n.get("peer_device") in ctx.required_peers]
    if needed:
        deadline = time.monotonic() + ctx.bgp_wait
        while True:
            peers = driver.get_bgp_neighbors().get("global", {}).get("peers", {})
            down = [n for n in needed if not (peers.get(n["address"]) or {}).get("is_up")]
            if not down or time.monotonic() >= deadline:
                break
            time.sleep(1.0)
        failed += [f"BGP session to {n['address']} ({n['peer_device']}) is not established" for n in down]
    return failed


def push_device(
    job: Job,
    driver: Any,
    reopen: Callable[[], Any],
    ctx: VerifyContext,
    revert_in: int,
) -> Outcome:
    """Commit with a revert timer (or a checkpoint), verify, then confirm — or leave the device as it was."""
    before = driver.get_config(retrieve="running")["running"]
    preflight = getattr(driver, "preflight", None)
    if preflight is not None:
        problems = preflight(config=job.rendered)
        if problems:
            return Outcome(job.name, job.platform, State.UNTOUCHED, message="preflight: " + "; ".join(problems))
    diff = stage(job, driver, running=before)
    if not diff:
        failed = verify(job, driver, ctx)
        state = State.UNCHANGED if not failed else State.FAILED
        message = "" if not failed else "already at intent, but verification failed; nothing was changed"
        return Outcome(job.name, job.platform, state, message=message, checks=failed)
    try:
        if job.platform in REVERT_TIMER:
            driver.commit_config(revert_in=revert_in)
        else:
            driver.commit_config()
    except Exception as exc:  # the commit's outcome is unknown: make sure the device is as it was
        return _recover(job, _carry_session(driver, reopen), before, diff, f"commit failed: {_err(exc)}")
    try:
        failed = verify(job, driver, ctx)
    except Exception as exc:
        failed = [f"verification could not run: {_err(exc)}"]
    if failed:
        return _undo(job, driver, reopen, before, diff, failed)
    if job.platform in REVERT_TIMER:
        try:
            driver.confirm_commit()
        except Exception as exc:
            return _recover(job, reopen, before, diff, f"confirm failed: {_err(exc)}")
    return Outcome(job.name, job.platform, State.APPLIED, diff=diff, message=_pending_firmware(driver))


def _pending_firmware(driver: Any) -> str:
    """Host firmware (mlxconfig) values that take effect only after a firmware reset or reboot."""
    pending = getattr(driver, "pending_firmware", None)
    if pending is None:
        return ""
    try:
        found = pending()
    except Exception as exc:
        return f"could not read pending firmware settings: {_err(exc)}"
    items = [f"{dev} {key}={v['next_boot']}" for dev, keys in sorted(found.items()) for key, v in sorted(keys.items())]
    return ("firmware settings pending until firmware reset or reboot: " + ", ".join(items)) if items else ""


def _carry_session(old: Any, reopen: Callable[[], Any]) -> Callable[[], Any]:
    """A reopened NAPALM EOS driver must know the config session the lost connection opened, so that
    recovery can abort it (nothing may be left on the device)."""

    def again() -> Any:
        new = reopen()
        session = getattr(old, "config_session", None)
        if session:
            new.config_session = session
            if not new.has_pending_commit():
                _quietly(new.discard_config)
        return new

    return again


def _undo(job: Job, driver: Any, reopen: Callable[[], Any], before: str, diff: str, failed: list[str]) -> Outcome:
    try:
        driver.rollback()
    except Exception as exc:
        return _recover(job, reopen, before, diff, f"verification failed and rollback raised {_err(exc)}", failed)
    return _confirm_restored(job, driver, before, diff, "verification failed; rolled back", failed)


def _recover(
    job: Job, reopen: Callable[[], Any], before: str, diff: str, reason: str, failed: list[str] | None = None
) -> Outcome:
    """After a failure with an unknown device state: reconnect, undo anything pending, check it is as before."""
    try:
        driver = reopen()
    except Exception as exc:
        return Outcome(
            job.name,
            job.platform,
            State.FAILED,
            diff=diff,
            checks=failed or [],
            message=f"{reason}; reconnect failed ({_err(exc)}): device state unknown"
            + (", its revert timer will restore it" if job.platform in REVERT_TIMER else ""),
        )
    try:
        now = driver.get_config(retrieve="running")["running"]
        if _normalize(now) != _normalize(before):
            driver.rollback()
        return _confirm_restored(job, driver, before, diff, reason, failed or [])
    except Exception as exc:
        return Outcome(
            job.name,
            job.platform,
            State.FAILED,
            diff=diff,
            checks=failed or [],
            message=f"{reason}; recovery failed: {_err(exc)}",
        )
    finally:
        _quietly(driver.close)


def _confirm_restored(job: Job, driver: Any, before: str, diff: str, reason: str, failed: list[str]) -> Outcome:
    deadline = time.monotonic() + 30
    while True:
        now = driver.get_config(retrieve="running")["running"]
        if _normalize(now) == _normalize(before):
            return Outcome(
                job.name,
                job.platform,
                State.ROLLED_BACK,
                diff=diff,
                checks=failed,
                message=f"{reason}; the device is back to its previous configuration",
            )
        if time.monotonic() >= deadline:
            return Outcome(
                job.name,
                job.platform,
                State.FAILED,
                diff=diff,
                checks=failed,
                message=f"{reason}; the device did NOT return to its previous configuration",
            )
        time.sleep(0.5)


def _err(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return REDACTOR(f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text)


def _quietly(fn: Callable[[], Any]) -> None:
    try:
        fn()
    except Exception:  # cleanup must never mask the outcome
        return
