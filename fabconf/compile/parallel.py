"""Work split over every core the process may use (issue 42): rendering many devices, checking many entries.

``fork_map`` deals the items round-robin to forked worker processes, which inherit the function and the items
(nothing is pickled but indices and results), and returns the results in the items' order. Below its
threshold, or with one core, or where ``fork`` is not available, it runs in this process: a process start costs
more than a small run's whole work. ``write_all`` renders and writes device files with it.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fabconf.private import Unwritable, write_file

THRESHOLD = 1024  # devices: below this a process pool costs more than it saves (bench/README.md)

# the work of the forked workers: set before the pool starts, inherited by fork, never sent
_WORK: tuple[Callable[[Any], Any], Sequence[Any]] | None = None


def forkable() -> bool:
    """A fork is safe here: the platform has it and no other thread runs (one could hold a lock the fork copies)."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _share(indices: Sequence[int]) -> list[Any]:
    assert _WORK is not None
    fn, items = _WORK
    return [fn(items[i]) for i in indices]


def _deal(count: int, costs: Sequence[float] | None, total: int) -> list[list[int]]:
    """The indices of each worker's share: round-robin, or with ``costs`` the costliest item first to the worker
    with the least so far (so that one large item and many small ones end on different cores)."""
    if costs is None:
        return [list(range(i, total, count)) for i in range(count)]
    shares: list[list[int]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for i in sorted(range(total), key=lambda i: -costs[i]):
        least = loads.index(min(loads))
        shares[least].append(i)
        loads[least] += costs[i]
    return [sorted(share) for share in shares if share]


def fork_map(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    threshold: int,
    workers: int | None = None,
    costs: Sequence[float] | None = None,
) -> list[Any]:
    """``[fn(item) for item in items]``, on ``workers`` forked processes (default: the usable cores) when there
    are at least ``threshold`` items, dealt round-robin or by their ``costs`` (``_deal``). An exception in a worker
    is raised here."""
    global _WORK
    count = min(workers or cores(), len(items))
    if count < 2 or len(items) < threshold or "fork" not in multiprocessing.get_all_start_methods():
        return [fn(item) for item in items]
    from concurrent.futures import ProcessPoolExecutor  # only for a large run: a small one never pays for it

    shares = _deal(count, costs, len(items))
    _WORK = (fn, items)
    try:
        with ProcessPoolExecutor(len(shares), mp_context=multiprocessing.get_context("fork")) as pool:
            results = list(pool.map(_share, shares))
    finally:
        _WORK = None
    out: list[Any] = [None] * len(items)
    for share, result in zip(shares, results, strict=True):
        for i, value in zip(share, result, strict=True):
            out[i] = value
    return out


def write_all(data: dict[str, dict[str, Any]], output: Path, workers: int | None = None) -> None:
    """Render every device of ``data`` into ``output`` (one file each), on every usable core when there are at
    least ``THRESHOLD`` devices; raises ``RenderError`` with a worker's error."""
    from fabconf.compile.render import filename, render  # Jinja2: only once fork_map's callers render

    def one(name: str) -> str:
        path = output / filename(name, data[name]["platform"])
        try:
            text = render(data[name])
        except Exception as exc:  # an exception type may not survive pickling: its text does
            if multiprocessing.parent_process() is None:
                raise  # in this process: the error itself
            return "".join(traceback.format_exception_only(exc)).strip()
        try:
            write_file(path, text)
        except Unwritable as exc:  # the output directory, not fabconf: said as the file and the reason
            return _UNWRITTEN + str(exc)
        return ""

    errors = [e for e in fork_map(one, sorted(data), THRESHOLD, workers) if e]
    unwritten = [e.removeprefix(_UNWRITTEN) for e in errors if e.startswith(_UNWRITTEN)]
    if unwritten:
        raise OutputError("\n".join(unwritten) + f"\n{len(unwritten)} file(s) not written")
    if errors:
        raise RenderError(f"rendering failed in a worker process (a fabconf bug, please report): {errors[0]}")


_UNWRITTEN = "unwritten:"


class RenderError(ValueError):
    """A device that failed to render in a worker process."""


class OutputError(ValueError):
    """Device files that could not be written (each line: the file and why)."""
