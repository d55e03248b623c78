"""A lab spread over worker processes, so one busy device cannot starve the others and the lab scales with cores.

``ShardedLab`` has the interface of ``Lab`` that the ``fabconf lab`` daemon uses (start, stop, status, fault,
reset, env, write_state). It plans the lab in the coordinating process (addresses, the CA, credentials, the lab's
inventory) and runs the simulators in ``workers`` processes, each a ``Lab`` of some of the devices
(``Lab(addresses=...)``) whose World holds the whole cabling.

The World is shared by replication: every worker publishes the views of its own devices (what their running
configs say about ports and BGP, ``World.local_views``) when they change, at most every ``PUBLISH_EVERY`` seconds;
the coordinator forwards them to every other worker (``World.set_remote``). LLDP, BGP sessions, routes and ECMP are
then worked out locally in each worker from every device's view, as in one process, a fraction of a second behind
(a real network takes seconds to converge). Faults and resets go to the worker that runs the device.

What needs the simulator object itself, not its view, stays within a worker: ``ib_send_bw`` between two GPU hosts
(``fabconf_lab.perftest``) is answered only when both run in the same worker; ``--workers 1`` keeps every device in
one process for a bandwidth preflight.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import multiprocessing as mp
import os
import sys
import threading
from concurrent.futures import Future
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from fabconf import Compiled
from fabconf_lab import faults
from fabconf_lab.orchestrator import Lab
from fabconf_lab.ports import DevicePorts

PUBLISH_EVERY = 0.1  # seconds between a worker's looks at the views of the devices marked changed (faults.changed)
DEVICES_PER_WORKER = 128  # the default sizing: a worker per this many devices, at most one per core
# the most switches one worker runs (by default; and in a share of ``--workers N`` of three or more): the switches'
# requests, each a TLS connection (pyeapi and napalm's NX-API client open one per request), queue for one GIL in
# one process (1,536 switches in one worker, before the acceptor stopped waiting for each thread to start, left a
# full-size verify's spine304 unanswered for 60 s). Not fewer: every worker that runs switches works the whole
# fabric's BGP sessions and routes out for itself (``World``), so each switch worker more costs that CPU once more;
# with four (384 each) a full-size push spent two cores on it and its NX-OS leaves timed out.
SWITCHES_PER_WORKER = 768
START_TIMEOUT = 300.0
START_PER_DEVICE = 0.05  # seconds more per device of the lab (each worker compiles the whole inventory)
CALLS = ("status", "fault", "reset", "apply_from")  # what the coordinator may ask a worker's Lab


def default_workers(devices: int, switches: int = 0) -> int:
    """A worker per ``DEVICES_PER_WORKER`` devices, at most one per core (1: the lab runs in one process); once the
    lab is spread, its ``switches`` a worker per ``SWITCHES_PER_WORKER`` of them, past the cores if need be."""
    spread = max(1, min(os.cpu_count() or 1, math.ceil(devices / DEVICES_PER_WORKER)))
    if spread < 2:
        return spread
    return max(spread, switch_workers(switches) + (1 if devices > switches else 0))


def switch_workers(switches: int) -> int:
    """The fewest workers that run ``switches`` switches, ``SWITCHES_PER_WORKER`` at most in each."""
    return math.ceil(switches / SWITCHES_PER_WORKER)


def shares(names: list[str], hosts: set[str], workers: int) -> list[list[str]]:
    """Which devices each worker runs. With two workers or more, switches and GPU hosts run in different workers
    (switches in their share of them by count, at least one, and at least one per ``SWITCHES_PER_WORKER`` while a
    worker is left for the hosts): a host's SSH server costs far more CPU per request
    than a switch's HTTPS API, and in one process ~100 busy SSH sessions held the GIL long enough that a switch's
    plain GET waited 60 s (1,024 lab devices, verify). Within a kind, devices are interleaved, so each worker gets
    its share of every tier and platform."""
    count = max(1, min(workers, len(names)))
    switches = [n for n in names if n not in hosts]
    gpu_hosts = [n for n in names if n in hosts]
    if count < 2 or not switches or not gpu_hosts:
        return [names[i::count] for i in range(count)]
    by_count = round(count * len(switches) / len(names))
    for_switches = max(1, min(count - 1, max(by_count, switch_workers(len(switches)))))
    for_hosts = count - for_switches
    return [switches[i::for_switches] for i in range(for_switches)] + [
        gpu_hosts[i::for_hosts] for i in range(for_hosts)
    ]


class _Worker:
    """The coordinator's end of one worker process."""

    def __init__(self, index: int, names: list[str], process: Any, conn: Connection) -> None:
        self.index, self.names, self.process, self.conn = index, names, process, conn
        self.send_lock = threading.Lock()
        self.ready: Future[dict[str, list[str]]] = Future()
        self.pending: dict[int, Future[Any]] = {}
        self.alive = True

    def send(self, message: tuple[Any, ...]) -> None:
        with self.send_lock:
            self.conn.send(message)


