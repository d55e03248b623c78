"""Alert thresholds and timing as intent keys (fabric.yaml ``monitoring:``), with the source article's defaults:
``monitoring.thresholds.*``, ``monitoring.window_s`` (the rate windows), ``monitoring.for_s`` (how long a condition
holds before it alerts) and ``monitoring.drift_max_age_s`` (how old the last drift report may be)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Thresholds:
    port_error_rate: float = 0.00001  # errored / received frames: 0.001 %
    retransmit_rate: float = 0.0001  # RoCE retransmission timeouts / packets sent: 0.01 %
    # PFC frames per second a switch port receives on a RoCE priority that only a storm sustains. 802.1Qbb quanta
    # are 512 bit times and a frame pauses for at most 65535 quanta (a 16-bit field) [3P: IEEE 802.1Qbb-2011 and
    # IEEE 802.3 Annex 31B/31D, the PFC frame's per-priority time fields]; a receiver held paused is refreshed at
    # most every quanta time, commonly at half of it [U: the refresh policy is the sender's], so a storm at the
    # largest quanta sends 1e11 / (65535 * 512) = 2,980 to 5,960 frames/s at 100G, 11,920 to 23,840 at 400G.
    # 100,000 was never reached; 2,500 catches a storm at 100G and faster (held ``for_s``); smaller quanta send more.
    pfc_pause_storm_per_s: float = 2_500
    # the fraction of the time a GPU NIC is held paused on a RoCE priority (mlx5 pause duration) that is a storm
    pfc_paused_fraction: float = 0.5
    ecn_marked_per_s: tuple[float, float] = (0.0, 500_000.0)  # the expected band of ECN-marked packets per second
    cnp_per_s: tuple[float, float] = (0.0, 500_000.0)  # the expected band of CNPs sent per second

    @classmethod
    def of(cls, fabric: dict[str, Any]) -> Thresholds:
        section = dict((fabric.get("monitoring") or {}).get("thresholds") or {})
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in section.items() if k in known}
        return cls(**values)


def duration(seconds: int) -> str:
    """Seconds as a Prometheus duration: ``300`` -> ``5m``, ``90`` -> ``90s``, ``0`` -> ``0s``."""
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


@dataclass(frozen=True)
class Timing:
    window_s: int = 300  # the rate() / increase() window
    for_s: int = 300  # the ``for:`` delay of the alerts that need a condition to hold
    drift_max_age_s: int = 86_400  # a drift report older than this alerts

    @property
    def window(self) -> str:
        return duration(self.window_s)

    @property
    def for_duration(self) -> str:
        return duration(self.for_s)

    @property
    def scrape_interval(self) -> str:
        """A scrape interval that leaves several samples in every rate window (at most 30 s)."""
        return duration(max(1, min(30, self.window_s // 5)))

    @classmethod
    def of(cls, fabric: dict[str, Any]) -> Timing:
        section = fabric.get("monitoring") or {}
        return cls(**{f.name: int(section[f.name]) for f in fields(cls) if f.name in section})
