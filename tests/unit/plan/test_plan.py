"""Rollout plans follow roles: super-spines, spines, leaves, GPU hosts; a wave never mixes roles; each
role has its own canary; N% batches are shares of the role."""

from __future__ import annotations

import pytest

from fabconf.compile.pipeline import Compiled
from fabconf.deploy.job import Job
from fabconf.deploy.rollout import plan


def _jobs(example: Compiled) -> list[Job]:
    return [Job(example.model.devices[n], example.data[n], "") for n in sorted(example.data)]


@pytest.mark.parametrize(
    ("canary", "batch", "expected"),
    [
        (
            1,
            "25%",
            [
                ("spine canary", ["spine1"]),
                ("spine batch 1", ["spine2"]),
                ("leaf canary", ["leaf1"]),
                ("leaf batch 1", ["leaf2"]),
                ("leaf batch 2", ["leaf3"]),
                ("leaf batch 3", ["leaf4"]),
                ("gpu_host canary", ["gpu01"]),  # 25% of the role's 8 hosts: batches of 2
                ("gpu_host batch 1", ["gpu02", "gpu03"]),
                ("gpu_host batch 2", ["gpu04", "gpu05"]),
                ("gpu_host batch 3", ["gpu06", "gpu07"]),
                ("gpu_host batch 4", ["gpu08"]),
            ],
        ),
        (
            0,
            "100%",
            [
                ("spine batch 1", ["spine1", "spine2"]),
                ("leaf batch 1", ["leaf1", "leaf2", "leaf3", "leaf4"]),
                ("gpu_host batch 1", [f"gpu0{i}" for i in range(1, 9)]),
            ],
        ),
        (
            2,
            "3",
            [
                ("spine canary", ["spine1", "spine2"]),
                ("leaf canary", ["leaf1", "leaf2"]),
                ("leaf batch 1", ["leaf3", "leaf4"]),
                ("gpu_host canary", ["gpu01", "gpu02"]),
                ("gpu_host batch 1", ["gpu03", "gpu04", "gpu05"]),
                ("gpu_host batch 2", ["gpu06", "gpu07", "gpu08"]),
            ],
        ),
    ],
)
def test_waves_follow_roles(example: Compiled, canary: int, batch: str, expected: list[tuple[str, list[str]]]) -> None:
    the_plan = plan(_jobs(example), canary=canary, batch=batch)
    assert [(w.label, [j.name for j in w.jobs]) for w in the_plan.stages] == expected
    for wave in the_plan.stages:
        assert len({j.device.role for j in wave.jobs}) == 1


@pytest.mark.parametrize("batch", ["0", "0%", "150%", "x"])
def test_bad_batch_sizes_are_refused(example: Compiled, batch: str) -> None:
    with pytest.raises(ValueError, match="--batch"):
        plan(_jobs(example), canary=0, batch=batch)
