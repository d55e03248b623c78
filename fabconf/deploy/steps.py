"""The per-device steps: stage a candidate, diff, verify, push (commit, verify, confirm — or roll back).

Each function works on ONE already-open driver (one connection per device) that satisfies the driver
contract (``fabconf.drivers.contract``), and returns an Outcome. Nothing here names a platform: what
differs between platforms is the driver's business or a capability it declares. Nothing here raises for
a device problem: every failure becomes an Outcome whose state says where the device ended up.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from napalm.base.exceptions import SessionLockedException

from fabconf.deploy import peers
from fabconf.deploy.credentials import REDACTOR
from fabconf.deploy.errortext import explain
from fabconf.deploy.interrupt import Interrupt
from fabconf.deploy.job import Job, Outcome, State
from fabconf.deploy.leftovers import Cleaner, diff_session
from fabconf.deploy.transient import transient
from fabconf.drivers.contract import (
    AdaptiveRouting,
    CommandPreview,
    CommitConflict,
    ConfigDiff,
    Driver,
    GuardedCommit,
    Identity,
    IntentDiff,
    PendingFirmware,
    Preflight,
    Reattach,
    RestoreLimits,
    RevertTimer,
    RouteLookup,
    Unfinished,
)
from fabconf.drivers.textdiff import relabel
from fabconf.platforms import FEATURE_NAMES, Revert, feature, features_in_use

Reopen = Callable[[], Driver]
CONFLICT_LINES = 20  # lines of "what changed meanwhile" a conflict shows
RESTORE_WAIT = 30.0  # seconds a rolled-back device may take to show its previous configuration
POLL = 0.2  # seconds between reads while waiting for a device
CONVERGE_FIRST, CONVERGE_MAX = 0.5, 2.0  # seconds between reads while BGP sessions and ECMP routes converge
RECOVER_ATTEMPTS = 2  # reconnect-and-undo rounds after a failed commit, confirm or rollback


@dataclass
class VerifyContext:
    required_peers: set[str]  # devices whose BGP sessions must be up (already applied, or outside the run)
    bgp_wait: float = 30.0
    interrupt: Interrupt | None = None  # an abort ends waits early and rolls back instead of confirming
    # `fabconf verify`: also read back the ECMP width to remote leaves (data.verify.ecmp) whose leaf is in the run;
    # a push in waves does not, since the far pod may not be pushed yet
    check_ecmp: bool = False
    check_cabling: bool = False  # `verify --cabling`: every planned link present, nothing unexpected (hosts too)
    # push: called with (job, diff, hash of the running config) just before a commit (the audit's first record)
    before_commit: Callable[[Job, str, str], None] | None = None
    commit_started: bool = False  # set once a commit is attempted: from then on a push is never retried
    # per device: the peers outside the run that have not received fabconf's intent (fabconf.deploy.peers)
    pending: Mapping[str, set[str]] = field(default_factory=dict)
    # what the last verify read and found right (Outcome.evidence): MTUs, LLDP links, BGP sessions, ECMP widths
    evidence: dict[str, Any] = field(default_factory=dict)
    # push: names what it leaves on the device and cleans what a killed run left there (fabconf.deploy.leftovers)
    leftovers: Cleaner | None = None

    @property
    def aborted(self) -> bool:
        return self.interrupt is not None and self.interrupt.aborting


def normalize(text: str) -> str:
    lines = [ln.rstrip() for ln in text.splitlines()]
    return "\n".join(ln for ln in lines if ln and not ln.lstrip().startswith("!") and ln.strip() != "end")


def _running(driver: Driver) -> str:
    return driver.get_config(retrieve="running")["running"]


@dataclass(frozen=True)
class Staged:
    """A staged change: ``diff`` for people (the owned configuration, running -> intended, unified where the
    driver can show it) and ``commands``, exactly what a commit sends. Both "" when nothing changes."""

    diff: str = ""
    commands: str = ""

    def __bool__(self) -> bool:
        return bool(self.commands)


class IdentityMismatch(Exception):
    """The device runs another release line or hardware family than its configuration was rendered for."""


def identity_problems(job: Job, facts: dict) -> list[str]:
    """What the device reports (``get_facts``) against what the configuration was rendered for: the release line
    of its OS version and, where the configuration differs by hardware, the family of its model."""
    spec, data = job.spec, job.data
    out = []
    reported = str(facts.get("os_version") or "")
    assume = job.device.data.get("assume_release")
    if spec.release_lines and reported:
        try:
            line = spec.release_line(reported, assume)
        except ValueError as exc:
            line, problem = None, str(exc)
            out.append(f"the device reports {reported}: {problem}")
        if line is not None and line != data.get("release_line"):
            out.append(
                f"the device runs {spec.label} {reported} but the configuration is rendered for "
                f"{data.get('os_version')}; set data.os_version to the release it runs"
            )
    out += _feature_problems(job, reported, str(facts.get("model") or ""))
    model = str(facts.get("model") or "")
    if spec.hardware_families and model:
        try:
            family = spec.hardware_family(model)
        except ValueError as exc:
            family = None
            out.append(f"the device reports {exc}")
        if family is not None and family != data.get("hardware_family"):
            out.append(
                f"the device is a {model} ({family}) but the configuration is rendered for {data.get('model')} "
                f"({data.get('hardware_family')}); set data.model to the hardware it is"
            )
    return out


def _feature_problems(job: Job, reported: str, model: str) -> list[str]:
    """Every release- or model-gated feature the configuration renders, checked against the release and model the
    device reports (the inventory may name a newer release than the switch runs: a commit would be refused by the
    switch, or worse, half-applied)."""
    spec, data = job.spec, job.data
    out = []
    for name in features_in_use(data) if reported else ():
        why = feature(name, job.platform).refusal(spec.label, reported, model or str(data.get("model") or ""))
        if why:
            out.append(
                f"the device runs {spec.label} {reported} but the inventory says {data.get('os_version')}: "
                f"it cannot run {FEATURE_NAMES[name]}: {why}"
            )
    return out


def check_identity(job: Job, driver: Driver) -> None:
    """Refuse, before anything is staged, a device whose release line or hardware family differs from the one
    its configuration was rendered for (a silent render for the wrong release would be rejected, or worse,
    accepted with another meaning)."""
    if not (job.spec.release_lines or job.spec.hardware_families):
        return
    facts = driver.identity() if isinstance(driver, Identity) else driver.get_facts()
    problems = identity_problems(job, dict(facts))
    if problems:
        raise IdentityMismatch("; ".join(problems))


def stage(job: Job, driver: Driver) -> Staged:
    """Load the candidate that brings the device to intent (nothing is left staged when nothing changes).
    The driver stages only what fabconf owns (merge) or the whole document (replace)."""
    check_identity(job, driver)
    try:
        if job.mode == "replace":
            driver.load_replace_candidate(config=job.rendered)
        else:
            driver.load_merge_candidate(config=job.rendered)
    except SessionLockedException as exc:  # napalm's EOS driver: another configuration session is pending
        raise CommitConflict(f"{_locked(exc)} (another changer?)") from None
    compared = driver.compare_config()
    if not compared.strip():
        driver.discard_config()
        return Staged()
    commands = driver.commands_preview() if isinstance(driver, CommandPreview) else compared
    diff = relabel(driver.config_diff(), job.name) if isinstance(driver, ConfigDiff) else ""
    return Staged(REDACTOR(diff or compared), REDACTOR(commands or compared))


def _locked(exc: SessionLockedException) -> str:
    """The staging driver names the pending sessions; NAPALM's own message does not."""
    text = str(exc)
    return text if "pending" in text else "another configuration session is pending on the device"


