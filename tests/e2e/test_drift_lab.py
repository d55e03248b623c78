"""fabconf drift against the lab, end to end: the example pod pushed to intent, then changed out of band through
each device's own API or shell (EOS eAPI, NX-API, ``nv`` over SSH, ``mlnx_qos`` and a shell on a GPU host).

One lab run covers the nightly story: backups and a git commit at intent, no commit when nothing changed,
exactly the changed devices and sections in every format (exit 2), an unmanaged change, an unreachable device
(exit 1, never in sync), ``--remediate --yes`` back to intent and a clean run after it. No mocks: the real
drivers over real sockets, the CLI in process.
"""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from labkit import PASSWORD, fab, inv, napalm_merge, push_all, ssh_change
from prometheus_client.parser import text_string_to_metric_families

from fabconf_lab.orchestrator import Lab

# what each out-of-band change must show as: the device and its drifted sections, nothing else
EXPECTED = {
    "leaf3": ["interfaces"],  # EOS: an uplink's MTU over eAPI
    "leaf4": ["vlans"],  # NX-OS: a VLAN over NX-API
    "leaf1": ["pfc"],  # Cumulus: a PFC priority with nv over SSH
    "gpu02": ["pfc"],  # GPU host: a PFC bit with mlnx_qos
    "gpu03": ["nccl"],  # GPU host: a line in the NCCL file
}


OB_EOS = "interface Ethernet63/1\n   mtu 9000\ninterface Ethernet10/1\n   description spare-ob\n"


def _change_out_of_band(lab: Lab) -> None:
    # an owned uplink's MTU (drift) and an unused port's description (an unmanaged change)
    napalm_merge(lab, "leaf3", "eos", OB_EOS)
    napalm_merge(lab, "leaf4", "nxos", "vlan 777\n  name ROGUE\n")
    ssh_change(lab, "leaf1", "nv set qos pfc default-global switch-priority 4", "nv config apply -y")
    ssh_change(lab, "gpu02", "sudo mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,1,0,0,0")
    ssh_change(lab, "gpu03", "echo NCCL_DEBUG=INFO | sudo tee -a /etc/nccl.conf")


def _drift(capsys: pytest.CaptureFixture[str], lab: Lab, *args: str) -> tuple[int, str]:
    return fab(capsys, "drift", "-i", inv(lab), *args)


def _json(capsys: pytest.CaptureFixture[str], lab: Lab, *args: str) -> tuple[int, dict]:
    code, out = _drift(capsys, lab, "--format", "json", *args)
    return code, json.loads(out[: out.rindex("}") + 1])


def _metrics(path: Path) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(path.read_text()):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def _value(metrics: dict, name: str, **labels: str) -> float | None:
    for (n, got), value in metrics.items():
        if n == name and all(dict(got).get(k) == v for k, v in labels.items()):
            return value
    return None


