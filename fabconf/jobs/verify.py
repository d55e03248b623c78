"""The verify job: read-only checks that every selected device holds intent and is healthy (``fabconf verify``)."""

from __future__ import annotations

from fabconf.deploy import processes, rollout
from fabconf.deploy.job import State
from fabconf.deploy.options import DeviceOptions, VerifyOptions
from fabconf.jobs.push import resolve_unfinished
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


def verify(target: Target, options: DeviceOptions, verify_options: VerifyOptions, hooks: Hooks = QUIET) -> Result:
    """Exit 0 when every device verified, 1 otherwise; closes the unfinished commits of the devices it read."""
    compiled, jobs = prepare(target, options)
    warn_unfinished(jobs, audit_context(target))
    with (
        interruptible() as interrupt,
        processes.forked(jobs, options) as split,  # before any other thread starts (fabconf.deploy.processes)
        hooks.progress("verify", jobs) as shown,
    ):
        waiting = pending_peers(compiled, jobs, target, options, ecmp=True)
        everyone = set(compiled.model.devices)
        outcomes = rollout.verify(jobs, everyone, options, verify_options, shown, interrupt, waiting, split)
    code = 0 if all(o.state is State.VERIFIED for o in outcomes) else 1
    code = EXIT_INTERRUPTED if interrupt.stopping else code
    resolve_unfinished("verify", jobs, outcomes, audit_context(target))
    return Result(outcomes, code)
