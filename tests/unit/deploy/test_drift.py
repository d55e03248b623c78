"""Drift's unit layer: section classification per candidate form, the drift states and exit status over scripted
fake devices (tests/deploy/fakes.py, fabconf's own tasks and rollout unmodified), backups (volatile lines,
secrets, determinism), unmanaged changes and the git store."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from fakes import FakeDevice, FakeDriver, FakeHostDriver, FakeTimerDriver, Script
from pristine import EXAMPLE

from fabconf.compile.pipeline import Compiled
from fabconf.deploy import gitstore, rollout, tasks
from fabconf.deploy.backup import canonical, write_backup
from fabconf.deploy.credentials import REDACTOR
from fabconf.deploy.drift import DriftState, Snapshots, device_drift, drift_task, exit_code
from fabconf.deploy.job import Job
from fabconf.deploy.options import DeviceOptions
from fabconf.deploy.sections import classify
from fabconf.deploy.unmanaged import unmanaged_changes
from fabconf.platforms import Candidate
from fabconf.private import UnsafePath

CLI, NVUE, HOST = Candidate.CLI, Candidate.NVUE_TREE, Candidate.HOST_STATE


def _diff(*body: str) -> str:
    return "--- d (running)\n+++ d (intended)\n" + "\n".join(body) + "\n"


SECTION_CASES = [
    # EOS: an uplink's MTU, its root in the hunk
    (
        CLI,
        _diff("@@ -4,4 +4,4 @@", " interface Ethernet63/1", "   description spine1", "-  mtu 9000", "+  mtu 9214"),
        ["interfaces"],
    ),
    # a root outside the hunk: the line's own keywords decide
    (
        CLI,
        _diff(
            "@@ -90,3 +90,3 @@", "   neighbor 10.0.0.1 remote-as 65001", "-  maximum-paths 32", "+  maximum-paths 64"
        ),
        ["bgp"],
    ),
    # NX-OS: PFC inside a network-qos policy is PFC, the class MTU there is QoS (not interfaces)
    (
        CLI,
        _diff(
            "@@ -1,4 +1,5 @@",
            " policy-map type network-qos FABCONF_NQ",
            "   class type network-qos c-8q-nq3",
            "-    mtu 9000",
            "+    mtu 9216",
            "+    pause pfc-cos 3",
        ),
        ["qos", "pfc"],
    ),
    (CLI, _diff("@@ -1,2 +1,4 @@", " hostname leaf4", "+vlan 777", "+  name ROGUE"), ["vlans"]),
    (CLI, _diff("@@ -1 +1 @@", "-no priority-flow-control watch-dog-interval on"), ["pfc"]),
    (
        CLI,
        _diff("@@ -1,2 +1,2 @@", " interface Ethernet1/1", "-  service-profile OLD", "+  service-profile FABCONF_ROCE"),
        ["qos"],
    ),
    (CLI, _diff("@@ -1 +1 @@", "-hostname old", "+hostname leaf3"), ["other"]),
    # NVUE: the nv paths are complete
    (NVUE, "", ["other"]),
    (
        NVUE,
        "nv set qos pfc default-global switch-priority 3\nnv unset qos pfc default-global switch-priority 4",
        ["pfc"],
    ),
    (
        NVUE,
        "nv set interface swp1 link mtu 9216\nnv set interface swp1 qos pfc-watchdog state enable",
        ["pfc", "interfaces"],
    ),
    (
        NVUE,
        "nv unset bridge domain br_default vlan 100\nnv set interface swp1 bridge domain br_default access 101",
        ["vlans"],
    ),
    (NVUE, "nv set qos egress-scheduler default-global traffic-class 3 bw-percent 50", ["qos"]),
    (NVUE, "nv set vrf default router bgp neighbor 10.0.0.1 remote-as 65100", ["bgp"]),
    # hosts: the NIC-state document
    (
        HOST,
        _diff("@@ -9,3 +9,3 @@", " qos:", "   trust: dscp", "-  pfc: 0,0,0,1,1,0,0,0", "+  pfc: 0,0,0,1,0,0,0,0"),
        ["pfc"],
    ),
    (
        HOST,
        _diff("@@ -30,3 +30,2 @@", "   NCCL_IB_TC=106", "   NCCL_SOCKET_IFNAME==ens1f0np0", "-  NCCL_DEBUG=INFO"),
        ["nccl"],
    ),
    (
        HOST,
        _diff(
            "@@ -20,2 +20,2 @@",
            "   LINK_TYPE_P1: ETH(2)",
            "-  ROCE_CC_PRIO_MASK_P1: '255'",
            "+  ROCE_CC_PRIO_MASK_P1: '8'",
        ),
        ["firmware"],
    ),
    (
        HOST,
        _diff("@@ -2,4 +2,4 @@", " nics:", " - netdev: ens1f0np0", "   rdma: mlx5_0", "-  mtu: 1500", "+  mtu: 9000"),
        ["nic"],
    ),
    (
        HOST,
        _diff(
            "@@ -12,2 +12,2 @@",
            " ecn:",
            "-  roce_np_enable: []",
            "+  roce_np_enable: [3]",
            "-roce_tos: 0",
            "+roce_tos: 106",
        ),
        ["qos"],
    ),
]


@pytest.mark.parametrize(("candidate", "text", "expected"), SECTION_CASES)
def test_sections(candidate: Candidate, text: str, expected: list[str]) -> None:
    diff, commands = ("", text) if candidate is NVUE else (text, "")
    got = classify(diff, commands, candidate) or ["other"]
    assert got == expected


# -- drift states over fake devices ----------------------------------------------------------------------------
def _jobs(example: Compiled, names: tuple[str, ...]) -> list[Job]:
    return [Job(example.model.devices[n], example.data[n], f"intended config of {n}\n") for n in names]


@pytest.fixture
def fake_fabric(example: Compiled, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Job], dict[str, FakeDevice]]:
    jobs = _jobs(example, ("leaf1", "leaf2", "leaf3", "leaf4", "gpu01"))
    devices = {
        "leaf1": FakeDevice("leaf1", jobs[0].rendered),  # at intent
        "leaf2": FakeDevice("leaf2", "brownfield config of leaf2\n"),  # drifted
        "leaf3": FakeDevice("leaf3", "x", Script(unreachable=True)),
        "leaf4": FakeDevice("leaf4", "x", Script(load_fails=True)),  # failed
        "gpu01": FakeDevice("gpu01", jobs[4].rendered),
    }
    monkeypatch.setattr(
        tasks, "build_driver", lambda job, options, credentials=None, timeout=None: FakeDriver(devices[job.name])
    )
    return jobs, devices


def test_states_exit_status_and_snapshots(fake_fabric: tuple[list[Job], dict[str, FakeDevice]]) -> None:
    jobs, devices = fake_fabric
    snapshots = Snapshots()
    outcomes = rollout.run(jobs, drift_task, DeviceOptions(workers=4, host_workers=2), snapshots=snapshots)
    drift = [device_drift(j, o) for j, o in zip(jobs, outcomes, strict=True)]
    states = {d.device: d.state for d in drift}
    assert states == {
        "leaf1": DriftState.IN_SYNC,
        "leaf2": DriftState.DRIFTED,
        "leaf3": DriftState.UNREACHABLE,
        "leaf4": DriftState.FAILED,
        "gpu01": DriftState.IN_SYNC,
    }
    assert drift[1].sections == ["other"]  # a drifted device always names at least one section
    assert exit_code(drift) == 1  # not checked wins over drifted
    assert exit_code([d for d in drift if d.state.checked]) == 2
    assert exit_code([d for d in drift if d.state is DriftState.IN_SYNC]) == 0
    # the running configuration is read for the checked devices only, and nothing was left on any device
    assert snapshots.get("leaf2") == "brownfield config of leaf2\n" and snapshots.get("leaf3") is None
    assert all("commit" not in " ".join(d.log) for d in devices.values())


# -- backups -------------------------------------------------------------------------------------------------
NXOS_RUNNING = """!Command: show running-config
!Running configuration last done at: Thu Dec  3 07:46:50 2026
!Time: Thu Dec  3 08:00:01 2026

