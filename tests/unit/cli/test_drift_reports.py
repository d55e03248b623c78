"""The drift reports, each parsed back the way its consumer reads it: JSON (the shared fabconf.report/1 shape),
JUnit XML (xml.etree), Prometheus text exposition (prometheus_client's parser), text; written to -o atomically;
bad input is a message and exit 1, never a traceback."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from fabconf.cli import drift_junit, drift_metrics, report
from fabconf.cli.drift import DriftOptions, emit
from fabconf.cli.drift_report import DriftRun, as_dict
from fabconf.cli.main import build_parser, main
from fabconf.deploy.drift import DeviceDrift, DriftState, exit_code
from fabconf.deploy.job import Outcome, State

ROOT = Path(__file__).resolve().parents[3]
DIFF = "--- leaf3 (running)\n+++ leaf3 (intended)\n@@ -1,2 +1,2 @@\n interface Ethernet63/1\n-  mtu 9000\n+  mtu 9214\n"


def _run() -> DriftRun:
    devices = [
        DeviceDrift(Outcome("spine1", "eos", State.UNCHANGED, seconds=0.5), "spine", DriftState.IN_SYNC),
        DeviceDrift(
            Outcome("leaf3", "eos", State.CHANGES, diff=DIFF, commands="interface Ethernet63/1\n  mtu 9214"),
            "leaf",
            DriftState.DRIFTED,
            ["interfaces"],
            unmanaged=["+ interface Ethernet10/1 > description spare-ob"],
        ),
        DeviceDrift(
            Outcome("gpu02", "linux", State.UNREACHABLE, message="cannot connect: Authentication failed"),
            "gpu_host",
            DriftState.UNREACHABLE,
        ),
        DeviceDrift(Outcome("leaf4", "nxos", State.FAILED, message="ValueError: bad"), "leaf", DriftState.FAILED),
    ]
    return DriftRun(devices, exit_code(devices), started=1_764_748_800.0, duration=4.25)


def test_json_shares_the_report_shape() -> None:
    run = _run()
    doc = json.loads(json.dumps(as_dict(run)))
    assert doc["schema"] == report.SCHEMA == "fabconf.report/1"
    assert doc["command"] == "drift" and doc["exit_code"] == 1
    assert doc["drift"] == {"in_sync": 1, "drifted": 1, "unreachable": 1, "failed": 1}
    assert doc["started"] == "2025-12-03T08:00:00Z" and doc["duration_seconds"] == 4.25
    diff_doc = report.as_dict([d.outcome for d in run.devices], "diff", 1)
    assert set(diff_doc) <= set(doc)  # the top level of `diff --format json`, extended
    by_name = {d["device"]: d for d in doc["devices"]}
    assert set(diff_doc["devices"][0]) <= set(by_name["spine1"])  # every device field of diff's report
    assert by_name["leaf3"]["drift"] == "drifted" and by_name["leaf3"]["sections"] == ["interfaces"]
    assert by_name["leaf3"]["diff"] == DIFF and by_name["leaf3"]["state"] == "drifted"
    assert by_name["leaf3"]["dry_run_state"] == "changes" and doc["summary"] == doc["drift"]
    assert by_name["leaf3"]["unmanaged_changes"] == ["+ interface Ethernet10/1 > description spare-ob"]
    assert by_name["gpu02"]["drift"] == "unreachable" and by_name["gpu02"]["sections"] == []


def test_junit_one_case_per_device() -> None:
    root = ET.fromstring(drift_junit.as_junit(_run()))
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "1", "2")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert list(cases) == ["spine1", "leaf3", "gpu02", "leaf4"]
    assert len(cases["spine1"]) == 0  # passed
    failure = cases["leaf3"].find("failure")
    assert failure is not None and failure.get("type") == "drift" and failure.get("message") == "drifted: interfaces"
    assert failure.text == DIFF
    assert "description spare-ob" in (cases["leaf3"].findtext("system-out") or "")
    errors = {n: cases[n].find("error") for n in ("gpu02", "leaf4")}
    assert {n: e.get("type") for n, e in errors.items() if e is not None} == {"gpu02": "unreachable", "leaf4": "failed"}
    assert "Authentication failed" in (errors["gpu02"].get("message") or "")  # type: ignore[union-attr]


def _samples(text: str) -> dict[tuple[str, frozenset], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_prometheus_metrics() -> None:
    got = _samples(drift_metrics.as_text(_run()))

    def value(name: str, **labels: str) -> float | None:
        matches = [v for (n, ls), v in got.items() if n == name and set(labels.items()) <= ls]
        assert len(matches) <= 1, (name, labels)
        return matches[0] if matches else None

    assert value("fabconf_drift_drifted", device="leaf3") == 1.0
    assert value("fabconf_drift_drifted", device="spine1") == 0.0
    assert value("fabconf_drift_drifted", device="gpu02") is None  # not checked: unknown, never "in sync"
    assert value("fabconf_drift_section_drifted", device="leaf3", section="interfaces") == 1.0
    assert value("fabconf_drift_section_drifted", device="leaf3", section="qos") == 0.0
    assert value("fabconf_drift_section_drifted", device="gpu02", section="pfc") is None
    assert value("fabconf_drift_reachable", device="gpu02") == 0.0
    assert value("fabconf_drift_reachable", device="leaf4") == 1.0
    assert value("fabconf_drift_device_state", device="leaf4", state="failed") == 1.0
    assert value("fabconf_drift_device_state", device="leaf4", state="in_sync") == 0.0
    assert value("fabconf_drift_devices", state="drifted") == 1.0
    assert value("fabconf_drift_unmanaged_changes", device="leaf3") == 1.0
    assert value("fabconf_drift_last_run_timestamp_seconds") == 1_764_748_800.0
    assert value("fabconf_drift_run_duration_seconds") == 4.25
    assert value("fabconf_drift_exit_code") == 1.0


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "prometheus"])
def test_output_file(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "reports" / f"drift.{fmt}"
    target.parent.mkdir()
    target.write_text("old report\n")
    emit(_run(), DriftOptions(fmt=fmt, output=target))
    out, err = capsys.readouterr()
    assert out == ""  # the report went to the file only
    # and a scheduled run's journal says why a device was not checked (a silent exit 1 said nothing)
    assert err.splitlines() == [
        "fabconf drift: gpu02: unreachable: cannot connect: Authentication failed",
        "fabconf drift: leaf4: failed: ValueError: bad",
    ]
    text = target.read_text()
    assert "leaf3" in text and "old report" not in text
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # replaced atomically, no leftovers
    if fmt == "text":
        assert "drifted: interfaces" in text and "\x1b[" not in text  # no colour codes in a file
        assert "4 device(s): 1 in_sync, 1 drifted, 1 unreachable, 1 failed" in text


def test_bad_input_is_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str], inventory_copy: Path) -> None:
    assert main(["drift", "-i", str(inventory_copy), "--git"]) == 1
    err = capsys.readouterr().err
    assert "--git commits the backups: give --backup-dir DIR too" in err and "Traceback" not in err
    assert main(["drift", "-i", str(tmp_path / "nowhere")]) == 1
    assert "no such inventory directory" in capsys.readouterr().err
    assert main(["drift", "-i", str(inventory_copy), "--limit", "nosuchdevice"]) == 1
    assert "Traceback" not in capsys.readouterr().err


def _unit(name: str) -> dict[str, str]:
    """A systemd unit's ``Key=value`` lines (continuation lines joined)."""
    text = (ROOT / "contrib" / "systemd" / name).read_text().replace("\\\n", " ")
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.lstrip().startswith("#"))


def test_systemd_units_run_a_valid_drift_command(inventory_copy: Path) -> None:
    service, timer = _unit("fabconf-drift.service"), _unit("fabconf-drift.timer")
    argv = shlex.split(service["ExecStart"].replace("${FABCONF_INVENTORY}", str(inventory_copy)))
    assert argv[0].endswith("/fabconf") and argv[1] == "drift"
    args = build_parser().parse_args(argv[1:])  # every option the unit uses exists
    assert (args.format, args.git, args.remediate) == ("prometheus", True, False)
    assert args.output.endswith(".prom") and args.backup_dir
    assert service["SuccessExitStatus"] == "2" and service["Type"] == "oneshot"
    assert args.output.rsplit("/", 1)[0] in service["ReadWritePaths"] and args.backup_dir.startswith("/var/lib/fabconf")
    assert timer["OnCalendar"] and timer["Persistent"] == "true" and timer["WantedBy"] == "timers.target"


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian's prometheus package) not installed")
def test_promtool_accepts_the_metrics(tmp_path: Path) -> None:
    proc = subprocess.run(
        ["promtool", "check", "metrics"], input=drift_metrics.as_text(_run()), capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
