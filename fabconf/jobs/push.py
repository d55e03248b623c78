"""The push job: plan, approval, canary and batches, commit-confirm, verify, rollback (``fabconf push``)."""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass

from fabconf.deploy import audit, rollout
from fabconf.deploy.audit import audit_path
from fabconf.deploy.estimate import Estimate, estimate
from fabconf.deploy.job import Job, Outcome, State
from fabconf.deploy.lock import DeviceLocks, lock_address
from fabconf.deploy.options import DeviceOptions, PushOptions
from fabconf.deploy.private import private_dir
from fabconf.errors import UsageError
from fabconf.jobs.diff import diff_exit_code
from fabconf.jobs.target import (
    EXIT_INTERRUPTED,
    QUIET,
    Hooks,
    Result,
    Target,
    audit_context,
    interruptible,
    pending_peers,
    prepare,
    warn_unfinished,
)
from fabconf.platforms import Revert
from fabconf.platforms import platform as platform_spec

READ_BACK = (State.VERIFIED, State.APPLIED, State.UNCHANGED, State.ROLLED_BACK)


@dataclass
class PushResult(Result):
    """A push's Result with its waves (``plan``; each wave's ``seconds`` once pushed) and the ``estimate`` made
    before it started."""

    plan: rollout.Plan | None = None
    estimate: Estimate | None = None


@dataclass(frozen=True)
class Forecast:
    """``fabconf push --plan``: the waves, the failure budget and how long each wave should take."""

    plan: rollout.Plan
    estimate: Estimate
    max_fail: int


def forecast(target: Target, options: DeviceOptions, push_options: PushOptions) -> Forecast:
    """The push's waves and its estimated duration; no device is touched, and a lab is neither started nor read
    (its latencies are still those of lab runs)."""
    _compiled, jobs = prepare(dataclasses.replace(target, lab=False))
    the_plan = rollout.plan(jobs, canary=push_options.canary, batch=push_options.batch)
    mode = audit_context(target)["mode"]
    return Forecast(the_plan, estimate(the_plan, options, mode), push_options.max_fail)


def push_exit_code(outcomes: list[Outcome]) -> int:
    return 0 if all(o.state in (State.APPLIED, State.UNCHANGED) for o in outcomes) else 1


def check_confirm_timeout(jobs: list[Job], seconds: int) -> None:
    """Refused before any device is touched: a --confirm-timeout shorter than a selected platform's commit timer
    accepts (the platform table's ``confirm_timeout_s``; NX-OS takes 30-3600 s), which that device would refuse
    at commit time, after the devices before it had changed."""
    short = sorted(
        {j.spec.name for j in jobs if j.spec.revert is Revert.TIMER and seconds < j.spec.confirm_timeout_s[0]}
    )
    if short:
        limits = ", ".join(f"{name} at least {platform_spec(name).confirm_timeout_s[0]} s" for name in short)
        raise UsageError(f"--confirm-timeout {seconds}: too short for the selected devices' commit timers ({limits})")


def resolve_unfinished(command: str, jobs: list[Job], outcomes: list[Outcome], context: dict[str, str]) -> None:
    """Close the unfinished commits of the devices this run read back (verified, applied, unchanged, rolled
    back, or a verify that read them and found them wrong)."""
    address = {j.name: j.device.hostname for j in jobs}
    read = [o for o in outcomes if o.state in READ_BACK or (o.state is State.FAILED and o.checks)]
    audit.resolve(command, [(o.device, str(o.state), address[o.device]) for o in read], context)


def push(target: Target, options: DeviceOptions, push_options: PushOptions, hooks: Hooks = QUIET) -> PushResult:
    """Apply intent to every selected device. With ``hooks.approve`` the dry run and the waves are shown and
    the push goes ahead only when approved (``Result.declined`` otherwise, nothing changed); a dry run with a
    failed device is refused before the question."""
    compiled, jobs = prepare(target, options)
    check_confirm_timeout(jobs, push_options.confirm_timeout)
    warn_unfinished(jobs, audit_context(target))
    the_plan = rollout.plan(jobs, canary=push_options.canary, batch=push_options.batch)
    expected = estimate(the_plan, options, audit_context(target)["mode"])
    if push_options.confirm_timeout < push_options.bgp_wait + 30:
        print(
            f"fabconf: warning: --confirm-timeout {push_options.confirm_timeout}s leaves little time to verify "
            f"(--bgp-wait {push_options.bgp_wait:g}s): devices with a revert timer may revert before they are "
            "confirmed",
            file=sys.stderr,
        )
    private_dir(audit_path().parent)  # an audit log others could tamper with is refused before anything starts
    previewed = False
    with DeviceLocks([(j.name, j.platform, lock_address(j.device.hostname, j.device.port)) for j in jobs]):
        if hooks.approve is not None:
            preview = rollout.diff(jobs, options)
            hooks.approve.show(preview, the_plan)
            if diff_exit_code(preview) == 1:
                raise UsageError("some devices failed the dry run; fix them or --limit them out")
            if not hooks.approve.ask():
                return PushResult([], 1, declined=True)
            previewed = True  # each diff is shown once, in the plan
        with interruptible() as interrupt, hooks.progress("push", jobs) as shown:
            outcomes = rollout.push(
                the_plan,
                set(compiled.model.devices),
                push_options,
                options,
                shown,
                interrupt,
                audit_context(target),
                pending_peers(compiled, jobs, target, options),
            )
    code = EXIT_INTERRUPTED if interrupt.stopping else push_exit_code(outcomes)
    resolve_unfinished("push", jobs, outcomes, audit_context(target))
    return PushResult(outcomes, code, previewed=previewed, plan=the_plan, estimate=expected)