def interrupted(job: Job, driver: Driver) -> Outcome | None:
    """Read-only steps: a device an interrupted commit left half-applied is failed, with what a push will do."""
    if not isinstance(driver, Unfinished):
        return None
    found = driver.interrupted_commit()
    if not found:
        return None
    return Outcome(job.name, job.platform, State.FAILED, message=f"{found}; the next `fabconf push` restores it first")


def diff_device(job: Job, driver: Driver) -> Outcome:
    """Dry run: stage, compare, discard. Nothing is left on the device."""
    half = interrupted(job, driver)
    if half is not None:
        return half
    try:
        with diff_session(job, driver) as cleaned:  # fabconf-named, and marked alive until discarded
            try:
                staged = stage(job, driver)
            finally:
                _quietly(driver.discard_config)
    except (IdentityMismatch, CommitConflict) as exc:
        return Outcome(job.name, job.platform, State.FAILED, message=str(exc))
    state = State.CHANGES if staged else State.UNCHANGED
    note = f"cleaned what a killed diff left: {cleaned}" if cleaned else ""
    return Outcome(job.name, job.platform, state, diff=staged.diff, commands=staged.commands, message=note)


def verify_device(job: Job, driver: Driver, ctx: VerifyContext) -> Outcome:
    """Read-only: does the device hold intent and is it healthy (config, MTU, LLDP, BGP)?"""
    half = interrupted(job, driver)
    if half is not None:
        return half
    failed = verify(job, driver, ctx)
    return Outcome(
        job.name,
        job.platform,
        State.FAILED if failed else State.VERIFIED,
        checks=failed,
        message=failure_summary(failed) if failed else peers.note(ctx.pending.get(job.name, ())),
        evidence=dict(ctx.evidence),
    )


