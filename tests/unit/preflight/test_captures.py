"""Every capture of real tool output in tests/captures through the parser fabconf reads it with, values checked
(issue 37). A capture that cannot be read safely is refused with a ParseError naming the command and the line,
never read as a wrong value. docs/reference/captures.md lists the corpus."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from types import SimpleNamespace

import pytest
from capturekit import ROOT, every, load

from fabconf.drivers.cli.leftovers import open_sessions
from fabconf.drivers.cli.nxos_counters import interfaces_counters, pfc_counters
from fabconf.drivers.cli.staging import _via_lines
from fabconf.platform.cumulus import getters as nvue_getters
from fabconf.platform.linux.driver import _recorded
from fabconf.platform.linux.parse import (
    IbPort,
    ParseError,
    parse_bus_info,
    parse_cma_roce_tos,
    parse_ibdev2netdev,
    parse_ibstat,
    parse_ip_link,
    parse_lldpctl,
    parse_mlnx_qos,
    parse_mlxconfig_query,
    parse_rdma_link,
)
from fabconf.platform.linux.ssh import Output
from fabconf.preflight import host
from fabconf.preflight import hostparse as hp
from fabconf.preflight.policy import Policy
from fabconf_lab.host.platcmds import GPU_BUSES
from fabconf_lab.orchestrator import _nic_specs


def test_every_capture_names_its_source_and_is_listed_in_the_docs() -> None:
    page = (ROOT.parent.parent / "docs" / "reference" / "captures.md").read_text(encoding="utf-8")
    captures = every()
    assert len(captures) >= 8
    for capture in captures:
        assert len(capture.source) > 20, capture.name
        assert f"{capture.command}/{capture.name}.txt" in page, f"{capture.name} is not in docs/reference/captures.md"


# -- mlxconfig query ------------------------------------------------------------------------------------------


def test_a_real_connectx6dx_dump_with_lower_case_keys_is_read_whole() -> None:
    """185 keys, among them EXP_ROM_UEFI_x86_ENABLE: the old key pattern refused the lower-case x and with it
    the whole host read (diff, push, preflight)."""
    values = parse_mlxconfig_query(load("mlxconfig-query", "connectx6dx-25g-dual-port").text)
    assert len(values) == 185
    assert values["EXP_ROM_UEFI_x86_ENABLE"].next_boot == "True(1)"
    assert values["PCI_WR_ORDERING"].next_boot == "per_mkey(0)"
    assert values["PCI_ATOMIC_MODE"].next_boot == "PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0)"
    assert values["CNP_DSCP_P2"].next_boot == "48" and values["ROCE_CC_PRIO_MASK_P1"].next_boot == "255"
    assert values["HOST_CHAINING_DESCRIPTORS"].next_boot == "Array[0..7]"
    assert values["SAFE_MODE_ENABLE"].next_boot == "True(1)"  # the last row, without trailing padding
    assert all(v.current is None and v.default is None for v in values.values())  # no -e: Next Boot only


def test_a_real_connectx5_dump_is_read_whole() -> None:
    values = parse_mlxconfig_query(load("mlxconfig-query", "connectx5-mft-4.11").text)
    assert len(values) == 89
    assert values["EXP_ROM_UEFI_x86_ENABLE"].next_boot == "False(0)"
    assert values["ROCE_CC_ALGORITHM_P1"].next_boot == "ECN(0)"
    assert values["SRIOV_EN"].next_boot == "True(1)" and values["MIN_TIME_BETWEEN_CNPS_P1"].next_boot == "0"


def test_a_verbose_query_gives_the_three_columns_and_what_is_pending() -> None:
    values = parse_mlxconfig_query(load("mlxconfig-query", "connectx4-verbose-nvidia-fixture").text)
    assert list(values) == [
        "KEEP_IB_LINK_UP_P2", "KEEP_LINK_UP_ON_BOOT_P2", "ESWITCH_HAIRPIN_DESCRIPTORS", "MEMIC_SIZE_LIMIT"
    ]  # fmt: skip
    keep = values["KEEP_IB_LINK_UP_P2"]
    assert (keep.default, keep.current, keep.next_boot, keep.pending) == ("False(0)", "True(1)", "True(1)", False)
    memic = values["MEMIC_SIZE_LIMIT"]
    assert (memic.current, memic.next_boot, memic.pending) == ("_256KB(1)", "DISABLED(0)", True)


def test_a_row_that_cannot_be_read_is_refused_naming_the_line() -> None:
    text = load("mlxconfig-query", "connectx5-mft-4.11").text
    broken = text.replace("ROCE_CC_ALGORITHM_P1                ECN(0)", "ROCE_CC_ALGORITHM_P1   ECN (0)")
    with pytest.raises(ParseError, match=r"mlxconfig query: line 42: unexpected configuration row"):
        parse_mlxconfig_query(broken)


# -- mlxlink ----------------------------------------------------------------------------------------------------


def test_mlxlink_counters_of_a_real_hdr_link() -> None:
    link = hp.parse_mlxlink(load("mlxlink", "connectx6-hdr-ib-counters-grep").text)
    assert link == hp.LinkBer("RS-FEC - (544,514) + PLR", 1e-8, 0)
    assert not hp.fec_off(link.fec)


@pytest.mark.parametrize("name", ["connectx6-hdr-ib-no-counters", "spectrum-25g-firecode-no-counters"])
def test_mlxlink_without_counters_is_refused_not_read_as_zero(name: str) -> None:
    with pytest.raises(ParseError, match="Raw Physical BER"):
        hp.parse_mlxlink(load("mlxlink", name).text)


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.asked: list[str] = []

    def read_tools(self, commands: list[str], *, root: bool = False) -> dict[str, tuple[int, str]]:
        self.asked += commands
        return {c: (0, self.text) for c in commands}


MST = (
    "PCI devices:\n------------\nDEVICE_TYPE             MST                           PCI       RDMA            NET"
    "                                     NUMA\n"
    "ConnectX6(rev:0)        /dev/mst/mt4123_pciconf0      0004:12:00.0   mlx5_0          net-ibp18s0   0\n"
)
NIC = {"rdma": "mlx5_0", "netdev": "ibp18s0"}


def test_a_link_without_fec_fails_fec_ber() -> None:
    """mlxlink names FEC off ``No FEC`` (mstflint's own name table); the check looked for ``no-fec`` and passed.
    The real capture with its FEC line as mlxlink prints a link without FEC."""
    text = load("mlxlink", "connectx6-hdr-ib-counters-grep").text.replace("RS-FEC - (544,514) + PLR", "No FEC")
    facts = host.HostFacts()
    reader = _Reader(text)
    host._fec_ber([NIC], host._Reads({"mst status -v": (0, MST)}, facts), reader, Policy())  # type: ignore[arg-type]
    assert reader.asked == ["mlxlink -d 0004:12:00.0 -c"]  # the address with its domain
    assert facts.failed == ["[fec_ber] mlx5_0 (ibp18s0): FEC No FEC (mlxlink): a 400G PAM4 link needs RS-FEC"]


# -- lspci -vvv and PCI domains ---------------------------------------------------------------------------


def test_lspci_links_of_real_captures() -> None:
    gh200 = hp.parse_lspci_links(load("lspci-vvv", "gh200-connectx7-fixture").text)
    assert sorted(gh200) == ["0000:17:00.0", "0000:ca:00.0"]
    assert gh200["0000:ca:00.0"] == hp.PcieLink(
        "Infiniband controller: Mellanox Technologies MT2910 Family [ConnectX-7]", 32.0, 16, 32.0, 16
    )
    assert (gh200["0000:17:00.0"].cap_speed, gh200["0000:17:00.0"].speed) == (16.0, 16.0)
    cx7 = hp.parse_lspci_links(load("lspci-vvv", "connectx7-dual-port-downgraded-lkml").text)
    assert list(cx7) == ["0000:b1:00.1"]  # the VF's "Speed unknown" is no link, not a zero
    assert (cx7["0000:b1:00.1"].speed, cx7["0000:b1:00.1"].width) == (16.0, 8)


def _two_domains() -> str:
    """The real degraded ConnectX-7 block in domain 0000 and a healthy copy of it in domain 0002, as lspci prints
    them once any device is outside domain 0 [V: pciutils lspci.c]."""
    block = load("lspci-vvv", "connectx7-dual-port-downgraded-lkml").text.split("b1:00.2 ")[0]
    healthy = block.replace("Speed 16GT/s (downgraded), Width x8 (downgraded)", "Speed 32GT/s (ok), Width x16 (ok)")
    return "0000:" + block + "0002:" + healthy


def test_pci_domains_are_kept_apart() -> None:
    links = hp.parse_lspci_links(_two_domains())
    assert (links["0000:b1:00.1"].width, links["0002:b1:00.1"].width) == (8, 16)
    mst = (
        "PCI devices:\n------------\nDEVICE_TYPE             MST                           PCI       RDMA"
        "            NET                                     NUMA\n"
        "ConnectX7(rev:0)        /dev/mst/mt4129_pciconf0.1    b1:00.1   mlx5_1          net-ens1f1np1   1\n"
        "ConnectX7(rev:0)        /dev/mst/mt4129_pciconf1.1    0002:b1:00.1   mlx5_3          net-ens2f1np1   1\n"
    )
    facts = host.HostFacts()
    reads = host._Reads({"lspci -vvv": (0, _two_domains()), "mst status -v": (0, mst)}, facts)
    host._pcie([{"rdma": "mlx5_1", "netdev": "ens1f1np1"}, {"rdma": "mlx5_3", "netdev": "ens2f1np1"}], reads)
    assert facts.failed == [
        "[pcie] mlx5_1 (ens1f1np1) at 0000:b1:00.1: PCIe link x8 at 16GT/s, capable of x16 at 32GT/s "
        "(lspci LnkSta/LnkCap); reseat the card or check the slot"
    ]


def test_an_address_listed_twice_is_refused() -> None:
    block = load("lspci-vvv", "connectx7-dual-port-downgraded-lkml").text.split("b1:00.2 ")[0]
    with pytest.raises(ParseError, match="listed twice"):
        hp.parse_lspci_links(block + block)


# -- dual-port cards -----------------------------------------------------------------------------------------


def test_the_second_port_of_a_card_is_its_own_rdma_device_with_port_1() -> None:
    """ConnectX: mlx5_1 is port 2 of the card and has one RDMA port, 1 (NCCL_IB_HCA mlx5_1:1)."""
    command = host._hw({"rdma": "mlx5_1", "netdev": "ens1f1np1", "port": 2})
    assert "/sys/class/infiniband/mlx5_1/ports/1/hw_counters/out_of_sequence" in command
    assert "ports/2" not in command


# -- the lab's PCI buses ------------------------------------------------------------------------------------------


def test_lab_adapter_cards_get_buses_clear_of_the_gpus_and_switch_ports() -> None:
    nic = SimpleNamespace
    nics = (
        nic(netdev="ens0", rdma="mlx5_0", pci="0000:17:00.0", adapter="", port=None, speed_gbps=400),
        nic(netdev="ens1f0np0", rdma="mlx5_1", pci="", adapter="cx7a", port=1, speed_gbps=400),
        nic(netdev="ens1f1np1", rdma="mlx5_2", pci="", adapter="cx7a", port=2, speed_gbps=400),
        nic(netdev="ens2f0np0", rdma="mlx5_3", pci="", adapter="cx7b", port=1, speed_gbps=400),
    )
    specs = _nic_specs(nics)
    buses = [int(s["pci"].split(":")[1], 16) for s in specs]
    gpus = {int(b, 16) for b in GPU_BUSES}
    assert buses[1] == buses[2] and [s["pci"][-1] for s in specs[1:3]] == ["0", "1"]
    for bus in set(buses[1:]):
        assert bus not in gpus and bus - 1 not in gpus, f"{bus:02x} or its switch port is a GPU's bus"
        assert bus - 1 not in buses and bus + 1 not in buses


# -- mlnx_qos and cma_roce_tos ---------------------------------------------------------------------------------


def test_mlnx_qos_of_a_real_dscp_trusting_port() -> None:
    report = parse_mlnx_qos(load("mlnx_qos", "connectx-trust-dscp-pfc3-netarbiter").text)
    assert (report.dcbx, report.trust, report.pfc) == ("OS controlled", "dscp", [0, 0, 0, 1, 0, 0, 0, 0])
    assert report.dscp2prio == [d >> 3 for d in range(64)] and not report.lldpad_warning


def test_cma_roce_tos_of_a_real_host() -> None:
    assert parse_cma_roce_tos(load("cma_roce_tos", "set-106-netarbiter").text) == 106


# -- mst status -v ----------------------------------------------------------------------------------------------


def test_mst_status_of_a_bluefield3_names_several_netdevs() -> None:
    """mst lists every netdev of a function (``net-p1,net-pf1hpf,net-en3f1pf1sf0``); the port's must count as
    paired, not the whole column read as one name."""
    mst = hp.parse_mst_status(load("mst-status-v", "bluefield3-several-netdevs").text)
    assert mst == {
        "mlx5_1": ("0000:03:00.1", ("p1", "pf1hpf", "en3f1pf1sf0")),
        "mlx5_0": ("0000:03:00.0", ("pf0hpf", "en3f0pf0sf0", "p0")),
    }
    facts = host.HostFacts()
    text = load("mst-status-v", "bluefield3-several-netdevs").text
    results: defaultdict[str, tuple[int, str]] = defaultdict(lambda: (1, ""))  # the other tools: not read
    results["mst status -v"] = (0, text)
    host._links([{"rdma": "mlx5_1", "netdev": "p1"}, {"rdma": "mlx5_0", "netdev": "p9"}], host._Reads(results, facts))
    assert [f for f in facts.failed if "mst pairs" in f] == [
        "[rdma] mlx5_0: mst pairs it with pf0hpf, en3f0pf0sf0, p0, the inventory says p9"
    ]


def test_an_mst_address_outside_domain_0_finds_its_link() -> None:
    """IBM Power: ``mst status -v`` prints ``0004:01:00.0``; preflight stripped only ``0000:`` and reported
    "no PCIe link". The lspci block is the real ConnectX-7 one, placed at that address."""
    mst = load("mst-status-v", "connectx4-power-domain-0004").text
    assert hp.parse_mst_status(mst)["mlx5_0"] == ("0004:01:00.0", ("ib0",))
    block = load("lspci-vvv", "connectx7-dual-port-downgraded-lkml").text.split("b1:00.2 ")[0]
    lspci = "0004:" + block.replace("b1:00.1 ", "01:00.0 ", 1)
    facts = host.HostFacts()
    reads = host._Reads({"lspci -vvv": (0, lspci), "mst status -v": (0, mst)}, facts)
    host._pcie([{"rdma": "mlx5_0", "netdev": "ib0"}], reads)
    assert facts.failed == [
        "[pcie] mlx5_0 (ib0) at 0004:01:00.0: PCIe link x8 at 16GT/s, capable of x16 at 32GT/s "
        "(lspci LnkSta/LnkCap); reseat the card or check the slot"
    ]


def test_mlxlink_of_a_real_bluefield3_with_module_info() -> None:
    link = hp.parse_mlxlink(load("mlxlink", "bluefield3-100g-module-counters").text)
    assert link == hp.LinkBer("Standard RS-FEC - RS(528,514)", 15e-255, 0)
    assert not hp.fec_off(link.fec)


# -- nvidia-smi topo -m and ibstat --------------------------------------------------------------------------------


def test_topology_of_a_real_eight_gpu_node_with_ten_nics() -> None:
    topo = hp.parse_topo(load("nvidia-smi-topo-m", "a100-nv12-ten-nics-tabs").text)
    assert sorted(topo) == [str(g) for g in range(8)] and all(len(row) == 10 for row in topo.values())
    assert (topo["0"]["mlx5_0"], topo["0"]["mlx5_1"], topo["0"]["mlx5_2"]) == ("PXB", "PXB", "SYS")
    assert (topo["7"]["mlx5_7"], topo["3"]["mlx5_9"]) == ("PXB", "SYS")


def test_topology_pasted_with_spaces_for_tabs_is_refused() -> None:
    """nvidia-smi separates its columns with tabs; a copy whose tabs became spaces is refused, not misread."""
    text = load("nvidia-smi-topo-m", "a100-nv12-ten-nics-tabs").text.replace("\t", "    ")
    with pytest.raises(ParseError, match="no GPU rows with NIC columns"):
        hp.parse_topo(text)


def test_ibstat_of_real_hosts() -> None:
    cx3 = parse_ibstat(load("ibstat", "connectx3-fdr-56").text)
    assert cx3 == {"mlx4_0": {1: IbPort("Active", "LinkUp", 56)}}
    b300 = parse_ibstat(load("ibstat", "b300-connectx8-connectx7-mixed").text)
    assert len(b300) == 11
    assert b300["mlx5_2"] == {1: IbPort("Active", "LinkUp", 100)}
    assert b300["mlx5_10"] == {1: IbPort("Down", "Disabled", 10)}  # a ConnectX-8 port that is down


def test_topology_of_a_real_node_with_twelve_nics_and_a_gpu_numa_id_column() -> None:
    topo = hp.parse_topo(load("nvidia-smi-topo-m", "nv18-twelve-nics-gpu-numa-id").text)
    assert all(len(row) == 12 for row in topo.values())
    pix = {gpu: [nic for nic, how in row.items() if how == "PIX"] for gpu, row in topo.items()}
    assert pix == {"0": ["mlx5_0"], "1": ["mlx5_1"], "2": ["mlx5_2"], "3": ["mlx5_5"], "4": ["mlx5_6"],
                   "5": ["mlx5_7"], "6": ["mlx5_8"], "7": ["mlx5_11"]}  # fmt: skip


# -- ibdev2netdev --------------------------------------------------------------------------------------------------


def test_ibdev2netdev_of_real_hosts() -> None:
    ten = parse_ibdev2netdev(load("ibdev2netdev", "ten-mlx5-all-up").text)
    assert len(ten) == 10 and ten["mlx5_1"] == ("ens9f0np0", "Up") and ten["mlx5_9"] == ("ens115np0", "Up")
    lag = parse_ibdev2netdev(load("ibdev2netdev", "twelve-mlx5-roce-lag-bond0").text)
    assert len(lag) == 12 and lag["mlx5_3"] == lag["mlx5_9"] == ("bond0", "Up")  # a RoCE LAG: two devices
    assert lag["mlx5_10"] == ("enp210s0f1np1", "Down")


def test_ibdev2netdev_with_two_ports_on_one_device_is_refused() -> None:
    """ConnectX-3 (mlx4) lists one device for two ports; the second line overwrote the first, so mlx4_0 read
    as its Down port 2 though port 1 is Up."""
    with pytest.raises(ParseError, match=r"ibdev2netdev: line 2: mlx4_0 is listed again \(port 2\)"):
        parse_ibdev2netdev(load("ibdev2netdev", "connectx3pro-two-ports-one-device").text)


# -- show_gids -------------------------------------------------------------------------------------------------------


def test_show_gids_of_real_hosts() -> None:
    bond = hp.parse_gids(load("show_gids", "mlx5-bond-roce-lag").text)
    assert bond[("mlx5_bond_0", 3)] == ("10.96.83.26", "v2") and bond[("mlx5_bond_0", 1)] == ("", "v2")
    rdma0 = hp.parse_gids(load("show_gids", "mlx5-rdma0-test-suite-readme").text)
    assert len(rdma0) == 4 and rdma0[("mlx5_0", 2)] == ("192.168.211.242", "v1")


def test_show_gids_without_its_count_line_is_refused() -> None:
    """The published copy ends without ``n_gids_found=``: possibly cut, so it is not read as complete."""
    with pytest.raises(ParseError, match="n_gids_found"):
        hp.parse_gids(load("show_gids", "six-mlx5-spaces-no-count").text)


# -- rdma link show ------------------------------------------------------------------------------------------------


def test_rdma_link_of_real_hosts() -> None:
    gb10 = parse_rdma_link(load("rdma-link-show", "gb10-connectx7-two-domains").text)
    assert [(link.dev, link.port, link.state, link.netdev) for link in gb10] == [
        ("rocep1s0f0", 1, "ACTIVE", "enp1s0f0np0"),
        ("rocep1s0f1", 1, "DOWN", "enp1s0f1np1"),
        ("roceP2p1s0f0", 1, "ACTIVE", "enP2p1s0f0np0"),  # udev's name: P2 is PCI domain 0002
        ("roceP2p1s0f1", 1, "DOWN", "enP2p1s0f1np1"),
    ]
    mlx5 = parse_rdma_link(load("rdma-link-show", "mlx5-blktests-patch").text)
    assert [(link.dev, link.physical_state) for link in mlx5] == [("mlx5_0", "LINK_UP"), ("mlx5_1", "DISABLED")]
    gb10_pairs = parse_ibdev2netdev(load("ibdev2netdev", "gb10-connectx7-roce-names").text)
    assert gb10_pairs["roceP2p1s0f0"] == ("enP2p1s0f0np0", "Up")


# -- ibv_devinfo ---------------------------------------------------------------------------------------------------


def test_ibv_devinfo_of_real_hosts() -> None:
    gb10 = load("ibv_devinfo", "gb10-connectx7-mtu-9000").text
    assert hp.parse_ibv_firmware(gb10) == dict.fromkeys(
        ("rocep1s0f0", "rocep1s0f1", "roceP2p1s0f0", "roceP2p1s0f1"), "28.45.4028"
    )
    mtu = hp.parse_ibv_active_mtu(gb10)
    assert (mtu["rocep1s0f1"], mtu["rocep1s0f0"]) == (4096, 1024)  # the down port keeps the 1024 default
    cx3 = load("ibv_devinfo", "connectx3-two-ports-tensorflow-gdr").text
    assert hp.parse_ibv_firmware(cx3) == {"mlx4_0": "2.40.7000"}
    assert hp.parse_ibv_active_mtu(cx3) == {"mlx4_0": 1024}  # two ports, the smaller of the two


# -- ethtool -S ------------------------------------------------------------------------------------------------------


def test_ethtool_stats_of_a_real_mlx5_port() -> None:
    stats = hp.parse_ethtool_stats(load("ethtool-S", "mlx5-one-channel-annotated").text)
    assert len(stats) == 263
    assert (stats["rx_crc_errors_phy"], stats["rx_steer_missed_packets"], stats["rx_out_of_buffer"]) == (386, 194, 0)
    assert stats["rx_prio0_buf_discard"] == 0 and "rx_prio3_buf_discard" not in stats  # only prio 0 is printed


def test_counters_a_port_does_not_print_are_reported_not_checked() -> None:
    """The real port prints no prio-3 buffer or pause counters: a lossless priority 3 cannot be checked on it, and
    preflight says so instead of passing in silence."""
    text = load("ethtool-S", "mlx5-one-channel-annotated").text
    nic = {"rdma": "mlx5_0", "netdev": "eth0"}
    results = {host._stats("eth0"): (0, text), host._hw(nic): (0, "/x/out_of_sequence:0\n/x/local_ack_timeout_err:0\n")}
    first, second = host._Reads(results, host.HostFacts()), None
    second = host._Reads(results, first.facts, " (second read)")
    host._nic_counters({"qos": {"pfc": [0, 0, 0, 1, 0, 0, 0, 0]}}, [nic], first, second, 5.0)
    assert first.facts.failed == []
    assert first.facts.evidence["nic_counters"]["not checked"] == [
        "eth0 (mlx5_0): no rx_prio3_buf_discard, rx_prio3_pause in the output"
    ]


# -- NX-OS show interface | json -------------------------------------------------------------------------------------


def test_nxos_interface_counters_of_real_replies() -> None:
    body = json.loads(load("nxos-show-interface-json", "nxapi-14-interfaces").text)
    counters = interfaces_counters(body)
    assert len(counters) == 8  # mgmt0, loopbacks and VLAN interfaces have no eth_inucast
    assert counters["Ethernet1/1"] == {
        "rx_unicast_packets": 1820966887397,
        "rx_errors": 0,
        "tx_unicast_packets": 3764897086781,
        "tx_errors": 723479,
    }
    assert counters["port-channel1"]["tx_errors"] == 2
    one = interfaces_counters(json.loads(load("nxos-show-interface-json", "nxapi-one-interface-with-errors").text))
    assert one == {
        "Ethernet1/1": {
            "rx_unicast_packets": 1056142878366,
            "rx_errors": 100,
            "tx_unicast_packets": 1135419410677,
            "tx_errors": 100,
        }
    }  # a single row given as the row itself, not a list


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("eth_inerr", "n/a", "not a counter ('n/a')"),
        ("eth_outucast", -1, "not a counter (-1)"),
        ("eth_inerr", None, "missing"),
    ],
)
def test_an_unreadable_nxos_counter_is_refused_not_read_as_zero(field: str, value: object, shown: str) -> None:
    """The old reader turned a counter it could not read into 0: a port with errors read as clean."""
    body = json.loads(load("nxos-show-interface-json", "nxapi-one-interface-with-errors").text)
    row = body["TABLE_interface"]["ROW_interface"][0]
    if value is None:
        del row[field]
    else:
        row[field] = value
    with pytest.raises(ValueError) as caught:
        interfaces_counters(body)
    assert str(caught.value) == f"show interface | json: Ethernet1/1: {field} is {shown}"


def test_an_unreadable_nxos_pfc_counter_is_refused_not_read_as_zero() -> None:
    row = {"if_name_str": "Ethernet1/1", "admin": "On", "oper": "On", "rx-stats": "--", "tx-stats": 0}
    body = {"TABLE_module": {"ROW_module": {"TABLE_pfc_interface": {"ROW_pfc_interface": row}}}}
    with pytest.raises(ValueError) as caught:
        pfc_counters(body)
    assert (
        str(caught.value)
        == "show interface priority-flow-control | json: Ethernet1/1: rx-stats is not a counter ('--')"
    )
    row["rx-stats"] = "39027"
    assert pfc_counters(body) == {"Ethernet1/1": {"all": 39027}}


def test_ibstat_with_a_fractional_rate_is_read() -> None:
    """A down ConnectX-3 port shows ``Rate: 2.5``; the integer-only parser refused the whole ibstat and with it the
    host's [rdma] check."""
    ports = parse_ibstat(load("ibstat", "connectx3-two-ports-one-down-rate-2.5").text)
    assert ports == {"mlx4_0": {1: IbPort("Down", "Disabled", 2.5), 2: IbPort("Active", "LinkUp", 56)}}
    with pytest.raises(ParseError, match=r"ibstat: mlx4_0 port 1: Rate is not a number \('400 Gb/sec \(4X NDR\)'\)"):
        parse_ibstat(load("ibstat", "connectx3-two-ports-one-down-rate-2.5").text.replace("2.5", "400 Gb/sec (4X NDR)"))


# -- Cumulus NVUE REST ------------------------------------------------------------------------------------------


def test_nvue_interface_replies_of_real_switches() -> None:
    """``GET /nvue_v1/interface``: the counters under ``link stats``, ``oper-status``, ``mac-address`` and a speed
    written ``1G``, as a 5.11+ switch answers; the loopback's ``oper-status`` is ``unknown`` (not up)."""
    tree = json.loads(load("nvue-interface", "cumulus-5x-eth0-lo-rest").text)
    assert nvue_getters.interfaces_counters(tree) == {
        "eth0": {"rx_unicast_packets": 14, "rx_errors": 0, "tx_unicast_packets": 86, "tx_errors": 0},
        "lo": {"rx_unicast_packets": 2283, "rx_errors": 0, "tx_unicast_packets": 2283, "tx_errors": 0},
    }
    ports = nvue_getters.interfaces(tree)
    assert ports["eth0"] == {
        "is_up": True,
        "is_enabled": True,
        "description": "",
        "last_flapped": -1.0,
        "mtu": 1500,
        "speed": 1000.0,
        "mac_address": "0c:32:43:f2:00:00",
    }
    assert (ports["lo"]["is_up"], ports["lo"]["mtu"], ports["lo"]["speed"]) == (False, 65536, -1.0)
    # Cumulus Linux 5.1 (the user guide's example): the same counters; no oper-status leaf, so the port reads as
    # not up (a preflight then fails the port rather than passing it on a guess)
    old = json.loads(load("nvue-interface", "cumulus-51-eth0-link-stats-docs").text)
    assert nvue_getters.interfaces_counters(old)["eth0"] == {
        "rx_unicast_packets": 2371,
        "rx_errors": 0,
        "tx_unicast_packets": 762,
        "tx_errors": 0,
    }
    assert nvue_getters.interfaces(old)["eth0"]["is_up"] is False


@pytest.mark.parametrize(
    ("value", "shown"), [("n/a", "not a counter ('n/a')"), (None, "missing"), (-3, "not a counter (-3)")]
)
def test_an_unreadable_nvue_counter_is_refused_not_read_as_zero(value: object, shown: str) -> None:
    """NVUE prints ``n/a`` for a counter a port does not have; the old reader took it (or a missing leaf) as 0."""
    tree = json.loads(load("nvue-interface", "cumulus-5x-eth0-lo-rest").text)
    stats = tree["eth0"]["link"]["stats"]
    if value is None:
        del stats["in-errors"]
    else:
        stats["in-errors"] = value
    with pytest.raises(ValueError) as caught:
        nvue_getters.interfaces_counters(tree)
    assert str(caught.value) == f"NVUE interface eth0 link stats: in-errors is {shown}"
    pfc = {"switch-priority": {"3": {"rx-pause-frames": "n/a", "tx-pause-frames": 0}}}
    with pytest.raises(ValueError) as caught:
        nvue_getters.pfc_counters(pfc, "swp1")
    assert str(caught.value) == (
        "NVUE interface swp1 counters qos pfc-stats switch-priority 3: rx-pause-frames is not a counter ('n/a')"
    )


# -- EOS eAPI -----------------------------------------------------------------------------------------------------


class _Eapi:
    """What NAPALM's ``_run_commands`` hands back: the list of eAPI replies, here one capture."""

    def __init__(self, reply: dict[str, object]) -> None:
        self.reply = reply

    def _run_commands(self, commands: list[str], encoding: str = "json") -> list[dict[str, object]]:
        assert commands == ["show configuration sessions"] and encoding == "json"
        return [self.reply]


def test_eos_open_sessions_of_real_replies() -> None:
    """Only ``pending`` and ``pendingCommitTimer`` sessions are open; a ``completed`` one is history."""
    reply = json.loads(load("eos-show-configuration-sessions", "aio-eapi-pending-and-completed").text)
    assert open_sessions(_Eapi(reply)) == {"jeremy1": "pending"}
    reply = json.loads(load("eos-show-configuration-sessions", "doublezero-open-in-vty5").text)
    assert open_sessions(_Eapi(reply)) == {"doublezero-agent-12345678": "pending", "blah1": "pending"}


def test_nxos_route_next_hops_of_a_real_table() -> None:
    """``show ip route PREFIX`` read for the ECMP check: the best (``*via``) next hops under the prefix's header,
    from a whole real table; a next hop in another VRF keeps NX-OS's ``%VRF`` suffix."""
    text = load("nxos-show-ip-route", "ntc-templates-default-vrf-ecmp").text
    assert _via_lines(text, "2.2.2.2/32") == ["10.10.30.2", "10.10.40.2"]  # two OSPF paths
    assert _via_lines(text, "10.10.80.0/24") == ["10.10.30.2", "10.10.40.2"]
    assert _via_lines(text, "7.7.7.7/32") == ["10.10.50.1"]  # a static route: no interface column
    assert _via_lines(text, "0.0.0.0/0") == ["10.1.100.1%management"]
    assert _via_lines(text, "9.9.9.9/32") == []  # no route


# -- lldpctl -f json ------------------------------------------------------------------------------------------


def test_lldpctl_json_in_both_of_lldpds_shapes() -> None:
    """One neighbour: ``interface`` is a mapping (lldpd's own test); several: a list of one-key mappings. The
    neighbour's name is its chassis key, its port the port id's value, whatever the id's type."""
    one = parse_lldpctl(load("lldpctl-f-json", "lldpd-test-one-neighbour-as-a-map").text)
    assert one == {"eth0": [{"hostname": "ns-2.example.com", "port": "00:00:00:00:00:02"}]}  # a Linux peer: a MAC
    two = parse_lldpctl(load("lldpctl-f-json", "lldpd-1.0.19-two-neighbours-trimmed").text)
    assert two == {
        "eno1": [{"hostname": "netlab-leaf2", "port": "swp1"}],  # port id type ifname
        "eno3": [{"hostname": "netlab-mgmt0", "port": "Ethernet2"}],  # port id type local (SONiC)
    }


# -- ethtool -i, /proc/driver/nvidia/version ------------------------------------------------------------------


def test_ethtool_driver_info_gives_the_ports_pci_address() -> None:
    """An empty ``expansion-rom-version:`` line and the firmware's PSID in brackets do not disturb the read."""
    assert parse_bus_info(load("ethtool-i", "mlx5-connectx4lx-lkml").text) == "0000:3b:00.0"


def test_nvidia_driver_version_of_the_open_and_the_proprietary_modules() -> None:
    open_ = load("proc-driver-nvidia-version", "open-555.58.02-fedora").text
    assert (hp.parse_nvidia_version(open_), hp.parse_nvidia_open(open_)) == ("555.58.02", True)
    closed = load("proc-driver-nvidia-version", "proprietary-515.76-ubuntu1804").text
    assert (hp.parse_nvidia_version(closed), hp.parse_nvidia_open(closed)) == ("515.76", False)


# -- ip -j link, ofed_info -s -----------------------------------------------------------------------------------


def test_ip_link_of_a_real_connectx_uplink_and_its_altname() -> None:
    """``ip -j link show dev ALTNAME`` answers with the port's own name (``p0``), and sysfs knows only that name:
    fabconf read "expected exactly one interface named enp3s0f0np0" and now says which name to use."""
    text = load("ip-j-link", "connectx-p0-ovs-altname").text
    link = parse_ip_link(text, "p0")
    assert (link.ifname, link.mtu, link.admin_up, link.oper_up) == ("p0", 9216, True, True)
    assert (link.mac, link.altnames) == ("b8:3f:d2:90:97:fa", ("enp3s0f0np0",))
    with pytest.raises(
        ParseError, match=r"enp3s0f0np0 is an alternative name of p0: name the port p0 in the inventory"
    ):
        parse_ip_link(text, "enp3s0f0np0")
    with pytest.raises(ParseError, match=r"expected exactly one interface named ens9"):
        parse_ip_link(text, "ens9")


def test_ofed_info_short_form() -> None:
    assert hp.parse_ofed(load("ofed_info-s", "mlnx-ofed-5.8-1.1.2.1").text) == "5.8-1.1.2.1"


# -- sha256sum (a GPU host's rollback checkpoint, known by its digest) ----------------------------------------


def test_a_real_sha256sum_line_is_taken_only_with_the_record_of_that_digest() -> None:
    """GNU coreutils' line for the checkpoint (``HEX  NAME``) is what the record written after it must name; any
    other digest, a failed read, or coreutils' message for a missing file leaves the flag unknown (None): the
    driver then reads the whole checkpoint."""
    found = Output(load("sha256sum", "coreutils-9.1-checkpoint").text, "", 0)
    missing = Output(load("sha256sum", "coreutils-9.1-missing").text, "", 1)
    sha = hashlib.sha256(b"{}\n").hexdigest()  # the bytes the capture hashed
    assert found.stdout.split()[0] == sha
    for applying in (True, False):
        assert _recorded(found, Output(json.dumps({"applying": applying, "sha256": sha}), "", 0)) is applying
    assert _recorded(found, Output(json.dumps({"applying": True, "sha256": "0" * 64}), "", 0)) is None
    assert _recorded(missing, Output(json.dumps({"applying": True, "sha256": sha}), "", 0)) is None
    assert "No such file" in missing.stdout  # what the driver takes as "no checkpoint"
