"""Read-only runs (diff, verify, drift) over more than one process (issue 42): one interpreter lock is one core.

The 5,632-device diff held fabconf's process at one core the whole step (94-113 %: 55 ms of CPU per device, TLS,
SSH and parsing, 200 threads under one interpreter lock; bench/README.md). ``forked`` starts worker processes by
``fork`` once a run's jobs are prepared and while no other thread runs (a fork beside a running thread may copy a lock
that thread held); they inherit the jobs, so nothing of a device crosses a pipe but its name. ``Split.run`` deals a
run's devices round-robin in job order (every role in every process) to this process and each worker; each runs its
share in its own Nornir threads, ``ceil(workers / processes)`` per pool, so the run has as many connections open at
once as in one process. Each worker streams back every device's start and Outcome as it happens: here the run's
processors see them as they see this process's own devices (the progress lines), and the run returns every Outcome
in job order, so that its reports are those of a one-process run.

- A worker that ends before answering (killed, out of memory) leaves every device of its share that it had not
  finished ``FAILED``, saying so: never green, and the run's exit status says it.
- Ctrl-C is this process's (``fabconf.jobs.target.interruptible``). Workers ignore SIGINT (a terminal sends it to
  every process of the group) and are told instead: the first stops new devices in every process, devices in flight
  finish; the second aborts them, as in one process.
- When this process ends, however it ends, each worker sees its pipe close: it starts no new device, lets those in
  flight finish (a diff discards what it staged and frees its lock) and exits. Nothing is left that blocks the next
  run.
- What crosses the pipes (in memory, never a file) is device names, options, the task's arguments and Outcomes: the
  credentials are resolved in the process that connects, and what it sends was redacted there, as in one process.

How many processes: ``DeviceOptions.processes`` (``--processes N``), else ``FABCONF_PROCESSES``, else one per usable
core from ``THRESHOLD`` devices on, with at least ``PER_PROCESS`` devices each. 1 runs everything here (debugging).
Push stays in one process: its waves are short runs of one role, and its failure budget, audit records and locks are
simplest where the rollout is (``fabconf.deploy.rollout.push``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import math
import multiprocessing
import os
import pickle
import queue
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Protocol, runtime_checkable

from nornir.core.processor import Processor

from fabconf.compile.parallel import cores, forkable
from fabconf.deploy.credentials import REDACTOR
from fabconf.deploy.interrupt import Interrupt
from fabconf.deploy.job import Job, Outcome, State
from fabconf.deploy.options import DeviceOptions
from fabconf.deploy.processors import Observer
from fabconf.errors import UsageError

ENV = "FABCONF_PROCESSES"
THRESHOLD = 64  # devices: below this one process does the run (bench/README.md, "two processes")
PER_PROCESS = 32  # devices each process gets at least, when the count is not asked for
POLL = 0.1  # seconds between looks at the run's interrupt while waiting for a worker
GRACE = 30  # seconds past a device's budget a worker told to stop has to finish its devices in flight

TaskFn = Callable[..., Any]
# runs a task over jobs in the calling process (``fabconf.deploy.rollout``): (jobs, task, options, processors, task
# arguments) -> Outcome per device name. A module-level function: a worker is sent it by name.
Here = Callable[[list[Job], TaskFn, DeviceOptions, Sequence[Processor], dict[str, Any]], dict[str, Outcome]]


class Relayed(Protocol):
    """This process's processors, told about a worker's device as Nornir tells them about its own."""

    def started(self, job: Job) -> None: ...
    def done(self, job: Job, outcome: Outcome) -> None: ...


@runtime_checkable
class Gathered(Protocol):
    """A task argument that gathers what devices read (drift's ``Snapshots``): each worker fills an empty one
    (``emptied()``, which pickles), and what it gathered is merged into the original here (``merge``)."""

    def emptied(self) -> Any: ...
    def merge(self, other: Any) -> None: ...


def requested(processes: int | None) -> int | None:
    """The processes asked for: ``processes`` (``--processes``), else ``FABCONF_PROCESSES``; None: not asked."""
    if processes is not None:
        return processes
    text = os.environ.get(ENV, "").strip()
    if not text or text == "auto":
        return None
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise UsageError(f"{ENV}={text!r}: expected a number of processes, 1 or more (1: one process), or 'auto'")
    return count


def process_count(devices: int, processes: int | None) -> int:
    """How many processes a run of ``devices`` uses: as asked (never more than the devices), else one per usable
    core from ``THRESHOLD`` devices on, each with at least ``PER_PROCESS``."""
    asked = requested(processes)
    if asked is not None:
        return max(1, min(asked, devices))
    if devices < THRESHOLD:
        return 1
    return max(1, min(cores(), devices // PER_PROCESS))


@contextlib.contextmanager
def forked(jobs: list[Job], options: DeviceOptions) -> Iterator[Split | None]:
    """Worker processes for the read-only runs over ``jobs`` (None: this run stays in one process); they are told to
    end, and waited for, when the block ends."""
    count = process_count(len(jobs), options.processes)
    if count < 2:
        yield None
        return
    if not forkable():
        if requested(options.processes) is not None:
            print(
                f"fabconf: {count} processes asked for, but another thread runs in this one: one process",
                file=sys.stderr,
            )
        yield None
        return
    try:
        split = Split.start(jobs, count - 1, options.timeout)
    except OSError as exc:  # no process to be had (a process limit, memory): the run is done here
        print(f"fabconf: no worker process could be started ({exc.strerror or exc}): one process", file=sys.stderr)
        yield None
        return
    try:
        yield split
    finally:
        split.close()


@dataclass
class _Run:
    """One run, as a worker is told it."""

    number: int
    names: list[str]
    here: Here
    task: TaskFn
    options: DeviceOptions
    args: dict[str, Any]  # the task's arguments, without the interrupt (the worker's own is passed)
    interruptible: bool  # the task takes ``interrupt``
    stop: bool
    abort: bool


class Split:
    """This process and its workers; ``run`` deals one run over them."""

    def __init__(self, jobs: list[Job], workers: list[_Worker], budget: int) -> None:
        self._jobs = {j.name: j for j in jobs}
        self._workers = workers
        self._budget = budget
        self._runs = 0

    @classmethod
    def start(cls, jobs: list[Job], count: int, budget: int) -> Split:
        context = multiprocessing.get_context("fork")
        for stream in (sys.stdout, sys.stderr):  # a worker's copy of a buffer must not be written twice
            with contextlib.suppress(Exception):
                stream.flush()
        workers: list[_Worker] = []
        # a Ctrl-C between the fork and the worker's own handler would run this process's handler there
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            for _ in range(count):
                control_theirs, control = context.Pipe(duplex=False)
                events, events_theirs = context.Pipe(duplex=False)
                # a worker closes its copies of this process's ends (its own and the earlier workers'): a pipe whose
                # other end a worker still held would never tell it that this process is gone
                inherited = [control, events, *(c for w in workers for c in (w.control, w.events))]
                process = context.Process(
                    target=_serve, args=(control_theirs, events_theirs, jobs, inherited), name="fabconf-worker"
                )
                process.start()
                control_theirs.close()
                events_theirs.close()
                workers.append(_Worker(process, control, events))
        except OSError:
            cls(jobs, workers, budget).close()  # those started end at once: they were given nothing to do
            raise
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return cls(jobs, workers, budget)

    def pids(self) -> list[int]:
        """The workers' process ids (for a benchmark's CPU accounting)."""
        return [w.process.pid for w in self._workers if w.process.pid is not None]

    def run(
        self,
        jobs: list[Job],
        here: Here,
        task: TaskFn,
        options: DeviceOptions,
        processors: Sequence[Processor],
        task_args: dict[str, Any],
        relayed: Relayed,
    ) -> dict[str, Outcome]:
        """``here(jobs, ...)`` over this process and the live workers; every job's Outcome by name."""
        interrupt = task_args.get("interrupt")
        live = [w for w in self._workers if w.alive]
        dealt = [j for j in jobs if self._jobs.get(j.name) is j]  # a worker has only the jobs it inherited
        own = [j for j in jobs if self._jobs.get(j.name) is not j]
        count = 1 + len(live)
        shares = [dealt[i::count] for i in range(count)]
        if count < 2 or not any(shares[1:]):
            return here(jobs, task, options, processors, task_args)
        self._runs += 1
        per = dataclasses.replace(
            options, workers=math.ceil(options.workers / count), host_workers=math.ceil(options.host_workers / count)
        )
        args = {k: v for k, v in task_args.items() if k != "interrupt"}
        gathered = {k: v for k, v in args.items() if isinstance(v, Gathered)}
        args.update({k: v.emptied() for k, v in gathered.items()})
        stop, abort = (interrupt.stopping, interrupt.aborting) if isinstance(interrupt, Interrupt) else (False, False)
        takes = "interrupt" in task_args
        try:
            payloads = [
                pickle.dumps(("run", _Run(self._runs, [j.name for j in s], here, task, per, args, takes, stop, abort)))
                for s in shares[1:]
            ]
        except (pickle.PicklingError, TypeError, AttributeError):  # an argument a worker cannot be sent: one process
            return here(jobs, task, options, processors, task_args)
        own += shares[0]
        followed: list[tuple[_Worker, list[Job]]] = []
        for worker, share, payload in zip(live, shares[1:], payloads, strict=True):
            if share and worker.send_bytes(payload):
                followed.append((worker, share))
            else:
                own += share  # a worker gone since its last run: its share is done here
        out: dict[str, Outcome] = {}
        with ThreadPoolExecutor(max_workers=max(1, len(followed))) as pool:
            futures = [
                pool.submit(worker.follow, self._runs, share, relayed, interrupt, gathered)
                for worker, share in followed
            ]
            if own:
                out.update(here(own, task, per, processors, task_args))
            for future in futures:
                out.update(future.result())
        return out

    def close(self) -> None:
        """Tell every worker to end (its pipe closes), and wait for it: one in the middle of a run (this process is
        leaving on an exception) stops, lets its devices in flight finish within their budget, and ends."""
        for worker in self._workers:
            worker.control.close()
        for worker in self._workers:
            worker.process.join(self._budget + GRACE)
            if worker.process.is_alive():  # stuck past every device's budget: a bug, not a device
                worker.process.kill()
                worker.process.join()
            worker.events.close()


