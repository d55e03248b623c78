"""The GPU host simulator over real SSH: paramiko exec/shell and netmiko (device_type linux)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest
from capturekit import load
from netmiko import ConnectHandler

from fabconf.platform.linux.state import CHECKPOINT_PATH
from fabconf_lab.host.sim import GpuHostSim, HostFaults, default_startup_config
from fabconf_lab.ports import default_port
from fabconf_lab.world import World

# one /24 of 127.12/16 per test process (port 22 is used), so concurrent runs do not collide
ADDR = f"127.12.{10 + os.getpid() % 240}.1"
USER, PASSWORD = "admin", "gpu-pass"
IF0, IF1 = "ens1f0np0", "ens1f1np1"
ECN_NP3 = f"/sys/class/net/{IF0}/ecn/roce_np/enable/3"
ECN_RP3 = f"/sys/class/net/{IF0}/ecn/roce_rp/enable/3"

BOOT_SCRIPT = f"""#!/bin/bash
set -e
mlnx_qos -i {IF0} --trust dscp >/dev/null
mlnx_qos -i {IF0} --pfc 0,0,0,1,0,0,0,0 >/dev/null
echo 1 > {ECN_NP3}
echo 1 > {ECN_RP3}
ip link set dev {IF0} mtu 9000
"""

UNIT = """[Unit]
Description=fabconf NIC settings
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/fabconf-nic.sh
[Install]
WantedBy=multi-user.target
"""


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[GpuHostSim]:
    host = GpuHostSim("gpu1", ADDR, ports=[IF0, IF1], username=USER, password=PASSWORD, state_dir=tmp_path)
    host.start()
    try:
        yield host
    finally:
        host.stop()


def connect(sim: GpuHostSim, password: str = PASSWORD) -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect(ADDR, sim.port, USER, password, look_for_keys=False, allow_agent=False, timeout=5, auth_timeout=5)
    return client


def run(client: paramiko.SSHClient, command: str, timeout: float = 10) -> tuple[str, str, int]:
    _stdin, stdout, stderr = client.exec_command(command, timeout=timeout)
    out, err = stdout.read().decode(), stderr.read().decode()
    return out, err, stdout.channel.recv_exit_status()


def test_standard_port_and_mlnx_qos_report_format(sim: GpuHostSim) -> None:
    assert sim.port == default_port(22)  # 22, or 10022 where this process may not bind 22
    with connect(sim) as client:
        out, err, rc = run(client, f"mlnx_qos -i {IF0}")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[:2] == ["DCBX mode: OS controlled", "Priority trust state: pcp"]
    assert "dscp2prio mapping:" not in out  # only shown with trust dscp
    assert "Cable len: 7" in lines
    assert "\tpriority    0   1   2   3   4   5   6   7" in lines
    assert "\tenabled     0   0   0   0   0   0   0   0   " in lines
    # default mlx5 priority -> TC map: prio0 on tc1, prio1 on tc0
    i = lines.index("tc: 0 ratelimit: unlimited, tsa: vendor")
    assert lines[i + 1] == "\t priority:  1"
    assert lines[i + 2 : i + 4] == ["tc: 1 ratelimit: unlimited, tsa: vendor", "\t priority:  0"]


def test_set_trust_pfc_dscp2prio_and_read_back(sim: GpuHostSim) -> None:
    with connect(sim) as client:
        out, err, rc = run(client, f"mlnx_qos -i {IF0} --trust dscp")
        assert rc == 1 and "Operation not permitted" in err and out == ""
        assert sim.state.nics[0].trust == "pcp"
        out, err, rc = run(client, f"sudo mlnx_qos -i {IF0} --trust dscp --pfc 0,0,0,1,0,0,0,0")
        assert rc == 0, err
        assert "Priority trust state: dscp" in out and "\tenabled     0   0   0   1   0   0   0   0   " in out
        _, err, rc = run(client, f"sudo mlnx_qos -i {IF0} --trust dscp --dscp2prio set,26,3")
        assert rc != 0 and err
        out, _, rc = run(client, f"sudo mlnx_qos -i {IF0} --dscp2prio set,46,3 --dscp2prio set,26,3")
        assert rc == 0
        shown, _, _ = run(client, f"mlnx_qos -i {IF0}")
    assert "\tprio:3 dscp:46,31,30,29,28,27,26,25," in shown
    assert "\tprio:3 dscp:24," in shown  # a ninth value wraps onto a new line with the same prefix
    assert "\tprio:5 dscp:47,45,44,43,42,41,40," in shown
    nic = sim.state.nics[0]
    assert nic.trust == "dscp" and nic.pfc == [0, 0, 0, 1, 0, 0, 0, 0] and nic.dscp2prio[26] == 3
    assert sim.state.nics[1].trust == "pcp"


def test_ets_validation(sim: GpuHostSim) -> None:
    with connect(sim) as client:
        cmd = f"sudo mlnx_qos -i {IF0} -p 0,1,2,3,4,5,6,7 -s ets,ets,ets,ets,ets,ets,strict,ets -t 50,0,0,50,0,0,0,0"
        out, err, rc = run(client, cmd)
        assert rc == 0, err
        assert "tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%" in out
        assert "tc: 6 ratelimit: unlimited, tsa: strict" in out
        _, err, rc = run(client, f"sudo mlnx_qos -i {IF0} -s ets,ets,ets,ets,ets,ets,ets,ets -t 50,0,0,40,0,0,0,0")
        assert rc == 1 and "100" in err
    assert sim.state.nics[0].tc_bw[3] == 50


def test_mtu_with_ip_json_and_roce_active_mtu(sim: GpuHostSim) -> None:
    with connect(sim) as client:
        before = run(client, "ibv_devinfo -d mlx5_0")[0]
        assert "\t\t\tactive_mtu:\t\t1024 (3)" in before
        _, err, rc = run(client, f"ip link set dev {IF0} mtu 9000")
        assert (rc, err) == (2, "RTNETLINK answers: Operation not permitted\n")
        _, err, rc = run(client, f"sudo ip link set dev {IF0} mtu 10000")
        assert (rc, err) == (2, "Error: mtu greater than device maximum.\n")
        assert run(client, f"sudo ip link set dev {IF0} mtu 9000 && echo ok") == ("ok\n", "", 0)
        links = json.loads(run(client, f"ip -j link show dev {IF0}")[0])
        assert [(x["ifname"], x["mtu"], x["operstate"]) for x in links] == [(IF0, 9000, "UP")]
        all_links = {x["ifname"]: x["mtu"] for x in json.loads(run(client, "ip -j link show")[0])}
        assert all_links[IF1] == 1500 and "lo" in all_links
        assert "\t\t\tactive_mtu:\t\t4096 (5)" in run(client, "ibv_devinfo -d mlx5_0")[0]
        _, err, rc = run(client, "ip link show dev nosuch0")
        assert (rc, err) == (1, 'Device "nosuch0" does not exist.\n')
    assert sim.lab_view().ports[IF0].mtu == 9000


def test_sysfs_ecn_read_write(sim: GpuHostSim) -> None:
    with connect(sim) as client:
        assert run(client, f"cat {ECN_NP3} /sys/class/net/{IF0}/ecn/roce_np/cnp_dscp")[0] == "0\n48\n"
        # the redirection is done by the user's shell, not by sudo: refused, as in bash
        _, err, rc = run(client, f"sudo echo 1 > {ECN_NP3}")
        assert rc == 1 and err == f"bash: {ECN_NP3}: Permission denied\n"
        assert run(client, f"echo 1 | sudo tee {ECN_NP3}") == ("1\n", "", 0)
        assert run(client, f"sudo sh -c 'echo 1 > {ECN_RP3}'")[2] == 0
        _, err, rc = run(client, f"sudo bash -c 'echo 7 > {ECN_RP3}'")
        assert rc == 1 and "Invalid argument" in err
        assert run(client, f"cat {ECN_NP3} {ECN_RP3}")[0] == "1\n1\n"
        assert run(client, "ls /sys/class/net/ens1f0np0/ecn/roce_np/enable")[0].split() == list("01234567")
        tc_file = "/sys/class/infiniband/mlx5_0/tc/1/traffic_class"
        assert run(client, f"echo 106 | sudo tee {tc_file} >/dev/null; cat {tc_file}")[0] == "Global tclass=106\n"
        assert run(client, "sudo cma_roce_tos -d mlx5_0 -t 106")[0] == "106\n"
    nic = sim.state.nics[0]
    assert nic.ecn_np[3] == nic.ecn_rp[3] == 1 and nic.traffic_class == nic.roce_tos == 106


def test_mlxconfig_query_printed_again_follows_every_change(sim: GpuHostSim) -> None:
    """The query's table is kept by the values it prints (issue 42): a query after a set, a reset or a reboot
    prints the new values, and the same values print the same text."""
    query = "mlxconfig -d 0000:17:00.0 -e q"
    before = sim.run(query).stdout
    assert sim.run(query).stdout == before
    assert "         CNP_DSCP_P1                         48              48              48" in before
    assert sim.run("mlxconfig -d 0000:17:00.0 -y set CNP_DSCP_P1=24").status == 0
    changed = sim.run(query).stdout
    assert "*        CNP_DSCP_P1                         48              48              24" in changed
    assert changed.replace("*        CNP_DSCP_P1                         48              48              24", "") == (
        before.replace("         CNP_DSCP_P1                         48              48              48", "")
    )
    sim.reboot()
    assert "*        CNP_DSCP_P1                         48              24              24" in sim.run(query).stdout
    assert sim.run("mlxconfig -d 0000:17:00.0 -y reset").status == 0
    assert "         CNP_DSCP_P1                         48              24              48" in sim.run(query).stdout


def test_mlxconfig_pending_until_reboot(sim: GpuHostSim) -> None:
    with connect(sim) as client:
        out, err, rc = run(client, "sudo mlxconfig -d 0000:17:00.0 -y set CNP_DSCP_P1=24 LINK_TYPE_P1=ETH")
        assert rc == 0, err
        assert "         CNP_DSCP_P1                                 48              24" in out
        assert out.rstrip().endswith("-I- Please reboot machine to load new configurations.")
        assert "        CNP_DSCP_P1                                 24" in run(client, "sudo mlxconfig -d 17:00.0 q")[0]
        verbose = run(client, "sudo mlxconfig -d 0000:17:00.0 -e q CNP_DSCP_P1")[0]
        assert "*        CNP_DSCP_P1                         48              48              24" in verbose
        assert run(client, f"cat /sys/class/net/{IF0}/ecn/roce_np/cnp_dscp")[0] == "48\n"
        _, err, rc = run(client, "sudo mlxconfig -d 0000:17:00.0 -y set NO_SUCH_KEY=1")
        assert rc == 1 and "NO_SUCH_KEY" in err
        # without -y and without an answer on stdin nothing is applied
        assert run(client, "sudo mlxconfig -d 0000:27:00.0 set CNP_DSCP_P1=30")[2] == 1
        _stdin, stdout, _ = client.exec_command("sudo reboot", timeout=10)
        stdout.read()
        time.sleep(0.2)
        assert not client.get_transport().is_active()
    assert sim.state.boots == 2
    with connect(sim) as client:
        verbose = run(client, "sudo mlxconfig -d /dev/mst/mt4129_pciconf0 -e q CNP_DSCP_P1")[0]
        assert "*        CNP_DSCP_P1                         48              24              24" in verbose
        assert run(client, f"cat /sys/class/net/{IF0}/ecn/roce_np/cnp_dscp")[0] == "24\n"
        assert sim.state.nics[1].mlx_current["CNP_DSCP_P1"] == 48


def test_mlxfwreset_applies_pending_and_drops_runtime(sim: GpuHostSim) -> None:
    with connect(sim) as client:
        run(
            client, f"sudo mlnx_qos -i {IF1} --trust dscp; sudo mlxconfig -d 0000:27:00.0 -y set ROCE_CC_PRIO_MASK_P1=8"
        )
        out, _, rc = run(client, "sudo mlxfwreset -d 0000:27:00.0 -y reset")
        assert rc == 0 and "-I- FW was loaded successfully." in out
    nic = sim.state.nics[1]
    assert nic.mlx_current["ROCE_CC_PRIO_MASK_P1"] == 8 and nic.trust == "pcp"


def test_reboot_loses_runtime_state_and_enabled_unit_reapplies(sim: GpuHostSim) -> None:
    nic = sim.state.nics[0]
    conn = ConnectHandler(device_type="linux", host=ADDR, port=sim.port, username=USER, password=PASSWORD)
    try:
        assert conn.find_prompt() == "admin@gpu1:~$"
        conn.enable()  # sudo -s
        assert conn.find_prompt() == "root@gpu1:~#"
        heredoc = ["cat > /usr/local/sbin/fabconf-nic.sh <<'EOF'", *BOOT_SCRIPT.splitlines(), "EOF"]
        conn.send_config_set(heredoc, cmd_verify=False, exit_config_mode=False)
        conn.send_config_set(
            ["cat > /etc/systemd/system/fabconf-nic.service <<'EOF'", *UNIT.splitlines(), "EOF"],
            cmd_verify=False,
            exit_config_mode=False,
        )
        assert sim.state.files["/usr/local/sbin/fabconf-nic.sh"] == BOOT_SCRIPT
        assert sim.state.files["/etc/systemd/system/fabconf-nic.service"] == UNIT
        out = conn.send_command("systemctl daemon-reload && systemctl enable fabconf-nic; echo rc=$?")
        assert "Created symlink" in out and "rc=0" in out
        assert str(conn.send_command("systemctl is-enabled fabconf-nic")).strip() == "enabled"
        conn.send_command("cma_roce_tos -d mlx5_0 -t 106")  # runtime, not in the unit
    finally:
        conn.disconnect()
    assert nic.roce_tos == 106
    sim.reboot()
    assert (nic.trust, nic.pfc[3], nic.ecn_np[3], nic.ecn_rp[3], nic.mtu) == ("dscp", 1, 1, 1, 9000)
    assert nic.roce_tos == 0  # lost: nothing re-applies it
    assert sim.state.units_active["fabconf-nic.service"] == "active"
    # disabled unit: after the next reboot the host is back to factory runtime state
    sim.run("systemctl disable fabconf-nic")
    sim.reboot()
    assert (nic.trust, nic.pfc, nic.ecn_np[3], nic.mtu) == ("pcp", [0] * 8, 0, 1500)


def test_shell_heredoc_chains_and_exit_status_over_paramiko_shell(sim: GpuHostSim) -> None:
    with connect(sim) as client:
        chan = client.invoke_shell()
        chan.settimeout(5)
        buf = b""

        def until(marker: bytes) -> bytes:
            nonlocal buf
            while marker not in buf:
                buf += chan.recv(4096)
            head, _, buf = buf.partition(marker)
            return head

        until(b"admin@gpu1:~$ ")
        chan.sendall(b"tee /tmp/nccl.conf <<EOF\nNCCL_IB_TC=106\nNCCL_IB_GID_INDEX=3\nEOF\n")
        echoed = until(b"admin@gpu1:~$ ").decode()
        assert "> NCCL_IB_TC=106" in echoed  # continuation prompts
        chan.sendall(b"false && echo no || echo yes; frobnicate --now; echo rc=$?\n")
        out = until(b"admin@gpu1:~$ ").decode()
        assert "\r\nyes\r\n" in out and "bash: frobnicate: command not found\r\nrc=127\r\n" in out
        chan.sendall(b"test -f /tmp/nccl.conf && echo present; rm /tmp/nccl.conf; test -f /tmp/nccl.conf; echo $?\n")
        out = until(b"admin@gpu1:~$ ").decode()
        assert "present\r\n1\r\n" in out
        chan.sendall(b"for x in a b\ndo\n  echo item-$x\ndone\n")
        out = until(b"admin@gpu1:~$ ").decode()
        assert "\r\n> " in out and "item-a\r\nitem-b\r\n" in out
        chan.sendall(b"exit\n")
        while not chan.exit_status_ready():
            chan.recv(1024)
    assert sim.state.files.get("/tmp/nccl.conf") is None


def test_unknown_command_over_exec(sim: GpuHostSim) -> None:
    with connect(sim) as client:
        assert run(client, "frobnicate --x") == ("", "bash: frobnicate: command not found\n", 127)
        assert run(client, "uname -a")[0].startswith("Linux gpu1 5.15.0-119-generic ")


def test_auth_refused(sim: GpuHostSim) -> None:
    with pytest.raises(paramiko.AuthenticationException):
        connect(sim, password="wrong")
    sim.faults.set("auth-refuse")
    with pytest.raises(paramiko.AuthenticationException):
        connect(sim)
    sim.faults.clear()
    connect(sim).close()


def test_delay_and_hang_faults(sim: GpuHostSim) -> None:
    with connect(sim) as client:
        sim.faults.set("delay", "0.5")
        start = time.monotonic()
        assert run(client, "hostname")[0] == "gpu1\n"
        assert time.monotonic() - start >= 0.5
        sim.faults.clear()
        sim.faults.set("hang")
        _stdin, stdout, _ = client.exec_command("hostname", timeout=5)
        stdout.channel.settimeout(0.7)
        with pytest.raises(socket.timeout):
            stdout.channel.recv(16)
        threading.Timer(0.1, sim.faults.clear).start()
        stdout.channel.settimeout(5)
        assert stdout.read() == b"gpu1\n"


def test_garbled_fault_corrupts_tool_output(sim: GpuHostSim) -> None:
    assert isinstance(sim.faults, HostFaults)
    with connect(sim) as client:
        sim.faults.set("garbled")
        assert "garbled" in sim.faults.active()
        out, _, rc = run(client, "ip -j link show")
        assert rc == 0  # the tool ran; its output is what is damaged
        with pytest.raises(json.JSONDecodeError):
            json.loads(out)
        assert "Priority trust state: pcp" not in run(client, f"mlnx_qos -i {IF0}")[0].splitlines()
        assert run(client, "echo $?")[0] == "0\n"  # the shell itself is fine
        sim.faults.clear()
        assert json.loads(run(client, "ip -j link show")[0])


def test_lldpad_warning_and_pgrep(sim: GpuHostSim) -> None:
    with connect(sim) as client:
        assert run(client, "pgrep lldpad")[2] == 1
        assert run(client, "sudo systemctl start lldpad && systemctl is-active lldpad")[0] == "active\n"
        assert run(client, "pgrep -x lldpad") == ("1342\n", "", 0)
        out = run(client, f"mlnx_qos -i {IF0}")[0]
        assert out.splitlines()[0] == "****** WARNING: lldpad service is running and may overwrite your settings ******"


def test_rdma_tools_follow_world_cabling(tmp_path: Path) -> None:
    world = World([("gpu2", IF0, "leaf1", "swp1")])
    host = GpuHostSim("gpu2", "127.12.2.2", ports=[IF0, IF1], username=USER, password=PASSWORD, world=world, port=0)
    out = host.run("rdma link show; ibdev2netdev; ibstat mlx5_1 | grep State; show_gids mlx5_0 | tail -2").stdout
    assert f"link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev {IF0}\n" in out
    assert f"link mlx5_1/1 state DOWN physical_state POLLING netdev {IF1}\n" in out
    assert f"mlx5_0 port 1 ==> {IF0} (Up)\nmlx5_1 port 1 ==> {IF1} (Down)\n" in out
    assert "\t\tState: Down\n" in out
    assert out.rstrip().endswith("n_gids_found=4")
    gid3 = out.splitlines()[-2].split("\t")
    assert gid3[:3] == ["mlx5_0", "1", "3"] and gid3[-2:] == ["v2", IF0]
    host.run(f"ip link set dev {IF0} down")
    assert "state DOWN physical_state DISABLED" in host.run("rdma link show mlx5_0").stdout
    view = host.lab_view()
    assert view.hostname == "gpu2" and set(view.ports) == {IF0, IF1} and not view.ports[IF0].enabled
    assert world.lldp_neighbors("gpu2") == []  # our end is down


def test_default_startup_config_is_brownfield() -> None:
    state = default_startup_config("gpu9", [IF0])
    nic = state.nics[0]
    assert (nic.trust, nic.pfc, nic.mtu, nic.ecn_np, nic.traffic_class) == ("pcp", [0] * 8, 1500, [0] * 8, None)
    assert nic.mlx_current["CNP_DSCP_P1"] == 48 and nic.mlx_current["LINK_TYPE_P1"] == 2
    assert "NCCL_IB_GID_INDEX=0" in state.files["/etc/nccl.conf"]
    host = GpuHostSim("gpu9", "127.12.2.9", ports=[], username="root", password="x", startup_config=state, port=0)
    assert host.state is not state and host.run("hostname").stdout == "gpu9\n"


def test_shell_globs_grep_tables_and_unsupported_syntax() -> None:
    host = GpuHostSim("gpu3", "127.12.2.3", ports=[IF0], username=USER, password=PASSWORD, port=0)
    host.run(f"echo 1 > {ECN_NP3}")
    out = host.run(f"grep -H . /sys/class/net/{IF0}/ecn/roce_*/enable/*").stdout.splitlines()
    assert len(out) == 16 and f"{ECN_NP3}:1" in out and f"{ECN_RP3}:0" in out
    assert host.run("echo '/sys/*'; echo /nonexistent/*").stdout == "/sys/*\n/nonexistent/*\n"
    assert host.run("printf '%s=%s\\n' a 1 b 2").stdout == "a=1\nb=2\n"
    assert host.run("which mlnx_qos nosuch; echo $?").stdout == "/usr/sbin/mlnx_qos\n1\n"
    looped = host.run(f"for p in 0 1 2 3 4 5 6 7; do echo 1 > /sys/class/net/{IF0}/ecn/roce_rp/enable/$p; done")
    assert looped.status == 0 and host.state.nics[0].ecn_rp == [1] * 8
    branch = "if grep -q NCCL_IB_TC /etc/nccl.conf; then echo set; elif true; then echo unset; else echo no; fi"
    assert host.run(branch).stdout == "unset\n"
    unsupported = host.run("while true; do echo x; done")
    assert unsupported.status == 2 and "while: not supported" in unsupported.stderr
    assert host.run("set -e; false || true; echo a; false; echo b").stdout == "a\n"
    user = host.run("sudo tee /etc/x.conf >/dev/null <<'EOF'\nA=$HOME\nEOF\ncat /etc/x.conf", root=False)
    assert user.stdout == "A=$HOME\n" and user.status == 0
    assert host.run("echo 'unterminated").status == 2


def test_reboot_method_ends_open_sessions(sim: GpuHostSim) -> None:
    client = connect(sim)
    assert run(client, "hostname")[0] == "gpu1\n"
    sim.reboot()
    deadline = time.monotonic() + 5
    while client.get_transport().is_active() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not client.get_transport().is_active()
    client.close()
    with connect(sim) as again:
        assert run(again, "hostname")[0] == "gpu1\n"


def test_boot_seconds_refuse_connections_while_booting(sim: GpuHostSim) -> None:
    sim.boot_seconds = 0.6
    with connect(sim) as client:
        client.exec_command("sudo reboot", timeout=5)[1].read()
    start = time.monotonic()
    # while booting the host refuses or resets connections; under load a reset can come after the TCP
    # handshake, which paramiko reports as an SSHException rather than an OSError
    refused = (OSError, paramiko.SSHException)
    with pytest.raises(refused):
        connect(sim)
    while time.monotonic() - start < 5:
        try:
            client = connect(sim)
            break
        except refused:
            time.sleep(0.1)
    with client:
        assert run(client, "hostname")[0] == "gpu1\n"
    assert 0.4 < time.monotonic() - start < 3


def test_drop_on_commit_and_reject_take_effect_on_a_host(sim: GpuHostSim) -> None:
    """Issue 16: the standing commit faults reach a host's state-changing commands; reads are left alone."""
    sim.faults.set("reject", "mtu")
    with connect(sim) as client:
        out, err, rc = run(client, f"sudo ip link set dev {IF0} mtu 9000")
        assert rc == 2 and "RTNETLINK answers: Invalid argument" in out + err
        assert run(client, f"sudo mlnx_qos -i {IF0} --trust dscp")[2] == 0  # another change: not matched
        assert run(client, "ip -j link show")[2] == 0
    assert all(nic.mtu == 1500 for nic in sim.state.nics)
    sim.faults.set("drop-on-commit")
    with connect(sim) as client:
        assert run(client, "hostname")[0] == "gpu1\n"  # a read passes
        with contextlib.suppress(OSError, EOFError, paramiko.SSHException):  # closed without a reply
            assert run(client, f"sudo ip link set dev {IF0} mtu 9000")[2] == -1
    assert all(nic.mtu == 1500 for nic in sim.state.nics)
    sim.faults.clear()


