"""The diff job: a dry run of every selected device (``fabconf diff``)."""

from __future__ import annotations

from fabconf.deploy import processes, rollout
from fabconf.deploy.job import Outcome, State
from fabconf.deploy.options import DeviceOptions
from fabconf.jobs.target import EXIT_INTERRUPTED, QUIET, Hooks, Result, Target, interruptible, prepare


def diff_exit_code(outcomes: list[Outcome]) -> int:
    """Like ``terraform plan -detailed-exitcode``: 1 any device failed, 2 changes pending, 0 in sync."""
    if any(o.state in (State.FAILED, State.UNREACHABLE) for o in outcomes):
        return 1
    return 2 if any(o.state is State.CHANGES for o in outcomes) else 0


def diff(target: Target, options: DeviceOptions, hooks: Hooks = QUIET) -> Result:
    """What a push would change on every selected device; nothing is left on any device."""
    _, jobs = prepare(target, options)
    # the workers are forked before the progress display starts its thread (fabconf.deploy.processes)
    with interruptible() as interrupt, processes.forked(jobs, options) as split, hooks.progress("diff", jobs) as shown:
        outcomes = rollout.diff(jobs, options, shown, interrupt, split)
    code = EXIT_INTERRUPTED if interrupt.stopping else diff_exit_code(outcomes)
    return Result(outcomes, code)