version 10.3(4a) Bios:version 01.08
hostname leaf4
username admin password 5 $5$LABLAB$Qm9ndXNIYXNoRm9yTGFiT25seQ role network-admin
snmp-server community s3cr3tc0mm group network-operator
"""
EOS_RUNNING = """! Command: show running-config
! device: leaf3 (DCS-7060X5, EOS-4.32.2F)
! Last configuration change at Thu Dec  3 07:46:50 2026 by admin
!
username admin privilege 15 role network-admin secret sha512 $6$lab$notarealhash
hostname leaf3
"""


def test_backup_drops_volatile_lines_and_masks_secrets() -> None:
    REDACTOR.add("Very-Secret-Pw")
    nxos = canonical(NXOS_RUNNING + "! this line is from Very-Secret-Pw\n", CLI)
    assert "last done at" not in nxos and "!Time" not in nxos and "$5$" not in nxos and "s3cr3t" not in nxos
    assert "password 5 *** role network-admin" in nxos and "Very-Secret-Pw" not in nxos
    assert "hostname leaf4" in nxos and not nxos.startswith("\n")
    eos = canonical(EOS_RUNNING, CLI)
    assert "Last configuration change" not in eos and "$6$" not in eos and "secret sha512 ***" in eos
    # the same state at another time is the same backup, byte for byte
    later = NXOS_RUNNING.replace("07:46:50", "09:12:00").replace("08:00:01", "09:30:00")
    assert canonical(later, CLI) == canonical(NXOS_RUNNING, CLI)


def test_yaml_backups_are_deterministic_and_masked() -> None:
    a = "# generated 2026-12-03T08:00:00Z\n- set:\n    system: {hostname: leaf1}\n"
    a += "    interface: {swp1: {link: {mtu: 9216}}}\n"
    b = "- set:\n    interface:\n      swp1:\n        link: {mtu: 9216}\n    system: {hostname: leaf1}\n"
    assert canonical(a, NVUE) == canonical(b, NVUE)
    assert "generated" not in canonical(a, NVUE)
    user = "- set:\n    system:\n      aaa:\n        user:\n          admin: {hashed-password: $6$abc$xyz}\n"
    masked = canonical(user, NVUE)
    assert "$6$" not in masked and "hashed-password: ***" in masked
    host = (
        "# boot unit fabconf-roce.service: enabled\nhostname: gpu01\nnccl_conf: |\n  NCCL_IB_TC=106\n  NCCL_IB_SL=3\n"
    )
    text = canonical(host, HOST)
    assert text.startswith("# boot unit") and "nccl_conf: |\n  NCCL_IB_TC=106\n  NCCL_IB_SL=3\n" in text


def test_write_backup_only_when_changed(tmp_path: Path) -> None:
    path = tmp_path / "b" / "leaf1.cfg"
    assert write_backup(path, "a\n") is True
    assert write_backup(path, "a\n") is False
    assert write_backup(path, "b\n") is True and path.read_text() == "b\n"
    assert [p.name for p in path.parent.iterdir()] == ["leaf1.cfg"]  # no temporary file left behind


# real running-config lines: EOS (`snmp-server user U G v3 localized ENGINE auth sha KEY priv aes KEY`, OSPF
# `message-digest-key ID md5 7 KEY`) and NX-OS (`auth md5 KEY priv aes-128 KEY localizedV2key`, `md5 3 KEY`)
SECRET_LINES = {
    "snmp-server user fabric-mon fabric-ro v3 localized 800075f10300 auth sha 0x5a2b9c0d1e priv aes 0x7c3f0011aa": (
        "snmp-server user fabric-mon fabric-ro v3 localized 800075f10300 auth sha *** priv aes ***"
    ),
    "snmp-server user admin network-admin auth md5 0x2f2d0a11 priv aes-128 0x99ee7711 localizedV2key": (
        "snmp-server user admin network-admin auth md5 *** priv aes-128 *** localizedV2key"
    ),
    "snmp-server user u2 network-operator auth sha 0xabc123 priv 0xdef456 localizedkey": (
        "snmp-server user u2 network-operator auth sha *** priv *** localizedkey"
    ),
    "   ip ospf message-digest-key 1 md5 7 hW/Cxx9YQPLk": "   ip ospf message-digest-key 1 md5 7 ***",
    "  ip ospf message-digest-key 2 md5 3 f5b4a2c1d0e9": "  ip ospf message-digest-key 2 md5 3 ***",
}


@pytest.mark.parametrize("line", sorted(SECRET_LINES))
def test_backup_masks_snmpv3_and_ospf_keys(line: str) -> None:
    """SNMPv3 auth/priv keys were kept in clear; for OSPF the mask covered the encryption type, not the key."""
    assert canonical(f"hostname leaf1\n{line}\n", CLI) == f"hostname leaf1\n{SECRET_LINES[line]}\n"


def test_backups_are_the_operators_alone(tmp_path: Path) -> None:
    """0600 files (an older one others could read is narrowed) in a 0700 directory; a directory others can write
    is refused; a symlink where a backup goes is replaced, never written through."""
    store = tmp_path / "backups"
    assert write_backup(store / "leaf1.cfg", "hostname leaf1\n") is True
    assert store.stat().st_mode & 0o777 == 0o700 and (store / "leaf1.cfg").stat().st_mode & 0o777 == 0o600
    (store / "leaf2.cfg").write_text("hostname leaf2\n")
    (store / "leaf2.cfg").chmod(0o644)
    assert write_backup(store / "leaf2.cfg", "hostname leaf2\n") is False
    assert (store / "leaf2.cfg").stat().st_mode & 0o777 == 0o600
    outside = tmp_path / "elsewhere"
    outside.write_text("precious\n")
    (store / "leaf3.cfg").symlink_to(outside)
    assert write_backup(store / "leaf3.cfg", "hostname leaf3\n") is True
    assert outside.read_text() == "precious\n" and not (store / "leaf3.cfg").is_symlink()
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(UnsafePath, match="writable by others"):
        write_backup(shared / "leaf1.cfg", "hostname leaf1\n")
    assert list(shared.iterdir()) == []


# -- unmanaged changes ---------------------------------------------------------------------------------------
def _job(example: Compiled, name: str) -> Job:
    from fabconf.compile.render import render

    return Job(example.model.devices[name], example.data[name], render(example.data[name]))


def test_unmanaged_changes_cli(example: Compiled) -> None:
    job = _job(example, "leaf3")  # EOS; Ethernet63/1 is a rendered uplink, Ethernet10/1 is not fabconf's
    before = "hostname leaf3\ninterface Ethernet10/1\n   description spare\ninterface Ethernet63/1\n   mtu 9214\n"
    after = before.replace("spare", "spare-ob").replace("mtu 9214", "mtu 9000") + "ntp server 192.0.2.1\n"
    assert unmanaged_changes(job, None, after) == []  # no previous backup: nothing to compare with
    assert unmanaged_changes(job, before, after) == [
        "- interface Ethernet10/1 > description spare",
        "+ interface Ethernet10/1 > description spare-ob",
        "+ ntp server 192.0.2.1",
    ]
    assert unmanaged_changes(job, before, before) == []


def test_unmanaged_changes_trees(example: Compiled) -> None:
    leaf1 = _job(example, "leaf1")  # Cumulus: swp1 is rendered, swp30 is not; eth0 is the management plane
    before = (
        "- set:\n    interface:\n      swp1: {link: {mtu: 9216}}\n      swp30: {type: swp}\n      eth0: {type: eth}\n"
    )
    after = before.replace("swp30: {type: swp}", "swp30: {type: swp, description: x}").replace("9216", "9000")
    after = after.replace("eth0: {type: eth}", "eth0: {type: eth, ip: {vrf: mgmt}}")
    assert unmanaged_changes(leaf1, canonical(before, NVUE), canonical(after, NVUE)) == [
        "+ interface/eth0/ip/vrf: mgmt",
        "+ interface/swp30/description: x",
    ]
    # what the dry run sets or unsets is drift, not an unmanaged change (a stale SVI fabconf removes)
    stale = before + "      vlan99: {type: svi}\n"
    assert unmanaged_changes(leaf1, canonical(before, NVUE), canonical(stale, NVUE)) == ["+ interface/vlan99/type: svi"]
    assert unmanaged_changes(leaf1, canonical(before, NVUE), canonical(stale, NVUE), "nv unset interface vlan99") == []
    gpu = _job(example, "gpu01")  # host: mlxconfig keys fabconf does not set are not its own
    before = "mlxconfig: {SRIOV_EN: False(0), ROCE_CC_PRIO_MASK_P1: '255'}\nnccl_conf: |\n  NCCL_IB_TC=106\n"
    after = before.replace("False(0)", "True(1)").replace("'255'", "'8'").replace("106", "96")
    assert unmanaged_changes(gpu, before, after) == ["- mlxconfig/SRIOV_EN: False(0)", "+ mlxconfig/SRIOV_EN: True(1)"]


def test_unmanaged_changes_read_every_set_item_of_a_document(example: Compiled) -> None:
    """A document of several ``- set:`` items (the startup.yaml form) is one tree: a later item's ``interface``
    does not hide an earlier item's interfaces (the merge was one level deep)."""
    leaf1 = _job(example, "leaf1")
    before = "- set:\n    interface:\n      swp30: {type: swp}\n- set:\n    interface:\n      swp31: {type: swp}\n"
    after = before.replace("swp30: {type: swp}", "swp30: {type: swp, description: x}")
    assert unmanaged_changes(leaf1, canonical(before, NVUE), canonical(after, NVUE)) == [
        "+ interface/swp30/description: x"
    ]