def failure_summary(failed: list[str]) -> str:
    """A failed verification in one line: its first check (``BGP session to … (leaf2) is not established``) and
    how many more there are; ``Outcome.checks`` has them all."""
    first = failed[0].splitlines()[0].rstrip(":")
    return first + (f" (and {len(failed) - 1} more failed check(s))" if len(failed) > 1 else "")


def _remaining(job: Job, driver: Driver) -> str:
    """What would still change: without staging where the driver can (``IntentDiff``), else stage and
    discard."""
    if isinstance(driver, IntentDiff):
        return driver.intent_diff(job.rendered)
    try:
        return stage(job, driver).commands
    finally:
        _quietly(driver.discard_config)


def _lldp_name(text: str) -> str:
    """Compare LLDP names leniently: case, a domain suffix and Eth/Ethernet abbreviations do not matter."""
    text = text.strip().lower()
    return text.replace("ethernet", "eth")


def _lldp_matches(found: list[dict[str, str]], peer: str) -> bool:
    device, _, port = peer.partition(":")
    return any(
        _lldp_name(n.get("hostname", "")).split(".")[0] == _lldp_name(device)
        and _lldp_name(n.get("port", "")) == _lldp_name(port)
        for n in found
    )


def _seen(found: list[dict[str, str]]) -> str:
    return ", ".join(f"{n.get('hostname')}:{n.get('port')}" for n in found)


def _miscabled(job: Job, driver: Driver, evidence: dict[str, Any]) -> list[str]:
    """Ports whose LLDP neighbour is another device or port than the cabling says. A port that reports
    no neighbour (yet) is not a failure: LLDP may still be converging or be off on the far end."""
    if not job.spec.checks_lldp:
        return []
    seen = driver.get_lldp_neighbors()
    out = []
    matched = 0
    for itf in job.interfaces:
        found = seen.get(itf["name"]) or []
        if found and not _lldp_matches(found, itf["peer"]):
            out.append(f"{itf['name']}: LLDP sees {_seen(found)}, the cabling says {itf['peer']} (miscabled?)")
        elif found:
            matched += 1
    evidence["lldp"] = {"links": len(job.interfaces), "seen_as_cabled": matched}
    return out


def _planned_links(job: Job) -> dict[str, str]:
    """Local port -> "DEVICE:PORT" the cabling plan puts there (switch interfaces, host RoCE NICs)."""
    if job.spec.is_host:
        return {n["netdev"]: f"{n['leaf']}:{n['leaf_port']}" for n in job.data.get("nics", [])}
    return {itf["name"]: itf["peer"] for itf in job.interfaces}


