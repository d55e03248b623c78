"""fabconf's alerts against the lab, end to end: every lab device serves its metrics in its exporter's format
(``fabconf_lab.metrics``), ``fabconf monitoring --lab`` writes the scrape configuration and targets for it, a real
Prometheus (Debian's) scrapes it with fabconf's rules (timing from the intent, in seconds) and fabconf's own
series from a real node_exporter's textfile collector, and each lab fault fires its alert, read from
Prometheus's API: link errors, a PFC storm (and the NIC's watchdog), a hung device; and a switch read over gNMI
alone (its SNMP agent removed) is alerted from gnmic's series. Before the faults the healthy
lab fires nothing for several windows (the old port-error rule alerted on every switch port with traffic), and
after them every alert that fires is one of the faults' alerts on its device."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from labkit import fab, lab_fixture, napalm_merge
from pristine import EXAMPLE
from promkit import (
    check_config,
    firing,
    free_port,
    has,
    needs_prometheus,
    prometheus,
    query,
    quiet_for,
    start,
    stop,
    textfile_exporter,
    wait_firing,
    wait_until,
)

from fabconf.cli import drift_metrics
from fabconf.cli.drift_report import DriftRun
from fabconf.deploy.drift import DeviceDrift, DriftState, exit_code
from fabconf.deploy.job import Outcome, State
from fabconf_lab.orchestrator import Lab

ROOT = Path(__file__).resolve().parents[2]
pytestmark = needs_prometheus


@pytest.fixture
def timed_lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Lab, Path]]:
    """The example pod's lab, from an inventory whose intent sets the alert timing in seconds."""
    inv = tmp_path / "intent"
    shutil.copytree(EXAMPLE, inv)
    fabric = inv / "fabric.yaml"
    intent = yaml.safe_load(fabric.read_text())
    intent["monitoring"] = {**intent.get("monitoring", {}), "window_s": 5, "for_s": 2}  # the telemetry stays
    fabric.write_text(yaml.safe_dump(intent, sort_keys=False))
    for lab in lab_fixture(tmp_path, monkeypatch, inventory=inv):
        yield lab, inv