# -- the git store --------------------------------------------------------------------------------------------
def test_git_commits_only_changes(tmp_path: Path) -> None:
    store = tmp_path / "backups"
    write_backup(store / "leaf1.cfg", "hostname leaf1\n")
    first = gitstore.commit(store, "fabconf drift: 1 device(s): 1 in_sync\n")
    assert first and (store / ".git").is_dir()
    assert gitstore.commit(store, "again") is None  # a run that changed nothing makes no commit
    write_backup(store / "leaf1.cfg", "hostname leaf1\nvlan 5\n")
    second = gitstore.commit(store, "fabconf drift: 1 device(s): 1 drifted\n")
    assert second and second != first
    log = subprocess.run(["git", "-C", str(store), "log", "--format=%s"], capture_output=True, text=True, check=True)
    assert log.stdout.splitlines() == ["fabconf drift: 1 device(s): 1 drifted", "fabconf drift: 1 device(s): 1 in_sync"]


# -- volatile lines never drift: the dry run's own comparison ignores them -------------------------------------
VOLATILE_HEADERS = {
    "leaf3": "! Command: show running-config\n! device: leaf3 (DCS-7060X5, EOS-4.32.2F)\n"
    "! Last configuration change at Thu Dec  3 07:46:50 2026 by admin\n! Time: Thu Dec  3 08:00:00 2026\n",
    "leaf4": "!Command: show running-config\n!Running configuration last done at: Thu Dec  3 07:46:50 2026\n"
    "!Time: Thu Dec  3 08:00:01 2026\n",
}


