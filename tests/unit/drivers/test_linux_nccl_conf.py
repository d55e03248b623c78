"""``/etc/nccl.conf`` read as NCCL reads it (``src/misc/param.cc``, ``setEnvFile``): nothing stripped, so a line
written ``KEY = VAL`` sets a variable NCCL never looks up, and drift must not call it in sync (issue 38)."""

from __future__ import annotations

from fabconf.platform.linux.parse import parse_nccl_conf
from fabconf.platform.linux.plan import _plan_nccl
from fabconf.platform.linux.state import FileTarget

WANT = "# fabconf\nNCCL_IB_HCA=mlx5_0:1\nNCCL_IB_TC=106\n"


def test_spaces_around_the_equals_sign_are_part_of_the_name_and_value() -> None:
    assert parse_nccl_conf("NCCL_IB_HCA = mlx5_0:1\n") == {"NCCL_IB_HCA ": " mlx5_0:1"}
    assert parse_nccl_conf("NCCL_IB_HCA==mlx5_0:1\n") == {"NCCL_IB_HCA": "=mlx5_0:1"}
    assert parse_nccl_conf("# NCCL_IB_TC=1\n\nno equals sign\n") == {}


def test_a_spaced_file_is_drift_and_the_rendered_one_is_in_sync() -> None:
    assert _plan_nccl(FileTarget(WANT), WANT, "") == []
    spaced = "NCCL_IB_HCA = mlx5_0:1\nNCCL_IB_TC = 106\n"
    changes = _plan_nccl(FileTarget(WANT), spaced, "")
    assert changes and "NCCL_IB_HCA (unset) -> mlx5_0:1" in changes[0].line