def test_lab_faults_fire_their_alerts(
    timed_lab: tuple[Lab, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lab, intent = timed_lab
    out, text_dir = tmp_path / "prometheus", tmp_path / "textfiles"
    ports = {"textfile": free_port(), "prometheus": free_port()}
    code, printed = fab(
        capsys,
        *("monitoring", "-i", str(intent), "-o", str(out), "--lab", "--state", str(lab.state_dir)),
        *("--textfile-target", f"127.0.0.1:{ports['textfile']}"),
    )
    assert code == 0, printed
    config = yaml.safe_load((out / "prometheus.yml").read_text())
    assert config["global"]["scrape_interval"] == "1s"
    check_config(out / "prometheus.yml")
    # fabconf's own series: the inventory, and a fresh drift report with every device in sync
    text_dir.mkdir()
    shutil.copy(out / "fabconf-inventory.prom", text_dir)
    devices = [
        DeviceDrift(Outcome(d.name, d.platform, State.UNCHANGED), d.role, DriftState.IN_SYNC)
        for d in lab.compiled.model.devices.values()
    ]
    run = DriftRun(devices, exit_code(devices), started=time.time(), duration=1.0)
    drift_metrics.write(run, text_dir / "fabconf_drift.prom")

    procs = [
        start(textfile_exporter(text_dir, ports["textfile"]), tmp_path / "textfile.log"),
        start(prometheus(out / "prometheus.yml", tmp_path / "tsdb", ports["prometheus"]), tmp_path / "prom.log"),
    ]
    api = f"http://127.0.0.1:{ports['prometheus']}/api/v1"
    try:
        # every lab device is scraped (its endpoint answers) before the faults
        every = set(lab.devices)
        wait_until(lambda: {s.get("device") for s in query(api, "up == 1")} >= every, "every lab device scraped")
        assert {s["device"] for s in query(api, 'up{job="fabconf-hosts"}')} == {
            n for n, d in lab.devices.items() if d.platform == "linux"
        }
        # healthy: nothing fires for two rate windows and a hold (window_s 5, for_s 2), inventory and drift present
        # (what fired before every target's first scrape, the inventory absent, resolves first)
        wait_until(lambda: bool(query(api, "fabconf_device_info")), "the inventory series scraped")
        wait_until(lambda: not firing(api), "the alerts of the start (targets not scraped yet) resolved")
        quiet_for(api, 2 * 5 + 2 + 3)
        lab.fault("gpu01", "link", "ens1f0np0:errors=0.01")
        lab.fault("gpu02", "pfc-storm")
        lab.fault("leaf1", "pfc-storm")
        lab.fault("leaf3", "link", "Ethernet1/1:errors=0.01")
        lab.fault("gpu03", "hang")
        assert "pfc-storm" in lab.fault("gpu04", "pfc-storm")
        with pytest.raises(ValueError, match="pfc-storm"):
            lab.fault("gpu04", "pfc-storm", "3")
        with pytest.raises(ValueError, match="pfc-storm"):
            lab.fault("gpu04", "pfc-storm", at="commit")

        def at(device: str) -> dict[str, Any]:
            role = lab.compiled.model.devices[device].role
            return {"device": device, "role": role, "pod": "pod1"}

        wanted = [
            {"alertname": "FabconfPortErrorRate", **at("gpu01"), "port": "ens1f0np0"},
            {"alertname": "FabconfRoceRetransmits", **at("gpu01"), "hca": "mlx5_0", "port": "1"},
            {"alertname": "FabconfPfcPauseStorm", **at("gpu02"), "priority": "3"},
            {"alertname": "FabconfPfcWatchdogTriggered", **at("gpu02")},
            {"alertname": "FabconfPfcPauseStorm", **at("leaf1"), "priority": "3"},
            {"alertname": "FabconfPortErrorRate", **at("leaf3"), "port": "Ethernet1/1"},
            {"alertname": "FabconfDeviceUnreachable", **at("gpu03")},
        ]
        fired = wait_firing(api, wanted, tmp_path / "prom.log")
        # exactly the faults' alerts, each on its device (gpu01's link errors also time out its RoCE packets; gpu04
        # storms until it is cleared below)
        gpu04 = {("FabconfPfcPauseStorm", "gpu04"), ("FabconfPfcWatchdogTriggered", "gpu04")}
        expected = {(w["alertname"], w["device"]) for w in wanted} | gpu04
        assert {(a["alertname"], a["device"]) for a in fired} <= expected, fired
        # a storm ended by `clear` stops the pause alert (the watchdog alert lasts one window)
        assert lab.fault("gpu04", "clear") == []
        assert not has(fired, {"alertname": "FabconfPortErrorRate", "device": "gpu02"})
        assert not has(fired, {"alertname": "FabconfDriftReportStale"})
    finally:
        lab.fault("gpu03", "clear")  # releases the hung scrapes
        stop(procs)


GNMI_ON = "management api gnmi\n   transport grpc FABCONF\n      port 9339\n"


def test_a_switch_read_over_gnmi_alone_is_alerted(
    timed_lab: tuple[Lab, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """leaf3 (EOS) with its gNMI server on and the operator's SNMP agent removed: Prometheus reads it through the
    gnmic output the lab serves for it (``fabconf monitoring --lab``'s ``fabconf-gnmi`` job); its port errors and
    a BGP session that never comes up fire their alerts from the gNMI series alone, and it is not unreachable
    (its SNMP scrape fails, its gNMI target is up). Its gNMI server shut down: its series vanish and
    FabconfDeviceUnreachable fires."""
    lab, intent = timed_lab
    out, port = tmp_path / "prometheus", free_port()
    code, printed = fab(
        capsys,
        *("monitoring", "-i", str(intent), "-o", str(out), "--lab", "--state", str(lab.state_dir)),
        *("--textfile-target", f"127.0.0.1:{free_port()}"),  # no inventory series: the alerts fire without it
    )
    assert code == 0, printed
    check_config(out / "prometheus.yml")
    jobs = {j["job_name"]: j for j in yaml.safe_load((out / "prometheus.yml").read_text())["scrape_configs"]}
    assert jobs["fabconf-gnmi"]["static_configs"][0]["labels"] == {"__metrics_path__": "/gnmic"}
    assert "leaf3" in yaml.safe_load((out / "fabconf-gnmic.yml").read_text())["targets"]
    bgp = "router bgp 65103\n   neighbor 10.254.9.9 remote-as 65000\n"
    napalm_merge(lab, "leaf3", "eos", "no snmp-server community lab-ro\n")
    napalm_merge(lab, "leaf3", "eos", GNMI_ON + bgp)
    lab.fault("leaf3", "link", "Ethernet1/1:errors=0.01")
    procs = [start(prometheus(out / "prometheus.yml", tmp_path / "tsdb", port), tmp_path / "prom.log")]
    api = f"http://127.0.0.1:{port}/api/v1"
    try:
        wait_until(lambda: bool(query(api, 'interfaces_interface_state_counters_in_errors{device="leaf3"}')), "gNMI")
        assert not query(api, 'ifInErrors{device="leaf3"}')  # its SNMP scrape fails (no agent)
        wanted = [
            {"alertname": "FabconfBgpSessionDown", "device": "leaf3", "peer": "10.254.9.9", "job": "fabconf-gnmi"},
            {"alertname": "FabconfPortErrorRate", "device": "leaf3", "port": "Ethernet1/1", "job": "fabconf-gnmi"},
        ]
        fired = wait_firing(api, wanted, tmp_path / "prom.log")
        assert not has(fired + firing(api), {"alertname": "FabconfDeviceUnreachable", "device": "leaf3"}), fired
        napalm_merge(lab, "leaf3", "eos", "management api gnmi\n   transport grpc FABCONF\n      shutdown\n")
        wait_firing(api, [{"alertname": "FabconfDeviceUnreachable", "device": "leaf3"}], tmp_path / "prom.log")
        assert not query(api, 'interfaces_interface_state_counters_in_errors{device="leaf3"}')
    finally:
        stop(procs)
