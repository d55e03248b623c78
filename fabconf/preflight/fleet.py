"""Checks across devices: ConnectX firmware uniform across the fleet when the intent names no version (the
most common version is the reference; every NIC on another one fails its host's ``[firmware]`` check)."""

from __future__ import annotations

from collections import Counter

from fabconf.deploy.job import Outcome, State


def uniform_firmware(outcomes: list[Outcome], firmware: dict[str, dict[str, str]]) -> None:
    versions = Counter(v for found in firmware.values() for v in found.values())
    if len(versions) < 2:
        return
    reference, count = versions.most_common(1)[0]
    for outcome in outcomes:
        odd = sorted((dev, v) for dev, v in firmware.get(outcome.device, {}).items() if v != reference)
        for dev, version in odd:
            outcome.checks.append(
                f"[firmware] {dev}: firmware {version}, the rest of the fleet runs {reference} ({count} NICs)"
            )
        if odd:
            outcome.state, outcome.message = State.FAILED, "preflight failed"
