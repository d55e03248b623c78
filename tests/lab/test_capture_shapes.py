"""The lab's host tools against the shape of real output (tests/captures, issue 37): keys, columns, spellings and
sizes. Where the lab must differ, the test says why."""

from __future__ import annotations

import json
import re

from capturekit import load

from fabconf.drivers.cli import nxos_counters
from fabconf.platform.linux.parse import parse_mlxconfig_query
from fabconf.preflight import hostparse as hp
from fabconf_lab.eos.sim import EosSim, Session
from fabconf_lab.host.nicstate import add_port_keys, nic_from_dict
from fabconf_lab.host.sim import GpuHostSim
from fabconf_lab.nvue.oper import operational_tree
from fabconf_lab.nxos.show import IfState, interface_row
from fabconf_lab.orchestrator import link_fault

IF0, IF1 = "ens1f0np0", "ens1f1np1"


def _host(nics: list[dict[str, object]] | None = None) -> GpuHostSim:
    host = GpuHostSim("gpu9", "127.12.2.9", ports=[IF0, IF1], username="u", password="p", port=0)
    if nics is not None:
        host.state.nics = [nic_from_dict(spec, i) for i, spec in enumerate(nics)]
        add_port_keys(host.state.nics)
    return host


def _rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"[* ] {7,8}[A-Za-z]", line)]


def test_mlxconfig_prints_a_full_size_dump_like_a_real_card() -> None:
    real = parse_mlxconfig_query(load("mlxconfig-query", "connectx6dx-25g-dual-port").text)
    dual = _host(
        [
            {"netdev": IF0, "rdma": "mlx5_0", "pci": "0000:17:00.0"},
            {"netdev": IF1, "rdma": "mlx5_1", "pci": "0000:17:00.1"},
        ]
    )
    text = dual.run("mlxconfig -d 0000:17:00.0 q").stdout
    lab = parse_mlxconfig_query(text)
    assert len(lab) >= len(real) == 185  # a dual-port card: every real key, and the lab's own (LINK_TYPE_P1, ...)
    assert set(real) <= set(lab)
    for key in ("EXP_ROM_UEFI_x86_ENABLE", "PCI_WR_ORDERING", "HOST_CHAINING_DESCRIPTORS", "PCI_ATOMIC_MODE"):
        assert lab[key].next_boot == real[key].next_boot, key  # spellings: lower case, Array[0..N], long names
    # the layout: "Configurations:" then Next Boot at the column the real dump has, keys from column 8
    header = next(line for line in text.splitlines() if line.startswith("Configurations:"))
    real_header = load("mlxconfig-query", "connectx6dx-25g-dual-port").text.split("Configurations:")[1].split("\n")[0]
    assert header.split(":", 1)[1].split() == real_header.split() == ["Next", "Boot"]
    assert all(line.startswith("        ") and line[8] != " " for line in _rows(text))
    # Where the lab differs: its order puts a second port's keys (_P2) after every _P1 key instead of after each
    # group (add_port_keys appends them); fabconf reads keys by name, so the order is not a shape it relies on.
    verbose = dual.run("mlxconfig -d 0000:17:00.0 -e q").stdout
    assert len(parse_mlxconfig_query(verbose)) == len(lab)
    single = _host().run("mlxconfig -d 0000:17:00.0 q").stdout
    assert 88 <= len(parse_mlxconfig_query(single)) < len(lab)  # a single-port card: the _P1 keys only


