"""A lab GPU host's IP configuration: ``ip addr``, ``ip route``, ``ip rule`` and ``sysctl`` with iproute2/procps
formats and errors, per-card firmware of a dual-port ConnectX, and what a reboot keeps."""

from __future__ import annotations

import json

import pytest

from fabconf_lab.host.sim import GpuHostSim

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
    both = ok(host, "mlxconfig -d 0000:17:00.1 q LINK_TYPE_P1 LINK_TYPE_P2")
    assert "LINK_TYPE_P2" in both and "Device:             0000:17:00.0" in both
    ok(host, "mlxconfig -d 17:00.1 -y set CNP_DSCP_P2=46")
    assert "CNP_DSCP_P2                                 46" in ok(host, "mlxconfig -d 0000:17:00.0 q CNP_DSCP_P2")
    ok(host, "mlxfwreset -d 0000:17:00.0 -y --level 3 reset")
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


def test_addr_show_lists_every_interface_and_bad_prefix(host: GpuHostSim) -> None:
    text = ok(host, "ip addr show")
    for line in (
        "    inet 127.0.0.1/8 scope host lo\n",
        "    inet 192.168.100.10/24 scope global eno1\n",
        f"    inet 10.101.0.2/24 scope global {IF0}\n",
    ):
        assert line in text
    ok(host, f"ip addr add 10.9.0.1/24 dev {IF0}")
    links = {link["ifname"]: link for link in json.loads(ok(host, "ip -j addr show"))}
    assert links[IF0]["addr_info"][1] == {
        "family": "inet",
        "local": "10.9.0.1",
        "prefixlen": 24,
        "scope": "global",
        "label": IF0,
        "valid_life_time": 4294967295,
        "preferred_life_time": 4294967295,
    }
    assert f"10.9.0.0/24 dev {IF0} proto kernel scope link src 10.9.0.1 \n" in ok(host, "ip route show table main")
    assert err(host, f"ip addr add bogus dev {IF0}") == (
        1,
        'Error: any valid prefix is expected rather than "bogus".\n',
    )
    ok(host, f"ip addr del 10.9.0.1/24 dev {IF0}")
    assert "10.9.0.0/24" not in ok(host, "ip route")


def test_main_table_defaults_and_policy_table_json(host: GpuHostSim) -> None:
    assert ok(host, "ip route show table main") == (
        "default via 192.168.100.1 dev eno1 proto static \n"
        f"10.101.0.0/24 dev {IF0} proto kernel scope link src 10.101.0.2 \n"
        f"10.101.1.0/24 dev {IF1} proto kernel scope link src 10.101.1.2 \n"
        "192.168.100.0/24 dev eno1 proto kernel scope link src 192.168.100.10 \n"
    )
    ok(host, f"ip route add 10.101.0.0/24 dev {IF0} scope link src 10.101.0.2 table 100")
    ok(host, f"ip route add default via 10.101.0.1 dev {IF0} table 100")
    assert json.loads(ok(host, "ip -j route show table 100")) == [
        {"dst": "default", "gateway": "10.101.0.1", "dev": IF0, "flags": []},
        {"dst": "10.101.0.0/24", "dev": IF0, "scope": "link", "prefsrc": "10.101.0.2", "flags": []},
    ]
    assert f"default via 10.101.0.1 dev {IF0} table 100 \n" in ok(host, "ip route show table all")
    # a gateway outside the device's subnets is fine with onlink; a down device is fine too
    ok(host, f"ip link set {IF1} down")
    ok(host, f"ip route add 10.200.0.0/16 via 10.50.0.1 dev {IF1} onlink table 101")
    for command in (f"ip route add 10.201.0.0/16 dev {IF0} table 101", "ip route del default table 100"):
        assert err(host, command, root=False) == (2, "RTNETLINK answers: Operation not permitted\n")
    ok(host, "ip route flush table 100")
    assert ok(host, "ip route show table 100") == ""
    assert ok(host, "ip route show table 101") == f"10.200.0.0/16 via 10.50.0.1 dev {IF1} \n"