class _Worker:
    """This process's ends of one worker's pipes."""

    def __init__(self, process: Any, control: Connection, events: Connection) -> None:
        self.process, self.control, self.events = process, control, events
        self.alive = True

    def send_bytes(self, payload: bytes) -> bool:
        try:
            self.control.send_bytes(payload)
        except OSError:
            self.alive = False
        return self.alive

    def send(self, message: tuple[str, int]) -> None:
        self.send_bytes(pickle.dumps(message))

    def follow(
        self,
        number: int,
        share: list[Job],
        relayed: Relayed,
        interrupt: Interrupt | None,
        gathered: dict[str, Gathered],
    ) -> dict[str, Outcome]:
        """Relay run ``number``'s events to ``relayed`` and this run's interrupt to the worker, until it answers;
        every device of ``share`` with its Outcome (failed, for those a worker that died did not finish)."""
        jobs = {j.name: j for j in share}
        out: dict[str, Outcome] = {}
        told_stop = told_abort = False
        while True:
            if isinstance(interrupt, Interrupt):
                if interrupt.stopping and not told_stop:
                    told_stop = True
                    self.send(("stop", number))
                if interrupt.aborting and not told_abort:
                    told_abort = True
                    self.send(("abort", number))
            try:
                if not self.events.poll(POLL):
                    continue
                message = pickle.loads(self.events.recv_bytes())
            except (EOFError, OSError):  # the worker ended without answering
                self.alive = False
                break
            kind, run = message[0], message[1]
            if run != number:
                continue
            if kind == "started":
                relayed.started(jobs[message[2]])
            elif kind == "done":
                outcome = message[2]
                out[outcome.device] = outcome
                relayed.done(jobs[outcome.device], outcome)
            elif kind == "end":
                out.update(message[2])
                for key, part in message[3].items():
                    gathered[key].merge(part)
                break
        why = self._ended() if not self.alive else "it gave no outcome for it"
        for name, job in jobs.items():
            if name not in out:
                out[name] = lost = Outcome(
                    name,
                    job.platform,
                    State.FAILED,
                    message=f"fabconf's worker process {self.process.pid} ended ({why}) before this device was done: "
                    "its outcome is not known",
                )
                relayed.done(job, lost)
        return out

    def _ended(self) -> str:
        self.process.join(5)
        code = self.process.exitcode
        if code is None:
            return "its pipe closed"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"killed by {signal.Signals(-code).name}"
        return f"exit status {code}"


