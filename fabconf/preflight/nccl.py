"""``fabconf preflight --nccl``: an nccl-tests ``all_reduce_perf`` across the selected GPU hosts, started with
``mpirun`` from the first of them, its bus bandwidth against a threshold.

The command: ``mpirun --allow-run-as-root -np N -H HOST:G,... -x NCCL_DEBUG=WARN all_reduce_perf -b 8 -e 8G -f 2
-g 1`` (one rank per GPU, G GPUs per host: the NICs the intent gives it, or its highest ``nics[].gpu`` + 1). Its
output is nccl-tests' table (``size count type redop root time algbw busbw #wrong`` twice: out-of-place and in-place)
ending in ``# Avg bus bandwidth : X`` [3P: the nccl-tests README]. The check: the largest size's out-of-place busbw
(GB/s) at least the threshold, and no ``#wrong`` results. The default threshold is 75 % of the slowest host's
NIC capacity (the sum of its NICs' ``speed_gbps``, in GB/s) [U: a rule of thumb; an all-reduce's bus bandwidth
approaches the per-host network capacity on a healthy rail-optimised fabric].
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from fabconf.platform.linux.parse import ParseError, check_clean
from fabconf.platform.linux.plan import sh

DEFAULT_SHARE = 0.75
MAX_BYTES = "8G"
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+\w+\s+\w+\s+-?\d+\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+(\d+|N/A)\s", re.M)


@dataclass
class NcclRun:
    busbw: float | None = None  # GB/s, out of place, at the largest size
    average: float | None = None  # "# Avg bus bandwidth"
    wrong: int = 0
    sizes: list[tuple[int, float]] = field(default_factory=list)  # (bytes, out-of-place busbw)
    error: str = ""


def gpus(data: dict[str, Any]) -> int:
    nics = list(data.get("nics", []))
    paired = [int(n["gpu"]) for n in nics if n.get("gpu") is not None]
    return max(paired) + 1 if paired else max(1, len(nics))


def command(hosts: list[tuple[str, int]], max_bytes: str = MAX_BYTES) -> str:
    ranks = sum(g for _h, g in hosts)
    where = ",".join(f"{h}:{g}" for h, g in hosts)
    return sh(
        "mpirun", "--allow-run-as-root", "-np", str(ranks), "-H", where, "-x", "NCCL_DEBUG=WARN",
        "all_reduce_perf", "-b", "8", "-e", max_bytes, "-f", "2", "-g", "1",
    )  # fmt: skip


def threshold(hosts: dict[str, dict[str, Any]], share: float = DEFAULT_SHARE) -> float:
    """GB/s: ``share`` of the slowest host's NIC capacity."""
    capacity = [sum(int(n.get("speed_gbps") or 400) for n in d.get("nics", [])) / 8 for d in hosts.values()]
    return share * min(capacity) if capacity else 0.0


def parse(text: str) -> NcclRun:
    check_clean(text)
    rows = [(int(m.group(1)), float(m.group(3)), m.group(4)) for m in _ROW.finditer(text)]
    average = re.search(r"^#\s*Avg bus bandwidth\s*:\s*([\d.]+)", text, re.M)
    if not rows or average is None:
        raise ParseError("no all_reduce_perf result table or '# Avg bus bandwidth'")
    wrong = sum(int(w) for _s, _b, w in rows if w.isdigit())
    return NcclRun(rows[-1][1], float(average.group(1)), wrong, [(s, b) for s, b, _w in rows])


def judge(run: NcclRun, minimum: float) -> list[str]:
    if run.error:
        return [f"[nccl] all_reduce_perf did not run: {run.error}"]
    failed = []
    if run.wrong:
        failed.append(f"[nccl] all_reduce_perf: {run.wrong} result(s) #wrong")
    if run.busbw is not None and run.busbw < minimum:
        failed.append(
            f"[nccl] all_reduce_perf bus bandwidth {run.busbw:.1f} GB/s at the largest size, below {minimum:.1f} GB/s"
        )
    return failed
