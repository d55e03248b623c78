"""GPU host pushes with other RoCE profiles than the example's: every kind of host setting changing at once,
and exactly one value of each kind changing. Real SSH to the lab GPU host simulator, no mocks.

Regression for "a GPU host whose NIC needs more than one mlxconfig change cannot be pushed": the planner
attached the one `mlxconfig set` command to the first firmware change only, and the driver refused the
others as having no command.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from profiles import PROFILE_B, profile_inventory
from test_linux_driver import connect, managed, start_host

from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.render import render
from fabconf.platform.linux.driver import LinuxDriver
from fabconf.platform.linux.parse import mlx_same
from fabconf.platform.linux.plan import plan
from fabconf.platform.linux.state import target_from_document
from fabconf_lab.host.sim import GpuHostSim


def profile_doc(tmp_path: Path, profile: dict[str, Any]) -> str:
    """gpu01's rendered desired state for the example inventory with ``profile`` over its fabric.yaml."""
    compiled = compile_inventory(profile_inventory(tmp_path, profile))  # validated: the profile is legal
    return render(compiled.data["gpu01"])


@pytest.fixture
def host(tmp_path: Path) -> Iterator[GpuHostSim]:
    sim = start_host(tmp_path / "host")
    try:
        yield sim
    finally:
        sim.stop()


@pytest.fixture
def driver(host: GpuHostSim) -> Iterator[LinuxDriver]:
    drv = connect(host)
    try:
        yield drv
    finally:
        drv.close()


def _assert_at(doc: str, host: GpuHostSim, driver: LinuxDriver) -> None:
    want = yaml.safe_load(doc)
    assert driver.compare_config() == ""
    running = yaml.safe_load(driver.get_config()["running"])
    for section in ("qos", "ecn", "roce_tos", "nccl_conf"):
        assert running[section] == want[section], section
    assert {k: running["mlxconfig"][k] for k in want["mlxconfig"]} == want["mlxconfig"]
    state = managed(host)
    for nic in want["nics"]:
        trust, pfc, mtu, np_, rp, cnp_dscp, cnp_prio, tos, mlx = state["nics"][nic["netdev"]]
        assert (trust, mtu, tos) == (want["qos"]["trust"], nic["mtu"], want["roce_tos"])
        assert ",".join(map(str, pfc)) == want["qos"]["pfc"]
        assert [p for p, bit in enumerate(np_) if bit] == want["ecn"]["roce_np_enable"]
        assert [p for p, bit in enumerate(rp) if bit] == want["ecn"]["roce_rp_enable"]
        assert (cnp_dscp, cnp_prio) == (want["ecn"]["cnp_dscp"], want["ecn"]["cnp_802p_prio"])
        assert all(mlx_same(want_value, str(mlx[key])) for key, want_value in want["mlxconfig"].items()), mlx


def test_every_kind_of_host_setting_changes_at_once(tmp_path: Path, host: GpuHostSim, driver: LinuxDriver) -> None:
    doc = profile_doc(tmp_path, PROFILE_B)
    driver.load_merge_candidate(config=doc)
    diff = driver.compare_config()
    for expected in (
        "trust pcp -> dscp",
        "pfc 0,0,0,0,0,0,0,0 -> 0,0,0,1,1,0,0,0",
        "mtu 1500 -> 9000",
        "ecn roce_np_enable none -> 3,4",
        "mlxconfig CNP_DSCP_P1 48 -> 46",
        "mlxconfig CNP_802P_PRIO_P1 6 -> 5",
        "mlxconfig ROCE_CC_PRIO_MASK_P1 255 -> 24",
        "roce_tos (cma_roce_tos) 0 -> 138",
        "NCCL_IB_QPS_PER_CONNECTION (unset) -> 4",
        "NCCL_DEBUG (unset) -> WARN",
    ):
        assert expected in diff, (expected, diff)
    driver.commit_config()  # used to fail: "cannot apply, nothing changed" for the 2nd and 3rd mlxconfig keys
    _assert_at(doc, host, driver)
    # one mlxconfig call per device carried all three keys; pending until a firmware reset
    sets = [c for c in driver.commands_sent if "mlxconfig" in c and " set " in c]
    assert len(sets) == 2 and all(c.count("=") == 3 for c in sets), sets
    pending = driver.pending_firmware()
    assert sorted(pending) == ["mlx5_0", "mlx5_1"]
    assert set(pending["mlx5_0"]) == {"CNP_DSCP_P1", "CNP_802P_PRIO_P1", "ROCE_CC_PRIO_MASK_P1"}


