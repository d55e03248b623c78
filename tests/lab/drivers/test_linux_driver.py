"""fabconf's linux driver against the lab GPU host simulator: real SSH on loopback (127.15.0.0/16), no mocks.

The desired state is the rendered gpu01 document of the example inventory; the simulator starts as a
brownfield host (trust pcp, PFC off, MTU 1500, ECN off, ToS unset, a stale /etc/nccl.conf, no boot unit).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from napalm.base.exceptions import CommandErrorException, CommitError, MergeConfigException
from pristine import EXAMPLE
from trust import known_hosts

from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.render import render
from fabconf.drivers.textdiff import unified
from fabconf.platform.linux.driver import HostCommandError, HostOutputError, LinuxDriver
from fabconf.platform.linux.parse import (
    ParseError,
    mlx_same,
    mlx_set_value,
    parse_ibdev2netdev,
    parse_mlnx_qos,
    parse_mlxconfig_query,
    parse_rdma_link,
    parse_traffic_class,
)
from fabconf.platform.linux.plan import HIDDEN_MAP
from fabconf.platform.linux.state import comparable_documents
from fabconf_lab.host.sim import GpuHostSim

ROOT = Path(__file__).resolve().parents[3]
USER, PASSWORD = "admin", "gpu-Pw-41x"
NICS = [
    {"netdev": "ens1f0np0", "rdma": "mlx5_0", "speed": 400},
    {"netdev": "ens2f0np0", "rdma": "mlx5_1", "speed": 400},
]
# a pid-dependent /24 inside 127.15.0.0/16 so that concurrent runs do not collide on port 22
_ADDRESSES = (f"127.15.{20 + os.getpid() % 230}.{n}" for n in itertools.count(1))

BROWNFIELD_DIFF = """\
ens1f0np0: trust pcp -> dscp
ens1f0np0: pfc 0,0,0,0,0,0,0,0 -> 0,0,0,1,0,0,0,0
ens1f0np0: mtu 1500 -> 9000
ens1f0np0: ecn roce_np_enable none -> 3
ens1f0np0: ecn roce_rp_enable none -> 3
mlx5_0: roce_tos (cma_roce_tos) 0 -> 106
mlx5_0: traffic_class unset -> 106
ens2f0np0: trust pcp -> dscp
ens2f0np0: pfc 0,0,0,0,0,0,0,0 -> 0,0,0,1,0,0,0,0
ens2f0np0: mtu 1500 -> 9000
ens2f0np0: ecn roce_np_enable none -> 3
ens2f0np0: ecn roce_rp_enable none -> 3
mlx5_1: roce_tos (cma_roce_tos) 0 -> 106
mlx5_1: traffic_class unset -> 106
sysctl net.ipv4.conf.ens1f0np0.arp_announce 0 -> 2
sysctl net.ipv4.conf.ens1f0np0.arp_ignore 0 -> 1
sysctl net.ipv4.conf.ens2f0np0.arp_announce 0 -> 2
sysctl net.ipv4.conf.ens2f0np0.arp_ignore 0 -> 1
ens1f0np0: address 10.101.0.2/24 missing
ens2f0np0: address 10.102.1.2/24 missing
route 10.101.0.0/16 via 10.101.0.1 dev ens1f0np0 table 100: missing
route 10.101.0.0/24 dev ens1f0np0 scope link src 10.101.0.2 table 100: missing
route 10.102.0.0/16 via 10.101.0.1 dev ens1f0np0 table 100: missing
route 10.101.0.0/16 via 10.102.1.1 dev ens2f0np0 table 101: missing
route 10.102.0.0/16 via 10.102.1.1 dev ens2f0np0 table 101: missing
route 10.102.1.0/24 dev ens2f0np0 scope link src 10.102.1.2 table 101: missing
route 10.101.0.0/16 via 10.101.0.1 dev ens1f0np0: missing
route 10.102.0.0/16 via 10.102.1.1 dev ens2f0np0: missing
rule 100: from 10.101.0.2 lookup 100: missing
rule 101: from 10.102.1.2 lookup 101: missing
ens1f0np0: address 10.200.18.107/31 -> removed
ens2f0np0: address 10.201.18.107/31 -> removed
/etc/nccl.conf: NCCL_IB_GID_INDEX 0 -> 3
/etc/nccl.conf: NCCL_IB_HCA mlx5 -> =mlx5_0:1,mlx5_1:1
/etc/nccl.conf: NCCL_IB_TC (unset) -> 106
/etc/nccl.conf: NCCL_SOCKET_IFNAME eno1 -> =ens1f0np0
boot unit fabconf-roce.service: missing"""


@pytest.fixture(scope="module")
def doc() -> str:
    return render(compile_inventory(EXAMPLE).data["gpu01"])


def start_host(tmp_path: Path, nics: list[dict[str, Any]] | None = None) -> GpuHostSim:
    host = GpuHostSim(
        "gpu01", next(_ADDRESSES), ports=[], username=USER, password=PASSWORD, nics=nics or NICS, state_dir=tmp_path
    )
    host.start()
    return host


@pytest.fixture
def host(tmp_path: Path) -> Iterator[GpuHostSim]:
    sim = start_host(tmp_path)
    try:
        yield sim
    finally:
        sim.stop()


def connect(host: GpuHostSim, driver_class: type[LinuxDriver] = LinuxDriver, **optional: Any) -> LinuxDriver:
    trusted = known_hosts(Path(tempfile.mkdtemp()) / "known_hosts", host)
    args = {"port": host.port, "known_hosts": trusted, **optional}
    driver = driver_class(host.address, USER, PASSWORD, timeout=20, optional_args=args)
    driver.open()
    return driver


@pytest.fixture
def driver(host: GpuHostSim) -> Iterator[LinuxDriver]:
    drv = connect(host)
    try:
        yield drv
    finally:
        drv.close()


def snapshot(host: GpuHostSim) -> str:
    with host.lock:
        return repr(host.state)


def managed(host: GpuHostSim) -> dict[str, Any]:
    """The settings the driver manages, read straight from the simulator's state."""
    with host.lock:
        state = host.state
        nics = {
            n.netdev: (
                n.trust,
                list(n.pfc),
                n.mtu,
                list(n.ecn_np),
                list(n.ecn_rp),
                n.cnp_dscp,
                n.cnp_802p_prio,
                n.roce_tos,
                dict(n.mlx_next),
            )
            for n in state.nics
        }
        files = {p: state.files.get(p) for p in ("/etc/nccl.conf", "/etc/systemd/system/fabconf-roce.service")}
        return {"nics": nics, "files": files, "enabled": sorted(state.units_enabled)}


