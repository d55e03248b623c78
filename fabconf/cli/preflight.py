"""``fabconf preflight``: read-only cluster checks before a training job (``fabconf.preflight``), in one report.

Exit 0 when every check passes, 2 when a check fails, 1 when a device could not be checked.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
from pathlib import Path
from typing import Any

from fabconf.cli import checks_report, report
from fabconf.cli.devices import (
    EXIT_INTERRUPTED,
    Target,
    add_device_args,
    add_report_args,
    device_options_of,
    interruptible,
    prepare,
    progress,
    target_of,
)
from fabconf.compile.pipeline import Compiled
from fabconf.deploy import rollout
from fabconf.deploy.backup import atomic_write
from fabconf.deploy.credentials import REDACTOR
from fabconf.deploy.job import Outcome
from fabconf.deploy.options import DeviceOptions
from fabconf.deploy.tasks import open_driver
from fabconf.drivers.linux.parse import ParseError
from fabconf.errors import UsageError
from fabconf.preflight import bandwidth, nccl
from fabconf.preflight.fleet import uniform_firmware
from fabconf.preflight.policy import Policy
from fabconf.preflight.steps import PreflightContext, preflight_task

FORMATS = ("text", "json", "junit", "prometheus")


def intended_speeds(compiled: Compiled) -> dict[str, dict[str, int]]:
    """Per switch, the Gb/s each cabled interface should run at (the link's speed)."""
    out: dict[str, dict[str, int]] = {}
    for name, data in compiled.data.items():
        for itf in data.get("interfaces", []) if isinstance(data, dict) else []:
            peer, _, peer_port = str(itf.get("peer", "")).partition(":")
            out.setdefault(name, {})[itf["name"]] = compiled.model.link_speed(name, itf["name"], peer, peer_port)
    return out


def check(target: Target, options: DeviceOptions, fmt: str = "text") -> tuple[list[Outcome], int, float, float]:
    compiled, jobs = prepare(target, options)
    policy = Policy.of(compiled.model.fabric)
    ctx = PreflightContext(policy, intended_speeds(compiled))
    started, clock = time.time(), time.monotonic()
    with interruptible() as interrupt, progress("preflight", jobs, fmt) as shown:
        outcomes = rollout.run(jobs, preflight_task, options, shown, interrupt=interrupt, ctx=ctx)
    if policy.firmware is None:
        uniform_firmware(outcomes, ctx.firmware)
    code = EXIT_INTERRUPTED if interrupt.stopping else checks_report.exit_code(outcomes)
    return outcomes, code, started, time.monotonic() - clock


def evidence_text(outcomes: list[Outcome]) -> str:
    """The values each check read, per device (passed or not): ``DEVICE CHECK: {command: value}``, one line each."""
    lines = [
        f"{o.device} {check}: {json.dumps(values, sort_keys=True, separators=(',', ':'))}\n"
        for o in outcomes
        for check, values in sorted(o.evidence.items())
    ]
    return ("\nValues read per check:\n" + "".join(lines)) if lines else ""


def run_preflight(target: Target, options: DeviceOptions, fmt: str, output: Path | None) -> int:
    outcomes, code, started, seconds = check(target, options, fmt if output is None else "text")
    if fmt == "prometheus" and output is not None:
        checks_report.write_prometheus(output, outcomes, "preflight", code, started, seconds)
        return code
    if fmt == "text":
        buffer = io.StringIO() if output is not None else None
        report.print_text(outcomes, "fabconf preflight (read only)", stream=buffer or sys.stdout)
        (buffer or sys.stdout).write(evidence_text(outcomes))
        text = buffer.getvalue() if buffer is not None else ""
    elif fmt == "json":
        text = report.as_json(outcomes, "preflight", code) + "\n"
    elif fmt == "junit":
        text = checks_report.as_junit(outcomes, "preflight", code, seconds)
    else:
        text = checks_report.as_prometheus(outcomes, "preflight", code, started, seconds)
    if output is not None:
        atomic_write(output, text)
    elif text:
        sys.stdout.write(text)
    return code


def run_bandwidth(target: Target, options: DeviceOptions, fmt: str, threshold: float, seconds: int) -> int:
    """The ib_send_bw pair matrix over the selected GPU hosts: exit 0 every pair at rate, 2 a pair below the
    threshold, 1 a host could not be reached."""
    compiled, jobs = prepare(target, options)
    hosts = [j for j in jobs if j.spec.is_host]
    uplinks = {
        name: sum(1 for i in data.get("interfaces", []) if i.get("kind") == "uplink")
        for name, data in compiled.data.items()
        if isinstance(data, dict)
    }
    drivers: dict[str, Any] = {}
    unreachable: dict[str, str] = {}
    try:
        for job in hosts:
            try:
                drivers[job.name] = open_driver(job, options)
            except Exception as exc:
                unreachable[job.name] = REDACTOR(str(exc).strip() or type(exc).__name__)
        eps = bandwidth.endpoints({j.name: j.data for j in hosts if j.name in drivers})
        say = (lambda text: print(f"fabconf preflight --bandwidth: {text}", file=sys.stderr)) if fmt == "text" else None
        matrix = bandwidth.run_matrix(eps, drivers, uplinks, threshold, seconds, say)
    finally:
        for driver in drivers.values():
            with contextlib.suppress(Exception):
                driver.close()
    code = 1 if unreachable else (2 if matrix.bad() else 0)
    doc = {"schema": "fabconf.report/1", "command": "preflight --bandwidth", "exit_code": code}
    doc |= bandwidth.as_dict(matrix) | {"unreachable": unreachable}
    if fmt == "json":
        print(json.dumps(doc, indent=2))
        return code
    for m in matrix.results:
        mark = "ok " if m not in matrix.bad() else "BAD"
        got = f"{m.gbps:7.1f}" if m.gbps is not None else "  error"
        print(
            f"{mark} {m.pair.client.host}:{m.pair.client.netdev} -> {m.pair.server.host}:{m.pair.server.netdev}"
            f"  {m.pair.kind:<10} {got} / {m.pair.line_rate} Gb/s {m.error}"
        )
    for name, why in sorted(unreachable.items()):
        print(f"UNREACHABLE {name}: {why}")
    bad = matrix.bad()
    print(f"{len(matrix.results)} pair(s) in {matrix.rounds} round(s); {len(bad)} below {threshold:.0%} of line rate")
    if bad:
        print("shared by the bad pairs: " + ", ".join(matrix.suspects()))
    return code


def run_nccl(target: Target, options: DeviceOptions, fmt: str, minimum: float | None) -> int:
    """nccl-tests' all_reduce_perf across the selected GPU hosts, from the first: exit 0 at or above the bus
    bandwidth threshold, 2 below it (or wrong results), 1 when it could not run."""
    _compiled, jobs = prepare(target, options)
    hosts = [j for j in jobs if j.spec.is_host]
    if len(hosts) < 2:
        raise UsageError("--nccl needs two GPU hosts or more in the selection")
    data = {j.name: j.data for j in hosts}
    floor = minimum if minimum is not None else nccl.threshold(data)
    command = nccl.command([(str(j.device.hostname), nccl.gpus(j.data)) for j in hosts])
    run = nccl.NcclRun()
    try:
        driver: Any = open_driver(hosts[0], options)
        try:
            status, text = driver.read_tools([command])[command]
        finally:
            with contextlib.suppress(Exception):
                driver.close()
        if status != 0:
            run.error = (text.strip().splitlines() or [f"exit {status}"])[-1]
        else:
            run = nccl.parse(text)
    except ParseError as exc:
        run.error = f"unreadable output ({exc})"
    except Exception as exc:
        run.error = REDACTOR(str(exc).strip() or type(exc).__name__)
    failed = nccl.judge(run, floor)
    code = 1 if run.error else (2 if failed else 0)
    doc = {"schema": "fabconf.report/1", "command": "preflight --nccl", "exit_code": code, "hosts": sorted(data)}
    doc |= {"launched_from": hosts[0].name, "command": command, "threshold_gbs": round(floor, 2)}
    doc |= {"busbw_gbs": run.busbw, "avg_busbw_gbs": run.average, "wrong": run.wrong, "failed_checks": failed}
    doc |= {"sizes": [{"bytes": b, "busbw_gbs": v} for b, v in run.sizes]}
    if fmt == "json":
        print(json.dumps(doc, indent=2))
        return code
    print(f"all_reduce_perf over {len(data)} host(s) from {hosts[0].name}: {command}")
    if run.busbw is not None:
        print(f"bus bandwidth {run.busbw:.1f} GB/s at the largest size (average {run.average:.1f} GB/s)")
    print(f"threshold {floor:.1f} GB/s")
    for line in failed:
        print(line)
    return code


def cmd_preflight(args: argparse.Namespace) -> int:
    if args.nccl:
        if args.format not in ("text", "json"):
            raise UsageError("--nccl reports as text or json")
        return run_nccl(target_of(args), device_options_of(args), args.format, args.nccl_threshold)
    if args.bandwidth:
        if args.format not in ("text", "json"):
            raise UsageError("--bandwidth reports as text or json")
        return run_bandwidth(target_of(args), device_options_of(args), args.format, args.threshold, args.duration)
    output = Path(args.output) if args.output else None
    return run_preflight(target_of(args), device_options_of(args), args.format, output)


def add_parser(sub: Any, inventory_arg: Any) -> None:
    p = sub.add_parser(
        "preflight",
        help="read-only cluster checks before a training job: RDMA links, speeds, firmware, GID, counters, GPUDirect",
        description="Exit 0 when every check passes, 2 when a check fails, 1 when a device could not be checked.",
    )
    add_report_args(p, inventory_arg, FORMATS)
    p.add_argument(
        "--bandwidth",
        action="store_true",
        help="run the ib_send_bw pair matrix over the GPU hosts instead of the checks",
    )
    p.add_argument(
        "--nccl",
        action="store_true",
        help="run nccl-tests' all_reduce_perf across the selected GPU hosts (mpirun from the first) instead of checks",
    )
    p.add_argument(
        "--nccl-threshold",
        type=float,
        default=None,
        metavar="GBS",
        help="--nccl: the lowest bus bandwidth in GB/s (default: 75 %% of the slowest host's NIC capacity)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=bandwidth.DEFAULT_THRESHOLD,
        help="--bandwidth: a pair below this share of its line rate is bad (default 0.9)",
    )
    p.add_argument(
        "--duration", type=int, default=bandwidth.DEFAULT_SECONDS, help="--bandwidth: seconds per ib_send_bw run"
    )
    add_device_args(p)
    p.set_defaults(func=cmd_preflight)