def test_exactly_one_value_of_each_kind_changes(tmp_path: Path, host: GpuHostSim, driver: LinuxDriver) -> None:
    first = profile_doc(tmp_path / "a", PROFILE_B)
    driver.load_merge_candidate(config=first)
    driver.commit_config()
    doc = yaml.safe_load(first)
    doc["qos"]["pfc"] = "0,0,0,1,1,1,0,0"  # one more lossless priority
    doc["ecn"]["roce_np_enable"] = [3, 4, 5]  # DCQCN on it
    doc["ecn"]["roce_rp_enable"] = [3, 4, 5]
    doc["roce_tos"] = 106
    doc["nics"][1]["mtu"] = 8000
    doc["mlxconfig"]["ROCE_CC_PRIO_MASK_P1"] = "56"
    doc["nccl_conf"] = doc["nccl_conf"].replace("NCCL_IB_TIMEOUT=22", "NCCL_IB_TIMEOUT=20")
    second = yaml.safe_dump(doc, sort_keys=False)
    driver.load_merge_candidate(config=second)
    lines = driver.compare_config().splitlines()
    assert "mlx5_0: mlxconfig ROCE_CC_PRIO_MASK_P1 24 -> 56 (pending until firmware reset or reboot)" in lines
    assert "/etc/nccl.conf: NCCL_IB_TIMEOUT 22 -> 20" in lines
    assert "ens2f0np0: mtu 9000 -> 8000" in lines and "ens1f0np0: mtu 9000 -> 8000" not in lines
    driver.commit_config()
    _assert_at(second, host, driver)


def test_the_planner_never_leaves_a_change_without_its_command(tmp_path: Path) -> None:
    """Every planned change that can be applied carries the command that applies it."""
    from fabconf.platform.linux.parse import MlxValue
    from fabconf.platform.linux.state import HostObserved, NicObserved

    target = target_from_document(profile_doc(tmp_path, PROFILE_B))
    old = {"CNP_DSCP_P1": "48", "CNP_802P_PRIO_P1": "6", "ROCE_CC_PRIO_MASK_P1": "255", "LINK_TYPE_P1": "ETH(2)"}
    observed = HostObserved(
        hostname="gpu01",
        nics={
            n.netdev: NicObserved(
                n.netdev,
                n.rdma,
                trust="dscp",
                pfc=[0] * 8,
                dscp2prio=[d >> 3 for d in range(64)],
                ecn_np=[0] * 8,
                ecn_rp=[0] * 8,
                mlx={k: MlxValue(v, v, v) for k, v in old.items()},
                pci=f"0000:{0x17 + 0x10 * i:02x}:00.0",
            )
            for i, n in enumerate(target.nics)
        },
    )
    changes = plan(target, observed)
    firmware = [c for c in changes if "mlxconfig" in c.line]
    assert len(firmware) == 2  # one per RDMA device, each with its three keys
    assert all(c.commands and c.line.count("\n") == 2 for c in firmware)
    assert all(c.commands for c in changes)
    # two ports of one adapter: the card's firmware settings are planned once, for its first port
    for nic in target.nics:
        nic.adapter = "0000:17:00"
    firmware = [c for c in plan(target, observed) if "mlxconfig" in c.line]
    assert len(firmware) == 1 and "mlxconfig -d 0000:17:00.0 " in firmware[0].commands[0]
