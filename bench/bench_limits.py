"""Benchmark: how fast an oversized inventory file is refused.

    python bench/bench_limits.py [--entries 200000]

Writes a copy of the example inventory whose hosts.yaml has ``--entries`` GPU hosts (200,000 entries, about
15 MB, some 2.2 million values: past ``fabconf.compile.limits.MAX_NODES``), then times ``fabconf validate`` on it as a
user runs it (a new process, a cold compile cache of its own). Prints the seconds, the exit status and the
problem line; the target is a refusal within seconds (bench/README.md has the figures).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_hosts(path: Path, entries: int) -> int:
    lines = [path.read_text().rstrip("\n"), ""]
    for n in range(entries):
        lines.append(
            f"bulk{n:06d}:\n  hostname: 10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}\n  groups: [gpu_hosts]\n"
            f"  data: {{id: {n + 1000}}}"
        )
    path.write_text("\n".join(lines) + "\n")
    return path.stat().st_size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=200_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        inv = Path(tmp) / "inventory"
        shutil.copytree(ROOT / "inventory", inv)
        size = write_hosts(inv / "hosts.yaml", args.entries)
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(tmp) / "cache")}
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "fabconf", "validate", "-i", str(inv)], capture_output=True, text=True, env=env
        )
        took = time.perf_counter() - started
    problem = next((line for line in proc.stderr.splitlines() if "hosts.yaml" in line), proc.stderr.strip()[:200])
    print(f"{args.entries:,} entries, {size / 1e6:.1f} MB: exit {proc.returncode} in {took:.1f} s: {problem}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
