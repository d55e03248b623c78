"""A lab GPU host's IP configuration: ``ip addr``, ``ip route``, ``ip rule`` and ``sysctl`` with iproute2/procps
formats and errors, per-card firmware of a dual-port ConnectX, and what a reboot keeps."""

from __future__ import annotations

import json

import pytest

from fabconf.lab.host.sim import GpuHostSim

IF0, IF1 = "ens1f0np0", "ens1f1np1"


@pytest.fixture
def host() -> GpuHostSim:
    nics = [
        {"netdev": IF0, "rdma": "mlx5_0", "pci": "0000:17:00.0", "address": "10.101.0.2/24"},
        {"netdev": IF1, "rdma": "mlx5_1", "pci": "0000:17:00.1", "address": "10.101.1.2/24"},
    ]
    return GpuHostSim("gpu1", "127.12.3.3", ports=[], username="admin", password="pw", nics=nics, port=0)


def ok(host: GpuHostSim, command: str) -> str:
    out = host.run(command)
    assert out.status == 0, (command, out.stderr)
    return out.stdout


def err(host: GpuHostSim, command: str, root: bool = True) -> tuple[int, str]:
    out = host.run(command, root=root)
    return out.status, out.stderr


def test_addresses_add_del_flush_with_iproute2_errors(host: GpuHostSim) -> None:
    ok(host, f"ip addr add 10.9.0.1/24 dev {IF0}")
    assert err(host, f"ip addr add 10.9.0.1/24 dev {IF0}") == (2, "RTNETLINK answers: File exists\n")
    assert err(host, f"ip addr del 10.9.9.9/24 dev {IF0}") == (
        2,
        "RTNETLINK answers: Cannot assign requested address\n",
    )
    assert err(host, "ip addr add 10.9.0.1/24 dev nope0") == (1, 'Cannot find device "nope0"\n')
    assert err(host, f"ip addr add 10.9.0.300/24 dev {IF0}")[0] == 1
    assert err(host, f"ip addr add 10.9.0.5/24 dev {IF0}", root=False) == (
        2,
        "RTNETLINK answers: Operation not permitted\n",
    )
    links = json.loads(ok(host, f"ip -j -4 addr show dev {IF0}"))
    assert [(a["local"], a["prefixlen"], a["scope"]) for a in links[0]["addr_info"]] == [
        ("10.101.0.2", 24, "global"),
        ("10.9.0.1", 24, "global"),
    ]
    ok(host, f"ip -4 addr flush dev {IF0} scope global")
    assert json.loads(ok(host, f"ip -j addr show dev {IF0}"))[0]["addr_info"] == []
    assert "inet 10.101.1.2/24 scope global ens1f1np1\n" in ok(host, f"ip addr show {IF1}")


def test_routes_in_tables_with_gateway_check_and_formats(host: GpuHostSim) -> None:
    ok(host, f"ip route replace 10.102.0.0/16 via 10.101.0.1 dev {IF0} table 100 proto 250")
    ok(host, f"ip route replace 10.101.0.0/24 dev {IF0} scope link src 10.101.0.2 table 100 proto 250")
    assert err(host, f"ip route add 10.102.0.0/16 via 10.101.0.1 dev {IF0} table 100") == (
        2,
        "RTNETLINK answers: File exists\n",
    )
    assert err(host, f"ip route add 10.103.0.0/16 via 10.50.0.1 dev {IF0} table 100") == (
        2,
        "Error: Nexthop has invalid gateway.\n",
    )
    assert ok(host, "ip route show table 100") == (
        f"10.101.0.0/24 dev {IF0} proto 250 scope link src 10.101.0.2 \n"
        f"10.102.0.0/16 via 10.101.0.1 dev {IF0} proto 250 \n"
    )
    main = ok(host, "ip route")
    assert main.startswith("default via 192.168.100.1 dev eno1 proto static \n")
    assert f"10.101.0.0/24 dev {IF0} proto kernel scope link src 10.101.0.2 \n" in main
    table_all = json.loads(ok(host, "ip -j route show table all"))
    mine = [r for r in table_all if r.get("protocol") == "250"]
    assert mine[1] == {
        "dst": "10.102.0.0/16",
        "gateway": "10.101.0.1",
        "dev": IF0,
        "table": "100",
        "protocol": "250",
        "flags": [],
    }
    ok(host, f"ip route del 10.102.0.0/16 dev {IF0} table 100")
    assert err(host, f"ip route del 10.102.0.0/16 dev {IF0} table 100") == (2, "RTNETLINK answers: No such process\n")
    # removing an address removes the routes that use it as source, as the kernel does
    ok(host, f"ip addr del 10.101.0.2/24 dev {IF0}")
    assert ok(host, "ip route show table 100") == ""


