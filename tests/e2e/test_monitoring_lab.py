"""fabconf's alerts against the lab, end to end: every lab device serves its metrics in its exporter's format
(``fabconf_lab.metrics``), ``fabconf monitoring --lab`` writes the scrape configuration and targets for it, a real
Prometheus (Debian's) scrapes it with fabconf's rules (timing from the intent, in seconds) and fabconf's own
series from a real node_exporter's textfile collector (the inventory, and the report of a real ``fabconf drift
--format prometheus`` run), and each lab fault fires its alert, read from Prometheus's API: link errors, a PFC storm
(and the NIC's watchdog), a hung device. The lab is pushed first (issue #38: "a freshly pushed lab ... fires nothing
for two minutes"): for two minutes of real rule evaluation nothing fires and nothing is pending but a missed
scrape's unreachable alert (Prometheus's own ``ALERTS`` record over the window, not only a look at its end; the old
port-error rule alerted on every switch port with traffic), and after the faults every alert that fires is one of
the faults' alerts on its device. A switch read over
gNMI alone (its SNMP agent removed) is alerted from gnmic's series."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from labkit import fab, inv, lab_fixture, napalm_merge, push_all
from pristine import EXAMPLE
from promkit import (
    check_config,
    firing,
    free_port,
    has,
    needs_prometheus,
    pending,
    prometheus,
    query,
    query_at,
    quiet_window,
    start,
    stop,
    textfile_exporter,
    wait_firing,
    wait_until,
)

from fabconf_lab.orchestrator import Lab

ROOT = Path(__file__).resolve().parents[2]
pytestmark = needs_prometheus
QUIET_S = 120  # issue #38: "fires nothing for two minutes"


@pytest.fixture
def timed_lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Lab, Path]]:
    """The example pod's lab, from an inventory whose intent sets the alert timing in seconds."""
    copy = tmp_path / "intent"
    shutil.copytree(EXAMPLE, copy)
    fabric = copy / "fabric.yaml"
    intent = yaml.safe_load(fabric.read_text())
    # 10 s windows scrape every 2 s, within a 2 s timeout; a 5 s hold outlasts two missed scrapes on a loaded machine
    intent["monitoring"] = {**intent.get("monitoring", {}), "window_s": 10, "for_s": 5}  # the telemetry stays
    fabric.write_text(yaml.safe_dump(intent, sort_keys=False))
    for lab in lab_fixture(tmp_path, monkeypatch, inventory=copy):
        yield lab, copy


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
    assert config["global"]["scrape_interval"] == "2s"
    check_config(out / "prometheus.yml")
    # fabconf's own series as the docs set them up, from node_exporter's textfile collector: the inventory, and
    # below the nightly drift job's report
    text_dir.mkdir()
    shutil.copy(out / "fabconf-inventory.prom", text_dir)
    procs = [
        start(textfile_exporter(text_dir, ports["textfile"]), tmp_path / "textfile.log"),
        start(prometheus(out / "prometheus.yml", tmp_path / "tsdb", ports["prometheus"]), tmp_path / "prom.log"),
    ]
    api = f"http://127.0.0.1:{ports['prometheus']}/api/v1"
    try:
        # the lab pushed as an operator would (Prometheus starts up meanwhile), then the drift job's report: every
        # device in sync after the push
        code, pushed = push_all(lab, capsys)
        assert code == 0, pushed
        code, drifted = fab(
            capsys, "drift", "-i", inv(lab), "--format", "prometheus", "-o", str(text_dir / "fabconf_drift.prom")
        )
        assert code == 0, drifted
        assert 'fabconf_drift_device_state{device="leaf1"' in (text_dir / "fabconf_drift.prom").read_text()
        # every lab device is scraped (its endpoint answers) before the faults
        every = set(lab.devices)
        wait_until(lambda: {s.get("device") for s in query(api, "up == 1")} >= every, "every lab device scraped")
        assert {s["device"] for s in query(api, 'up{job="fabconf-hosts"}')} == {
            n for n, d in lab.devices.items() if d.platform == "linux"
        }
        # healthy: nothing fires, and nothing is pending, for two minutes of evaluation (12 rate windows), inventory
        # and drift present (what fired before every target's first scrape resolves first). A scrape that misses its
        # 2 s timeout on a loaded machine may set the unreachable alert pending, never firing: its hold absorbs that
        wait_until(lambda: bool(query(api, "fabconf_device_info")), "the inventory series scraped")
        wait_until(lambda: bool(query(api, "fabconf_drift_device_state")), "the drift report scraped")
        wait_until(lambda: not pending(api), "the alerts of the start (targets not scraped yet) resolved")
        end = quiet_window(api, QUIET_S, scrape_misses=("FabconfDeviceUnreachable",))
        # every device was scraped throughout the window (a scrape every 2 s), nearly every scrape answered
        answered = query_at(api, f"sum_over_time(up[{QUIET_S}s])", end)
        scraped = {s["device"]: float(s["__value__"]) for s in answered if "device" in s}  # not the textfile job
        assert set(scraped) >= every and min(scraped[d] for d in every) >= QUIET_S / 2 * 0.8, scraped
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