def cabling(job: Job, driver: Driver, evidence: dict[str, Any] | None = None) -> list[str]:
    """``verify --cabling``: LLDP against the plan on switches and GPU hosts (lldpd on hosts). A cabled port
    without the planned neighbour is missing or miscabled; a neighbour on a front-panel port (a RoCE NIC on a
    host) the plan leaves empty is unexpected."""
    try:
        seen = driver.get_lldp_neighbors()
    except Exception as exc:
        return [f"LLDP could not be read: {_err(exc)}"]
    planned = _planned_links(job)
    out = []
    matched = 0
    for port, peer in sorted(planned.items()):
        found = seen.get(port) or []
        if not found:
            out.append(f"{port}: no LLDP neighbour, the cabling says {peer} (missing cable, port down, or no LLDP)")
        elif not _lldp_matches(found, peer):
            out.append(f"{port}: LLDP sees {_seen(found)}, the cabling says {peer} (miscabled)")
        else:
            matched += 1
    if evidence is not None:
        evidence["lldp"] = {"links": len(planned), "seen_as_cabled": matched}
    for port, found in sorted(seen.items()):
        front_panel = job.spec.port_pattern.match(port) is not None and not job.spec.is_host
        if port not in planned and found and front_panel:
            out.append(f"{port}: LLDP sees {_seen(found)}, the cabling has no link here (unexpected)")
    return out


def _wanted_mtus(job: Job) -> dict[str, int]:
    """Interface -> intended MTU: a host's RoCE NICs, a switch's fabric interfaces."""
    if job.spec.is_host:
        return {n["netdev"]: n["mtu"] for n in job.data.get("nics", [])}
    return {i["name"]: i["mtu"] for i in job.interfaces}


def verify(job: Job, driver: Driver, ctx: VerifyContext) -> list[str]:
    """Read the device back with its getters; every failed check is one message. What was read and found right
    goes into ``ctx.evidence`` (the Outcome's ``evidence``)."""
    failed: list[str] = []
    evidence: dict[str, Any] = {}
    ctx.evidence = evidence
    left = _remaining(job, driver)
    if left:
        failed.append("configuration did not land: remaining diff:\n" + left)
    evidence["intent"] = "held" if not left else "not held"
    interfaces = driver.get_interfaces()
    wanted = _wanted_mtus(job)
    at_mtu = 0
    for name, mtu in sorted(wanted.items()):
        got = (interfaces.get(name) or {}).get("mtu")
        if got is not None and int(got) != int(mtu):
            failed.append(f"{name}: MTU {got}, intended {mtu}")
        elif got is None:
            failed.append(f"{name}: interface not reported by the device")
        else:
            at_mtu += 1
    evidence["mtu"] = {"ports": len(wanted), "at_intended_mtu": at_mtu}
    failed += cabling(job, driver, evidence) if ctx.check_cabling else _miscabled(job, driver, evidence)
    waiting = ctx.pending.get(job.name, set())
    needed = [
        n
        for n in job.data.get("bgp", {}).get("neighbors", [])
        if n.get("peer_device") in ctx.required_peers and n.get("peer_device") not in waiting
    ]
    if needed:

        def sessions_down() -> list[dict[str, Any]]:
            peers = driver.get_bgp_neighbors().get("global", {}).get("peers", {})
            return [n for n in needed if not (peers.get(n["address"]) or {}).get("is_up")]

        down = _converged(sessions_down, ctx)
        failed += [f"BGP session to {n['address']} ({n['peer_device']}) is not established" for n in down]
        evidence["bgp"] = {"checked": len(needed), "established": len(needed) - len(down)}
    if waiting:
        evidence.setdefault("bgp", {"checked": 0, "established": 0})["pending"] = sorted(waiting)
    if ctx.check_ecmp:
        failed += _ecmp(job, driver, ctx)
        failed += _adaptive(job, driver, ctx)
    return failed


T = TypeVar("T")


def _converged(missing: Callable[[], list[T]], ctx: VerifyContext) -> list[T]:
    """Ask ``missing()`` until it returns nothing, ``ctx.bgp_wait`` has passed or the run is aborted; returns
    its last answer. The pause between asks starts at ``CONVERGE_FIRST`` and doubles up to ``CONVERGE_MAX``: a
    fabric converging for tens of seconds is asked a few times, not every second by every device."""
    deadline = time.monotonic() + ctx.bgp_wait
    pause = CONVERGE_FIRST
    while True:
        left = missing()
        if not left or time.monotonic() >= deadline or ctx.aborted:
            return left
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, CONVERGE_MAX)


