"""How a device's budget (``--timeout``) is shared among its attempts: a step that changes nothing (diff, verify,
drift) waits at most its share per attempt, so one stalled reply is tried again instead of using the whole
budget; a push keeps the whole budget for its one connection (a commit is never cut short)."""

from __future__ import annotations

from typing import Any

import pytest
from fakes import FakeDevice, FakeDriver, Script

from fabconf.compile.pipeline import Compiled
from fabconf.deploy import tasks
from fabconf.deploy.job import Job, Outcome, State
from fabconf.deploy.options import DeviceOptions


@pytest.mark.parametrize(
    ("timeout", "retries", "retried", "elapsed", "expected"),
    [
        (60, 2, 0, 0.0, 20),  # three attempts share 60 s
        (60, 2, 1, 20.5, 20),  # what is left (39.5 s) shared by the two attempts still allowed
        (60, 2, 2, 41.0, 19),  # the last attempt gets all that is left
        (60, 0, 0, 0.0, 60),  # no retries: the whole budget
        (20, 2, 0, 0.0, 10),  # a share under the floor is raised to it
        (20, 2, 1, 15.0, 5),  # ...but never past what is left
        (60, 2, 2, 59.8, 1),  # never under a second
        (600, 3, 0, 0.0, 150),
        (60, 2, 0, 55.0, 10),  # preparing the device used most of the budget: the first attempt still gets the floor
        (3, 2, 0, 0.0, 3),  # a budget under the floor: the first attempt gets all of it (the fault matrix's 3 s)
    ],
)
def test_attempt_timeout(timeout: int, retries: int, retried: int, elapsed: float, expected: int) -> None:
    options = DeviceOptions(timeout=timeout, retries=retries)
    assert tasks.attempt_timeout(options, started=100.0, retried=retried, now=100.0 + elapsed) == expected


def _attempt(
    example: Compiled, monkeypatch: pytest.MonkeyPatch, script: Script, may_retry: Any
) -> tuple[Outcome, list[str], list[int | None]]:
    monkeypatch.setattr(tasks, "RETRY_PAUSE", 0.01)
    device = FakeDevice("leaf1", "running config of leaf1", script)
    given: list[int | None] = []

    def build(job: Job, options: DeviceOptions, credentials: Any = None, timeout: int | None = None) -> FakeDriver:
        given.append(timeout)
        return FakeDriver(device)

    monkeypatch.setattr(tasks, "build_driver", build)
    job = Job(example.model.devices["leaf1"], example.data["leaf1"], "intended config of leaf1")

    def read(job: Job, driver: Any) -> Outcome:
        driver.get_config()
        return Outcome(job.name, job.platform, State.VERIFIED)

    options = DeviceOptions(timeout=60, retries=2)
    outcome, retried = tasks._attempts(job, read, options, None, tasks.time.monotonic(), may_retry)
    return outcome, retried, given


def test_a_read_only_step_shares_the_budget_among_its_attempts(
    example: Compiled, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome, retried, given = _attempt(example, monkeypatch, Script(timeouts_on_read=2), None)
    assert outcome.state is State.VERIFIED
    assert len(retried) == 2
    assert given == [20, 30, 60], given  # each failure was at once: what is left, shared by the attempts left


def test_a_push_keeps_the_whole_budget_per_connection(example: Compiled, monkeypatch: pytest.MonkeyPatch) -> None:
    outcome, retried, given = _attempt(example, monkeypatch, Script(timeouts_on_read=1), lambda: True)
    assert outcome.state is State.VERIFIED and len(retried) == 1
    assert given == [None, None]  # None: build_driver uses options.timeout


def test_a_push_past_its_commit_is_not_tried_again(example: Compiled, monkeypatch: pytest.MonkeyPatch) -> None:
    outcome, retried, given = _attempt(example, monkeypatch, Script(timeouts_on_read=1), lambda: False)
    assert outcome.state is State.FAILED and retried == [] and given == [None]
