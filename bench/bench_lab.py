"""Benchmark: a lab of hundreds of devices on this machine — lab start, a full dry-run diff, a push and a verify.

    python bench/bench_lab.py [--devices 270 | --hosts 224] [--rails 2] [--workers 64] [--host-workers 50]

Builds a synthetic fabric (bench/genfabric.py), starts every device as a simulator in process, then runs
fabconf's own diff, push (one wave per role, no canary) and verify over all of them, one connection per device.
Prints a line per step and, last, one JSON line: devices, seconds and devices_per_s per step, the states, and
the peak RSS of the process (fabconf and the in-process lab together: the lab does not run apart yet).
"""

from __future__ import annotations

import argparse
import json
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
from fabconf.deploy.options import DeviceOptions, PushOptions, VerifyOptions
from fabconf.lab.orchestrator import Lab
from fabconf.pipeline import compile_inventory


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=224)
    ap.add_argument("--devices", type=int, default=0, help="about this many devices (sets --hosts)")
    ap.add_argument("--host-workers", type=int, default=50)
    ap.add_argument("--rails", type=int, default=2)
    ap.add_argument("--workers", type=int, default=64)
    a = ap.parse_args()
    if a.devices:
        a.hosts = max(2, round(a.devices / 1.2))  # genfabric: about 1.2 devices per host at 2 rails
    with tempfile.TemporaryDirectory() as tmp:
        size = generate(Path(tmp) / "inv", a.hosts, a.rails)
        compiled = compile_inventory(Path(tmp) / "inv")
        t0 = time.perf_counter()
        lab = Lab(compiled, Path(tmp) / "inv", Path(tmp) / "state", network="127.200.0.0/16", password="bench-pw")
        lab.start()
        started = time.perf_counter() - t0
        print(f"lab: {len(lab.devices)} devices ({size}); started in {started:.1f} s; max RSS {rss_mib():.0f} MiB")
        os.environ.update(lab.env())
        result: dict[str, object] = {"devices": len(lab.devices), "lab_up_s": round(started, 2)}
        try:
            compiled_lab = compile_inventory(Path(tmp) / "state" / "inventory")
            jobs = rollout.push_order(jobs_for(compiled_lab, None))
            options = DeviceOptions(workers=a.workers, host_workers=a.host_workers)
            everyone = set(compiled_lab.model.devices)
            steps = {
                "diff": lambda: rollout.diff(jobs, options),
                "push": lambda: rollout.push(
                    rollout.plan(jobs, canary=0, batch="100%"), everyone, PushOptions(bgp_wait=60), options
                ),
                "verify": lambda: rollout.verify(jobs, everyone, options, VerifyOptions(bgp_wait=60)),
            }
            for step, run in steps.items():
                t1 = time.perf_counter()
                outcomes = run()
                elapsed = time.perf_counter() - t1
                states: dict[str, int] = {}
                for o in outcomes:
                    states[str(o.state)] = states.get(str(o.state), 0) + 1
                print(
                    f"fabconf {step} over {len(jobs)} devices ({a.workers} switch, {a.host_workers} host workers): "
                    f"{elapsed:.1f} s ({len(jobs) / elapsed:.1f} devices/s); states {states}; "
                    f"max RSS {rss_mib():.0f} MiB"
                )
                result[step] = {
                    "seconds": round(elapsed, 2),
                    "devices_per_s": round(len(jobs) / elapsed, 2),
                    "states": states,
                }
            with ThreadPoolExecutor(max_workers=a.workers) as pool:
                t2 = time.perf_counter()
                list(pool.map(lambda d: d.sim.lab_view(), lab.devices.values()))
                print(f"lab_view of every device: {time.perf_counter() - t2:.2f} s")
        finally:
            t3 = time.perf_counter()
            lab.stop()
            print(f"stopped in {time.perf_counter() - t3:.1f} s")
        result["max_rss_mib"] = round(rss_mib())
        print(json.dumps(result))


if __name__ == "__main__":
    main()