def _ecmp(job: Job, driver: Driver, ctx: VerifyContext) -> list[str]:
    """Each designed ECMP target (a remote leaf's loopback) has as many installed next hops as designed;
    waits like the BGP check while routes converge."""
    waiting = ctx.pending.get(job.name, set())
    wanted = [
        c
        for c in job.data.get("verify", {}).get("ecmp", [])
        if c["target"] in ctx.required_peers and c["target"] not in waiting
    ]
    if not wanted or not isinstance(driver, RouteLookup):
        return []
    got: dict[str, list[str]] = {}

    def paths_short() -> list[dict[str, Any]]:
        got.update((c["prefix"], driver.route_paths(c["prefix"])) for c in wanted)
        return [c for c in wanted if len(got[c["prefix"]]) != c["paths"]]

    short = _converged(paths_short, ctx)
    ctx.evidence["ecmp"] = [
        {"target": c["target"], "prefix": c["prefix"], "paths": len(got[c["prefix"]]), "designed": c["paths"]}
        for c in wanted
    ]
    return [
        f"ECMP to {c['prefix']} ({c['target']}): {len(got[c['prefix']])} next hop(s) "
        f"{', '.join(got[c['prefix']]) or '(no route)'}, designed {c['paths']}"
        for c in short
    ]


def _adaptive(job: Job, driver: Driver, ctx: VerifyContext) -> list[str]:
    """Adaptive routing (Cumulus) or dynamic load balancing (NX-OS) is on on every port the design puts it on,
    as the switch reports it."""
    wanted = job.data.get("verify", {}).get("adaptive_ports", [])
    if not wanted or not isinstance(driver, AdaptiveRouting):
        return []
    on = set(driver.adaptive_ports())
    off = [p for p in wanted if p not in on]
    ctx.evidence["adaptive_routing"] = {"ports": len(wanted), "on": len(wanted) - len(off)}
    if not off:
        return []
    return [f"adaptive routing / dynamic load balancing is off on {', '.join(off)} (intended on)"]


def digest(config: str) -> str:
    """SHA-256 of a running configuration as fabconf compares it (comments and blank lines dropped)."""
    return hashlib.sha256(normalize(REDACTOR(config)).encode()).hexdigest()


def push_device(job: Job, driver: Driver, reopen: Reopen, ctx: VerifyContext, revert_in: int) -> Outcome:
    """Commit with a revert timer (or a checkpoint), verify, then confirm — or leave the device as it was.
    The Outcome carries the configuration's digest before and, where the end state is known, after. A commit an
    earlier run left unfinished on the device is restored first, and what a killed run left staged or waiting for
    its confirmation is cleaned first (both said so)."""
    try:
        cleaned = ctx.leftovers.clean(job, driver) if ctx.leftovers is not None else ""
        finished = driver.finish_interrupted() if isinstance(driver, Unfinished) else ""
    except CommitConflict as exc:
        return Outcome(job.name, job.platform, State.CONFLICT, message=f"nothing was changed: {exc}")
    except Exception as exc:
        if transient(exc):  # lost before anything was done: the caller tries again on a new connection
            raise
        message = f"what an interrupted run left could not be cleaned: {_err(exc)}"
        return Outcome(job.name, job.platform, State.FAILED, message=message)
    finished = "; ".join(m for m in (cleaned, finished) if m)
    outcome = _stage_and_push(job, driver, reopen, ctx, revert_in)
    if finished:
        outcome.message = "; ".join(m for m in (finished, outcome.message) if m)
    return outcome


def _stage_and_push(job: Job, driver: Driver, reopen: Reopen, ctx: VerifyContext, revert_in: int) -> Outcome:
    before = _running(driver)
    if isinstance(driver, Preflight):
        problems = driver.preflight(config=job.rendered)
        if problems:
            return Outcome(job.name, job.platform, State.UNTOUCHED, message="preflight: " + "; ".join(problems))
    try:
        staged = stage(job, driver)
    except IdentityMismatch as exc:
        _quietly(driver.discard_config)
        return Outcome(job.name, job.platform, State.FAILED, message=str(exc))
    except CommitConflict as exc:
        return _conflict(job, "", str(exc))
    outcome = _push(job, driver, reopen, ctx, revert_in, before, staged.diff)
    outcome.commands = staged.commands
    outcome.config_before = digest(before)
    if outcome.state is State.APPLIED:
        with contextlib.suppress(Exception):  # the change is confirmed; a failed read only loses the digest
            outcome.config_after = digest(_running(driver))
    elif outcome.state in (State.ROLLED_BACK, State.UNCHANGED, State.UNTOUCHED):
        outcome.config_after = outcome.config_before  # checked equal (rolled back) or never changed
    return outcome


