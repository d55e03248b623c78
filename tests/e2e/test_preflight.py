"""``fabconf preflight`` against the lab: a clean fabric passes; each injected fault fails exactly the check that
names it (a host port at 200G, a DOWN RDMA link, a firmware version that differs, lldpad running, a switch port
at the wrong speed, a lossy link, GPUDirect prerequisites, versions outside the compatibility table, a RoCE active
MTU below 4096, a NIC's PCIe link trained below its capability, RoCE retransmissions and a PFC storm, on a host
and on NX-OS and Cumulus switches, errored frames on an NX-OS uplink), and the
host platform's prerequisites (Above 4G Decoding, the IOMMU and SR-IOV, the OFED/driver/CUDA/NCCL table)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from labkit import fab, inv, sim
from prometheus_client.parser import text_string_to_metric_families

from fabconf_lab.orchestrator import Lab


def _preflight(capsys: pytest.CaptureFixture[str], lab: Lab, *extra: str) -> tuple[int, dict[str, dict]]:
    code, out = fab(capsys, "preflight", "-i", inv(lab), "--format", "json", *extra)
    return code, {d["device"]: d for d in json.loads(out)["devices"]}


def _checks(device: dict) -> set[str]:
    return {line.split("]")[0].lstrip("[") for line in device["failed_checks"]}


def test_a_clean_fabric_passes_and_each_fault_fails_its_check(
    lab: Lab, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    groups = Path(inv(lab)) / "groups.yaml"  # each rail's NIC serves a GPU (the lab's GPU i shares NIC i's switch)
    text = groups.read_text()
    text = text.replace("rail: 0, speed_gbps: 400}", "rail: 0, gpu: 0, speed_gbps: 400}")
    groups.write_text(text.replace("rail: 1, speed_gbps: 400}", "rail: 1, gpu: 1, speed_gbps: 400}"))
    fabric = Path(inv(lab)) / "fabric.yaml"
    fabric.write_text(
        fabric.read_text()
        + "\npreflight:\n  sample_seconds: 0.5\n"
        + "  versions: {ofed: ['24.04'], nvidia_driver: ['550.90'], nccl: ['2.21.5']}\n"
    )
    code, out = fab(
        capsys,
        "push",
        "-i",
        inv(lab),
        "--yes",
        "--canary",
        "0",
        "--batch",
        "100%",
        "--bgp-wait",
        "0",
        "--allow-fw-reset",
    )
    assert code == 0, out
    code, devices = _preflight(capsys, lab)
    assert code == 0, {n: d["failed_checks"] for n, d in devices.items() if d["failed_checks"]}
    assert {d["state"] for d in devices.values()} == {"verified"}
    # evidence on pass: every check run names the values it read
    host_checks = {"rdma", "firmware", "mlxconfig", "active_mtu", "pcie", "fec_ber", "affinity", "gid", "counters"}
    host_checks.add("nic_counters")
    host_checks |= {"above4g", "compatibility"}  # on by default (issue 33)
    assert host_checks | {"lldpad", "gpudirect", "versions"} == set(devices["gpu01"]["evidence"])
    assert devices["gpu01"]["evidence"]["active_mtu"]["ibv_devinfo"] == {"mlx5_0": 4096, "mlx5_1": 4096}
    nic = devices["gpu01"]["evidence"]["pcie"]["lspci -vvv"]["0000:17:00.0"]
    assert (nic["speed"], nic["width"], nic["cap_speed"], nic["cap_width"]) == (32.0, 16, 32.0, 16)
    assert "ethtool -S ens1f0np0 (second read)" in devices["gpu01"]["evidence"]["nic_counters"]
    assert devices["leaf3"]["evidence"]["ports"]["get_interfaces"]["Ethernet1/1"]["is_up"] is True
    assert set(devices["leaf3"]["evidence"]) == {"ports", "counters"}  # EOS: NAPALM's getter; no PFC counters
    assert set(devices["leaf1"]["evidence"]) == {"ports", "counters", "pfc"}  # Cumulus: link stats, pfc-stats
    assert set(devices["leaf4"]["evidence"]) == {"ports", "counters", "pfc"}  # NX-OS: `show … | json` via cli()
    nxos = devices["leaf4"]["evidence"]
    assert nxos["counters"]["get_interfaces_counters"]["Ethernet1/63"]["rx_errors"] == 0
    assert nxos["pfc"]["received per second"]["Ethernet1/1"] == {"all": 0.0}  # PFC on, no pause frames
    assert devices["leaf1"]["evidence"]["pfc"]["received per second"]["swp1"] == {"3": 0.0}
    # a passing preflight in text names the checks passed, not every value read (issue #40: 158 KB of raw JSON);
    # --format json above keeps every value
    code, text = fab(capsys, "preflight", "-i", inv(lab), "--limit", "gpu01")
    assert code == 0 and "active_mtu" in text and '"ibv_devinfo"' not in text
    code, text = fab(capsys, "preflight", "-i", inv(lab), "--limit", "leaf4")
    assert code == 0 and "pfc" in text and '"pfc_counters"' not in text

    gpu03 = sim(lab, "gpu03")
    with pytest.raises(ValueError, match="PORT:SPEEDg"):
        lab.fault("gpu01", "link", "ens1f0np0:fast")
    lab.fault("gpu01", "link", "ens1f0np0:200g")  # negotiated at 200G (`fabconf lab fault gpu01 link ...`)
    lab.fault("gpu02", "link", "ens2f0np0:down")  # the optic died
    with gpu03.lock:
        gpu03.state.nics[0].fw_version = "28.36.1010"  # one NIC on another firmware
        gpu03.state.lldpad_running = True
    lab.fault("gpu04", "link", "ens1f0np0:errors=0.001")  # 0.1 % of frames in error
    with sim(lab, "gpu05").lock:
        sim(lab, "gpu05").state.acs_enabled = True
        sim(lab, "gpu05").state.modules.remove("nvidia_peermem")
    with sim(lab, "gpu08").lock:  # GPUDirect through dma-buf: open kernel modules on Linux 6.8, no nvidia_peermem
        sim(lab, "gpu08").state.nvidia_open = True
        sim(lab, "gpu08").state.kernel = "6.8.0-45-generic"
        sim(lab, "gpu08").state.modules.remove("nvidia_peermem")
    with sim(lab, "gpu06").lock:
        sim(lab, "gpu06").state.ofed_version = "MLNX_OFED_LINUX-23.10-1.1.9.0"
    lab.fault("gpu06", "pfc-storm")  # pause frames at line rate; the NIC's watchdog acts
    with pytest.raises(ValueError, match="NETDEV:SIZE"):
        lab.fault("gpu07", "mtu", "ens1f0np0:9000")
    lab.fault("gpu07", "mtu", "ens1f0np0:1024")  # RoCE's active MTU fell to 1024
    with pytest.raises(ValueError, match="NETDEV:xN"):
        lab.fault("gpu07", "pcie", "ens2f0np0:x3")
    lab.fault("gpu07", "pcie", "ens2f0np0:x8")  # the card trained at half its lanes
    lab.fault("gpu03", "numa", "ens2f0np0:1")  # the rail-1 card in a slot of the other socket
    lab.fault("leaf3", "link", "Ethernet2/1:200g")  # the switch end of gpu06's rail-0 link
    lab.fault("leaf3", "link", "Ethernet63/1:errors=0.001")  # its uplink to spine1 loses frames
    lab.fault("leaf1", "link", "swp63:errors=0.001")  # Cumulus: an uplink that loses frames
    lab.fault("leaf4", "link", "Ethernet1/63:errors=0.001")  # NX-OS: its uplink to spine1 loses frames
    lab.fault("leaf2", "pfc-storm")  # Cumulus: pause frames at line rate on the RoCE priority of every port
    lab.fault("spine2", "pfc-storm")  # NX-OS: the same, seen in RxPPP

    code, devices = _preflight(capsys, lab)
    assert code == 2
    expected = {
        "gpu01": {"rdma"},
        "gpu02": {"rdma"},
        "gpu03": {"firmware", "lldpad", "affinity"},
        "gpu04": {"counters", "nic_counters", "fec_ber"},  # errored frames cost retransmissions
        "gpu05": {"gpudirect"},
        "gpu06": {"versions", "nic_counters"},
        "gpu07": {"active_mtu", "pcie"},
        "leaf3": {"ports", "counters"},
        "leaf1": {"counters"},
        "leaf2": {"ports", "pfc"},  # the far end of gpu02's dead link; a pause storm
        "leaf4": {"counters"},
        "spine2": {"pfc"},
    }
    failing = {name: _checks(d) for name, d in devices.items() if d["failed_checks"]}
    assert failing == expected, {n: devices[n]["failed_checks"] for n in failing}
    lines = {name: "\n".join(d["failed_checks"]) for name, d in devices.items()}
    assert "rate 200 Gb/s, inventory 400 Gb/s" in lines["gpu01"]
    assert "state DOWN" in lines["gpu02"] or "expected ACTIVE / LINK_UP" in lines["gpu02"]
    assert "firmware 28.36.1010, the rest of the fleet runs 28.39.1002" in lines["gpu03"]
    assert "ACS redirect" in lines["gpu05"] and "nvidia_peermem is not loaded" in lines["gpu05"]
    assert "ofed 23.10-1.1.9.0 is not in the compatibility table" in lines["gpu06"]
    assert "mlx5_0 (ens1f0np0): RoCE active MTU 1024, not 4096" in lines["gpu07"]
    assert "[nic_counters] ens1f0np0 (mlx5_0): out_of_sequence +" in lines["gpu04"]
    assert "[affinity] mlx5_1 (ens2f0np0) and its GPU1 are SYS apart" in lines["gpu03"]
    assert "[fec_ber] mlx5_0 (ens1f0np0): pre-FEC BER 1.0E-05 above 1E-06 (mlxlink)" in lines["gpu04"]
    assert re.search(r"\[nic_counters\] ens1f0np0 \(mlx5_0\): rx_prio3_pause \d+/s", lines["gpu06"])
    assert "mlx5_1 (ens2f0np0) at 0000:27:00.0: PCIe link x8 at 32GT/s, capable of x16 at 32GT/s" in lines["gpu07"]
    assert "Ethernet2/1 (to gpu06:ens1f0np0): 200 Gb/s, intended 400 Gb/s" in lines["leaf3"]
    assert "[counters] Ethernet63/1 (to spine1:Ethernet3/1):" in lines["leaf3"]
    assert "[counters] swp63 (to spine1:" in lines["leaf1"]
    assert "[counters] Ethernet1/63 (to spine1:Ethernet4/1):" in lines["leaf4"]
    assert re.search(
        r"\[pfc\] swp64 \(to spine2:Ethernet1/2\): \d+ PFC pause frames/s received \(priority 3\)", lines["leaf2"]
    )
    assert re.search(r"\[pfc\] Ethernet1/4 \(to leaf4:Ethernet1/64\): \d+ PFC .*\(all priorities\)", lines["spine2"])

    # the same run as JUnit and Prometheus: one case per device, failures where the checks failed
    report = tmp_path / "preflight.prom"
    assert fab(capsys, "preflight", "-i", inv(lab), "--format", "prometheus", "-o", str(report))[0] == 2
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(report.read_text())
        for s in family.samples
    }
    assert samples[("fabconf_preflight_check_failures", (("check", "counters"), ("device", "gpu04")))] == 1
    assert samples[("fabconf_preflight_passed", (("device", "gpu08"), ("platform", "linux")))] == 1  # dma-buf
    code, out = fab(capsys, "preflight", "-i", inv(lab), "--format", "junit", "--limit", "gpu0[1-4]")
    cases = {c.get("name"): c for c in ET.fromstring(out[out.index("<?xml") :].split("\n", 1)[1]).iter("testcase")}
    assert set(cases) == {"gpu01", "gpu02", "gpu03", "gpu04"}
    assert all(c.find("failure") is not None for c in cases.values())

    # the bandwidth matrix over gpu05-gpu08 finds the pairs through the link leaf3 negotiated at 200G, and names it
    code, out = fab(capsys, "preflight", "-i", inv(lab), "--bandwidth", "--limit", "gpu0[5-8]", "--format", "json")
    matrix = json.loads(out)
    assert code == 2, out
    bad = sorted((p["client"], p["server"]) for p in matrix["pairs"] if not p["ok"])
    assert bad and all("gpu06:ens1f0np0" in pair for pair in bad), bad
    assert {p["kind"] for p in matrix["pairs"]} == {"same-rail", "cross-rail"} and len(matrix["pairs"]) == 16
    assert matrix["suspects"] == ["gpu06:ens1f0np0--leaf3"]
    assert all(p["gbps"] > 0.9 * 400 for p in matrix["pairs"] if p["ok"])


def test_a_device_that_cannot_be_checked_is_exit_1(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    lab.devices["gpu07"].sim.faults.set("auth-refuse")
    code, devices = _preflight(capsys, lab, "--limit", "gpu07,gpu08", "--retries", "0")
    assert code == 1
    assert devices["gpu07"]["state"] == "unreachable"


def test_nccl_all_reduce_against_the_links(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    """``--nccl``: nccl-tests' all_reduce_perf from the first selected host (the lab models its output); a host
    link negotiated at 200G pulls the bus bandwidth below 75 % of the hosts' NIC capacity."""
    code, out = fab(capsys, "preflight", "-i", inv(lab), "--nccl", "--limit", "gpu0[1-4]", "--format", "json")
    doc = json.loads(out[out.index("{") :])
    assert code == 0, doc
    assert doc["launched_from"] == "gpu01" and "all_reduce_perf -b 8 -e 8G -f 2 -g 1" in doc["command"]
    assert doc["threshold_gbs"] == 75.0 and doc["busbw_gbs"] > 75 and doc["sizes"][-1]["bytes"] == 8 << 30
    lab.fault("gpu03", "link", "ens1f0np0:200g")
    code, out = fab(capsys, "preflight", "-i", inv(lab), "--nccl", "--limit", "gpu0[1-4]")
    assert code == 2 and "[nccl] all_reduce_perf bus bandwidth" in out and "below 75.0 GB/s" in out
    code, out = fab(capsys, "preflight", "-i", inv(lab), "--nccl", "--limit", "gpu01")
    assert code != 0 and "two GPU hosts or more" in out


