"""Benchmark: the start-up of the command line, each run a new process timed from start to exit (issue 42).

    python bench/bench_startup.py [--runs 11] [--inventory inventory]

Measures `fabconf --version` (target <= 0.1 s wall) and `fabconf validate` of the example inventory (target
<= 0.3 s wall), each as the median of ``--runs`` runs after one warm-up run, with the user+system CPU the
children used, and lists the heavy libraries each command imported (`-X importtime`): a `--version` that
loads Jinja2, YAML, NAPALM or Nornir, or a `validate` that loads NAPALM or Nornir, is a regression whatever
the clock says. Prints the machine's load average beside the figures (the 2-core machine is shared). Last,
one JSON line. Exit status 1 when a command loaded a library it must not.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# what each command must not import: the compile stack for --version, the device stack for both
DEVICE_STACK = ("napalm", "nornir", "netmiko", "paramiko")
FORBIDDEN = {
    "version": ("jinja2", "yaml", "jsonschema", *DEVICE_STACK),
    "validate": DEVICE_STACK,
}
TARGETS = {"version": 0.1, "validate": 0.3}


def commands(inventory: Path) -> dict[str, list[str]]:
    python = [sys.executable, "-m", "fabconf"]
    return {"version": [*python, "--version"], "validate": [*python, "validate", "-i", str(inventory)]}


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the child) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def imported(argv: list[str]) -> set[str]:
    """The top-level packages a run imported (``-X importtime`` on stderr)."""
    run = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
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
    results: dict[str, dict[str, float]] = {}
    bad = 0
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} cores")
    print(f"{'command':<10} {'wall (s)':>9} {'cpu (s)':>8} {'target':>7}  heavy imports")
    for name, argv in commands(args.inventory).items():
        timed(argv)  # warm-up: the file cache, the compile cache
        runs = [timed(argv) for _ in range(args.runs)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        loaded = imported(argv)
        wrong = sorted(set(FORBIDDEN[name]) & loaded)
        bad += bool(wrong)
        heavy = sorted({"jinja2", "yaml", "jsonschema", *DEVICE_STACK} & loaded)
        flag = f"  MUST NOT: {', '.join(wrong)}" if wrong else ""
        print(f"{name:<10} {wall:>9.3f} {cpu:>8.3f} {TARGETS[name]:>7.1f}  {', '.join(heavy) or '-'}{flag}")
        results[name] = {"wall_s": round(wall, 4), "cpu_s": round(cpu, 4), "target_s": TARGETS[name]}
    print(json.dumps({"startup": results, "load": os.getloadavg()[0]}))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
