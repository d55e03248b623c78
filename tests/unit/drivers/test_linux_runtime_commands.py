"""The boot script's per-NIC commands written without ``sh``: the same lines as through ``sh``."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fabconf.platform.linux.plan import _runtime_commands, _runtime_quoted
from fabconf.platform.linux.state import NicTarget

NAMES = ["ens1f0np0", "mlx5_0", "eth-1.100", "", "a b", "x;rm", "it's", "é", "$(id)", "-", "a\nb", "mlx5_10"]
VALUES: list[Any] = [0, 1, 3, -1, 106, 9000, True, False, "3", "", "dscp", "pcp", "a b", "'", "$x", None]


def _maybe(rng: random.Random, value: Any) -> Any:
    return value if rng.random() < 0.8 else None


def _nic(rng: random.Random) -> NicTarget:
    return NicTarget(
        netdev=rng.choice(NAMES),
        rdma=rng.choice(NAMES),
        mtu=_maybe(rng, rng.choice(VALUES)),
        trust=_maybe(rng, rng.choice(["dscp", "pcp", "a b", "", "x'y"])),
        pfc=_maybe(rng, [rng.choice([0, 1, "1 2"]) for _ in range(8)]),
        dscp2prio=_maybe(rng, [rng.choice([d >> 3, 3, 6, "x y"]) for d in range(64)]),
        ecn_np=_maybe(rng, [rng.choice([0, 1, "1 "]) for _ in range(8)]),
        ecn_rp=_maybe(rng, [rng.choice([0, 1]) for _ in range(8)]),
        cnp_dscp=_maybe(rng, rng.choice(VALUES)),
        cnp_802p_prio=_maybe(rng, rng.choice(VALUES)),
        cma_tos=_maybe(rng, rng.choice(VALUES)),
        traffic_class=_maybe(rng, rng.choice(VALUES)),
    )


@pytest.mark.parametrize("seed", range(4))
def test_runtime_commands_are_the_quoted_ones(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(500):
        nic = _nic(rng)
        assert _runtime_commands(nic) == _runtime_quoted(nic), nic


def test_a_usual_nic() -> None:
    nic = NicTarget("ens1f0np0", "mlx5_0", mtu=9000, trust="dscp", pfc=[0, 0, 0, 1, 0, 0, 0, 0], cma_tos=106)
    nic.dscp2prio = [5 if d == 26 else 2 if d == 48 else d >> 3 for d in range(64)]
    assert _runtime_commands(nic) == _runtime_quoted(nic)
    assert _runtime_commands(nic)[2] == "mlnx_qos -i ens1f0np0 --dscp2prio set,26,5 --dscp2prio set,48,2 >/dev/null"