@pytest.mark.parametrize("name", sorted(VOLATILE_HEADERS))
def test_volatile_cli_lines_are_not_drift(example: Compiled, name: str) -> None:
    from fabconf.drivers.cli.remediation import owned_trees, owned_views, remediate

    job = _job(example, name)
    running = VOLATILE_HEADERS[name] + job.rendered
    assert remediate(job.platform, running, job.rendered).empty
    before, after = owned_views(*owned_trees(job.platform, running, job.rendered))
    assert before == after  # the unified diff drift shows is empty too
    later = running.replace("07:46:50", "23:59:59").replace("08:00", "09:30")
    assert canonical(later, CLI) == canonical(running, CLI)  # and the backup does not change


def test_host_state_comments_are_not_drift(example: Compiled) -> None:
    from fabconf.platform.linux.state import comparable_documents

    job = _job(example, "gpu01")
    body = "\n".join(line for line in job.rendered.splitlines() if not line.startswith("#")) + "\n"
    running = "# gpu01 -- current RoCE NIC state, read at 2026-12-03T08:00:00Z\n# boot unit: enabled\n" + body
    before, after = comparable_documents(running, job.rendered)
    assert before == after
    assert "read at" not in canonical(running, HOST)


# -- remediation through push's own path, over fake devices ----------------------------------------------------
def test_remediate_pushes_the_drifted_devices_and_checks_them_again(
    example: Compiled, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fabconf.cli.main import main

    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    monkeypatch.setenv("FABCONF_LOCK_DIR", str(tmp_path / "locks"))
    devices: dict[str, FakeDevice] = {}

    def driver(job: Job, options: DeviceOptions, credentials: object = None, timeout: int | None = None) -> FakeDriver:
        if job.name not in devices:
            mtus = {n["netdev"]: n["mtu"] for n in job.data.get("nics", [])} or {
                i["name"]: i["mtu"] for i in job.data["interfaces"]
            }
            running = job.rendered if job.name == "leaf1" else f"brownfield config of {job.name}\n"
            devices[job.name] = FakeDevice(job.name, running, Script(), mtus)
        return (FakeHostDriver if job.spec.is_host else FakeTimerDriver)(devices[job.name])

    monkeypatch.setattr(tasks, "build_driver", driver)
    inventory = EXAMPLE
    argv = ["drift", "-i", str(inventory), "--limit", "leaf1,leaf2,gpu01", "--backup-dir", str(tmp_path / "b")]
    code = main([*argv, "--remediate", "--yes", "--canary", "0", "--batch", "100%", "--bgp-wait", "0"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "fabconf push" in out  # push's own report, as `fabconf push` prints it
    table = out[out.index("fabconf drift (read only") :]
    assert "3 device(s): 3 in_sync" in table and table.count("remediation: applied") == 2
    assert devices["leaf2"].running == _job(example, "leaf2").rendered  # pushed to intent
    assert not [line for line in devices["leaf1"].log if line.startswith("commit")]  # in sync: not pushed
    # the backups show the devices after the push
    assert (tmp_path / "b" / "gpu01.yaml").read_text() == canonical(_job(example, "gpu01").rendered, HOST)