def test_host_prerequisites_pass_with_evidence_and_each_fault_fails_its_check(
    lab: Lab, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33: Above 4G Decoding (the GPUs' BAR1 in lspci), SR-IOV where the intent asks for it (the IOMMU, the
    firmware, the VFs), the compatibility table; each lab fault fails its own check and nothing else of these."""
    fabric = Path(inv(lab)) / "fabric.yaml"
    table = (
        "  compatibility:\n"
        "    - {ofed: '24.04', nvidia_driver: '>=550.54.14', cuda: '12.4', nccl: '2.21'}\n"
        "    - {ofed: '23.10', nvidia_driver: '>=535.54.03', cuda: '12.2', nccl: '2.18'}\n"
    )
    fabric.write_text(fabric.read_text() + "\npreflight:\n  sample_seconds: 0.2\n  sriov: {vfs: 4}\n" + table)
    hosts = ["gpu01", "gpu02", "gpu03", "gpu04", "gpu05"]
    for name in hosts:  # SR-IOV as an operator enables it: firmware, a firmware reset, then the VFs
        host = sim(lab, name)
        for nic in host.state.nics:
            assert host.run(f"mlxconfig -d {nic.pci} -y set SRIOV_EN=1 NUM_OF_VFS=4").status == 0
            assert host.run(f"mlxfwreset -d {nic.pci} -y reset").status == 0
            assert host.run(f"echo 4 > /sys/class/net/{nic.netdev}/device/sriov_numvfs").status == 0
    lab.fault("gpu02", "above4g", "off")  # the BIOS left BAR1 unassigned
    lab.fault("gpu03", "iommu", "off")
    lab.fault("gpu03", "sriov", "ens1f0np0:0")  # a driver reload dropped the VFs
    lab.fault("gpu04", "version", "nvidia_driver=535.104.05")  # too old for the CUDA 12.4 build of NCCL
    lab.fault("gpu05", "version", "ofed=23.10-1.1.9.0")  # an OFED of the other row
    lab.fault("gpu05", "version", "nccl=2.18.5-1+cuda12.2")
    lab.fault("gpu05", "version", "nvidia_driver=535.104.05")  # the whole 23.10 row: compatible
    code, devices = _preflight(capsys, lab, "--limit", ",".join(hosts))
    ours = {"above4g", "sriov", "compatibility"}
    failing = {name: _checks(d) & ours for name, d in devices.items() if _checks(d) & ours}
    assert failing == {"gpu02": {"above4g"}, "gpu03": {"sriov"}, "gpu04": {"compatibility"}}, failing
    lines = {name: "\n".join(d["failed_checks"]) for name, d in devices.items()}
    assert "[above4g] GPU at 0000:18:00.0: its 128G BAR (region 1) is unassigned (lspci -vvv)" in lines["gpu02"]
    assert lines["gpu02"].count("[above4g]") == 8  # every GPU of the board
    assert "[sriov] the IOMMU is off (/sys/class/iommu is empty)" in lines["gpu03"]
    assert "[sriov] mlx5_0 (ens1f0np0): 0 VFs (sriov_numvfs), the intent wants 4" in lines["gpu03"]
    assert "[compatibility] ofed 24.04-0.6.6.0, nvidia_driver 535.104.05, cuda 12.4" in lines["gpu04"]
    evidence = devices["gpu01"]["evidence"]
    assert evidence["above4g"]["lspci -vvv"]["0000:18:00.0"] == {
        "region": 1,
        "address": "0x200000000000",
        "size": "128G",
        "disabled": False,
    }
    assert evidence["sriov"]["ls /sys/class/iommu"] == ["dmar0", "dmar1", "dmar2", "dmar3"]
    assert evidence["sriov"]["cat /sys/class/net/ens1f0np0/device/sriov_numvfs"] == 4
    assert evidence["compatibility"]["row of the intent table"]["ofed"] == ["24.04"]
    assert devices["gpu05"]["evidence"]["compatibility"]["row of the intent table"]["ofed"] == ["23.10"]
    code, text = fab(capsys, "preflight", "-i", inv(lab), "--limit", "gpu01")  # unpushed: gid and MTU fail
    assert code == 2 and not any(f"[{check}]" in text for check in ours), text
    assert 'gpu01 compatibility: {"cat /proc/driver/nvidia/version":"550.90.07"' in text