def test_mlxlink_fields_and_fec_spellings_as_mstflint_prints_them() -> None:
    real = load("mlxlink", "connectx6-hdr-ib-counters-grep").text
    host = _host()
    text = host.run("mlxlink -d 0000:17:00.0 -c").stdout
    real_keys = {line.split(":")[0].strip() for line in real.splitlines() if ":" in line}
    lab_keys = {line.split(":")[0].strip() for line in text.splitlines() if ":" in line}
    # the lab prints an Ethernet port's fields; Symbol Errors/BER and Link Error Recovery Counter are
    # InfiniBand-only or not read by fabconf, and amBER Version comes from the Tool Information section
    assert real_keys - lab_keys == {"Symbol Errors", "Symbol BER", "amBER Version", "Link Error Recovery Counter"}
    colon = {line.index(":") for line in text.splitlines() if " : " in line}
    assert colon == {line.index(":") for line in real.splitlines() if " : " in line} == {32}  # MFT 4.24
    bf3 = load("mlxlink", "bluefield3-100g-module-counters").text  # MFT 4.30 pads to 35: fabconf relies on neither
    assert {line.index(":") for line in bf3.splitlines() if " : " in line} == {35}
    assert hp.parse_mlxlink(text).fec == "Standard_RS-FEC - (544,514)"  # mstflint's name (mlxlink_maps.cpp)
    link_fault(host, f"{IF0}:fec=off")
    off = hp.parse_mlxlink(host.run("mlxlink -d 0000:17:00.0 -c").stdout)
    assert off.fec == "No FEC" and hp.fec_off(off.fec)
    link_fault(host, f"{IF0}:fec=on")
    assert not hp.fec_off(hp.parse_mlxlink(host.run("mlxlink -d 17:00.0 -c").stdout).fec)


def test_lspci_link_lines_and_pci_domains() -> None:
    real = load("lspci-vvv", "connectx7-dual-port-downgraded-lkml").text
    host = _host(
        [
            {"netdev": IF0, "rdma": "mlx5_0", "pci": "0000:17:00.0"},
            {"netdev": IF1, "rdma": "mlx5_1", "pci": "0002:17:00.0"},
        ]
    )
    text = host.run("lspci -vvv").stdout
    for field in ("LnkCap:", "LnkSta:"):  # the same line shape: two tabs, the field, a tab, then Speed
        assert re.search(rf"^\t\t{field}\t(Port #0, )?Speed ", real, re.M)
        assert re.search(rf"^\t\t{field}\t(Port #0, )?Speed ", text, re.M)
    # a device outside domain 0: lspci prints every address with its domain (pciutils lspci.c)
    assert all(re.match(r"[0-9a-f]{4}:", line) for line in text.splitlines() if line and not line[0].isspace())
    links = hp.parse_lspci_links(text)
    assert {"0000:17:00.0", "0002:17:00.0", "0000:18:00.0"} <= set(links)  # two NICs on bus 17, a GPU on 18
    mst = hp.parse_mst_status(host.run("mst status -v").stdout)
    assert mst == {"mlx5_0": ("0000:17:00.0", (IF0,)), "mlx5_1": ("0002:17:00.0", (IF1,))}
    assert "      17:00.0   mlx5_0" in host.run("mst status -v").stdout  # domain 0: mst prints bus:dev.fn


def test_each_port_is_its_own_rdma_device_with_port_1() -> None:
    host = _host(
        [
            {"netdev": IF0, "rdma": "mlx5_0", "pci": "0000:17:00.0"},
            {"netdev": IF1, "rdma": "mlx5_1", "pci": "0000:17:00.1"},
        ]
    )
    for dev in ("mlx5_0", "mlx5_1"):
        assert host.run(f"ls /sys/class/infiniband/{dev}/ports").stdout.split() == ["1"]
    text = host.run("grep -H . /sys/class/infiniband/mlx5_1/ports/1/hw_counters/out_of_sequence").stdout
    assert set(hp.parse_grep_values(text)) == {"out_of_sequence"}


def test_ethtool_stats_has_a_real_ports_size_and_names() -> None:
    real = hp.parse_ethtool_stats(load("ethtool-S", "mlx5-one-channel-annotated").text)
    host = _host()
    text = host.run(f"ethtool -S {IF0}").stdout
    lab = hp.parse_ethtool_stats(text)
    assert set(real) <= set(lab) and len(lab) >= len(real) == 263
    order = [name for name in lab if name in real]
    assert order == list(real)  # the real port's names in its order
    # Where the lab differs: it prints the per-priority counters for all eight priorities (359 in all), the real
    # port printed priority 0's only and no pause counters (it had no PFC); which priorities mlx5 prints is [U].
    assert {f"rx_prio{p}_buf_discard" for p in range(8)} <= set(lab)