class ShardedLab(Lab):
    """Simulators for every device of a compiled inventory, run by ``workers`` processes."""

    def __init__(
        self,
        compiled: Compiled,
        inventory_dir: Path,
        state_dir: Path,
        *,
        workers: int,
        **kwargs: Any,
    ) -> None:
        super().__init__(compiled, inventory_dir, state_dir, build=False, **kwargs)
        self._shares = shares(
            sorted(self.addresses), {n for n in self.addresses if compiled.model.devices[n].is_host}, workers
        )
        self._workers: list[_Worker] = []
        self._owner: dict[str, _Worker] = {}
        self._ids = itertools.count(1)
        self._host_keys: dict[str, list[str]] = {}  # known_hosts lines, by device

    # -- lifecycle ---------------------------------------------------------------------------------------
    def start(self, *, write_state: bool = True) -> None:
        ctx = mp.get_context("spawn")  # never fork a process that may hold locks of other threads
        for index, share in enumerate(self._shares):
            ours, theirs = ctx.Pipe()
            process = ctx.Process(
                target=_worker_main,
                name=f"fabconf-lab-{index}",
                args=(
                    theirs,
                    str(self.inventory_dir),
                    str(self.state_dir),
                    {n: self.addresses[n] for n in share},
                    {n: self.ports[n] for n in share},
                    self.username,
                    self.password,
                ),
                daemon=True,
            )
            process.start()
            theirs.close()
            worker = _Worker(index, share, process, ours)
            self._workers.append(worker)
            for name in share:
                self._owner[name] = worker
            threading.Thread(target=self._listen, args=(worker,), name=f"lab-shard-{index}", daemon=True).start()
        lines: dict[str, list[str]] = {}
        try:
            for worker in self._workers:
                lines |= worker.ready.result(timeout=START_TIMEOUT + START_PER_DEVICE * len(self.addresses))
        except BaseException:
            self.stop()
            raise
        self._host_keys = lines
        if write_state:
            self.write_state()

    def stop(self) -> None:
        for worker in self._workers:
            with contextlib.suppress(OSError, ValueError):
                worker.send(("stop",))
        for worker in self._workers:
            worker.process.join(timeout=30)
            if worker.process.is_alive():
                worker.process.terminate()
                worker.process.join(timeout=5)
        self._workers = []

    # -- what the daemon asks --------------------------------------------------------------------------
    def status(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for worker in self._workers:
            rows += self._call(worker, "status")
        return sorted(rows, key=lambda r: r["name"])

    def fault(self, name: str, kind: str, arg: str | None = None, **step: Any) -> list[str]:
        result: list[str] = self._call(self._worker_of(name), "fault", name, kind, arg, **step)
        return result

    def reset(self, name: str) -> Any:
        self._call(self._worker_of(name), "reset", name)

    def host_key_lines(self) -> list[str]:
        return [line for lines in self._host_keys.values() for line in lines]

    def _follow(
        self,
        compiled: Compiled,
        inventory_dir: Path,
        placed: dict[str, tuple[str, DevicePorts]],
        removed: list[str],
        root: Path,
    ) -> None:
        """``Lab._follow`` over the workers: each new device starts in a worker of its kind (switches or GPU hosts)
        that runs the fewest devices, every worker takes the new cabling, and only once every new device runs are
        the removed ones stopped (a worker that cannot start its share puts the others back)."""
        owner = self._choose_workers(compiled, sorted(placed))
        done: list[tuple[_Worker, list[str]]] = []
        try:
            for worker in self._workers:
                mine = {n: placed[n] for n in placed if owner[n] is worker}
                lines = self._call(worker, "apply_from", str(inventory_dir), mine, [], str(root))
                done.append((worker, sorted(mine)))
                self._host_keys.update(lines)
        except BaseException:
            for worker, names in done:
                with contextlib.suppress(Exception):
                    self._call(worker, "apply_from", str(self.inventory_dir), {}, names, str(self.state_dir))
            raise
        for worker in self._workers:
            self._call(worker, "apply_from", str(inventory_dir), {}, removed, str(root))
        for name, (address, ports) in placed.items():
            self.addresses[name], self.ports[name] = address, ports
            self._owner[name] = owner[name]
            owner[name].names.append(name)
        for name in removed:
            worker = self._owner.pop(name, None)
            if worker is not None and name in worker.names:
                worker.names.remove(name)
            self._host_keys.pop(name, None)
            self.addresses.pop(name, None)
            self.ports.pop(name, None)
            self.slots.pop(name, None)
        self.world.recable([(lk.a.device, lk.a.port, lk.b.device, lk.b.port) for lk in compiled.model.links])

    def _choose_workers(self, compiled: Compiled, names: list[str]) -> dict[str, _Worker]:
        """The worker each new device runs in: one of its kind (``shares``), the one with the fewest devices."""
        model = compiled.model
        hosts = {n for n, d in model.devices.items() if d.is_host} | {
            n for n in self.addresses if n in self.compiled.model.devices and self.compiled.model.devices[n].is_host
        }
        load = {id(w): len(w.names) for w in self._workers}
        out: dict[str, _Worker] = {}
        for name in names:
            kind = name in hosts
            same = [w for w in self._workers if w.names and all((n in hosts) == kind for n in w.names)]
            pool = same or self._workers
            chosen = min(pool, key=lambda w: (load[id(w)], w.index))
            load[id(chosen)] += 1
            out[name] = chosen
        return out

    def host_keys_of(self, name: str) -> list[str]:
        return list(self._host_keys.get(name, []))

    @property
    def workers(self) -> int:
        return len(self._shares)

    def pids(self) -> list[int]:
        return [w.process.pid for w in self._workers if w.process.pid is not None]

    # -- internals ---------------------------------------------------------------------------------------
    def _worker_of(self, name: str) -> _Worker:
        worker = self._owner.get(name)
        if worker is None:
            raise KeyError(f"no lab device {name!r}")
        return worker

    def _call(self, worker: _Worker, method: str, *args: Any, **kwargs: Any) -> Any:
        if not worker.alive:
            raise RuntimeError(f"lab worker {worker.index} has stopped")
        call_id = next(self._ids)
        future: Future[Any] = Future()
        worker.pending[call_id] = future
        worker.send(("call", call_id, method, args, kwargs))
        return future.result(timeout=60)

    def _listen(self, worker: _Worker) -> None:
        """Read one worker: its readiness, its views (forwarded to every other worker) and its replies."""
        while True:
            try:
                message = worker.conn.recv()
            except (EOFError, OSError):
                break
            kind = message[0]
            if kind == "views":
                for other in self._workers:
                    if other is not worker and other.alive:
                        with contextlib.suppress(OSError, ValueError):
                            other.send(message)
            elif kind == "reply":
                _, call_id, ok, value = message
                future = worker.pending.pop(call_id, None)
                if future is not None:
                    if ok:
                        future.set_result(value)
                    else:
                        future.set_exception(value)
            elif kind == "ready":
                worker.ready.set_result(message[1])
            elif kind == "failed":
                worker.ready.set_exception(RuntimeError(f"lab worker {worker.index} did not start: {message[1]}"))
        worker.alive = False
        if not worker.ready.done():
            worker.ready.set_exception(RuntimeError(f"lab worker {worker.index} exited while starting"))
        for future in worker.pending.values():
            if not future.done():
                future.set_exception(RuntimeError(f"lab worker {worker.index} has stopped"))


# -- the worker process ----------------------------------------------------------------------------------
def _worker_main(
    conn: Connection,
    inventory: str,
    state: str,
    addresses: dict[str, str],
    ports: dict[str, DevicePorts],
    username: str,
    password: str,
) -> None:
    from fabconf import compile_inventory
    from fabconf_lab import heap
    from fabconf_lab.acceptor import favour_connections
    from fabconf_lab.daemon import _quiet_libraries

    _quiet_libraries()
    favour_connections()
    faults.track_changes()  # the publisher below takes every change mark
    try:
        compiled = compile_inventory(Path(inventory))
        lab = Lab(
            compiled,
            Path(inventory),
            Path(state),
            username=username,
            password=password,
            addresses=addresses,
            ports=ports,
        )
        lab.start(write_state=False)
    except Exception as exc:  # the coordinator reports it; nothing else would see it
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    heap.settle()  # thousands of simulators that live as long as this process: out of every full collection
    send_lock = threading.Lock()
    stopping = threading.Event()

    def send(message: tuple[Any, ...]) -> None:
        with send_lock:
            conn.send(message)

    full = threading.Event()  # the next look is at every device (a daemon call: a reset, a fault, new devices)

    def publish() -> None:
        """Send the views that changed. Whatever may change a view marks its device (``Faults.changed``): the end
        of each request, a commit timer running out, a background apply, a reboot coming back; a daemon call
        (``_answer``) asks for a look at every device. Each look is at the marked devices only, so its cost follows
        the changes, not the lab's size; an idle worker sleeps until the next mark."""
        last: dict[str, Any] = dict(first)
        owners: dict[int, str] = {}  # id(Faults) -> device, rebuilt when a mark is not found in it
        while not stopping.is_set():
            faults.ACTIVITY.wait()
            if stopping.is_set():
                return
            faults.ACTIVITY.clear()  # a mark from now on sets it again
            everyone = full.is_set()
            full.clear()
            marked = faults.take_changed()
            devices = dict(lab.devices)
            if everyone or any(owners.get(id(f)) not in devices for f in marked):
                owners = {id(dev.sim.faults): name for name, dev in devices.items()}
            names = list(devices) if everyone else {owners[id(f)] for f in marked if id(f) in owners}
            views = {}
            for name in names:
                dev = devices.get(name)
                if dev is not None:
                    views[name] = dev.sim.lab_view()
            changed = {name: view for name, view in views.items() if last.get(name) != view}
            if changed:
                last.update(changed)
                with contextlib.suppress(OSError, ValueError):
                    send(("views", changed))
            stopping.wait(PUBLISH_EVERY)  # at most one look per PUBLISH_EVERY while marks come in

    # the first views go out before "ready", so every worker knows every device once the lab is up
    first = lab.world.local_views()
    send(("views", first))
    send(("ready", {name: lab.host_keys_of(name) for name in lab.devices}))
    threading.Thread(target=publish, name="lab-publish", daemon=True).start()
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message[0] == "stop":
                break
            if message[0] == "views":
                lab.world.set_remote(message[1])
            elif message[0] == "call":
                _, call_id, method, args, kwargs = message
                threading.Thread(
                    target=_answer, args=(lab, send, full, call_id, method, args, kwargs), daemon=True
                ).start()
    finally:
        stopping.set()
        faults.ACTIVITY.set()  # wakes the publisher to leave
        lab.stop()
        with contextlib.suppress(OSError):
            conn.close()
    # every device is stopped: leave now rather than wait for library threads (paramiko, the servers' pools)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _answer(
    lab: Lab,
    send: Any,
    full: threading.Event,
    call_id: int,
    method: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    try:
        if method not in CALLS:
            raise ValueError(f"unknown lab call {method!r}")
        value = getattr(lab, method)(*args, **kwargs)
        if method != "status":  # a link fault, a reset (a new simulator), new devices: look at every view next round
            full.set()
            faults.ACTIVITY.set()
        if method == "reset":
            value = None  # a simulator stays in its process
        reply: tuple[Any, ...] = ("reply", call_id, True, value)
    except Exception as exc:
        reply = ("reply", call_id, False, exc)
    try:
        send(reply)
    except Exception as exc:  # an unpicklable error: say what it was
        send(("reply", call_id, False, RuntimeError(f"{type(exc).__name__}: {exc}")))