def _push(
    job: Job, driver: Driver, reopen: Reopen, ctx: VerifyContext, revert_in: int, before: str, diff: str
) -> Outcome:
    """Commit what is staged (``diff`` "" = nothing), verify, confirm — or undo."""
    timer = isinstance(driver, RevertTimer)
    if not diff:
        failed = verify(job, driver, ctx)
        state = State.UNCHANGED if not failed else State.FAILED
        message = peers.note(ctx.pending.get(job.name, ()))
        message = message if not failed else "already at intent, but verification failed; nothing was changed"
        return Outcome(job.name, job.platform, state, message=message, checks=failed, evidence=dict(ctx.evidence))
    ctx.commit_started = True
    if ctx.leftovers is not None:
        ctx.leftovers.note(driver)
    if ctx.before_commit is not None:
        ctx.before_commit(job, diff, digest(before))
    try:
        changed = _changed_since(driver, before)
    except Exception as exc:
        _quietly(driver.discard_config)
        return Outcome(job.name, job.platform, State.FAILED, diff=diff, message=f"nothing was committed: {_err(exc)}")
    if changed:
        _quietly(driver.discard_config)
        return _conflict(job, diff, "the device changed since its diff was computed (another changer?):\n" + changed)
    phases, mark = {}, time.monotonic()
    try:
        if timer:
            driver.commit_config(revert_in=revert_in)
        else:
            driver.commit_config()
    except CommitConflict as exc:  # refused by the device-side check: nothing was committed
        _quietly(driver.discard_config)
        return _conflict(job, diff, str(exc))
    except Exception as exc:  # the commit's outcome is unknown: make sure the device is as it was
        return _recover(job, _reattaching(driver, reopen), before, diff, f"commit failed: {_err(exc)}")
    phases["commit"], mark = time.monotonic() - mark, time.monotonic()
    try:
        failed = verify(job, driver, ctx)
    except Exception as exc:
        failed = [f"verification could not run: {_err(exc)}"]
    phases["verify"], mark = time.monotonic() - mark, time.monotonic()
    if ctx.aborted:
        failed = [*failed, "the run was interrupted (Ctrl-C twice): not confirmed"]
    if failed:
        return _undo(job, driver, reopen, before, diff, failed)
    if isinstance(driver, RevertTimer):
        try:
            driver.confirm_commit()
        except Exception as exc:  # its commit still pending: the reconnected driver must know it to undo it
            return _recover(job, _reattaching(driver, reopen), before, diff, f"confirm failed: {_err(exc)}")
    phases["confirm"] = time.monotonic() - mark
    notes = (_pending_firmware(driver), peers.note(ctx.pending.get(job.name, ())))
    message = "; ".join(n for n in notes if n)
    evidence = dict(ctx.evidence)
    return Outcome(job.name, job.platform, State.APPLIED, diff=diff, message=message, evidence=evidence, phases=phases)


def _changed_since(driver: Driver, before: str) -> str:
    """Optimistic concurrency: what changed on the device since ``before`` was read ("" when nothing). A driver
    that can check inside its own commit (``GuardedCommit``) is told what to expect and checks there; for the
    others the running configuration is read once more, right before the commit (a window of one round trip)."""
    if isinstance(driver, GuardedCommit):
        driver.expect_running(before)
        return ""
    now = _running(driver)
    old, new = normalize(REDACTOR(before)).splitlines(), normalize(REDACTOR(now)).splitlines()
    if old == new:
        return ""
    lines = [ln for ln in difflib.unified_diff(old, new, "read before the diff", "now", lineterm="", n=0)]
    more = len(lines) - CONFLICT_LINES
    return "\n".join(lines[:CONFLICT_LINES] + ([f"... ({more} more lines)"] if more > 0 else []))