# -- switches -----------------------------------------------------------------------------------------------------


def test_nxos_show_interface_rows_have_a_real_rows_keys_and_types() -> None:
    """The lab's Ethernet row against a real routed 100G port's: every key the lab prints is a real one, and the
    counters fabconf reads have the real types (numbers for unicast frames, strings for errors). A routed port
    has no ``eth_mode`` (the lab printed ``routed``). The lab leaves out the real row's other counters (runts,
    giants, pause, rates...), which fabconf does not read."""
    body = json.loads(load("nxos-show-interface-json", "nxapi-14-interfaces").text)
    real = next(
        r for r in nxos_counters.rows(body["TABLE_interface"], "ROW_interface") if r["interface"] == "Ethernet1/1"
    )
    assert "eth_ip_addr" in real and "eth_mode" not in real  # routed
    lab = interface_row(
        IfState("Ethernet1/1", True, True, 9216, None, "0000.1111.2222", True, "10.0.0.1/31", 400000, 10.0, 5, 1)
    )
    assert set(lab) <= set(real) | {"desc"}
    for key in ("eth_inucast", "eth_inerr", "eth_outucast", "eth_outerr", "eth_mtu", "eth_bw", "eth_ip_mask"):
        assert type(lab[key]) is type(real[key]), key
    assert real["eth_speed"] == "100 Gb/s" and lab["eth_speed"] == "400 Gb/s"
    switched = interface_row(
        IfState("Ethernet1/2", True, False, 9216, None, "0000.1111.2223", False, None, 400000, None)
    )
    assert switched["eth_mode"] == "access" and switched["eth_speed"] == "auto-speed"  # as real access ports


def test_nvue_interface_link_has_a_real_replys_leaves() -> None:
    """``GET /nvue_v1/interface``: the lab's ``link`` leaves and ``link stats`` counters are among a real 5.11+
    reply's, and the speed is written as NVUE writes it (``1G``, ``400G``). The lab leaves out ``mac-address``,
    ``flag``, ``state`` and the byte/drop/carrier counters: fabconf reads the MAC only for ``get_interfaces``,
    where the lab's is empty."""
    real = json.loads(load("nvue-interface", "cumulus-5x-eth0-lo-rest").text)
    applied = {"interface": {"swp1": {"type": "swp", "link": {"state": {"up": {}}}}, "eth0": {"type": "eth"}}}
    tree = operational_tree("leaf1", applied, ["swp1"], None)
    for name in ("swp1", "eth0"):
        link = tree["interface"][name]["link"]
        assert set(link) - {"stats"} <= set(real["eth0"]["link"]), name
        assert re.fullmatch(r"\d+G", link["speed"]) and real["eth0"]["link"]["speed"] == "1G"
        assert link["oper-status"] in ("up", "down") and link["admin-status"] == "up"
    stats = tree["interface"]["swp1"]["link"]["stats"]
    assert set(stats) <= set(real["eth0"]["link"]["stats"])
    assert all(type(v) is int for v in stats.values())


def test_eos_configuration_sessions_have_a_real_replys_keys() -> None:
    """``show configuration sessions``: the lab's reply and each session's keys are a real reply's; the lab gives
    every session a ``completedTime`` (0.0 while pending), as EOS 4.3x does for a session once opened."""
    real = json.loads(load("eos-show-configuration-sessions", "doublezero-open-in-vty5").text)
    sim = EosSim("leaf1", "127.12.2.10", ports=["Ethernet1"], username="u", password="p", ca=None)
    sim.sessions["fabconf_run1"] = Session("fabconf_run1", sim.running, user="admin")
    lab = sim._sessions_json(detail=False)
    assert set(lab) <= set(real)
    real_keys = set().union(*(set(s) for s in real["sessions"].values()))
    assert set(lab["sessions"]["fabconf_run1"]) <= real_keys
    assert lab["sessions"]["fabconf_run1"]["state"] == "pending"