def test_rules_text_json_and_errors(host: GpuHostSim) -> None:
    ok(host, "ip rule add from 10.101.0.2 lookup 100 pref 100")
    assert err(host, "ip rule add from 10.101.0.2 lookup 100 pref 100") == (2, "RTNETLINK answers: File exists\n")
    assert ok(host, "ip rule show") == (
        "0:\tfrom all lookup local\n100:\tfrom 10.101.0.2 lookup 100\n"
        "32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n"
    )
    assert json.loads(ok(host, "ip -j rule show"))[:2] == [
        {"priority": 0, "src": "all", "table": "local"},
        {"priority": 100, "src": "10.101.0.2", "table": "100"},
    ]
    ok(host, "ip rule del from 10.101.0.2 lookup 100 pref 100")
    assert err(host, "ip rule del pref 100") == (2, "RTNETLINK answers: No such file or directory\n")


def test_sysctl_read_write_and_errors(host: GpuHostSim) -> None:
    key = f"net.ipv4.conf.{IF0}.arp_ignore"
    assert ok(host, f"sysctl {key}") == f"{key} = 0\n"
    assert ok(host, f"sysctl -w {key}=1") == f"{key} = 1\n"
    assert ok(host, f"sysctl -n {key} net.ipv4.conf.all.rp_filter") == "1\n2\n"
    assert err(host, f"sysctl -w {key}=9") == (255, f'sysctl: setting key "{key}": Invalid argument\n')
    assert err(host, f"sysctl -w {key}=1", root=False) == (255, f'sysctl: permission denied on key "{key}"\n')
    status, text = err(host, "sysctl net.ipv4.conf.nope0.arp_ignore")
    assert status == 255 and "cannot stat /proc/sys/net/ipv4/conf/nope0/arp_ignore" in text
    assert ok(host, f"sysctl -e net.ipv4.conf.nope0.arp_ignore {key}") == f"{key} = 1\n"


def test_dual_port_card_has_one_firmware_config_with_second_port_keys(host: GpuHostSim) -> None:
    both = ok(host, "mlxconfig -d mlx5_1 q LINK_TYPE_P1 LINK_TYPE_P2")
    assert "LINK_TYPE_P2" in both and "Device:             0000:17:00.0" in both
    ok(host, "mlxconfig -d mlx5_1 -y set CNP_DSCP_P2=46")
    assert "CNP_DSCP_P2                                 46" in ok(host, "mlxconfig -d mlx5_0 q CNP_DSCP_P2")
    ok(host, "mlxfwreset -d mlx5_0 -y --level 3 reset")
    assert ok(host, f"cat /sys/class/net/{IF1}/ecn/roce_np/cnp_dscp") == "46\n"


def test_reboot_keeps_initial_addresses_only(host: GpuHostSim) -> None:
    ok(host, f"ip addr add 10.9.0.1/24 dev {IF0}")
    ok(host, f"ip route replace 10.102.0.0/16 via 10.101.0.1 dev {IF0} table 100")
    ok(host, "ip rule add from 10.101.0.2 lookup 100 pref 100")
    ok(host, f"sysctl -w net.ipv4.conf.{IF0}.arp_announce=2")
    host.reboot()
    assert ok(host, "ip route show table 100") == ""
    assert "100:" not in ok(host, "ip rule show")
    assert ok(host, f"sysctl -n net.ipv4.conf.{IF0}.arp_announce") == "0\n"
    assert [a["local"] for a in json.loads(ok(host, f"ip -j addr show {IF0}"))[0]["addr_info"]] == ["10.101.0.2"]
