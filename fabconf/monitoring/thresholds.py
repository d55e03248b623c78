"""Alert thresholds as intent keys (fabric.yaml ``monitoring:``), with the source article's defaults."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Thresholds:
    port_error_rate: float = 0.00001  # errored / received frames: 0.001 %
    retransmit_rate: float = 0.0001  # RoCE retransmission timeouts / packets sent: 0.01 %
    pfc_pause_storm_per_s: float = 100_000  # pause frames per second received on the RoCE priority
    ecn_marked_per_s: tuple[float, float] = (0.0, 500_000.0)  # the expected band of ECN-marked packets per second
    cnp_per_s: tuple[float, float] = (0.0, 500_000.0)  # the expected band of CNPs sent per second
    for_duration: str = "5m"  # how long a condition holds before it alerts

    @classmethod
    def of(cls, fabric: dict[str, Any]) -> Thresholds:
        section = dict((fabric.get("monitoring") or {}).get("thresholds") or {})
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in section.items() if k in known}
        return cls(**values)
