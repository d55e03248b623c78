"""Benchmark: the start-up of the command line, each run a new process timed from start to exit (issue 42).

    python bench/bench_startup.py [--runs 11] [--inventory inventory]

Measures `fabconf --version` (target <= 0.1 s wall), `fabconf validate` of the example inventory (target
<= 0.3 s wall), `fabconf diff --help` and `fabconf lab status` of a state directory with no lab (no target:
what building the device commands' parser costs), each as the median of ``--runs`` runs after one warm-up
run, with the user+system CPU the children used, and lists the heavy libraries each command imported
(`-X importtime`): a `--version` that loads Jinja2, YAML, NAPALM or Nornir, or a `validate`, `diff --help`
or `lab status` that loads NAPALM, netmiko, paramiko or Nornir, is a regression whatever the clock says.
Prints the machine's load average beside the figures (the 2-core machine is shared). Last, one JSON line.
Exit status 1 when a command loaded a library it must not.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# what each command must not import: the compile stack for --version, the device stack for both
DEVICE_STACK = ("napalm", "nornir", "netmiko", "paramiko")
FORBIDDEN = {
    "version": ("jinja2", "yaml", "jsonschema", *DEVICE_STACK),
    "validate": DEVICE_STACK,
    "diff-help": DEVICE_STACK,
    "lab-status": DEVICE_STACK,
}
# `lab status` of a directory where no lab runs says so and exits 1: the run is timed all the same
EXIT = {"lab-status": 1}
TARGETS: dict[str, float | None] = {"version": 0.1, "validate": 0.3, "diff-help": None, "lab-status": None}


def commands(inventory: Path, state: Path) -> dict[str, list[str]]:
    python = [sys.executable, "-m", "fabconf"]
    return {
        "version": [*python, "--version"],
        "validate": [*python, "validate", "-i", str(inventory)],
        "diff-help": [*python, "diff", "--help"],
        "lab-status": [*python, "lab", "status", "--state", str(state)],
    }


def timed(name: str, argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the child) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    if run.returncode != EXIT.get(name, 0):
        raise SystemExit(f"{' '.join(argv)}: exit {run.returncode}\n{run.stderr.decode()}")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def imported(name: str, argv: list[str]) -> set[str]:
    """The top-level packages a run imported (``-X importtime`` on stderr)."""
    run = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    if run.returncode != EXIT.get(name, 0):
        raise SystemExit(f"{' '.join(argv)}: exit {run.returncode}")
    names = set()
    for line in run.stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--inventory", type=Path, default=ROOT / "inventory")
    args = parser.parse_args()
    results: dict[str, dict[str, float | None]] = {}
    bad = 0
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} cores")
    print(f"{'command':<10} {'wall (s)':>9} {'cpu (s)':>8} {'target':>7}  heavy imports")
    scratch = tempfile.TemporaryDirectory(prefix="fabconf-bench-startup-")
    state = Path(scratch.name) / "lab"  # no lab runs there
    for name, argv in commands(args.inventory, state).items():
        timed(name, argv)  # warm-up: the file cache, the compile cache
        runs = [timed(name, argv) for _ in range(args.runs)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        loaded = imported(name, argv)
        wrong = sorted(set(FORBIDDEN[name]) & loaded)
        bad += bool(wrong)
        heavy = sorted({"jinja2", "yaml", "jsonschema", *DEVICE_STACK} & loaded)
        flag = f"  MUST NOT: {', '.join(wrong)}" if wrong else ""
        target = TARGETS[name]
        shown = "-" if target is None else f"{target:.1f}"
        print(f"{name:<10} {wall:>9.3f} {cpu:>8.3f} {shown:>7}  {', '.join(heavy) or '-'}{flag}")
        results[name] = {"wall_s": round(wall, 4), "cpu_s": round(cpu, 4), "target_s": target}
    scratch.cleanup()
    print(json.dumps({"startup": results, "load": os.getloadavg()[0]}))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
