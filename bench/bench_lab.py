"""Benchmark: fabconf against a lab of hundreds to thousands of devices — lab up, a full dry-run diff, a push, a
verify, then a second push (nothing to change) and a last diff, to show memory and connections stay flat.

    python bench/bench_lab.py --devices 256 [--workers 100] [--host-workers 100] [--push-workers N]
        [--push-host-workers N] [--lab-workers 0] [--rails 2]
        [--steps diff,push,verify] [--budget diff=120,verify=180] [--stop-over-budget] [--progress-every 30]
        [--idle-seconds 10] [--processes N]

Builds a synthetic fabric (bench/genfabric.py), starts it as a lab with ``fabconf lab up`` (its own processes:
``--lab-workers`` simulator processes, 0 = sized to the machine), then runs fabconf's own diff, push (one wave per
role, no canary) and verify over every device, one connection per device: the push in this process, diff and verify
over it and its worker processes as ``fabconf diff`` does (``--processes N``; ``fabconf.deploy.processes``). Prints a
line per step and, last, one JSON line: devices, seconds and devices_per_s per step, the states, how many devices
were tried again after a timeout (within their budget; the outcome says so), this process's RSS and open sockets after
each step, the CPU time per device of fabconf (its workers included) and of the lab in each step (who is the bottleneck
when both share the machine), and the peak RSS of fabconf (this process) and of the lab (all its processes).
What the libraries log goes to fabconf's log file (``FABCONF_LOG``), as for the CLI. Before the first step, the lab at
rest: each of its processes' share of a core over ``--idle-seconds`` and its threads, and how long ``status`` takes.

While a step runs, a progress line every ``--progress-every`` seconds: devices done, their states, the rate, the time
left at that rate, fabconf's and the lab's RSS. ``--budget STEP=SECONDS,...`` gives steps a time budget: a step past
its budget is said so at once and in its JSON entry, and the run exits non-zero; with ``--stop-over-budget`` no new
device starts once the budget is spent (those in flight finish: a push never leaves a device half-applied; the rest
are untouched) and no later step runs, so a run that cannot meet its targets ends instead of running for hours.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from genfabric import fabric_size, generate

from fabconf.cli.lab import start_lab
from fabconf.cli.main import quiet_libraries
from fabconf.compile.pipeline import compile_inventory
from fabconf.deploy import processes, rollout
from fabconf.deploy.interrupt import Interrupt
from fabconf.deploy.options import DeviceOptions, PushOptions, VerifyOptions
from fabconf.jobs.target import jobs_for
from fabconf_lab import daemon


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _status_kib(pid: int | str, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_s(pid: int | str = "self") -> float:
    """User + system CPU seconds a process has used (``/proc/PID/stat``), 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fabconf_cpu_s(workers: list[int]) -> float:
    """CPU seconds of fabconf: this process and its worker processes (``fabconf.deploy.processes``)."""
    return cpu_s() + sum(cpu_s(pid) for pid in workers)


def rss_mib() -> float:
    return _status_kib("self", "VmRSS") / 1024


