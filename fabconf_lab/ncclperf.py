"""``mpirun ... all_reduce_perf`` (nccl-tests) across lab GPU hosts, with a bus bandwidth that follows the lab's
links: each host's NICs together, each at what its host link lets through (``fabconf_lab.perftest``: the
negotiated speed, less with errored frames), the slowest host bounding the ring, times ``EFFICIENCY`` [U: a lab
model, not a measured curve]; small messages reach a fraction of it (latency bound). The output keeps nccl-tests'
table and its ``# Avg bus bandwidth`` line [3P: the nccl-tests README].

[lab] ``-H`` names hosts by their lab (management) address; a host not in the lab fails as ssh would.
"""

from __future__ import annotations

from typing import Any

from fabconf_lab import perftest

EFFICIENCY = 0.92
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _size(text: str) -> int:
    unit = text[-1:].upper() if text[-1:].isalpha() else ""
    return int(text[: -1 if unit else None]) * _UNITS.get(unit, 1)


def _host_gbps(sim: Any) -> float:
    """Gb/s a host injects: its NICs' host links, each at what it lets through."""
    world = sim.world
    return sum(perftest.bandwidth([perftest._host_link(world, sim, nic)[:3]]) for nic in sim.state.nics)


def mpirun(host: Any, argv: list[str]) -> tuple[str, str, int]:
    if "all_reduce_perf" not in argv:
        return "", "mpirun: the lab models `mpirun ... all_reduce_perf ...` only\n", 1
    args = argv[1:]
    try:
        where = args[args.index("-H") + 1]
        program = args[args.index("all_reduce_perf") + 1 :]
        low, high = _size(program[program.index("-b") + 1]), _size(program[program.index("-e") + 1])
        factor = int(program[program.index("-f") + 1]) if "-f" in program else 2
    except (ValueError, IndexError):
        return "", "mpirun: the lab needs -H HOSTS and all_reduce_perf -b MIN -e MAX\n", 1
    world = host.world
    by_address = {getattr(s, "address", None): s for s in list(world._devices.values())} if world else {}
    sims = []
    for entry in where.split(","):
        address = entry.split(":")[0]
        sim = by_address.get(address)
        if sim is None or not hasattr(getattr(sim, "state", None), "nics"):
            return "", f"ssh: Could not resolve hostname {address}: Name or service not known\n", 255
        sims.append(sim)
    peak = min(_host_gbps(s) for s in sims) / 8 * EFFICIENCY  # GB/s
    if peak <= 0:
        return "", "NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129\n", 1
    lines = [
        f"# nThread 1 nGpus 1 minBytes {low} maxBytes {high} step: {factor}(factor) warmup iters: 5 iters: 20 "
        "agg iters: 1 validation: 1 graph: 0\n#\n",
        "#                                                              out-of-place                       in-place\n",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw"
        " #wrong\n",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)"
        "  (GB/s)\n",
    ]
    ranks = len(sims)
    total, rows, size = 0.0, 0, low
    while size <= high:
        busbw = peak * size / (size + (4 << 20))
        algbw = busbw * ranks / max(1, 2 * (ranks - 1))
        micros = size / (algbw * 1e3) if algbw > 0 else 0.0
        cells = f"{micros:8.2f} {algbw:7.2f} {busbw:7.2f}      0"
        lines.append(f"{size:12d} {size // 4:13d}     float     sum      -1 {cells} {cells}\n")
        total, rows, size = total + busbw, rows + 1, size * factor
    lines.append(f"# Out of bounds values : 0 OK\n# Avg bus bandwidth    : {total / max(rows, 1):.4f}\n#\n")
    return "".join(lines), "", 0