def test_step_faults_fire_once_at_their_moment(sim: GpuHostSim) -> None:
    with pytest.raises(ValueError, match="unknown moment"):
        sim.faults.set("drop", at="later")
    with pytest.raises(ValueError, match="cannot be given --at"):
        sim.faults.set("drop-on-commit", at="commit")
    sim.faults.set("reject", at="read", after=2)
    assert sim.faults.active() == ["reject --at read --after 2"]
    with connect(sim) as client:
        assert run(client, "hostname")[2] == 0
        assert run(client, "hostname")[2] == 1  # the 2nd read is refused
        assert run(client, "hostname")[2] == 0  # once
    assert sim.faults.fired == ["reject --at read --after 2"] and sim.faults.active() == []


def test_sha256sum_prints_gnu_lines_and_names_a_missing_file(sim: GpuHostSim) -> None:
    """``sha256sum FILE...`` as coreutils prints it: ``HEX  NAME`` per file, stdin as ``-``; a file it cannot
    read is named on stderr with exit status 1 (fabconf asks it for its rollback checkpoint's digest)."""
    with sim.lock:
        sim.state.files["/etc/nccl.conf"] = "NCCL_IB_HCA=mlx5\n"
    want = hashlib.sha256(b"NCCL_IB_HCA=mlx5\n").hexdigest()
    with connect(sim) as client:
        assert run(client, "sha256sum /etc/nccl.conf") == (f"{want}  /etc/nccl.conf\n", "", 0)
        assert run(client, "cat /etc/nccl.conf | sha256sum") == (f"{want}  -\n", "", 0)
        out, err, rc = run(client, "sha256sum /nope /etc/nccl.conf")
        assert (out, err, rc) == (f"{want}  /etc/nccl.conf\n", "sha256sum: /nope: No such file or directory\n", 1)


def test_sha256sum_prints_what_coreutils_prints_for_the_checkpoint(sim: GpuHostSim) -> None:
    """The lab's ``sha256sum`` of the rollback checkpoint, byte for byte as GNU coreutils printed it on a real host
    (tests/captures/sha256sum): a missing checkpoint on stderr with exit status 1, then its digest line."""
    found = load("sha256sum", "coreutils-9.1-checkpoint").text
    missing = load("sha256sum", "coreutils-9.1-missing").text
    command = f"sha256sum {CHECKPOINT_PATH}"  # as the capture was run
    with connect(sim) as client:
        assert run(client, command) == ("", missing, 1)
        with sim.lock:
            sim.state.files[CHECKPOINT_PATH] = "{}\n"  # the bytes the capture hashed
        assert run(client, command) == (found, "", 0)