# -- the worker process -------------------------------------------------------------------------------------------
class _Sender:
    """A worker's end of its events pipe, shared by its Nornir threads; a parent gone is not an error here."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.lock = threading.Lock()
        self.gone = False

    def send(self, message: tuple[Any, ...]) -> None:
        data = pickle.dumps(message)
        with self.lock:
            if self.gone:
                return
            try:
                self.conn.send_bytes(data)
            except OSError:
                self.gone = True


def _sendable(outcome: Outcome) -> Outcome:
    """``outcome``, or a failed one saying why, when it cannot be pickled (a fabconf bug: never shown green)."""
    try:
        pickle.dumps(outcome)
    except Exception as exc:
        return Outcome(
            outcome.device,
            outcome.platform,
            State.FAILED,
            message=f"its outcome could not be sent from fabconf's worker process (a fabconf bug, please report): "
            f"{type(exc).__name__}",
        )
    return outcome


class _Relay(Observer):
    """A worker's Nornir processor: every device's start and Outcome to the parent, as they happen."""

    def __init__(self, sender: _Sender, number: int) -> None:
        self.sender, self.number = sender, number
        self.sent: set[str] = set()

    def started(self, device: str) -> None:
        self.sender.send(("started", self.number, device))

    def completed(self, outcome: Outcome) -> None:
        self.sent.add(outcome.device)
        self.sender.send(("done", self.number, _sendable(outcome)))


def _serve(control: Connection, events: Connection, jobs: list[Job], inherited: list[Connection]) -> None:
    """A worker: runs what it is told on the jobs it inherited, until its control pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it says so here through the pipe
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    for conn in inherited:
        conn.close()
    gc.freeze()  # what it inherited is never collected here: its pages stay shared with the parent
    by_name = {j.name: j for j in jobs}
    runs: queue.Queue[tuple[_Run, Interrupt] | None] = queue.Queue()
    interrupts: dict[int, Interrupt] = {}

    def listen() -> None:
        try:
            while True:
                kind, value = pickle.loads(control.recv_bytes())
                if kind == "run":
                    interrupts[value.number] = interrupt = Interrupt()
                    if value.stop:
                        interrupt.stop.set()
                    if value.abort:
                        interrupt.abort.set()
                    runs.put((value, interrupt))
                elif value in interrupts:
                    (interrupts[value].stop if kind == "stop" else interrupts[value].abort).set()
        except (EOFError, OSError):  # the parent is done with this worker, or gone: no new device starts
            for interrupt in list(interrupts.values()):
                interrupt.stop.set()
                interrupt.abort.set()
            runs.put(None)

    threading.Thread(target=listen, name="fabconf-worker-control", daemon=True).start()
    sender = _Sender(events)
    while (item := runs.get()) is not None:
        run, interrupt = item
        relay = _Relay(sender, run.number)
        args = {**run.args, **({"interrupt": interrupt} if run.interruptible else {})}
        share = [by_name[n] for n in run.names]
        try:
            outcomes = run.here(share, run.task, run.options, [relay], args)
        except Exception as exc:  # a fabconf bug: the devices it had not finished are failed, never green
            text = REDACTOR(
                f"fabconf's worker process failed (a fabconf bug, please report): {type(exc).__name__}: {exc}"
            )
            outcomes = {j.name: Outcome(j.name, j.platform, State.FAILED, message=text) for j in share}
        rest = {name: _sendable(o) for name, o in outcomes.items() if name not in relay.sent}
        parts = {k: v for k, v in run.args.items() if isinstance(v, Gathered)}
        sender.send(("end", run.number, rest, parts))
        interrupts.pop(run.number, None)
    events.close()
