"""``fabconf push --plan``: the waves, the failure budget and the estimated duration, before any device is
touched; and after a push, each wave's estimate against what it took."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from fabconf.deploy.estimate import Estimate, duration
from fabconf.deploy.rollout import Plan
from fabconf.jobs.push import Forecast


def as_dict(forecast: Forecast) -> dict[str, Any]:
    est = forecast.estimate
    return {
        "command": "push --plan",
        "max_fail": forecast.max_fail,
        "waves": [{"label": w.label, "devices": w.devices, "estimate_s": round(w.seconds, 1)} for w in est.waves],
        "estimate_s": round(est.total, 1),
        "latencies": {
            name: {
                "prepare_s": lat.prepare,
                "commit_s": lat.commit,
                "verify_s": lat.verify,
                "confirm_s": lat.confirm,
                "source": lat.source,
            }
            for name, lat in est.latencies.items()
        },
    }


def print_text(forecast: Forecast, stream: TextIO | None = None) -> None:
    out = stream or sys.stdout
    est = forecast.estimate
    devices = sum(len(w.devices) for w in est.waves)
    print(
        f"fabconf push --plan: {devices} device(s) in {len(est.waves)} wave(s); no device was touched",
        file=out,
    )
    print(
        f"failure budget: the rollout stops after {forecast.max_fail + 1} failed device(s) "
        f"(--max-fail {forecast.max_fail}), or at a failed canary",
        file=out,
    )
    width = max((len(w.label) for w in est.waves), default=4)
    for w in est.waves:
        names = (
            ", ".join(w.devices) if len(w.devices) <= 8 else ", ".join(w.devices[:8]) + f", ... (+{len(w.devices) - 8})"
        )
        about = "~" + duration(w.seconds)
        print(f"  {w.label:<{width}}  {about:>11}  {len(w.devices):>4} device(s): {names}", file=out)
    print(f"estimated total: ~{duration(est.total)}", file=out)
    print("per-device latency (prepare + commit + verify + confirm):", file=out)
    for name, lat in est.latencies.items():
        print(
            f"  {name}: {lat.prepare:.1f} + {lat.commit:.1f} + {lat.verify:.1f} + {lat.confirm:.1f} s ({lat.source})",
            file=out,
        )


def run(forecast: Forecast, fmt: str) -> int:
    if fmt == "json":
        print(json.dumps(as_dict(forecast), indent=2))
    else:
        print_text(forecast)
    return 0


def timing(plan: Plan, est: Estimate) -> list[dict[str, Any]]:
    """Each wave's estimate against the seconds it took (None: not reached)."""
    return [
        {
            "label": wave.label,
            "estimate_s": round(guess.seconds, 1),
            "actual_s": None if wave.seconds is None else round(wave.seconds, 1),
        }
        for wave, guess in zip(plan.stages, est.waves, strict=True)
    ]


def print_timing(rows: list[dict[str, Any]], stream: TextIO | None = None) -> None:
    out = stream or sys.stdout
    print("waves: estimate / actual", file=out)
    width = max((len(r["label"]) for r in rows), default=4)
    for r in rows:
        actual = "not reached" if r["actual_s"] is None else duration(r["actual_s"])
        print(f"  {r['label']:<{width}}  ~{duration(r['estimate_s'])} / {actual}", file=out)
    took = sum(r["actual_s"] or 0.0 for r in rows)
    guessed = sum(r["estimate_s"] for r in rows)
    print(f"  total  ~{duration(guessed)} / {duration(took)}", file=out)
