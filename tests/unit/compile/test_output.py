"""Designing, checking and rendering in the render workers (issue 42): the same files as in one process, and a
problem of the priority chain found in any worker stops every file, with the problems one process finds, in its
order."""

from __future__ import annotations

import copy
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from fabconf.compile import checks, output, parallel
from fabconf.compile.design import device
from fabconf.compile.pipeline import Compiled
from fabconf.compile.problems import InputError, Problems
from fabconf.compile.render import filename


def files(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(directory.iterdir())}


@pytest.fixture(autouse=True)
def _no_other_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread an earlier test left running would keep ``prepare`` from forking (a fork may copy a lock it holds):
    these tests are about the forked workers, which run no thread of their own."""
    monkeypatch.setattr(threading, "active_count", lambda: 1)


def write(example: Compiled, out: Path, workers: int) -> Problems:
    problems = Problems()
    with output.prepare(example.model, example.topology, sorted(example.model.devices), out, problems, workers) as p:
        assert p.count == len(example.data)
        assert isinstance(p, output._Pool) == (workers > 1 and len(example.data) >= parallel.THRESHOLD)
        p.write()
    return problems


def test_workers_write_what_one_process_writes(
    example: Compiled, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial, pooled, before = tmp_path / "serial", tmp_path / "pooled", tmp_path / "before"
    for d in (serial, pooled, before):
        d.mkdir()
    parallel.write_all(example.data, before, workers=1)  # what render wrote before the design moved
    assert not write(example, serial, workers=1)
    monkeypatch.setattr(parallel, "THRESHOLD", 2)  # the example is small: split it anyway
    assert not write(example, pooled, workers=2)
    assert files(pooled) == files(serial) == files(before)
    assert len(files(pooled)) == len(example.data)


def _broken(data: dict[str, Any]) -> dict[str, Any]:
    """The example's data with the priority chain broken on a leaf, a host and a leaf port facing a host."""
    data = copy.deepcopy(data)
    data["leaf3"]["qos"]["dscp_map"] = [{"dscps": [26], "tc": 2}, {"dscps": [48], "tc": 6}]
    data["gpu02"]["qos"]["pfc"] = [0] * 8
    data["leaf1"]["interfaces"][0]["pfc"] = False
    return data


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_broken_chain_in_any_worker_stops_every_file(
    example: Compiled, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """A design that breaks the chain (standing in for a bug in a platform's QoS design) is found whichever process
    designed the device: the problems are those ``check_device_data`` finds over all the data, word for word and in
    its order, and no file is written, not even the devices that were fine."""
    broken = _broken(example.data)
    expected = Problems()
    checks.check_device_data(example.model, example.topology, expected, broken)
    assert len(expected.errors) == 3
    monkeypatch.setattr(output, "device_data", lambda dev, model, topo: broken[dev.name])  # forked: workers see it
    monkeypatch.setattr(output, "design", lambda model, topo, names: {n: broken[n] for n in names})
    monkeypatch.setattr(parallel, "THRESHOLD", 2)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(InputError) as caught:
        write(example, out, workers)
    assert [str(p) for p in caught.value.problems] == [str(p) for p in expected]
    assert list(out.iterdir()) == []


def test_a_worker_that_fails_to_render_writes_nothing(
    example: Compiled, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    last = sorted(example.data)[-1]
    broken = copy.deepcopy(example.data)
    del broken[last]["hostname"]  # a device the templates cannot render
    monkeypatch.setattr(output, "device_data", lambda dev, model, topo: broken[dev.name])
    monkeypatch.setattr(parallel, "THRESHOLD", 2)
    with pytest.raises(parallel.RenderError, match="a worker process"):
        write(example, tmp_path, workers=2)
    assert list(tmp_path.iterdir()) == []


def test_a_symlink_at_a_device_file_is_refused_by_the_workers(
    example: Compiled, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each link planted at a device file's name is named, in device order, whichever process met it; what it
    points to is untouched and every other device is written."""
    monkeypatch.setattr(parallel, "THRESHOLD", 2)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    out = tmp_path / "out"
    out.mkdir()
    names = sorted(example.data)[:2]  # dealt to different processes
    links = [out / filename(n, example.data[n]["platform"]) for n in names]
    for link in links:
        link.symlink_to(victim)
    expected = "\n".join(f"{link}: cannot write: a symbolic link (fabconf never writes through one)" for link in links)
    with pytest.raises(parallel.OutputError, match=re.escape(expected)):
        write(example, out, workers=2)
    assert victim.read_text() == "precious\n"
    assert len([p for p in out.iterdir() if not p.is_symlink()]) == len(example.data) - 2


def test_the_serial_design_is_the_pipelines(example: Compiled) -> None:
    """The small run designs with the same function as ``compile_inventory``."""
    assert output.design is device.design