def test_rule_with_prefix_and_errors(host: GpuHostSim) -> None:
    ok(host, "ip rule add from 10.0.0.0/8 table 200 priority 200")
    assert "200:\tfrom 10.0.0.0/8 lookup 200\n" in ok(host, "ip rule show")
    assert {"priority": 200, "src": "10.0.0.0", "srclen": 8, "table": "200"} in json.loads(ok(host, "ip -j rule"))
    assert err(host, "ip rule add from 10.101.0.2 lookup 100 pref 100", root=False) == (
        2,
        "RTNETLINK answers: Operation not permitted\n",
    )
    ok(host, "ip rule del pref 200")
    assert err(host, "ip rule del from 10.0.0.0/8 lookup 200 pref 200") == (
        2,
        "RTNETLINK answers: No such file or directory\n",
    )


def test_sysctl_defaults_ranges_and_proc_files(host: GpuHostSim) -> None:
    assert ok(host, "sysctl -n net.ipv4.ip_forward net.ipv4.conf.lo.rp_filter net.ipv4.conf.eno1.rp_filter") == (
        "0\n0\n2\n"
    )
    assert err(host, "sysctl -w net.ipv4.ip_forward=2") == (
        255,
        'sysctl: setting key "net.ipv4.ip_forward": Invalid argument\n',
    )
    assert err(host, "sysctl -w net.ipv4.conf.all.arp_announce=x")[0] == 255
    assert ok(host, "sysctl -w net.ipv4.conf.all.arp_announce=2 net.ipv4.conf.all.arp_ignore=1") == (
        "net.ipv4.conf.all.arp_announce = 2\nnet.ipv4.conf.all.arp_ignore = 1\n"
    )
    assert ok(host, "cat /proc/sys/net/ipv4/conf/all/arp_announce") == "2\n"
    ok(host, f"echo 1 > /proc/sys/net/ipv4/conf/{IF0}/rp_filter")
    assert ok(host, f"sysctl -n net.ipv4.conf.{IF0}.rp_filter") == "1\n"
    assert err(host, f"echo 7 > /proc/sys/net/ipv4/conf/{IF0}/rp_filter")[0] != 0
    assert err(host, "cat /proc/sys/net/ipv4/conf/nope0/rp_filter")[0] == 1
    assert IF0 in ok(host, "ls /proc/sys/net/ipv4/conf").split()


def test_state_json_round_trip_and_old_files(host: GpuHostSim) -> None:
    from fabconf_lab.host.nicstate import HostState

    ok(host, f"ip addr add 10.9.0.1/24 dev {IF0}")
    ok(host, "ip rule add from 10.101.0.2 lookup 100 pref 100")
    saved = host.state.to_json()
    assert HostState.from_json(saved).to_json() == saved
    doc = json.loads(saved)
    for key in ("addresses", "routes", "rules", "sysctls"):
        del doc[key]
    old = HostState.from_json(json.dumps(doc))  # a file from before the lab modelled IP configuration
    assert old.addresses[IF0] == ["10.101.0.2/24"] and old.sysctls["net.ipv4.conf.all.rp_filter"] == 2
    assert [r["priority"] for r in old.rules] == [0, 32766, 32767]


def test_gids_and_lab_view_follow_the_first_current_address(host: GpuHostSim) -> None:
    ok(host, f"ip addr flush dev {IF0}")
    ok(host, f"ip addr add 10.77.0.2/24 dev {IF0}")
    assert "10.77.0.2" in ok(host, "show_gids mlx5_0")
    assert host.lab_view().ports[IF0].address == "10.77.0.2/24"
    host.reboot()
    assert host.lab_view().ports[IF0].address == "10.101.0.2/24"
    assert "10.77.0.2" not in ok(host, "show_gids mlx5_0")
