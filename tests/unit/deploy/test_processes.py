"""Read-only runs over more than one process (``fabconf.deploy.processes``), over scripted fake devices
(tests/deploy/fakes.py, fabconf's own tasks, rollout and processors unmodified; the drivers are built in the forked
workers exactly as in one process). The lab's end-to-end counterpart is tests/e2e/test_processes_lab.py."""

from __future__ import annotations

import argparse
import multiprocessing
import os
import pickle
import signal
import threading
import time
from collections.abc import Iterator

import pytest
from fakes import FakeDevice, FakeDriver, Script

from fabconf.cli.devices import add_processes_arg
from fabconf.compile.pipeline import Compiled
from fabconf.deploy import processes, rollout, tasks
from fabconf.deploy.drift import Snapshots, drift_task
from fabconf.deploy.interrupt import Interrupt
from fabconf.deploy.job import Job, Outcome, State
from fabconf.deploy.options import DeviceOptions, VerifyOptions
from fabconf.errors import UsageError

NAMES = ("spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4", "gpu01", "gpu02", "gpu03", "gpu04")


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(processes.ENV, raising=False)


def test_how_many_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "cores", lambda: 4)
    assert processes.process_count(processes.THRESHOLD - 1, None) == 1  # a small run: one process
    assert processes.process_count(processes.THRESHOLD, None) == 2  # at least PER_PROCESS devices each
    assert processes.process_count(5632, None) == 4  # one per usable core
    assert processes.process_count(10, 3) == 3  # as asked, whatever the size
    assert processes.process_count(2, 8) == 2  # never more than the devices
    monkeypatch.setenv(processes.ENV, "1")
    assert processes.process_count(5632, None) == 1  # forced to one process (debugging)
    assert processes.process_count(5632, 2) == 2  # the option wins over the environment
    monkeypatch.setenv(processes.ENV, "auto")
    assert processes.process_count(5632, None) == 4
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(processes.ENV, bad)
        with pytest.raises(UsageError, match=f"{processes.ENV}="):
            processes.process_count(10, None)
    with pytest.raises(ValueError, match="--processes must be at least 1"):
        DeviceOptions(processes=0)


def test_the_option_says_the_threshold() -> None:
    parser = argparse.ArgumentParser()
    add_processes_arg(parser)  # the parser names the figure without importing the deploy layer (startup cost)
    assert f"from {processes.THRESHOLD} devices on" in " ".join(parser.format_help().split())


def test_snapshots_cross_a_pipe_and_merge() -> None:
    mine, theirs = Snapshots(), Snapshots().emptied()
    mine.put("leaf1", "one")
    theirs.put("leaf2", "two")
    theirs.problem("leaf3", "not read")
    mine.merge(pickle.loads(pickle.dumps(theirs)))
    assert (mine.get("leaf1"), mine.get("leaf2"), mine.problem_of("leaf3")) == ("one", "two", "not read")


