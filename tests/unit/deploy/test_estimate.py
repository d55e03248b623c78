"""``fabconf push --plan``'s estimate, from a synthetic audit log (issue 42)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fabconf.compile.pipeline import Compiled
from fabconf.deploy import rollout
from fabconf.deploy.estimate import duration, estimate, latencies
from fabconf.deploy.job import Job
from fabconf.deploy.options import DeviceOptions
from fabconf.platforms import platform


def entry(
    platform_name: str, commit: float, verify: float, confirm: float, prepare: float = 1.0, **extra: Any
) -> dict[str, Any]:
    record: dict[str, Any] = {"platform": platform_name, "result": "applied", "mode": "lab", "device": "x"}
    record["phases"] = {"commit": commit, "verify": verify, "confirm": confirm}
    record["seconds"] = prepare + commit + verify + confirm  # the whole device: connecting and staging too
    return record | extra


def write(path: Path, entries: list[dict[str, Any]], torn: bool = False) -> Path:
    lines = [json.dumps(e) for e in entries] + (['{"platform": "cumulus", "res'] if torn else [])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def jobs_of(example: Compiled) -> list[Job]:
    return [Job(d, example.data[n], "") for n, d in example.model.devices.items()]


def test_medians_per_platform_from_applied_pushes_in_the_same_mode(tmp_path: Path) -> None:
    log = write(
        tmp_path / "audit.jsonl",
        [
            entry("cumulus", 1.0, 4.0, 0.5, prepare=0.5),
            entry("cumulus", 3.0, 6.0, 0.5, prepare=2.0),
            entry("cumulus", 2.0, 5.0, 1.5, prepare=1.0),
            entry("cumulus", 90.0, 90.0, 90.0, mode="devices"),  # a real device's push says nothing of the lab
            entry("cumulus", 90.0, 90.0, 90.0, result="rolled back"),
            {"platform": "cumulus", "result": "applied", "mode": "lab"},  # an older record, without phases
            entry("cumulus", 90.0, 90.0, 90.0) | {"seconds": None},
        ],
        torn=True,
    )
    lat = latencies({"cumulus", "eos"}, "lab", log)
    cumulus = lat["cumulus"]
    assert (cumulus.prepare, cumulus.commit, cumulus.verify, cumulus.confirm) == (1.0, 2.0, 5.0, 0.5)
    assert lat["cumulus"].pushes == 3
    assert lat["cumulus"].source == "audit log, 3 push(es)"
    eos = lat["eos"]
    assert (eos.prepare, eos.commit, eos.verify, eos.confirm) == platform("eos").push_phases_s
    assert lat["eos"].source == "platform table default"


def test_no_audit_log_takes_the_platform_table(tmp_path: Path) -> None:
    lat = latencies({"nxos"}, "devices", tmp_path / "missing.jsonl")
    assert lat["nxos"].total == sum(platform("nxos").push_phases_s)
    assert lat["nxos"].pushes == 0


@pytest.mark.parametrize(("workers", "host_workers"), [(20, 50), (1, 1)])
def test_waves_take_rounds_of_their_pools_slowest_platform(
    example: Compiled, tmp_path: Path, workers: int, host_workers: int
) -> None:
    jobs = jobs_of(example)
    platforms = {j.platform for j in jobs}
    log = write(tmp_path / "audit.jsonl", [entry(p, 1.0, 2.0, 1.0) for p in sorted(platforms)])
    the_plan = rollout.plan(jobs, canary=1, batch="50%")
    est = estimate(the_plan, DeviceOptions(workers=workers, host_workers=host_workers), "lab", log)
    assert [w.label for w in est.waves] == the_plan.labels()
    assert [w.devices for w in est.waves] == [[j.name for j in w] for w in the_plan.waves]
    for wave, guessed in zip(the_plan.waves, est.waves, strict=True):
        rounds = -(-len(wave) // (host_workers if wave[0].spec.is_host else workers))
        assert guessed.seconds == pytest.approx(rounds * 5.0)  # 1 s prepare + 4 s
    assert est.total == sum(w.seconds for w in est.waves)


def test_durations_read_as_people_write_them() -> None:
    assert [duration(s) for s in (0.4, 42, 185, 3720)] == ["0.4 s", "42 s", "3 min 5 s", "1 h 2 min"]