def _conflict(job: Job, diff: str, what: str) -> Outcome:
    message = f"conflict, nothing was committed: {what}"
    return Outcome(job.name, job.platform, State.CONFLICT, diff=diff, message=message)


def _pending_firmware(driver: Driver) -> str:
    """Settings (host mlxconfig values) that take effect only after a firmware reset or reboot."""
    if not isinstance(driver, PendingFirmware):
        return ""
    try:
        found = driver.pending_firmware()
    except Exception as exc:
        return f"could not read pending firmware settings: {_err(exc)}"
    items = [f"{dev} {key}={v['next_boot']}" for dev, keys in sorted(found.items()) for key, v in sorted(keys.items())]
    return ("firmware settings pending until firmware reset or reboot: " + ", ".join(items)) if items else ""


def _reattaching(old: Driver, reopen: Reopen) -> Reopen:
    """Reconnect, and let the new driver take over what the lost connection left pending."""

    def again() -> Driver:
        new = reopen()
        if isinstance(new, Reattach):
            new.reattach(old)
        return new

    return again


def _undo(job: Job, driver: Driver, reopen: Reopen, before: str, diff: str, failed: list[str]) -> Outcome:
    try:
        driver.rollback()
    except Exception as exc:
        reason = f"verification failed and rollback raised {_err(exc)}"
        return _recover(job, _reattaching(driver, reopen), before, diff, reason, failed)
    return _confirm_restored(job, driver, before, diff, "verification failed; rolled back", failed)


def _recover(job: Job, reopen: Reopen, before: str, diff: str, reason: str, failed: list[str] | None = None) -> Outcome:
    """After a failure with an unknown device state: reconnect, undo anything pending, check it is as before.
    A recovery that fails is tried once more on a new connection (a dropped or refused rollback may pass then)."""

    def failure(message: str) -> Outcome:
        return Outcome(job.name, job.platform, State.FAILED, diff=diff, checks=failed or [], message=message)

    problems: list[str] = []
    for _attempt in range(RECOVER_ATTEMPTS):
        try:
            driver = reopen()
        except Exception as exc:
            reverts = ", its revert timer will restore it" if job.spec.revert is Revert.TIMER else ""
            problems.append(f"reconnect failed ({_err(exc)})")
            if len(problems) < RECOVER_ATTEMPTS:
                continue
            return failure(f"{reason}; {'; '.join(problems)}: device state unknown{reverts}")
        try:
            if normalize(_running(driver)) != normalize(before):
                driver.rollback()
            return _confirm_restored(job, driver, before, diff, reason, failed or [])
        except Exception as exc:
            problems.append(f"recovery failed: {_err(exc)}")
        finally:
            _quietly(driver.close)
    return failure(f"{reason}; {'; '.join(problems)}")


def _confirm_restored(job: Job, driver: Driver, before: str, diff: str, reason: str, failed: list[str]) -> Outcome:
    """Wait (up to RESTORE_WAIT) until the device shows its previous configuration again."""
    deadline = time.monotonic() + RESTORE_WAIT
    while True:
        now = _running(driver)
        same = normalize(now) == normalize(before)
        kept = driver.unrestorable(before, now) if isinstance(driver, RestoreLimits) else None
        if same and not kept:
            return Outcome(
                job.name,
                job.platform,
                State.ROLLED_BACK,
                diff=diff,
                checks=failed,
                message=f"{reason}; the device is back to its previous configuration",
            )
        if kept is not None:  # all that differs is what no restore can undo (or cannot show): said, not waited for
            return Outcome(
                job.name,
                job.platform,
                State.ROLLED_BACK,
                diff=diff,
                checks=failed,
                message=f"{reason}; the device is back to its previous configuration but for what cannot be "
                f"undone: {'; '.join(kept)}",
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
        time.sleep(POLL)


def _err(exc: BaseException) -> str:
    text = explain(exc)
    return REDACTOR(f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text)


def _quietly(fn: Callable[[], object]) -> None:
    with contextlib.suppress(Exception):  # cleanup must never mask the outcome
        fn()
