"""What preflight checks against: fabric.yaml's optional ``preflight:`` section, with its defaults."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEFAULT_MAX_ERROR_RATE = 0.00001  # 0.001 %: the source article's bound for a healthy link
DEFAULT_SAMPLE_SECONDS = 2.0
# pre-FEC BER a 400G PAM4 link may show: RS-FEC (544,514) corrects far worse (about 2.4E-4), but a link this far
# above its peers' 1E-10..1E-8 is a cable or optic on its way out [U: an operators' rule of thumb]
DEFAULT_MAX_PRE_FEC_BER = 1e-6


@dataclass(frozen=True)
class Policy:
    firmware: str | None = None  # None: every NIC of the fleet runs the same version
    versions: dict[str, list[str]] = field(default_factory=dict)  # ofed / nvidia_driver / nccl -> allowed
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    gpudirect: bool = True
    sample_seconds: float = DEFAULT_SAMPLE_SECONDS
    max_pre_fec_ber: float = DEFAULT_MAX_PRE_FEC_BER

    @classmethod
    def of(cls, fabric: dict[str, Any]) -> Policy:
        section = fabric.get("preflight") or {}
        return cls(
            firmware=section.get("firmware"),
            versions={k: [str(v) for v in vs] for k, vs in (section.get("versions") or {}).items()},
            max_error_rate=float(section.get("max_error_rate", DEFAULT_MAX_ERROR_RATE)),
            gpudirect=bool(section.get("gpudirect", True)),
            sample_seconds=float(section.get("sample_seconds", DEFAULT_SAMPLE_SECONDS)),
            max_pre_fec_ber=float(section.get("max_pre_fec_ber", DEFAULT_MAX_PRE_FEC_BER)),
        )


def allowed(version: str, table: list[str]) -> bool:
    """A version is allowed when it equals an entry or starts with one followed by a separator (``2.21.5``
    allows ``2.21.5-1+cuda12.4``; ``24.04`` allows ``24.04-0.6.6.0``)."""
    return any(version == v or (version.startswith(v) and version[len(v)] in ".-+:~") for v in table)
