"""``fabconf preflight``: read-only cluster checks before a training job (``fabconf.preflight``), in one report.
The runs are ``fabconf.jobs.preflight``'s; this module parses the arguments and writes the reports.

Exit 0 when every check passes, 2 when a check fails, 1 when a device could not be checked.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabconf.cli import report
from fabconf.cli.devices import (
    add_device_args,
    add_report_args,
    device_options_of,
    progress_for,
    target_of,
)
from fabconf.deploy.backup import atomic_write
from fabconf.deploy.job import Outcome
from fabconf.deploy.options import DeviceOptions
from fabconf.errors import UsageError
from fabconf.preflight import bandwidth

# The jobs (hence the device stack: Nornir, NAPALM, netmiko, paramiko) are imported by the runs, never at
# import: `fabconf preflight --help` and a usage error load none of it (issue 42).
if TYPE_CHECKING:
    from fabconf.jobs.target import Target

FORMATS = ("text", "json", "junit", "prometheus")


EVIDENCE_LINE = 240  # characters of one check's values in text mode; --format json has them all


def evidence_text(outcomes: list[Outcome]) -> str:
    """The values each check read on the devices that did not pass, ``DEVICE CHECK: {command: value}``, one line
    each, cut at ``EVIDENCE_LINE`` characters. A passing preflight printed every value read as raw JSON (158 KB,
    lines of 3,661 characters: issue #40); its table's detail column names the checks, and ``--format json``
    keeps every value."""
    lines = []
    for o in outcomes:
        if o.state.ok:
            continue
        for check, values in sorted(o.evidence.items()):
            line = f"{o.device} {check}: {json.dumps(values, sort_keys=True, separators=(',', ':'))}"
            lines.append((line[: EVIDENCE_LINE - 1] + "…" if len(line) > EVIDENCE_LINE else line) + "\n")
    if not lines:
        return ""
    return "\nValues read per check, on the devices that did not pass (every value: --format json):\n" + "".join(lines)


def run_preflight(target: Target, options: DeviceOptions, fmt: str, output: Path | None) -> int:
    from fabconf.cli import checks_report
    from fabconf.jobs import preflight as jobs
    from fabconf.jobs.target import Hooks

    result = jobs.check(target, options, Hooks(progress_for(fmt if output is None else "text")))
    outcomes, code, started, seconds = result.outcomes, result.exit_code, result.started, result.seconds
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
    from fabconf.jobs import preflight as jobs

    say = (lambda text: print(f"fabconf preflight --bandwidth: {text}", file=sys.stderr)) if fmt == "text" else None
    result = jobs.run_bandwidth(target, options, threshold, seconds, say)
    matrix, unreachable, code = result.matrix, result.unreachable, result.exit_code
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
    from fabconf.jobs import preflight as jobs

    result = jobs.run_nccl(target, options, minimum)
    run, floor, command, failed, code = result.run, result.threshold, result.command, result.failed, result.exit_code
    doc: dict[str, Any] = {
        "schema": "fabconf.report/1",
        "command": "preflight --nccl",
        "exit_code": code,
        "hosts": sorted(result.hosts),
    }
    doc |= {"launched_from": result.hosts[0], "command": command, "threshold_gbs": round(floor, 2)}
    doc |= {"busbw_gbs": run.busbw, "avg_busbw_gbs": run.average, "wrong": run.wrong, "failed_checks": failed}
    doc |= {"sizes": [{"bytes": b, "busbw_gbs": v} for b, v in run.sizes]}
    if fmt == "json":
        print(json.dumps(doc, indent=2))
        return code
    print(f"all_reduce_perf over {len(result.hosts)} host(s) from {result.hosts[0]}: {command}")
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
