"""A second RoCE profile, so that no test knows only the example inventory's values (DSCP 26, priority 3,
CNP 48/6, ECN 150 kB/1.5 MB). Applied over a copy of inventory/ and validated like any inventory."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml
from pristine import EXAMPLE

ROOT = Path(__file__).resolve().parent.parent

# Other data DSCP and priority, two lossless priorities (DCQCN on both), another CNP DSCP and priority (so
# every host needs three mlxconfig keys changed), other ECN thresholds and probability, extra NCCL keys.
PROFILE_B: dict[str, Any] = {
    "roce": {
        "dscp": 34,
        "priority": 4,
        "pfc_priorities": [3, 4],
        "cnp": {"dscp": 46, "priority": 5},
        "ecn": {"min_threshold_bytes": 200000, "max_threshold_bytes": 2000000, "probability": 50},
    },
    "hosts": {
        "mlxconfig": {"ROCE_CC_PRIO_MASK_P1": 24},
        "nccl": {"NCCL_IB_QPS_PER_CONNECTION": 4, "NCCL_IB_TIMEOUT": 22, "NCCL_DEBUG": "WARN"},
    },
}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def profile_inventory(where: Path, profile: dict[str, Any] = PROFILE_B) -> Path:
    """A copy of the example inventory at ``where/inventory`` with ``profile`` merged over its fabric.yaml."""
    inventory = where / "inventory"
    shutil.copytree(EXAMPLE, inventory)
    fabric = inventory / "fabric.yaml"
    fabric.write_text(yaml.safe_dump(_merge(yaml.safe_load(fabric.read_text()), profile), sort_keys=False))
    return inventory
