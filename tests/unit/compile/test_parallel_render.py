"""Rendering on every usable core (issue 42): the same files as in one process, and a failure is not lost."""

from __future__ import annotations

import copy
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from fabconf.compile import parallel
from fabconf.compile.pipeline import Compiled
from fabconf.compile.render import filename


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


@pytest.mark.parametrize("workers", [1, 2])
def test_a_symlink_at_a_device_file_is_refused_not_followed(
    example: Any, tmp_path: Path, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A device file is never written through a symbolic link (the house rule): a link planted at a device file's
    name in the output directory is refused with the file and the reason, and what it points to is untouched, in
    this process and in the forked workers alike."""
    monkeypatch.setattr(parallel, "THRESHOLD", 1)  # fork even for the example's handful of devices
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    out = tmp_path / "out"
    out.mkdir()
    name = sorted(example.data)[0]
    link = out / filename(name, example.data[name]["platform"])
    link.symlink_to(victim)
    with pytest.raises(parallel.OutputError, match=re.escape(f"{link}: cannot write: a symbolic link")):
        parallel.write_all(example.data, out, workers=workers)
    assert victim.read_text() == "precious\n"
    assert link.is_symlink()
    others = [p for p in out.iterdir() if p != link]
    assert len(others) == len(example.data) - 1  # every other device was written


def test_device_files_have_their_mode_from_creation(example: Any, tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        parallel.write_all(example.data, tmp_path, workers=1)
    finally:
        os.umask(old)
    assert {stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()} == {0o644}
