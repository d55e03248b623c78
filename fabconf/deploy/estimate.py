"""How long a push will take, before it starts: per wave and in total (``fabconf push --plan``).

A device's push is its preparation (connect, read its configuration, stage the diff), commit, verify and confirm.
Their latencies, per platform, are the medians of the last
``RECENT`` pushes the audit log recorded as applied to that platform in the same mode (lab or devices: a lab
rehearsal says nothing of a real switch's commit); a platform the log has none of takes the platform table's
``push_phases_s``, and the plan says so. A wave runs its switches and its GPU hosts in their own worker pools side
by side (``fabconf.deploy.rollout.run``): each pool takes ``ceil(devices / workers)`` rounds of its slowest
platform's latency, and the wave as long as its slower pool. Waves run one after the other.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fabconf.deploy.audit import audit_path
from fabconf.deploy.job import Job
from fabconf.deploy.options import DeviceOptions
from fabconf.deploy.rollout import Plan, Wave
from fabconf.platforms import platform

PHASES = ("commit", "verify", "confirm")  # timed by the push itself (Outcome.phases); prepare: the rest
RECENT = 50  # the pushes per platform the medians are taken over: the newest ones
APPLIED = "applied"


@dataclass(frozen=True)
class Latency:
    """One device's push on a platform, in seconds per phase; ``pushes``: how many audit records it comes from
    (0: the platform table's defaults)."""

    prepare: float
    commit: float
    verify: float
    confirm: float
    pushes: int = 0

    @property
    def total(self) -> float:
        return self.prepare + self.commit + self.verify + self.confirm

    @property
    def source(self) -> str:
        return f"audit log, {self.pushes} push(es)" if self.pushes else "platform table default"


@dataclass(frozen=True)
class WaveEstimate:
    label: str
    devices: list[str]
    seconds: float


@dataclass(frozen=True)
class Estimate:
    waves: list[WaveEstimate]
    latencies: dict[str, Latency]  # per platform in the plan

    @property
    def total(self) -> float:
        return sum(w.seconds for w in self.waves)


def _records(path: Path) -> Iterable[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line a crash cut short
        if isinstance(entry, dict):
            yield entry


def latencies(platforms: Iterable[str], mode: str, path: Path | None = None) -> dict[str, Latency]:
    """Per platform: the medians of its last ``RECENT`` applied pushes in ``mode`` ("lab" or "devices") with
    their phases, else the platform table's defaults."""
    wanted = set(platforms)
    seen: dict[str, list[dict[str, float]]] = {name: [] for name in wanted}
    for entry in _records(path or audit_path()):
        phases = entry.get("phases")
        name = entry.get("platform")
        if entry.get("result") != APPLIED or name not in wanted or entry.get("mode", "devices") != mode:
            continue
        seconds = entry.get("seconds")
        if not isinstance(seconds, int | float) or not isinstance(phases, dict):
            continue  # a record of an earlier fabconf, without its timings
        if all(isinstance(phases.get(p), int | float) for p in PHASES):
            timed = {p: float(phases[p]) for p in PHASES}
            seen[str(name)].append({"prepare": max(0.0, seconds - sum(timed.values())), **timed})
    out = {}
    for name in sorted(wanted):
        recent = seen[name][-RECENT:]
        if recent:
            prepare, commit, verify, confirm = (statistics.median(r[p] for r in recent) for p in ("prepare", *PHASES))
            out[name] = Latency(prepare, commit, verify, confirm, pushes=len(recent))
        else:
            out[name] = Latency(*platform(name).push_phases_s)
    return out


def wave_seconds(jobs: list[Job], latency: dict[str, Latency], options: DeviceOptions) -> float:
    """Switches and GPU hosts in their own pools, side by side: the slower pool's rounds of its slowest platform."""
    pools = (
        ([j for j in jobs if not j.spec.is_host], options.workers),
        ([j for j in jobs if j.spec.is_host], options.host_workers),
    )
    longest = 0.0
    for members, workers in pools:
        if members:
            slowest = max(latency[j.platform].total for j in members)
            longest = max(longest, math.ceil(len(members) / max(1, workers)) * slowest)
    return longest


def estimate(plan: Plan, options: DeviceOptions, mode: str, path: Path | None = None) -> Estimate:
    latency = latencies({j.platform for j in plan.jobs}, mode, path)
    return Estimate([_wave(w, latency, options) for w in plan.stages], latency)


def _wave(wave: Wave, latency: dict[str, Latency], options: DeviceOptions) -> WaveEstimate:
    return WaveEstimate(wave.label, [j.name for j in wave.jobs], wave_seconds(wave.jobs, latency, options))


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 5 s``, ``1 h 2 min``."""
    whole = round(seconds)
    if whole < 60:
        return f"{seconds:.0f} s" if seconds >= 1 else f"{seconds:.1f} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"