def test_nightly_drift_story(lab: Lab, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = push_all(lab, capsys)
    assert code == 0, out
    backups = tmp_path / "backups"

    # at intent: every device in sync, a backup per device, committed; a second run commits nothing
    code, report = _json(capsys, lab, "--backup-dir", str(backups), "--git")
    assert code == 0, json.dumps(report, indent=1)
    assert report["schema"] == "fabconf.report/1" and report["command"] == "drift"
    assert {d["drift"] for d in report["devices"]} == {"in_sync"}
    names = {d["device"] for d in report["devices"]}
    assert {p.stem for p in backups.iterdir() if p.is_file()} == names
    first = report["backup"]["commit"]
    assert first
    nxos_backup = (backups / "leaf4.cfg").read_text()
    assert "last done at" not in nxos_backup and "!Time" not in nxos_backup  # volatile lines never kept
    assert "$5$" not in nxos_backup and "password 5 ***" in nxos_backup  # hashes masked too
    code, report = _json(capsys, lab, "--backup-dir", str(backups), "--git")
    assert code == 0 and report["backup"]["commit"] is None
    assert all(d["unmanaged_changes"] == [] for d in report["devices"])

    _change_out_of_band(lab)

    # exactly those devices and sections drifted, in every format; exit 2
    code, report = _json(capsys, lab, "--backup-dir", str(backups), "--git")
    assert code == 2, json.dumps(report, indent=1)
    drifted = {d["device"]: d["sections"] for d in report["devices"] if d["drift"] == "drifted"}
    assert drifted == EXPECTED
    assert all(d["drift"] == "in_sync" for d in report["devices"] if d["device"] not in EXPECTED)
    leaf3 = next(d for d in report["devices"] if d["device"] == "leaf3")
    assert "-  mtu 9000" in leaf3["diff"] and "+  mtu 9214" in leaf3["diff"], leaf3["diff"]
    assert leaf3["unmanaged_changes"] == ["+ interface Ethernet10/1 > description spare-ob"]
    assert report["backup"]["commit"] not in (None, first)
    log = subprocess.run(["git", "-C", str(backups), "log", "-1", "--format=%B"], capture_output=True, text=True)
    assert "9 in_sync, 5 drifted, 0 unreachable" in log.stdout and "leaf3: drifted (interfaces)" in log.stdout
    assert "NCCL_DEBUG=INFO" in (backups / "gpu03.yaml").read_text()

    junit = tmp_path / "drift.xml"
    assert _drift(capsys, lab, "--format", "junit", "-o", str(junit))[0] == 2
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert set(cases) == names
    failed = {n: f for n, c in cases.items() if (f := c.find("failure")) is not None}
    assert set(failed) == set(EXPECTED) and failed["leaf3"].get("message") == "drifted: interfaces"
    assert not [c for c in cases.values() if c.find("error") is not None]

    prom = tmp_path / "drift.prom"
    assert _drift(capsys, lab, "--format", "prometheus", "-o", str(prom))[0] == 2
    metrics = _metrics(prom)
    for name in names:
        want = 1.0 if name in EXPECTED else 0.0
        assert _value(metrics, "fabconf_drift_drifted", device=name) == want, name
    assert _value(metrics, "fabconf_drift_section_drifted", device="gpu02", section="pfc") == 1.0
    assert _value(metrics, "fabconf_drift_section_drifted", device="gpu02", section="nccl") == 0.0
    assert _value(metrics, "fabconf_drift_exit_code") == 2.0
    assert _value(metrics, "fabconf_drift_last_run_timestamp_seconds")

    code, text = _drift(capsys, lab, "--limit", "leaf3,spine1")
    assert code == 2 and "leaf3 (eos): drifted: interfaces" in text and "in_sync" in text

    # an unreachable device: exit 1 (wins over drift), never in sync, in every format
    lab.fault("spine1", "auth-refuse")
    code, report = _json(capsys, lab, "--limit", "spine1,leaf3")
    assert code == 1
    states = {d["device"]: d["drift"] for d in report["devices"]}
    assert states == {"spine1": "unreachable", "leaf3": "drifted"}
    assert _drift(capsys, lab, "--limit", "spine1", "--format", "junit", "-o", str(junit))[0] == 1
    error = ET.parse(junit).getroot().find(".//testcase[@name='spine1']/error")
    assert error is not None and error.get("type") == "unreachable"
    assert _drift(capsys, lab, "--limit", "spine1", "--format", "prometheus", "-o", str(prom))[0] == 1
    metrics = _metrics(prom)
    assert _value(metrics, "fabconf_drift_reachable", device="spine1") == 0.0
    assert _value(metrics, "fabconf_drift_device_state", device="spine1", state="unreachable") == 1.0
    assert _value(metrics, "fabconf_drift_device_state", device="spine1", state="in_sync") == 0.0
    assert _value(metrics, "fabconf_drift_drifted", device="spine1") is None  # unknown, not "0 = in sync"
    code, text = _drift(capsys, lab, "--limit", "spine1")
    assert code == 1 and "unreachable" in text and "1 device(s): 1 unreachable" in text
    lab.fault("spine1", "clear")

    # remediation through push's path brings the drifted devices back; the next run is clean
    code, report = _json(
        capsys, lab, "--remediate", "--yes", "--canary", "0", "--batch", "100%", "--bgp-wait", "10",
        "--backup-dir", str(backups), "--git",
    )  # fmt: skip
    assert code == 0, json.dumps(report, indent=1)
    assert {d["device"]: d["remediation"] for d in report["devices"] if d["remediation"]} == dict.fromkeys(
        EXPECTED, "applied"
    )
    assert report["remediation"]["command"] == "push" and report["remediation"]["exit_code"] == 0
    assert {d["drift"] for d in report["devices"]} == {"in_sync"}
    code, report = _json(capsys, lab, "--backup-dir", str(backups), "--git")
    assert code == 0 and {d["drift"] for d in report["devices"]} == {"in_sync"}
    assert report["backup"]["commit"] is None  # the remediated devices' backups were written after the push
    assert [d["unmanaged_changes"] for d in report["devices"] if d["unmanaged_changes"]] == []

    for path in [junit, prom, *backups.iterdir()]:
        if path.is_file():
            assert PASSWORD not in path.read_text(), path