def open_sockets() -> int:
    """This process's open sockets (a connection left open after a step shows here)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    return count


def lab_rss_mib(pids: list[int]) -> float:
    return sum(_status_kib(p, "VmRSS") for p in pids) / 1024


def parse_budget(text: str, known: list[str]) -> dict[str, float]:
    """``diff=120,verify=180`` -> {"diff": 120.0, "verify": 180.0}; SystemExit for a malformed entry or a step
    that is not known."""
    budget: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        step, _, seconds = part.partition("=")
        try:
            budget[step] = float(seconds)
        except ValueError:
            sys.exit(f"--budget {part}: expected STEP=SECONDS")
        if step not in known or budget[step] <= 0:
            sys.exit(f"--budget {part}: expected a positive number of seconds for one of {', '.join(known)}")
    return budget


class StepProgress:
    """Counts the devices a step has done (``fabconf.deploy.processors.Progress``) and prints a progress line every
    ``every`` seconds; past ``budget`` seconds it says so once and, with ``stop``, stops the step (``interrupt``: no
    new device starts; those in flight finish)."""

    def __init__(self, step: str, total: int, lab_pids: list[int], every: float, budget: float | None, stop: bool):
        self.step, self.total, self.lab_pids, self.every = step, total, lab_pids, every
        self.budget, self.stop = budget, stop
        self.interrupt = Interrupt()
        self.states: dict[str, int] = {}
        self.done_count = 0
        self.over = False
        self._lock = threading.Lock()
        self._finished = threading.Event()
        self._t0 = time.perf_counter()
        self._thread = threading.Thread(target=self._loop, name="bench-progress", daemon=True)

    def started(self, device: str) -> None:
        return None

    def done(self, outcome: Any) -> None:
        with self._lock:
            self.done_count += 1
            self.states[str(outcome.state)] = self.states.get(str(outcome.state), 0) + 1

    def __enter__(self) -> StepProgress:
        self._t0 = time.perf_counter()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._finished.set()
        self._thread.join()

    def _loop(self) -> None:
        next_line = self.every
        while not self._finished.wait(1.0):
            elapsed = time.perf_counter() - self._t0
            if self.budget is not None and elapsed > self.budget and not self.over:
                self.over = True
                then = "no new device starts" if self.stop else "it runs on (--stop-over-budget stops it)"
                print(f"  {self.step}: past its budget of {self.budget:.0f} s: {then}", flush=True)
                if self.stop:
                    self.interrupt.stop.set()
            if elapsed >= next_line:
                next_line += self.every
                with self._lock:
                    done, states = self.done_count, dict(self.states)
                rate = done / elapsed
                left = f"{(self.total - done) / rate:.0f} s" if rate else "?"
                print(
                    f"  {self.step}: {done}/{self.total} devices done in {elapsed:.0f} s ({rate:.1f}/s, about {left} "
                    f"left); {states}; RSS fabconf {rss_mib():.0f} MiB, lab {lab_rss_mib(self.lab_pids):.0f} MiB",
                    flush=True,
                )


def _lab_pids(state: Path) -> list[int]:
    """The lab's processes: the daemon's answer, or (a status the daemon could not give in time: at 5,632 devices
    its workers' ``status`` passed 60 s) the daemon recorded in ``daemon.json`` and its children, from /proc."""
    try:
        pids = daemon.request(state, {"cmd": "status"}).get("pids")
    except ConnectionError:
        pids = None
    if pids:
        return [int(p) for p in pids]
    print("the lab's status did not answer in time: its processes read from /proc", flush=True)
    root = int(json.loads((state / daemon.DAEMON).read_text())["pid"])
    children = Path(f"/proc/{root}/task/{root}/children").read_text().split()
    return [root, *(int(c) for c in children)]


def idle_lab(state: Path, lab_pids: list[int], seconds: float) -> dict[str, Any]:
    """The lab at rest before the first step: each process's share of a core over ``seconds`` and its threads, and
    how long the daemon's ``status`` takes (it asks every worker); printed, and returned for the JSON line."""
    before, t0 = {p: cpu_s(p) for p in lab_pids}, time.perf_counter()
    time.sleep(seconds)
    elapsed = time.perf_counter() - t0
    shares = [round(100 * (cpu_s(p) - before[p]) / elapsed, 1) for p in lab_pids]
    threads = [len(os.listdir(f"/proc/{p}/task")) if Path(f"/proc/{p}").exists() else 0 for p in lab_pids]
    t1 = time.perf_counter()
    try:
        daemon.request(state, {"cmd": "status"})
        status_s: float | None = round(time.perf_counter() - t1, 2)
    except ConnectionError:
        status_s = None
    load = os.getloadavg()[0]
    print(
        f"lab idle over {elapsed:.0f} s: CPU {' / '.join(f'{c:g} %' for c in shares)} of a core, threads "
        f"{' / '.join(map(str, threads))} (daemon, workers); status {status_s} s; load average {load:.1f}",
        flush=True,
    )
    return {
        "lab_idle_cpu_pct_by_process": shares,
        "lab_threads_by_process": threads,
        "lab_status_s": status_s,
        "load_average_idle": round(load, 1),
    }


def lab_errors(state: Path) -> list[str]:
    """One entry per traceback in the lab's log (``STATE/lab.log``, gone with the benchmark's temporary directory),
    the exception lines first: a simulator that raised in a session's thread leaves no other trace in the figures
    (issue 42: the 4-6 GPU hosts rolled back in each full-size push were sessions killed this way). Threads print
    their tracebacks interleaved, so the exception lines are not paired with their tracebacks."""
    try:
        lines = (state / "lab.log").read_text(errors="replace").splitlines()
    except OSError:
        return []
    count = sum(1 for line in lines if line.startswith("Traceback (most recent call last)"))
    raised = [line.strip() for line in lines if _RAISED.match(line)]
    return (raised + ["(exception line not found)"] * count)[:count]


_RAISED = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b")


def hosts_for(devices: int, rails: int) -> int:
    """The number of GPU hosts whose genfabric fabric has about ``devices`` devices (hosts, leaves, spines)."""
    hosts = max(2, devices)
    while hosts > 2 and sum(fabric_size(hosts, rails).values()) > devices:
        hosts -= 1
    return hosts


def socket_peers() -> list[str]:
    """Where this process's open TCP connections go (remote address:port, state)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            link = os.readlink(f"/proc/self/fd/{fd}")
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    peers = []
    for line in Path("/proc/self/net/tcp").read_text().splitlines()[1:]:
        cols = line.split()
        if cols[9] in inodes:
            addr, port = cols[2].split(":")
            ip = ".".join(str(int(addr[i : i + 2], 16)) for i in (6, 4, 2, 0))
            peers.append(f"{ip}:{int(port, 16)} state {cols[3]}")
    return sorted(peers)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, default=270, help="about this many devices")
    ap.add_argument("--rails", type=int, default=2)
    ap.add_argument("--workers", type=int, default=100, help="switches at once")
    ap.add_argument("--host-workers", type=int, default=100, help="GPU hosts at once")
    ap.add_argument("--push-workers", type=int, help="switches at once in a push (default: --workers)")
    ap.add_argument("--push-host-workers", type=int, help="GPU hosts at once in a push (default: --host-workers)")
    ap.add_argument("--lab-workers", type=int, default=0, help="lab processes (0: sized to the machine)")
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument(
        "--processes", type=int, default=None, help="diff and verify in N processes (default: as fabconf decides)"
    )
    ap.add_argument("--network", default="127.200.0.0/16")
    ap.add_argument(
        "--steps", default="diff,push,verify,push_again,diff_again", help="which steps, in this order (comma-separated)"
    )
    ap.add_argument("--budget", default="", help="time budgets, STEP=SECONDS,... (e.g. diff=120,verify=180)")
    ap.add_argument("--stop-over-budget", action="store_true", help="a step past its budget starts no new device")
    ap.add_argument("--progress-every", type=float, default=30.0, help="seconds between progress lines of a step")
    ap.add_argument("--idle-seconds", type=float, default=10.0, help="seconds the idle lab's CPU is measured over")
    a = ap.parse_args()
    budget = parse_budget(a.budget, ["diff", "push", "verify", "push_again", "diff_again"])
    hosts = hosts_for(a.devices, a.rails)
    with tempfile.TemporaryDirectory() as tmp:
        inv, state = Path(tmp) / "inv", Path(tmp) / "state"
        size = generate(inv, hosts, a.rails)
        t0 = time.perf_counter()
        if start_lab(inv, state, a.network, quiet=True, workers=a.lab_workers) != 0:
            sys.exit("the lab did not start")
        started = time.perf_counter() - t0
        result: dict[str, Any] = {"lab_up_s": round(started, 2)}
        stack = contextlib.ExitStack()
        try:
            lab_pids = _lab_pids(state)
            result["lab_processes"] = len(lab_pids)
            print(f"lab: {size}; up in {started:.1f} s in {len(lab_pids)} process(es)", flush=True)
            result |= idle_lab(state, lab_pids, a.idle_seconds)
            env = (line.partition("=") for line in (state / "lab.env").read_text().splitlines())
            os.environ.update({key: value for key, _, value in env})
            compiled = compile_inventory(state / "inventory")
            jobs = rollout.push_order(jobs_for(compiled, None))
            result["devices"] = len(jobs)
            options = DeviceOptions(
                workers=a.workers, host_workers=a.host_workers, timeout=a.timeout, processes=a.processes
            )
            # a push waits on commit timers and BGP, not on CPU: it may want more devices at once than diff and verify
            push_options = DeviceOptions(
                workers=a.push_workers or a.workers,
                host_workers=a.push_host_workers or a.host_workers,
                timeout=a.timeout,
                processes=a.processes,
            )
            everyone = set(compiled.model.devices)
            # diff and verify's worker processes, forked now: no other thread runs yet (fabconf.deploy.processes)
            split = stack.enter_context(processes.forked(jobs, options))
            workers = split.pids() if split is not None else []
            result["processes"] = 1 + len(workers)

            def push(progress: StepProgress) -> list[Any]:
                waves = rollout.plan(jobs, canary=0, batch="100%")
                return rollout.push(
                    waves, everyone, PushOptions(bgp_wait=60), push_options, progress, interrupt=progress.interrupt
                )

            def diff(progress: StepProgress) -> list[Any]:
                return rollout.diff(jobs, options, progress, interrupt=progress.interrupt, split=split)

            def verify(progress: StepProgress) -> list[Any]:
                vopts = VerifyOptions(bgp_wait=60)
                return rollout.verify(
                    jobs, everyone, options, vopts, progress, interrupt=progress.interrupt, split=split
                )

            steps = [("diff", diff), ("push", push), ("verify", verify), ("push_again", push), ("diff_again", diff)]
            quiet_libraries()  # as the CLI does: what the libraries log goes to FABCONF_LOG, not the terminal
            known = dict(steps)
            unknown = [s for s in a.steps.split(",") if s not in known]
            if unknown:
                sys.exit(f"unknown step(s): {', '.join(unknown)}; known: {', '.join(known)}")
            steps = [(s, known[s]) for s in a.steps.split(",")]
            for step, run in steps:
                t1, mine, labs = time.perf_counter(), fabconf_cpu_s(workers), sum(cpu_s(p) for p in lab_pids)
                watch = StepProgress(step, len(jobs), lab_pids, a.progress_every, budget.get(step), a.stop_over_budget)
                with watch:
                    outcomes = run(watch)
                elapsed = time.perf_counter() - t1
                mine, labs = fabconf_cpu_s(workers) - mine, sum(cpu_s(p) for p in lab_pids) - labs
                states: dict[str, int] = {}
                for o in outcomes:
                    states[str(o.state)] = states.get(str(o.state), 0) + 1
                retried = sum(1 for o in outcomes if "tried again after" in str(o.message))
                sockets, rss = open_sockets(), rss_mib()
                used = push_options if step.startswith("push") else options
                print(
                    f"fabconf {step} over {len(jobs)} devices ({used.workers} "
                    f"switch, {used.host_workers} host workers, "
                    f"{1 + len(workers)} process(es)): "
                    f"{elapsed:.1f} s ({len(jobs) / elapsed:.1f} devices/s); states {states}; retried {retried}; "
                    f"RSS {rss:.0f} MiB; open sockets {sockets}; CPU per device: fabconf "
                    f"{1000 * mine / len(jobs):.0f} ms, lab {1000 * labs / len(jobs):.0f} ms; load average "
                    f"{os.getloadavg()[0]:.1f}",
                    flush=True,
                )
                for o in outcomes:
                    if str(o.state) not in ("applied", "unchanged", "verified", "changes"):
                        print(f"  {o.device}: {o.state}: {' '.join(str(o.message).split())[:300]}", flush=True)
                        for check in o.checks[:3]:
                            print(f"    {' '.join(str(check).split())[:300]}", flush=True)
                if sockets > 1:
                    print(f"  open sockets: {socket_peers()}", flush=True)
                errors = lab_errors(state)
                if errors:
                    print(f"  lab.log: {len(errors)} traceback(s) in the lab by now, e.g. {errors[0]}", flush=True)
                result[step] = {
                    "seconds": round(elapsed, 2),
                    "devices_per_s": round(len(jobs) / elapsed, 2),
                    "states": states,
                    "retried": retried,
                    "rss_mib": round(rss),
                    "open_sockets": sockets,
                    "fabconf_cpu_ms_per_device": round(1000 * mine / len(jobs), 1),
                    "lab_cpu_ms_per_device": round(1000 * labs / len(jobs), 1),
                    "lab_rss_mib": round(lab_rss_mib(lab_pids)),
                    "load_average": round(os.getloadavg()[0], 1),
                    "lab_tracebacks": len(errors),
                }
                if step in budget:
                    result[step] |= {"budget_s": budget[step], "within_budget": elapsed <= budget[step]}
                    if elapsed > budget[step]:
                        print(f"  {step}: {elapsed:.1f} s, over its budget of {budget[step]:.0f} s", flush=True)
                        if a.stop_over_budget:
                            break
            result["fabconf_peak_rss_mib"] = round(peak_rss_mib())
            result["lab_peak_rss_mib"] = round(sum(_status_kib(p, "VmHWM") for p in lab_pids) / 1024)
            result["lab_peak_rss_mib_by_process"] = [round(_status_kib(p, "VmHWM") / 1024) for p in lab_pids]
        finally:
            stack.close()  # the worker processes end before the lab stops
            t3 = time.perf_counter()
            daemon.stop(state)
            print(f"lab stopped in {time.perf_counter() - t3:.1f} s", flush=True)
        print(json.dumps(result))
    ok = {"applied", "unchanged", "verified", "changes"}
    lost = [step for step, _ in steps if set(result.get(step, {}).get("states", {})) - ok]
    over = [step for step, _ in steps if result.get(step, {}).get("within_budget") is False]
    broke = [step for step, _ in steps if result.get(step, {}).get("lab_tracebacks")]
    if lost or over or broke:
        sys.exit(
            "; ".join(
                ([f"devices failed in: {', '.join(lost)}"] if lost else [])
                + ([f"over budget: {', '.join(over)}"] if over else [])
                + ([f"the lab raised by the end of: {', '.join(broke)}"] if broke else [])
            )
        )


if __name__ == "__main__":
    main()
