"""Rendering on every usable core (issue 42): the same files as in one process, and a failure is not lost."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from fabconf.compile import parallel
from fabconf.compile.pipeline import Compiled


def files(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(directory.iterdir())}


def test_a_pool_writes_what_one_process_writes(
    example: Compiled, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial, pooled = tmp_path / "serial", tmp_path / "pooled"
    serial.mkdir()
    pooled.mkdir()
    parallel.write_all(example.data, serial, workers=1)
    monkeypatch.setattr(parallel, "THRESHOLD", 2)  # the example is small: split it anyway
    parallel.write_all(example.data, pooled, workers=2)
    assert files(pooled) == files(serial)
    assert len(files(pooled)) == len(example.data)


def test_a_worker_that_fails_fails_the_render(
    example: Compiled, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = copy.deepcopy(example.data)
    del data[sorted(data)[-1]]["hostname"]  # a device the templates cannot render
    monkeypatch.setattr(parallel, "THRESHOLD", 2)
    with pytest.raises(parallel.RenderError, match="a worker process"):
        parallel.write_all(data, tmp_path, workers=2)


def test_a_small_run_stays_in_process(example: Compiled, tmp_path: Path) -> None:
    assert len(example.data) < parallel.THRESHOLD
    parallel.write_all(example.data, tmp_path, workers=2)
    assert len(list(tmp_path.iterdir())) == len(example.data)