# -- runs over fake devices, in two processes ------------------------------------------------------------------
class Display:
    """A progress display (``fabconf.deploy.processors.Progress``): what it was told, by device."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.begun: list[str] = []
        self.ended: list[Outcome] = []

    def started(self, device: str) -> None:
        with self.lock:
            self.begun.append(device)

    def done(self, outcome: Outcome) -> None:
        with self.lock:
            self.ended.append(outcome)


def _fabric(
    example: Compiled, monkeypatch: pytest.MonkeyPatch, die_on: str = "", script: Script | None = None
) -> list[Job]:
    """Devices at intent (each as ``script`` says), one drifted, one unreachable; ``die_on``: the worker process that
    opens this device is killed (SIGKILL) as it does."""
    jobs = rollout.push_order([Job(example.model.devices[n], example.data[n], f"config of {n}\n") for n in NAMES])
    devices = {j.name: FakeDevice(j.name, j.rendered, script or Script()) for j in jobs}
    devices["leaf2"] = FakeDevice("leaf2", "brownfield\n")
    devices["gpu03"] = FakeDevice("gpu03", "x", Script(unreachable=True))

    def build(job: Job, options: DeviceOptions, credentials: object = None, timeout: object = None) -> FakeDriver:
        if job.name == die_on and multiprocessing.parent_process() is not None:
            os.kill(os.getpid(), signal.SIGKILL)
        return FakeDriver(devices[job.name])

    monkeypatch.setattr(tasks, "build_driver", build)
    return jobs


@pytest.fixture
def two(example: Compiled) -> Iterator[None]:
    if not processes.forkable():
        pytest.skip(f"another thread runs in this test process: fabconf would not fork here: {threading.enumerate()}")
    yield


def _comparable(outcomes: list[Outcome]) -> list[dict[str, object]]:
    return [{k: v for k, v in o.as_dict().items() if k != "seconds"} for o in outcomes]


def test_two_processes_give_what_one_gives(example: Compiled, monkeypatch: pytest.MonkeyPatch, two: None) -> None:
    jobs = _fabric(example, monkeypatch)
    options = DeviceOptions(workers=4, host_workers=4, processes=2)
    one = rollout.diff(jobs, options)
    seen = Display()
    with processes.forked(jobs, options) as split:
        assert split is not None and len(split.pids()) == 1
        outcomes = rollout.diff(jobs, options, seen, split=split)
        children = multiprocessing.active_children()
    assert _comparable(outcomes) == _comparable(one)
    assert [o.state for o in outcomes][:2] == [State.UNCHANGED, State.UNCHANGED]
    # the display was told about every device once, as it started and as it ended, whichever process ran it
    assert sorted(seen.begun) == sorted(NAMES)
    assert sorted(o.device for o in seen.ended) == sorted(NAMES)
    assert children and not any(c.is_alive() for c in children)  # the worker ended with the block


def test_drift_snapshots_come_back_from_the_worker(
    example: Compiled, monkeypatch: pytest.MonkeyPatch, two: None
) -> None:
    jobs = _fabric(example, monkeypatch)
    options = DeviceOptions(processes=2)
    snapshots = Snapshots()
    with processes.forked(jobs, options) as split:
        outcomes = rollout.run(jobs, drift_task, options, split=split, snapshots=snapshots)
    assert {o.device: o.state for o in outcomes}["leaf2"] is State.CHANGES
    for job in jobs:  # each read configuration, whichever process read it
        expected = None if job.name == "gpu03" else ("brownfield\n" if job.name == "leaf2" else job.rendered)
        assert snapshots.get(job.name) == expected, job.name


def test_a_killed_worker_leaves_its_unfinished_devices_failed(
    example: Compiled, monkeypatch: pytest.MonkeyPatch, two: None
) -> None:
    jobs = _fabric(example, monkeypatch, die_on="leaf2")
    # one device at a time per pool: the worker (every other device: spine2, leaf2, leaf4, gpu02, gpu04) dies on
    # leaf2, after spine2 and before leaf4
    options = DeviceOptions(workers=2, host_workers=2, processes=2)
    seen = Display()
    with processes.forked(jobs, options) as split:
        assert split is not None
        theirs = {j.name for j in jobs[1::2]}
        assert "leaf2" in theirs
        outcomes = rollout.diff(jobs, options, seen, split=split)
        again = rollout.diff(jobs, options, split=split)  # a later run: the dead worker's share is done here
    by_name = {o.device: o for o in outcomes}
    assert sorted(by_name) == sorted(NAMES)  # every device exactly once
    lost = {n for n, o in by_name.items() if "worker process" in o.message}
    assert {"leaf2", "leaf4"} <= lost <= theirs
    for name in lost:
        assert by_name[name].state is State.FAILED
        assert "killed by SIGKILL" in by_name[name].message
    for name in set(NAMES) - lost:  # the others as a run without the kill reports them
        assert "worker process" not in by_name[name].message
    assert sorted(o.device for o in seen.ended) == sorted(NAMES)  # the display counted the lost ones too
    assert {o.device for o in again if o.state is State.FAILED} == set()
    assert {o.device: o.state for o in again}["gpu03"] is State.UNREACHABLE


def test_ctrl_c_twice_reaches_the_worker(example: Compiled, monkeypatch: pytest.MonkeyPatch, two: None) -> None:
    """Every switch's BGP sessions stay down: verify waits up to --bgp-wait for them, in both processes, until the
    second Ctrl-C aborts the wait everywhere."""
    jobs = _fabric(example, monkeypatch, script=Script(bgp_down=True))
    options = DeviceOptions(processes=2)
    interrupt = Interrupt()
    with processes.forked(jobs, options) as split:
        assert split is not None
        pressed = threading.Timer(1.0, lambda: (interrupt.request(), interrupt.request()))
        started = time.monotonic()
        pressed.start()
        outcomes = rollout.verify(
            jobs, set(NAMES), options, VerifyOptions(bgp_wait=60), interrupt=interrupt, split=split
        )
        took = time.monotonic() - started
    assert took < 30  # not the 60 s wait: the worker's switches were told too
    switches = {o.device: o for o in outcomes if o.device.startswith(("spine", "leaf"))}
    assert {o.state for o in switches.values()} == {State.FAILED}
    assert {j.name for j in jobs[1::2]} & set(switches)  # the worker had switches of its own
