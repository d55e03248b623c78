"""Benchmark: a lab of >= 256 devices on this machine — start time, memory, and a concurrent sweep.

    python bench/bench_lab.py [--hosts 224] [--rails 2] [--workers 64]

Builds a synthetic fabric (bench/genfabric.py), starts every device as a simulator in process, then
opens one connection per device concurrently and reads facts (NAPALM for EOS/NX-OS, fabconf's NVUE
driver for Cumulus, an SSH exec for hosts), and finally runs fabconf's own dry-run diff over all of them.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from genfabric import generate

from fabconf.cli.devices import jobs_for
from fabconf.deploy import rollout
from fabconf.deploy.options import DeviceOptions
from fabconf.lab.orchestrator import Lab
from fabconf.pipeline import compile_inventory


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=224)
    ap.add_argument("--rails", type=int, default=2)
    ap.add_argument("--workers", type=int, default=64)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        size = generate(Path(tmp) / "inv", a.hosts, a.rails)
        compiled = compile_inventory(Path(tmp) / "inv")
        t0 = time.perf_counter()
        lab = Lab(compiled, Path(tmp) / "inv", Path(tmp) / "state", network="127.200.0.0/16", password="bench-pw")
        lab.start()
        started = time.perf_counter() - t0
        print(f"lab: {len(lab.devices)} devices ({size}); started in {started:.1f} s; max RSS {rss_mib():.0f} MiB")
        os.environ.update(FABCONF_USERNAME="fabconf", FABCONF_PASSWORD="bench-pw")
        try:
            compiled_lab = compile_inventory(Path(tmp) / "state" / "inventory")
            jobs = jobs_for(compiled_lab, None)
            t1 = time.perf_counter()
            outcomes = rollout.diff(jobs, DeviceOptions(workers=a.workers))
            elapsed = time.perf_counter() - t1
            states: dict[str, int] = {}
            for o in outcomes:
                states[str(o.state)] = states.get(str(o.state), 0) + 1
            print(
                f"fabconf diff over {len(jobs)} devices with {a.workers} workers: {elapsed:.1f} s "
                f"({1000 * elapsed / len(jobs):.0f} ms/device wall); states {states}; max RSS {rss_mib():.0f} MiB"
            )
            with ThreadPoolExecutor(max_workers=a.workers) as pool:
                t2 = time.perf_counter()
                list(pool.map(lambda d: d.sim.lab_view(), lab.devices.values()))
                print(f"lab_view of every device: {time.perf_counter() - t2:.2f} s")
        finally:
            t3 = time.perf_counter()
            lab.stop()
            print(f"stopped in {time.perf_counter() - t3:.1f} s")


if __name__ == "__main__":
    main()
