"""What preflight checks against: fabric.yaml's optional ``preflight:`` section, with its defaults."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

DEFAULT_MAX_ERROR_RATE = 0.00001  # 0.001 %: the source article's bound for a healthy link
DEFAULT_SAMPLE_SECONDS = 2.0
# pre-FEC BER a 400G PAM4 link may show: RS-FEC (544,514) corrects far worse (about 2.4E-4), but a link this far
# above its peers' 1E-10..1E-8 is a cable or optic on its way out [U: an operators' rule of thumb]
DEFAULT_MAX_PRE_FEC_BER = 1e-6
COMPONENTS = ("ofed", "nvidia_driver", "cuda", "nccl")  # the columns of a compatibility table
# Without a table in the intent: the CUDA a host's NCCL was built for against the oldest Linux driver that CUDA
# toolkit release supports [3P: CUDA Toolkit Release Notes, table "CUDA Toolkit and Corresponding Driver Versions",
# the GA releases' Linux x86_64 "Toolkit Driver Version"; 12.4's >=550.54.14 as arrayfire PR 3541 quotes it]. A
# driver of an older branch can still run a newer 12.x runtime through CUDA minor version compatibility, without
# PTX JIT: an intent that relies on that gives its own table.
DEFAULT_COMPATIBILITY: tuple[dict[str, tuple[str, ...]], ...] = (
    {"cuda": ("11.8",), "nvidia_driver": (">=520.61.05",)},
    {"cuda": ("12.0",), "nvidia_driver": (">=525.60.13",)},
    {"cuda": ("12.1",), "nvidia_driver": (">=530.30.02",)},
    {"cuda": ("12.2",), "nvidia_driver": (">=535.54.03",)},
    {"cuda": ("12.3",), "nvidia_driver": (">=545.23.06",)},
    {"cuda": ("12.4",), "nvidia_driver": (">=550.54.14",)},
    {"cuda": ("12.5",), "nvidia_driver": (">=555.42.02",)},
    {"cuda": ("12.6",), "nvidia_driver": (">=560.28.03",)},
    {"cuda": ("12.8",), "nvidia_driver": (">=570.26",)},
    {"cuda": ("12.9",), "nvidia_driver": (">=575.51.03",)},
    {"cuda": ("13.0",), "nvidia_driver": (">=580.65.06",)},
    # [3P: the same table for 13.1 and 13.2, as issue 38's review quotes it; the r590 driver branch for 13.1 agrees
    # with NVIDIA's 13.1 runfile needing NVIDIA 590.x]
    {"cuda": ("13.1",), "nvidia_driver": (">=590.44.01",)},
    {"cuda": ("13.2",), "nvidia_driver": (">=595.45.04",)},
)


@dataclass(frozen=True)
class Policy:
    firmware: str | None = None  # None: every NIC of the fleet runs the same version
    versions: dict[str, list[str]] = field(default_factory=dict)  # ofed / nvidia_driver / nccl -> allowed
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    gpudirect: bool = True
    sample_seconds: float = DEFAULT_SAMPLE_SECONDS
    max_pre_fec_ber: float = DEFAULT_MAX_PRE_FEC_BER
    above4g: bool = True  # every NVIDIA GPU's large BAR mapped above 4 GiB
    sriov_vfs: int | None = None  # None: SR-IOV not checked; N: every intended NIC runs N VFs (0: none)
    compatibility: tuple[dict[str, tuple[str, ...]], ...] = DEFAULT_COMPATIBILITY
    compatibility_source: str = "default"  # "default" | "intent"

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
            above4g=bool(section.get("above4g", True)),
            sriov_vfs=None if section.get("sriov") is None else int(section["sriov"].get("vfs", 0)),
            compatibility=_table(section["compatibility"]) if "compatibility" in section else DEFAULT_COMPATIBILITY,
            compatibility_source="intent" if "compatibility" in section else "default",
        )


def _table(rows: list[dict[str, Any]]) -> tuple[dict[str, tuple[str, ...]], ...]:
    """The intent's rows, each column one version spec or a list of them, as tuples of specs."""
    return tuple(
        {k: tuple(str(v) for v in (value if isinstance(value, list) else [value])) for k, value in row.items()}
        for row in rows
    )


def _numbers(version: str) -> tuple[int, ...]:
    """The leading dotted numbers of a version: ``550.90.07`` -> (550, 90, 7); ``24.04-0.6.6.0`` -> (24, 4)."""
    match = re.match(r"\d+(?:\.\d+)*", version)
    return tuple(int(n) for n in match.group(0).split(".")) if match else ()


def matches(version: str, spec: str) -> bool:
    """A version against one spec: ``>=X.Y.Z`` compares the dotted numbers; else a prefix (``allowed``)."""
    if spec.startswith(">="):
        have = _numbers(version)
        return bool(have) and have >= _numbers(spec[2:])
    return allowed(version, [spec])


def compatible_row(
    found: dict[str, str | None], table: tuple[dict[str, tuple[str, ...]], ...]
) -> dict[str, tuple[str, ...]] | None:
    """The first row every column of which one of its specs matches the host's version (a column the host did not
    report matches no spec); None when no row does."""
    for row in table:
        if all(found.get(k) and any(matches(str(found[k]), s) for s in specs) for k, specs in row.items()):
            return row
    return None


def allowed(version: str, table: list[str]) -> bool:
    """A version is allowed when it equals an entry or starts with one followed by a separator (``2.21.5``
    allows ``2.21.5-1+cuda12.4``; ``24.04`` allows ``24.04-0.6.6.0``)."""
    return any(version == v or (version.startswith(v) and version[len(v)] in ".-+:~") for v in table)