def with_cnp_dscp(doc: str, value: int) -> str:
    return doc.replace('CNP_DSCP_P1: "48"', f'CNP_DSCP_P1: "{value}"').replace("cnp_dscp: 48", f"cnp_dscp: {value}")


# -- diff -----------------------------------------------------------------------------------------------


def test_diff_shows_each_wrong_setting_of_the_brownfield_host_and_changes_nothing(
    host: GpuHostSim, driver: LinuxDriver, doc: str
) -> None:
    before = snapshot(host)
    driver.load_merge_candidate(config=doc)
    assert driver.compare_config() == BROWNFIELD_DIFF
    assert snapshot(host) == before
    driver.discard_config()
    assert driver.compare_config() == ""
    assert not [cmd for _kind, cmd in host.ssh.commands if "tee" in cmd or "--trust" in cmd]


def test_config_diff_compares_the_documents_without_printing_and_parsing_them_again(
    host: GpuHostSim, driver: LinuxDriver, doc: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The unified diff is the one of the running document's text and the candidate's text, worked out from the
    data the driver already has (issue 42: printing the running YAML and parsing both documents again was a tenth
    of fabconf's CPU in a GPU host's diff): no YAML is parsed for it."""
    driver.load_merge_candidate(config=doc)
    running = driver.get_config()["running"]  # the same host, unchanged: the same document
    expected = unified(*comparable_documents(running, doc), driver.hostname)
    assert "-  trust: pcp" in expected and "+  trust: dscp" in expected
    loads: list[object] = []
    real_load = yaml.load

    def counted(*a: object, **k: object) -> object:
        loads.append(a)
        return real_load(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(yaml, "load", counted)
    assert driver.config_diff() == expected
    assert loads == []


def test_a_diff_reads_the_host_in_two_exec_channels_with_two_framing_commands_per_read(
    host: GpuHostSim, driver: LinuxDriver, doc: str
) -> None:
    """Each exec channel and each command of a batched script cost CPU on the host and in fabconf (issue 42): a
    diff reads the host in two execs (the hostname with the NICs' PCI addresses, then the whole state), and a
    batched read frames each command with one ``printf`` (before: a third exec for the hostname alone, and
    ``echo; rc=$?; echo; echo`` around each command). What comes back is read as before."""
    driver.load_merge_candidate(config=doc)
    assert driver.compare_config() == BROWNFIELD_DIFF
    assert driver.config_diff().startswith("--- ")
    execs = [cmd for kind, cmd in host.ssh.commands if kind == "exec"]
    assert len(execs) == 2, execs
    names = execs[0]
    assert names.startswith("echo @@") and " hostname 2>&1; printf " in names and "ethtool -i ens1f0np0" in names
    state = execs[1]
    reads = state.count(" 2>&1; ")
    assert reads > 20 and state.count("printf '") == reads and "rc=$?" not in state and "; echo;" not in state


def test_commit_fixes_everything_and_a_second_compare_is_empty(host: GpuHostSim, driver: LinuxDriver, doc: str) -> None:
    transport = driver._shell.transport
    driver.load_merge_candidate(config=doc)
    driver.commit_config()
    assert driver.compare_config() == ""
    with host.lock:
        for nic in host.state.nics:
            assert (nic.trust, nic.pfc, nic.mtu) == ("dscp", [0, 0, 0, 1, 0, 0, 0, 0], 9000)
            assert nic.ecn_np == nic.ecn_rp == [0, 0, 0, 1, 0, 0, 0, 0]
            assert (nic.roce_tos, nic.traffic_class) == (106, 106)
        files = host.state.files
        assert files["/etc/nccl.conf"] == yaml.safe_load(doc)["nccl_conf"]
        assert "ExecStart=/usr/local/sbin/fabconf-roce.sh" in files["/etc/systemd/system/fabconf-roce.service"]
        assert "fabconf-roce.service" in host.state.units_enabled
    # only what differed was applied: e.g. the CNP values were already right and were not written
    assert not [c for c in driver.commands_sent if c.startswith("echo 48") or c.startswith("sudo -n mlxconfig")]
    assert "echo 1 | sudo -n tee /sys/class/net/ens1f0np0/ecn/roce_np/enable/3 >/dev/null" in driver.commands_sent
    assert not [cmd for _kind, cmd in host.ssh.commands if "mlxfwreset" in cmd]
    # the running document compares equal to the desired one on every setting the document has
    running = yaml.safe_load(driver.get_config()["running"])
    desired = yaml.safe_load(doc)
    for section in ("qos", "ecn", "roce_tos", "nccl_conf"):
        assert running[section] == desired[section], section
    assert {k: running["mlxconfig"][k] for k in desired["mlxconfig"]} == desired["mlxconfig"]
    assert [(n["netdev"], n["mtu"]) for n in running["nics"]] == [(n["netdev"], n["mtu"]) for n in desired["nics"]]
    startup = driver.get_config(retrieve="startup")["startup"]  # the boot script: what the host re-applies
    assert startup.startswith("#!/bin/bash") and "mlnx_qos -i ens2f0np0 --trust dscp >/dev/null || rc=1" in startup
    # ONE SSH connection from open() to close()
    assert transport is not None and driver._shell.transport is transport
    assert driver.is_alive() == {"is_alive": True}


def test_mlxconfig_change_is_pending_until_reboot(host: GpuHostSim, driver: LinuxDriver, doc: str) -> None:
    driver.load_merge_candidate(config=with_cnp_dscp(doc, 56))
    diff = driver.compare_config().splitlines()
    assert "mlx5_0: mlxconfig CNP_DSCP_P1 48 -> 56 (pending until firmware reset or reboot)" in diff
    assert "mlx5_1: mlxconfig CNP_DSCP_P1 48 -> 56 (pending until firmware reset or reboot)" in diff
    assert "ens1f0np0: ecn cnp_dscp 48 -> 56" in diff
    driver.commit_config()
    assert driver.compare_config() == ""  # set in Next Boot = not a diff ...
    pending = {"CNP_DSCP_P1": {"current": "48", "next_boot": "56"}}
    assert driver.pending_firmware() == {"mlx5_0": pending, "mlx5_1": pending}  # ... but reported
    assert "# pending until firmware reset or reboot: mlx5_0 CNP_DSCP_P1 48 -> 56" in driver.get_config()["running"]
    assert host.state.nics[0].mlx_current["CNP_DSCP_P1"] == 48
    assert not [cmd for _kind, cmd in host.ssh.commands if "mlxfwreset" in cmd]
    host.reboot()
    driver.close()
    driver.open()  # a reboot ends the SSH session
    assert driver.pending_firmware() == {}
    assert host.state.nics[0].mlx_current["CNP_DSCP_P1"] == 56
    assert driver.compare_config() == ""


def test_firmware_reset_only_when_allowed_and_before_runtime_settings(host: GpuHostSim, doc: str) -> None:
    driver = connect(host, allow_fw_reset=True)
    try:
        driver.load_merge_candidate(config=with_cnp_dscp(doc, 56))
        assert "mlx5_0: mlxconfig CNP_DSCP_P1 48 -> 56 (firmware reset on commit)" in driver.compare_config()
        driver.commit_config()
        resets = [cmd for cmd in driver.commands_sent if "mlxfwreset" in cmd]
        assert resets == [f"sudo -n mlxfwreset -d 0000:{b}:00.0 -y --level 3 reset" for b in ("17", "27")]
        assert driver.pending_firmware() == {}
        # the reset drops runtime state, so the runtime settings were applied after it and are all there
        assert driver.compare_config() == ""
        assert host.state.nics[1].mlx_current["CNP_DSCP_P1"] == 56 and host.state.nics[1].trust == "dscp"
    finally:
        driver.close()


# -- reboot and the boot unit -------------------------------------------------------------------------------


def test_boot_unit_reapplies_runtime_settings_after_reboot(host: GpuHostSim, driver: LinuxDriver, doc: str) -> None:
    driver.load_merge_candidate(config=doc)
    driver.commit_config()
    host.reboot()
    assert host.state.boot_log == ["fabconf-roce.service: active (exit 0)"]
    driver.close()
    driver.open()
    assert driver.compare_config() == ""
    assert host.state.nics[1].trust == "dscp" and host.state.nics[1].mtu == 9000
    assert host.state.nics[0].traffic_class == 106


def test_without_the_boot_unit_a_reboot_loses_the_runtime_settings(
    host: GpuHostSim, driver: LinuxDriver, doc: str
) -> None:
    driver.load_merge_candidate(config=doc)
    driver.commit_config()
    host.run("systemctl disable fabconf-roce.service")
    host.reboot()
    driver.close()
    driver.open()
    diff = driver.compare_config().splitlines()
    assert "ens1f0np0: trust pcp -> dscp" in diff and "ens2f0np0: mtu 1500 -> 9000" in diff
    assert "boot unit fabconf-roce.service: not enabled" in diff
    assert not [line for line in diff if "nccl.conf" in line]  # a file survives the reboot


# -- failures restore the previous state --------------------------------------------------------------------


class PfcOverwritten(LinuxDriver):
    """A host where something (a DCBX agent, say) resets PFC on ens2f0np0 right after the driver set it."""

    sim: GpuHostSim

    def _after_apply(self) -> None:
        with self.sim.lock:
            self.sim.state.nics[1].pfc = [0] * 8


def test_failed_verify_restores_the_previous_settings(host: GpuHostSim, doc: str) -> None:
    before = managed(host)
    driver = connect(host, PfcOverwritten)
    assert isinstance(driver, PfcOverwritten)
    driver.sim = host
    try:
        driver.load_merge_candidate(config=doc)
        with pytest.raises(CommitError) as err:
            driver.commit_config()
        message = str(err.value)
        assert "did not stick" in message and "ens2f0np0: pfc 0,0,0,0,0,0,0,0 -> 0,0,0,1,0,0,0,0" in message
        assert "previous state restored" in message
        assert managed(host) == before
        assert host.state.nics[0].trust == "pcp" and host.state.nics[0].mtu == 1500
        # what sysfs cannot undo is said, not hidden
        assert "mlx5_0: traffic_class was unset and stays 106 (sysfs cannot unset it)" in driver.restore_notes
    finally:
        driver.close()


def test_a_refused_command_restores_what_was_already_applied(host: GpuHostSim, driver: LinuxDriver, doc: str) -> None:
    before = managed(host)
    driver.load_merge_candidate(config=doc.replace("mtu: 9000", "mtu: 9999", 1))  # above the NIC's maximum
    with pytest.raises(CommitError) as err:
        driver.commit_config()
    message = str(err.value)
    assert "`sudo -n ip link set dev ens1f0np0 mtu 9999` failed" in message
    assert "mtu greater than device maximum" in message
    assert managed(host) == before
    assert "sudo -n mlnx_qos -i ens1f0np0 --trust pcp" in driver.commands_sent  # the trust change was undone


def test_rollback_restores_the_state_before_the_last_commit(host: GpuHostSim, driver: LinuxDriver, doc: str) -> None:
    driver.rollback()  # no commit yet: nothing to do
    before = managed(host)
    driver.load_merge_candidate(config=with_cnp_dscp(doc, 56))
    driver.commit_config()
    assert managed(host) != before
    driver.rollback()
    assert managed(host) == before
    assert host.state.nics[0].mlx_next["CNP_DSCP_P1"] == 48
    # sysfs cannot unset the OFED traffic class: it stays, and the driver says so; the brownfield trusted pcp,
    # which hides the DSCP map mlnx_qos would show, so the entries the commit set cannot be put back: said too
    assert driver.restore_notes == [
        note
        for i, netdev in ((0, "ens1f0np0"), (1, "ens2f0np0"))
        for note in (
            f"mlx5_{i}: traffic_class was unset and stays 106 (sysfs cannot unset it)",
            f"{netdev}: {HIDDEN_MAP}",
        )
    ]
    driver.load_merge_candidate(config=doc)
    expected = [line for line in BROWNFIELD_DIFF.splitlines() if "traffic_class" not in line]
    assert driver.compare_config().splitlines() == expected


def test_rollback_from_a_later_session_uses_the_checkpoint_on_the_host(host: GpuHostSim, doc: str) -> None:
    with host.lock:
        host.state.files["/etc/nccl.conf"] = "NCCL_IB_HCA=mlx5"  # no final newline: still written back intact
    before = managed(host)
    first = connect(host)
    first.load_merge_candidate(config=doc)
    first.commit_config()
    first.close()  # e.g. the push was interrupted before it could verify
    assert "/var/lib/fabconf/linux-rollback.json" in host.state.files
    second = connect(host)
    try:
        second.rollback()
        assert host.state.files["/etc/nccl.conf"] == "NCCL_IB_HCA=mlx5\n"
        host.state.files["/etc/nccl.conf"] = "NCCL_IB_HCA=mlx5"
        assert managed(host) == before
    finally:
        second.close()


CHECKPOINT, RECORD = "/var/lib/fabconf/linux-rollback.json", "/var/lib/fabconf/linux-rollback.sha256"
HALF_APPLIED = "an interrupted commit left this host half-applied"


def committed(host: GpuHostSim, doc: str) -> dict[str, Any]:
    """Commit ``doc`` in a session of its own; the checkpoint it left on the host, as data."""
    first = connect(host)
    try:
        first.load_merge_candidate(config=doc)
        first.commit_config()
    finally:
        first.close()
    with host.lock:
        data: dict[str, Any] = json.loads(host.state.files[CHECKPOINT])
        return data


def interrupted(host: GpuHostSim) -> str:
    """``interrupted_commit`` of a new session (as a diff or verify asks it), the execs it took cleared first."""
    host.ssh.commands.clear()
    driver = connect(host)
    try:
        return driver.interrupted_commit()
    finally:
        driver.close()


def test_a_diff_after_a_commit_reads_the_checkpoints_digest_not_the_whole_checkpoint(
    host: GpuHostSim, doc: str
) -> None:
    """Every diff and verify asks whether the checkpoint is marked "applying" (issue 42: the checkpoint is ~144 KB
    for 8 NICs, read and parsed whole each time). A commit writes a record after it: its SHA-256 and the flag. The
    host prints the checkpoint's SHA-256 and the record in one exec; the checkpoint itself is not printed when
    there is a record, nor read when the digest is the record's."""
    checkpoint = committed(host, doc)
    assert checkpoint["applying"] is False
    with host.lock:
        text = host.state.files[CHECKPOINT]
        record = json.loads(host.state.files[RECORD])
    assert record == {"applying": False, "sha256": hashlib.sha256(text.encode()).hexdigest()}
    assert interrupted(host) == ""
    execs = [cmd for kind, cmd in host.ssh.commands if kind == "exec"]
    assert len(execs) == 1 and f"sha256sum {CHECKPOINT}" in execs[0] and f"cat {RECORD}" in execs[0], execs
    # the checkpoint itself is printed only where there is no record
    assert f"sudo -n test -e {RECORD} || sudo -n cat {CHECKPOINT} 2>&1;" in execs[0]
    # a commit cut short leaves both marked "applying": seen from the record alone
    marked = json.dumps({**checkpoint, "applying": True}, sort_keys=True, separators=(",", ":")) + "\n"
    with host.lock:
        host.state.files[CHECKPOINT] = marked
        host.state.files[RECORD] = json.dumps({"applying": True, "sha256": hashlib.sha256(marked.encode()).hexdigest()})
    assert HALF_APPLIED in interrupted(host)


@pytest.mark.parametrize(
    "damage",
    ["cut short", "applying, record stale", "applying, no record", "applying, record garbled", "no checkpoint"],
)
def test_a_checkpoint_the_record_does_not_vouch_for_is_read_whole_as_before(
    host: GpuHostSim, doc: str, damage: str
) -> None:
    """Damage and an interrupted commit are seen exactly as when the whole checkpoint was always read: any
    checkpoint whose digest is not its record's (damaged, rewritten, left by an older fabconf without a record)
    is read whole; a damaged one is a clear error naming it, never "nothing interrupted". A checkpoint with no
    record is printed by the same exec that asked for its digest."""
    checkpoint = committed(host, doc)
    applying = json.dumps({**checkpoint, "applying": True}, sort_keys=True, separators=(",", ":")) + "\n"
    with host.lock:
        files = host.state.files
        if damage == "cut short":
            files[CHECKPOINT] = files[CHECKPOINT][: len(files[CHECKPOINT]) // 2]
        elif damage == "no checkpoint":
            del files[CHECKPOINT]
        else:
            files[CHECKPOINT] = applying  # the record still says "not applying", of other bytes
            if damage == "applying, no record":
                del files[RECORD]
            elif damage == "applying, record garbled":
                files[RECORD] = files[RECORD][:-10]
    if damage == "cut short":
        with pytest.raises(HostOutputError, match="damaged rollback checkpoint"):
            interrupted(host)
    elif damage == "no checkpoint":
        assert interrupted(host) == ""
    else:
        assert HALF_APPLIED in interrupted(host)
    # with no record the one exec printed the checkpoint too; any other disagreement reads it in a second exec
    execs = [cmd for kind, cmd in host.ssh.commands if kind == "exec" and CHECKPOINT in cmd]
    assert len(execs) == (2 if damage in ("cut short", "applying, record stale", "applying, record garbled") else 1)


def test_a_stale_dscp_map_hidden_by_pcp_trust_is_found_and_fixed(
    host: GpuHostSim, driver: LinuxDriver, doc: str
) -> None:
    with host.lock:
        host.state.nics[0].dscp2prio[26] = 5  # left over from an old setup; mlnx_qos does not show it under pcp
    driver.load_merge_candidate(config=doc)
    driver.commit_config()  # sets trust dscp, then sees the map and puts DSCP 26 back on priority 3
    fixes = [c for c in driver.commands_sent if c.startswith("sudo -n mlnx_qos -i ens1f0np0 --dscp2prio ")]
    assert len(fixes) == 1 and " --dscp2prio set,26,3 " in fixes[0] + " "
    assert host.state.nics[0].dscp2prio[26] == 3
    assert driver.compare_config() == ""
    with host.lock:
        host.state.nics[1].dscp2prio[26] = 5  # visible now (trust dscp): compare names it
    assert driver.compare_config() == "ens2f0np0: dscp2prio 26:5 -> 26:3"


def test_root_login_runs_commands_without_sudo(tmp_path: Path, doc: str) -> None:
    sim = GpuHostSim("gpu01", next(_ADDRESSES), ports=[], username="root", password=PASSWORD, nics=NICS)
    sim.start()
    try:
        trusted = known_hosts(tmp_path / "known_hosts", sim)
        driver = LinuxDriver(sim.address, "root", PASSWORD, optional_args={"port": sim.port, "known_hosts": trusted})
        driver.open()
        driver.load_merge_candidate(config=doc)
        driver.commit_config()
        assert driver.compare_config() == ""
        assert not [c for c in driver.commands_sent if "sudo" in c]
        driver.close()
    finally:
        sim.stop()


def test_no_commit_timer(host: GpuHostSim, driver: LinuxDriver, doc: str) -> None:
    before = snapshot(host)
    assert LinuxDriver.supports_revert_timer is False
    driver.load_merge_candidate(config=doc)
    with pytest.raises(NotImplementedError):
        driver.commit_config(revert_in=60)
    assert snapshot(host) == before
    assert driver.has_pending_commit() is False


# -- errors --------------------------------------------------------------------------------------------------


def test_garbled_output_is_a_clear_error_never_all_good(host: GpuHostSim, driver: LinuxDriver, doc: str) -> None:
    driver.load_merge_candidate(config=doc)
    driver.commit_config()
    before = snapshot(host)
    host.faults.set("garbled")
    with pytest.raises(HostOutputError) as err:
        driver.compare_config()
    assert isinstance(err.value, CommandErrorException)
    message = str(err.value)
    assert message.startswith("gpu01 (") and "`ip -j -4 addr show`" in message  # the first read after the files
    assert "unreadable output" in message and "output: " in message
    with pytest.raises(HostOutputError):
        driver.commit_config()
    with pytest.raises(HostOutputError):
        driver.preflight()
    assert snapshot(host) == before
    host.faults.clear()
    assert driver.compare_config() == ""


def test_missing_tool_is_a_clear_error(host: GpuHostSim, driver: LinuxDriver, doc: str) -> None:
    del host.commands["mlnx_qos"]  # a host without mlnx-tools
    driver.load_merge_candidate(config=doc)
    with pytest.raises(HostCommandError) as err:
        driver.compare_config()
    assert "`sudo -n mlnx_qos -i ens1f0np0` failed: tool not found on the host" in str(err.value)
    assert "command not found" in str(err.value)


def test_bad_or_foreign_candidate_is_refused(driver: LinuxDriver, doc: str, tmp_path: Path) -> None:
    with pytest.raises(MergeConfigException, match=r"qos\.pfc"):
        driver.load_merge_candidate(config=doc.replace('pfc: "0,0,0,1,0,0,0,0"', 'pfc: "0,0,1"'))
    with pytest.raises(MergeConfigException, match="candidate is for 'gpu02'"):
        driver.load_merge_candidate(config=doc.replace('hostname: "gpu01"', 'hostname: "gpu02"'))
    assert driver.compare_config() == ""  # nothing staged
    (tmp_path / "gpu01.yaml").write_text(doc)
    driver.load_replace_candidate(filename=str(tmp_path / "gpu01.yaml"))  # replace = merge for hosts
    assert driver.compare_config() == BROWNFIELD_DIFF


# -- preflight -----------------------------------------------------------------------------------------------


def test_preflight_is_clean_on_a_healthy_host(driver: LinuxDriver, doc: str) -> None:
    driver.load_merge_candidate(config=doc)
    assert driver.preflight() == []


def test_preflight_finds_lldpad_a_down_port_and_a_wrong_speed(tmp_path: Path, doc: str) -> None:
    host = start_host(tmp_path, [NICS[0], {**NICS[1], "speed": 200}])
    try:
        host.run("lldpad -d")
        driver = connect(host)
        driver.load_merge_candidate(config=doc)
        problems = driver.preflight()
        assert problems[0].startswith("lldpad is running")
        assert "mlx5_1/1 (ens2f0np0): rate 200 Gb/s, inventory 400 Gb/s" in problems
        host.run("ip link set dev ens1f0np0 down")
        assert (
            "mlx5_0/1 (ens1f0np0): state DOWN physical_state DISABLED, expected ACTIVE / LINK_UP" in driver.preflight()
        )
        driver.close()
    finally:
        host.stop()


def test_preflight_finds_a_missing_nic_and_compare_names_it(tmp_path: Path, doc: str) -> None:
    host = start_host(tmp_path, [NICS[0]])
    try:
        driver = connect(host)
        driver.load_merge_candidate(config=doc)
        assert driver.preflight() == ["mlx5_1: RDMA device not found on the host (ibdev2netdev)"]
        assert "ens2f0np0: missing on the host (no such netdev)" in driver.compare_config().splitlines()
        before = snapshot(host)
        with pytest.raises(CommitError, match="cannot apply, nothing changed"):
            driver.commit_config()
        assert snapshot(host) == before
        driver.close()
    finally:
        host.stop()


# -- getters --------------------------------------------------------------------------------------------------


def test_getters(host: GpuHostSim, driver: LinuxDriver) -> None:
    facts = driver.get_facts()
    assert facts["hostname"] == "gpu01"
    assert "Ubuntu 22.04.4 LTS" in facts["os_version"] and "5.15.0-119-generic" in facts["os_version"]
    assert {"ens1f0np0", "ens2f0np0"} <= set(facts["interface_list"])
    interfaces = driver.get_interfaces()
    assert interfaces["ens1f0np0"]["mtu"] == 1500 and interfaces["ens1f0np0"]["is_up"] is True
    assert interfaces["ens1f0np0"]["speed"] == 400_000.0
    assert driver.get_lldp_neighbors() == {}
    config = driver.get_config()
    running = yaml.safe_load(config["running"])
    assert running["qos"] == {"trust": "pcp", "pfc": "0,0,0,0,0,0,0,0", "dscp2prio": None}
    assert running["mlxconfig"]["LINK_TYPE_P1"] == "ETH(2)"
    assert config["candidate"] == "" and config["startup"] == ""
    # the running document does not depend on a staged candidate (steps compare before/after reads)
    assert driver.get_config(retrieve="running")["running"] == config["running"]


# -- parsers on the tools' documented formats ----------------------------------------------------------------------

QOS_OLD_OFED = """\
DCBX mode: OS controlled
Priority trust state: dscp
dscp2prio mapping:
\tprio:0 dscp:07,06,05,04,03,02,01,00,
\tprio:1 dscp:15,14,13,12,11,10,09,08,
\tprio:2 dscp:23,22,21,20,19,18,17,16,
\tprio:3 dscp:31,30,29,28,27,26,25,24,
\tprio:4 dscp:39,38,37,36,35,34,33,32,
\tprio:5 dscp:47,46,45,44,43,42,41,40,
\tprio:6 dscp:55,54,53,52,51,50,49,48,
\tprio:7 dscp:63,62,61,60,59,58,57,56,
Cable len: 7
PFC configuration:
\tpriority    0   1   2   3   4   5   6   7
\tenabled     0   0   0   1   0   0   0   0
tc: 0 ratelimit: unlimited, tsa: vendor
\t priority:  1
"""


def test_parsers_accept_the_documented_variants() -> None:
    qos = parse_mlnx_qos(
        "****** WARNING: lldpad service is running and may overwrite your settings ******\n" + QOS_OLD_OFED
    )
    assert qos.lldpad_warning and qos.trust == "dscp" and qos.pfc == [0, 0, 0, 1, 0, 0, 0, 0]
    assert qos.dscp2prio is not None and qos.dscp2prio[26] == 3
    with pytest.raises(ParseError, match="incomplete"):
        parse_mlnx_qos(QOS_OLD_OFED.replace("\tprio:5 dscp:47,46,45,44,43,42,41,40,\n", ""))
    old = parse_rdma_link("1/1: mlx5_0/1: state ACTIVE physical_state LINK_UP netdev ens1f0np0\n")
    assert (old[0].dev, old[0].state, old[0].netdev) == ("mlx5_0", "ACTIVE", "ens1f0np0")
    verbose = (
        "0000:17:00.0 mlx5_0 (MT4129 - MCX75310AAS-NEA) NVIDIA ConnectX-7 fw 28.39.1002 port 1 (ACTIVE) ==> "
        "ens1f0np0 (Up)\n"
    )
    assert parse_ibdev2netdev(verbose) == {"mlx5_0": ("ens1f0np0", "Up")}
    plain = (
        "\nDevice #1:\n----------\n\nDevice type:        ConnectX4LX\nDevice:             01:00.0\n\n"
        "Configurations:                                          Next Boot\n"
        "        ROCE_CC_PRIO_MASK_P1                        255\n"
        "        CNP_DSCP_P1                                 48\n"
        "        ROCE_CONTROL                                ROCE_ENABLE(2)\n"
    )
    values = parse_mlxconfig_query(plain)
    assert values["ROCE_CONTROL"].next_boot == "ROCE_ENABLE(2)" and not values["CNP_DSCP_P1"].pending
    assert parse_traffic_class("Global tclass=106\n") == 106 and parse_traffic_class("") is None
    assert mlx_same("ETH(2)", "2") and mlx_same("eth", "ETH(2)") and not mlx_same("IB(1)", "ETH(2)")
    assert mlx_set_value("ETH(2)") == "2" and mlx_set_value("255") == "255"
