"""Render and write many devices' configurations on every core the process may use (issue 42).

Rendering is per device and independent, so a large run splits it: the devices are dealt round-robin to
``workers`` forked processes, each inheriting the designed data (nothing is pickled but the names and the
errors) and writing its own devices' files. Below ``THRESHOLD`` devices, or with one core, or where ``fork`` is
not available, it renders in this process: a process start costs more than a small run's whole render.
"""

from __future__ import annotations

import multiprocessing
import os
import traceback
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from fabconf.compile.render import filename, render

THRESHOLD = 1024  # devices: below this a process pool costs more than it saves (bench/bench_compile.py)

# the work of the forked workers: set before the pool starts, inherited by fork, never sent
_WORK: tuple[dict[str, dict[str, Any]], Path] | None = None


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _render_share(names: list[str]) -> str:
    """A worker's share: every file written, or the first error as text (re-raised by the parent)."""
    assert _WORK is not None
    data, output = _WORK
    try:
        _write(data, output, names)
    except Exception as exc:  # an exception type may not survive pickling: its text does
        return "".join(traceback.format_exception_only(exc)).strip()
    return ""


def _write(data: dict[str, dict[str, Any]], output: Path, names: list[str]) -> None:
    for name in names:
        (output / filename(name, data[name]["platform"])).write_text(render(data[name]), encoding="utf-8")


def write_all(data: dict[str, dict[str, Any]], output: Path, workers: int | None = None) -> None:
    """Render every device of ``data`` into ``output`` (one file each), on ``workers`` processes (default: the
    usable cores) when there are at least ``THRESHOLD`` devices; raises ``RenderError`` with a worker's error."""
    global _WORK
    names = sorted(data)
    count = min(workers or cores(), len(names))
    if count < 2 or len(names) < THRESHOLD or "fork" not in multiprocessing.get_all_start_methods():
        _write(data, output, names)
        return
    _WORK = (data, output)
    try:
        with ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("fork")) as pool:
            errors = [e for e in pool.map(_render_share, [names[i::count] for i in range(count)]) if e]
    finally:
        _WORK = None
    if errors:
        raise RenderError(f"rendering failed in a worker process (a fabconf bug, please report): {errors[0]}")


class RenderError(ValueError):
    """A device that failed to render in a worker process."""
