"""``fabconf monitoring``: rules that promtool accepts and that fire (``promtool test rules``), each on series in
the form the documented scrape configuration gives them (the exporters' metric names, ``device`` the inventory
name), with the device's role and pod; timing from the intent; the inventory series; a Grafana dashboard whose
queries use the same metric names and pass Prometheus's parser. The real exporters and a real Prometheus are in
``test_monitoring_real.py``."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from pristine import EXAMPLE
from prometheus_client.parser import text_string_to_metric_families

from fabconf.cli import main
from fabconf.monitoring import dashboard, rules, scrape
from fabconf.monitoring.names import TELEMETRY_PATHS, Names
from fabconf.monitoring.thresholds import Thresholds, Timing

ROOT = Path(__file__).resolve().parents[3]
PROMTOOL = shutil.which("promtool")
N = Names()
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian's prometheus package) is not installed")

INFO = {
    "leaf1": ("leaf", "pod1", "cumulus"),
    "leaf2": ("leaf", "pod1", "cumulus"),
    "leaf3": ("leaf", "pod1", "eos"),
    "leaf4": ("leaf", "pod1", "nxos"),
    "spine1": ("spine", "pod1", "eos"),
    "gpu01": ("gpu_host", "pod1", "linux"),
    "gpu02": ("gpu_host", "pod1", "linux"),
}
HOST = 'job="fabconf-hosts",instance="gpu01.example.net:9100",device="gpu01"'
SWITCH = 'job="fabconf-switches",instance="leaf1.example.net"'
HOST_LABELS = {"job": "fabconf-hosts", "instance": "gpu01.example.net:9100"}
SWITCH_LABELS = {"job": "fabconf-switches", "instance": "leaf1.example.net"}


@dataclass
class Case:
    alert: str
    inputs: dict[str, str]  # series -> values (promtool's expanding notation, one sample a minute)
    labels: dict[str, str]  # the alert's labels besides role, pod, severity and source
    severity: str = "warning"
    minutes: int = 15  # when it is evaluated
    drift_devices: tuple[str, ...] = tuple(INFO)  # the devices with a drift state in the (fresh) drift report
    needs_inventory: bool = False  # it cannot fire without the inventory textfile (which it reads)
    own_role: str = ""  # the role label its input series carries itself (kept without the inventory)


GNMI = 'job="fabconf-gnmi",instance="gnmic:9804",device="leaf2",port="swp63"'
GNMI_LABELS = {"job": "fabconf-gnmi", "instance": "gnmic:9804"}
GNMI_BGP = 'job="fabconf-gnmi",instance="gnmic:9804",device="leaf2"'
GNMI_TARGET = 'job="fabconf-gnmi",instance="gnmic:7890",name="leaf2",device="leaf2"'
SNMP_LEAF2 = 'job="fabconf-switches",instance="leaf2.example.net",device="leaf2"'
CASES = [
    # a switch that streams its counters over gNMI (monitoring.telemetry: leaf2 in the example)
    Case(
        "FabconfPortErrorRate",
        {f"{N.gnmi_in_errors}{{{GNMI}}}": "0+100x30", f"{N.gnmi_in_packets}{{{GNMI}}}": "0+1000000x30"},
        {"device": "leaf2", "port": "swp63", "job": "fabconf-gnmi", "instance": "gnmic:9804"},
    ),
    Case(
        "FabconfPortErrorRate",
        {
            f'{N.switch_in_errors}{{{SWITCH},device="leaf1",port="swp1",ifName="swp1",ifIndex="1"}}': "0+100x30",
            f'{N.switch_in_packets}{{{SWITCH},device="leaf1",port="swp1",ifName="swp1",ifIndex="1"}}': "0+1000000x30",
        },
        {"device": "leaf1", "port": "swp1", "ifName": "swp1", "ifIndex": "1", **SWITCH_LABELS},
    ),
    Case(
        "FabconfPortErrorRate",
        {
            f'{N.host_in_errors}{{{HOST},port="ens1f0np0"}}': "0+100x30",
            f'{N.host_in_packets}{{{HOST},port="ens1f0np0"}}': "0+1000000x30",
        },
        {"device": "gpu01", "port": "ens1f0np0", **HOST_LABELS},
    ),
    Case(
        "FabconfRoceRetransmits",
        {
            f'{N.host_rdma_timeouts}{{{HOST},hca="mlx5_0",port="1"}}': "0+60x30",
            f'{N.host_rdma_sent}{{{HOST},hca="mlx5_0",port="1"}}': "0+60000x30",
        },
        {"device": "gpu01", "hca": "mlx5_0", "port": "1"},  # on(device, hca, port) keeps only those
    ),
    # the NIC held paused 90 % of the time on priority 3 (mlx5's pause duration: microseconds)
    Case(
        "FabconfPfcPauseStorm",
        {f'{N.per_priority(N.host_pfc_pause_duration_us, 3)}{{{HOST},port="ens1f0np0"}}': "0+54000000x30"},
        {"device": "gpu01", "port": "ens1f0np0", "priority": "3", **HOST_LABELS},
        "critical",
    ),
    Case(
        "FabconfPfcPauseStorm",
        # a storm at 400G with the largest quanta, refreshed at half the quanta time: 23,840 frames/s
        {f'{N.per_priority(N.switch_pfc_pauses, 3)}{{{SWITCH},device="leaf1",port="swp2"}}': "0+1430400x30"},
        {"device": "leaf1", "port": "swp2", "priority": "3", **SWITCH_LABELS},
        "critical",
    ),
    # ONE watchdog event fires the alert (the counter goes from 0 to 1 once, two minutes before the evaluation)
    Case(
        "FabconfPfcWatchdogTriggered",
        {f'{N.host_pfc_watchdog}{{{HOST},port="ens1f0np0"}}': "0x5 1x30"},
        {"device": "gpu01", "port": "ens1f0np0", **HOST_LABELS},
        "critical",
        minutes=7,
    ),
    Case(
        "FabconfEcnMarkRate",
        {f'{N.host_ecn_marked}{{{HOST},hca="mlx5_0",port="1"}}': "0+60000000x30"},
        {"device": "gpu01", "hca": "mlx5_0", "port": "1", **HOST_LABELS},
    ),
    Case(
        "FabconfCnpRate",
        {f'{N.host_cnp_sent}{{{HOST},hca="mlx5_0",port="1"}}': "0+60000000x30"},
        {"device": "gpu01", "hca": "mlx5_0", "port": "1", **HOST_LABELS},
    ),
    Case(
        "FabconfPortBelowIntendedSpeed",
        {
            f'{N.switch_speed_mbps}{{{SWITCH},device="leaf1",port="swp3"}}': "200000x30",
            f'{N.intended_speed}{{device="leaf1",port="swp3"}}': "50000000000x30",
        },
        {"device": "leaf1", "port": "swp3"},
        needs_inventory=True,
    ),
    Case(
        "FabconfPortBelowIntendedSpeed",
        {
            f'{N.host_speed_bytes}{{{HOST},port="ens1f0np0"}}': "25000000000x30",
            f'{N.intended_speed}{{device="gpu01",port="ens1f0np0"}}': "50000000000x30",
        },
        {"device": "gpu01", "port": "ens1f0np0"},
        needs_inventory=True,
    ),
    # the peer is named: snmp_exporter labels bgpPeerState with its table index, bgpPeerRemoteAddr
    Case(
        "FabconfBgpSessionDown",
        {f'{N.switch_bgp_peer_state}{{job="fabconf-switches",device="spine1",bgpPeerRemoteAddr="10.254.0.1"}}': "3x30"},
        {"device": "spine1", "peer": "10.254.0.1", "bgpPeerRemoteAddr": "10.254.0.1", "job": "fabconf-switches"},
        "critical",
    ),
    # with switches streaming (the example), a device is unreachable when none of its sources answers: one alert
    Case(
        "FabconfDeviceUnreachable",
        {'up{job="fabconf-hosts",instance="gpu02.example.net:9100",device="gpu02"}': "0x30"},
        {"device": "gpu02"},
        "critical",
    ),
    # a switch read over gNMI alone (no SNMP agent: snmp_exporter answers 500) fires each alert from its gNMI
    # series: port errors above (first case), its speed, its BGP session, its gNMI target down
    Case(
        "FabconfPortBelowIntendedSpeed",
        {
            f"{N.gnmi_speed_mbps}{{{GNMI}}}": "200000x30",
            f'{N.intended_speed}{{device="leaf2",port="swp63"}}': "50000000000x30",
            f"up{{{SNMP_LEAF2}}}": "0x30",
            f"{N.gnmi_target_up}{{{GNMI_TARGET}}}": "1x30",
        },
        {"device": "leaf2", "port": "swp63"},
        needs_inventory=True,
    ),
    Case(
        "FabconfBgpSessionDown",
        {
            f'{N.gnmi_bgp_state}{{{GNMI_BGP},{N.gnmi_bgp_peer_label}="10.254.0.9"}}': "1x30",
            f"up{{{SNMP_LEAF2}}}": "0x30",
            f"{N.gnmi_target_up}{{{GNMI_TARGET}}}": "1x30",
        },
        {"device": "leaf2", "peer": "10.254.0.9", N.gnmi_bgp_peer_label: "10.254.0.9", **GNMI_LABELS},
        "critical",
    ),
    Case(
        "FabconfDeviceUnreachable",
        {f"up{{{SNMP_LEAF2}}}": "0x30", f"{N.gnmi_target_up}{{{GNMI_TARGET}}}": "0x30"},
        {"device": "leaf2"},
        "critical",
    ),
    Case(
        "FabconfDrift",
        {f'{N.drift}{{device="leaf2",platform="cumulus",role="leaf"}}': "1x30"},
        {"device": "leaf2", "platform": "cumulus"},
        own_role="leaf",
    ),
    # the drift report is older than a day: every device of the inventory
    Case("FabconfDriftReportStale", {}, {"device": "all"}, minutes=24 * 60 + 10),
    # a device missing from the drift report
    Case(
        "FabconfDriftReportStale",
        {},
        {"device": "leaf4", "platform": "nxos"},
        drift_devices=tuple(set(INFO) - {"leaf4"}),
        needs_inventory=True,
    ),
]

# 400G at line rate: 50e9 bytes/s of 84-byte frames on the wire (64 B + preamble and gap) is 595 Mpps
LINE_RATE_PER_MIN = 35_700_000_000
# every series an alert reads, healthy: ports at line rate with a few errors (well below 0.001 %), pauses and ECN
# marks of a busy fabric, speeds as intended, sessions established, everything scraped, nothing drifted
HEALTHY = {
    f'{N.switch_in_errors}{{{SWITCH},device="leaf1",port="swp1"}}': "0+100x30",
    f'{N.switch_in_packets}{{{SWITCH},device="leaf1",port="swp1"}}': f"0+{LINE_RATE_PER_MIN}x30",
    f"{N.gnmi_in_errors}{{{GNMI}}}": "0+100x30",
    f"{N.gnmi_in_packets}{{{GNMI}}}": f"0+{LINE_RATE_PER_MIN}x30",
    f'{N.host_in_errors}{{{HOST},port="ens1f0np0"}}': "0x30",
    f'{N.host_in_packets}{{{HOST},port="ens1f0np0"}}': f"0+{LINE_RATE_PER_MIN}x30",
    f'{N.host_rdma_timeouts}{{{HOST},hca="mlx5_0",port="1"}}': "0x30",
    f'{N.host_rdma_sent}{{{HOST},hca="mlx5_0",port="1"}}': f"0+{LINE_RATE_PER_MIN}x30",
    f'{N.per_priority(N.host_pfc_pause_duration_us, 3)}{{{HOST},port="ens1f0np0"}}': "0+6000000x30",  # 10 %
    f'{N.per_priority(N.host_pfc_pauses, 3)}{{{HOST},port="ens1f0np0"}}': "0+600000x30",
    f'{N.per_priority(N.switch_pfc_pauses, 3)}{{{SWITCH},device="leaf1",port="swp2"}}': "0+60000x30",
    f'{N.host_pfc_watchdog}{{{HOST},port="ens1f0np0"}}': "0x30",
    f'{N.host_ecn_marked}{{{HOST},hca="mlx5_0",port="1"}}': "0+60000x30",
    f'{N.host_cnp_sent}{{{HOST},hca="mlx5_0",port="1"}}': "0+60000x30",
    f'{N.switch_speed_mbps}{{{SWITCH},device="leaf1",port="swp3"}}': "400000x30",
    f'{N.intended_speed}{{device="leaf1",port="swp3"}}': "50000000000x30",
    f'{N.host_speed_bytes}{{{HOST},port="ens1f0np0"}}': "50000000000x30",
    f'{N.intended_speed}{{device="gpu01",port="ens1f0np0"}}': "50000000000x30",
    f'{N.switch_bgp_peer_state}{{job="fabconf-switches",device="spine1",bgpPeerRemoteAddr="10.254.0.1"}}': "6x30",
    'up{job="fabconf-hosts",instance="gpu02.example.net:9100",device="gpu02"}': "1x30",
    # leaf2 read over gNMI alone: its SNMP scrape fails, its gNMI target is up, speed and session as intended
    f"up{{{SNMP_LEAF2}}}": "0x30",
    f"{N.gnmi_target_up}{{{GNMI_TARGET}}}": "1x30",
    f"{N.gnmi_speed_mbps}{{{GNMI}}}": "400000x30",
    f'{N.intended_speed}{{device="leaf2",port="swp63"}}': "50000000000x30",
    f'{N.gnmi_bgp_state}{{{GNMI_BGP},{N.gnmi_bgp_peer_label}="10.254.0.9"}}': "6x30",
    'up{job="fabconf",instance="localhost:9100"}': "1x30",
    f'{N.drift}{{device="leaf2",platform="cumulus",role="leaf"}}': "0x30",
}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("monitoring")
    assert main(["monitoring", "-i", str(EXAMPLE), "-o", str(out)]) == 0
    return out


def test_inventory_series_and_dashboard(generated: Path) -> None:
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families((generated / "fabconf-inventory.prom").read_text())
        for s in family.samples
    }
    assert samples[(N.device_info, (("device", "leaf3"), ("platform", "eos"), ("pod", "pod1"), ("role", "leaf")))] == 1
    assert samples[(N.intended_speed, (("device", "gpu01"), ("port", "ens1f0np0")))] == 400e9 / 8  # bytes/s
    assert samples[(N.intended_speed, (("device", "leaf1"), ("port", "swp63")))] == 400e9 / 8
    board = json.loads((generated / "fabconf-dashboard.json").read_text())
    exprs = " ".join(dashboard.queries((generated / "fabconf-dashboard.json").read_text()))
    for name in (
        N.switch_in_errors,
        N.host_in_errors,
        N.per_priority(N.host_pfc_pauses, 3),
        N.host_ecn_marked,
        N.host_cnp_sent,
        N.switch_bgp_peer_state,
        N.intended_speed,
        N.drift,
    ):
        assert name in exprs
    assert {v["name"] for v in board["templating"]["list"]} == {"datasource", "device"}


@needs_promtool
def test_inventory_series_pass_promtool_check_metrics(generated: Path) -> None:
    """Prometheus's naming conventions (base units: bytes, not bits): the old fabconf_port_intended_speed_bits
    was flagged."""
    text = (generated / "fabconf-inventory.prom").read_text()
    checked = subprocess.run([str(PROMTOOL), "check", "metrics"], input=text, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_telemetry_paths_are_the_intents_and_read_by_rules_and_dashboard(generated: Path) -> None:
    """fabric.yaml's monitoring.telemetry.paths are the keys of the one table; with a switch streaming (leaf2 in
    the example) the rules and the dashboard read the series a gNMI collector makes of those paths; without one,
    neither names them."""
    schema = json.loads((ROOT / "fabconf/compile/schemas/fabric.json").read_text())
    paths = schema["properties"]["monitoring"]["properties"]["telemetry"]["properties"]["paths"]
    assert set(paths["items"]["enum"]) == set(TELEMETRY_PATHS)
    assert N.gnmi_in_errors == "interfaces_interface_state_counters_in_errors"
    rules_text = (generated / "fabconf-rules.yml").read_text()
    exprs = " ".join(dashboard.queries((generated / "fabconf-dashboard.json").read_text()))
    for name in (N.gnmi_in_errors, N.gnmi_in_packets):
        assert name in rules_text and name in exprs
    assert N.gnmi_queue_depth in exprs and N.gnmi_pause_frames in exprs
    assert N.gnmi_speed_mbps in exprs and N.gnmi_bgp_state in exprs and N.gnmi_target_up in exprs
    for name in (N.gnmi_speed_mbps, N.gnmi_bgp_state, N.gnmi_target_up):
        assert name in rules_text
    quiet = json.dumps(rules.rule_groups(N, Thresholds(), [3], Timing()))
    assert N.gnmi_in_errors not in quiet and N.gnmi_queue_depth not in dashboard.build(N, "t", [3])


def test_no_name_is_invented() -> None:
    """The names the old rules read and no exporter emits are gone (issue 30)."""
    text = json.dumps(rules.rule_groups(N, Thresholds(), [3], Timing()))
    for invented in ("rdma_hw_counter_total", "interface_pfc_", "interface_ecn_", "node_ethtool_rx_"):
        assert invented not in text


def _rules_test(
    rules_file: Path, cases: list[Case], tmp_path: Path, inventory: bool = True
) -> subprocess.CompletedProcess[str]:
    """Each case as one promtool test: its alert fires with exactly its labels, every other alert stays silent.
    ``inventory=False``: the inventory textfile is not scraped (no ``fabconf_device_info``, no intended speeds):
    the alert fires without ``role`` and ``pod`` (or, ``needs_inventory``, cannot fire), and
    ``FabconfInventoryAbsent`` fires."""
    summaries = {
        r["alert"]: r["annotations"]["summary"] for r in yaml.safe_load(rules_file.read_text())["groups"][0]["rules"]
    }
    every = sorted(summaries)
    tests = []
    for case in cases:
        steps = case.minutes + 5
        series = [
            {"series": f'{N.device_info}{{device="{d}",role="{r}",pod="{p}",platform="{pl}"}}', "values": f"1x{steps}"}
            for d, (r, p, pl) in INFO.items()
            if inventory
        ]
        series += [
            {"series": f'{N.drift_state}{{device="{d}",state="in_sync"}}', "values": f"1x{steps}"}
            for d in case.drift_devices
        ]
        series.append({"series": N.drift_last_run, "values": f"0x{steps}"})
        series += [{"series": k, "values": v} for k, v in case.inputs.items() if inventory or N.intended_speed not in k]
        wanted = [case.labels] if case.labels else []  # no labels: it must not fire
        if case.labels.get("device") == "all":  # once for the whole report without the inventory
            wanted = [{**case.labels, "device": d, "platform": INFO[d][2]} for d in INFO] if inventory else [{}]
        if not inventory and case.needs_inventory:
            wanted = []
        expected: dict[str, list[dict[str, object]]] = {}
        for alert, labels, severity in [(case.alert, w, case.severity) for w in wanted] + (
            [] if inventory else [("FabconfInventoryAbsent", {}, "warning")]
        ):
            full = {**labels, "severity": severity, "source": "fabconf"}
            if inventory:
                full["role"], full["pod"], _platform = INFO[labels["device"]]
            elif case.own_role and alert == case.alert:
                full["role"] = case.own_role
            summary = summaries[alert]
            for key, value in full.items():
                summary = summary.replace(f"{{{{ $labels.{key} }}}}", value)
            summary = summary.replace("{{ $labels.device }}", "")
            expected.setdefault(alert, []).append({"exp_labels": full, "exp_annotations": {"summary": summary}})
        tests.append(
            {
                "interval": "1m",
                "input_series": series,
                "alert_rule_test": [
                    {"eval_time": f"{case.minutes}m", "alertname": a, "exp_alerts": expected.get(a, [])} for a in every
                ],
            }
        )
    spec = tmp_path / "rules_test.yml"
    spec.write_text(yaml.safe_dump({"rule_files": [str(rules_file)], "evaluation_interval": "1m", "tests": tests}))
    return subprocess.run([str(PROMTOOL), "test", "rules", str(spec)], capture_output=True, text=True)


@needs_promtool
def test_promtool_accepts_the_rules_and_each_alert_fires(generated: Path, tmp_path: Path) -> None:
    rules_file = generated / "fabconf-rules.yml"
    checked = subprocess.run([str(PROMTOOL), "check", "rules", str(rules_file)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    alerts = {r["alert"] for r in yaml.safe_load(rules_file.read_text())["groups"][0]["rules"]}
    assert alerts == {c.alert for c in CASES} | {"FabconfInventoryAbsent"}
    tested = _rules_test(rules_file, CASES, tmp_path)
    assert tested.returncode == 0, tested.stdout + tested.stderr


@needs_promtool
def test_each_alert_fires_without_the_inventory_series(generated: Path, tmp_path: Path) -> None:
    """The inventory textfile not scraped (collector not set up, file removed): every alert that does not read it
    still fires, on its device, without role and pod; FabconfInventoryAbsent says the series is missing (the old
    rules multiplied every alert by fabconf_device_info: none fired, and nothing said so)."""
    tested = _rules_test(generated / "fabconf-rules.yml", CASES, tmp_path, inventory=False)
    assert tested.returncode == 0, tested.stdout + tested.stderr


@needs_promtool
@pytest.mark.parametrize("inventory", [True, False], ids=["inventory", "no-inventory"])
def test_healthy_fabric_at_line_rate_fires_nothing(generated: Path, tmp_path: Path, inventory: bool) -> None:
    """Ports at line rate with a few errors, a busy fabric's pauses and ECN marks: no alert (the old port-error
    expression compared only the last ``or`` operand with the threshold, so the SNMP ratio alerted on every port
    with traffic). Without the inventory only FabconfInventoryAbsent fires."""
    for minutes in (6, 15, 25):
        healthy = Case("none", HEALTHY, {}, minutes=minutes)
        tested = _rules_test(generated / "fabconf-rules.yml", [healthy], tmp_path, inventory=inventory)
        assert tested.returncode == 0, tested.stdout + tested.stderr


def test_port_error_thresholds_apply_to_every_source() -> None:
    """Each error ratio (SNMP, gNMI, host) is compared with the threshold inside its own parentheses."""
    expr = rules.rule_groups(N, Thresholds(), [3], Timing(), ("port_errors", "port_packets"))["groups"][0]["rules"][0]
    assert expr["alert"] == "FabconfPortErrorRate"
    assert expr["expr"].count("> 1e-05") == 6  # three sources, in the joined and the plain branch


@needs_promtool
def test_watchdog_fires_on_one_event_and_stops_after_a_window(generated: Path, tmp_path: Path) -> None:
    """The old ``increase(...[5m]) > 0`` with ``for: 5m`` never fired on one event; now it fires at once and
    resolves one window later."""
    one = Case(
        "FabconfPfcWatchdogTriggered",
        {f'{N.host_pfc_watchdog}{{{HOST},port="ens1f0np0"}}': "0x5 1x30"},
        {"device": "gpu01", "port": "ens1f0np0", **HOST_LABELS},
        "critical",
        minutes=6,
    )
    assert _rules_test(generated / "fabconf-rules.yml", [one], tmp_path).returncode == 0
    later = Case(one.alert, one.inputs, {}, minutes=20)
    assert _rules_test(generated / "fabconf-rules.yml", [later], tmp_path).returncode == 0


def _inventory_with(tmp_path: Path, monitoring: dict[str, object]) -> Path:
    inv = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, inv)
    fabric = inv / "fabric.yaml"
    intent = yaml.safe_load(fabric.read_text())
    intent["monitoring"] = {**intent.get("monitoring", {}), **monitoring}  # the example's telemetry stays
    fabric.write_text(yaml.safe_dump(intent, sort_keys=False))
    return inv


def test_timing_comes_from_the_intent(tmp_path: Path) -> None:
    inv = _inventory_with(tmp_path, {"window_s": 30, "for_s": 10, "drift_max_age_s": 3600})
    out = tmp_path / "out"
    assert main(["monitoring", "-i", str(inv), "-o", str(out)]) == 0
    groups = yaml.safe_load((out / "fabconf-rules.yml").read_text())["groups"][0]["rules"]
    by_name = {r["alert"]: r for r in groups}
    assert "[30s]" in by_name["FabconfPortErrorRate"]["expr"] and "[5m]" not in by_name["FabconfPortErrorRate"]["expr"]
    assert by_name["FabconfPortErrorRate"]["for"] == "10s"
    assert "for" not in by_name["FabconfPfcWatchdogTriggered"]
    assert "> 3600" in by_name["FabconfDriftReportStale"]["expr"]
    defaults = rules.rule_groups(N, Thresholds(), [3], Timing())["groups"][0]["rules"]
    assert all(r.get("for", "5m") == "5m" for r in defaults) and "[5m]" in defaults[0]["expr"]


def test_timing_is_validated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inv = _inventory_with(tmp_path, {"window_s": "5m"})
    assert main(["monitoring", "-i", str(inv), "-o", str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err
    assert "fabric.yaml" in err and "window_s" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@needs_promtool
def test_every_dashboard_query_passes_prometheus_parser(generated: Path, tmp_path: Path) -> None:
    exprs = dashboard.queries((generated / "fabconf-dashboard.json").read_text())
    group = [{"record": f"fabconf:panel_query_{i}", "expr": e.replace("$device", ".*")} for i, e in enumerate(exprs)]
    path = tmp_path / "panels.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "panels", "rules": group}]}))
    checked = subprocess.run([str(PROMTOOL), "check", "rules", str(path)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@needs_promtool
def test_documented_scrape_config_is_valid_and_in_the_readme(generated: Path, tmp_path: Path) -> None:
    config = ROOT / "contrib" / "prometheus" / "prometheus.yml"
    assert config.read_text() in (ROOT / "docs" / "operations" / "monitoring.md").read_text()
    shutil.copy(config, tmp_path / "prometheus.yml")
    for name in ("fabconf-rules.yml", "fabconf-targets-hosts.json", "fabconf-targets-switches.json"):
        shutil.copy(generated / name, tmp_path / name)
    checked = subprocess.run(
        [str(PROMTOOL), "check", "config", str(tmp_path / "prometheus.yml")], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    jobs = {j["job_name"]: j for j in yaml.safe_load(config.read_text())["scrape_configs"]}
    assert jobs["fabconf"]["honor_labels"] is True  # fabconf's own `device` label survives
    assert all(not j.get("honor_labels") for name, j in jobs.items() if name != "fabconf")


def test_scrape_targets_name_every_device(generated: Path) -> None:
    hosts = json.loads((generated / "fabconf-targets-hosts.json").read_text())
    switches = json.loads((generated / "fabconf-targets-switches.json").read_text())
    by_device = {g["labels"]["device"]: g for g in hosts + switches}
    assert set(INFO) <= set(by_device)
    assert by_device["gpu01"]["targets"][0].endswith(":9100")
    assert by_device["leaf1"]["labels"]["__param_module"] == "if_mib,fabconf_bgp4,fabconf_cumulus_pfc"  # Cumulus
    assert by_device["leaf3"]["labels"]["__param_module"] == "if_mib,fabconf_bgp4"  # EOS
    assert all(":" not in g["targets"][0] for g in switches)  # an SNMP target, not the exporter


def test_the_documented_scrape_config_is_the_one_fabconf_writes() -> None:
    documented = yaml.safe_load((ROOT / "contrib" / "prometheus" / "prometheus.yml").read_text())
    assert documented == scrape.config()


def test_lab_targets_need_a_lab(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["monitoring", "-i", str(EXAMPLE), "-o", str(out), "--lab", "--state", str(tmp_path)]) != 0
    err = capsys.readouterr().err
    assert "no lab state there" in err and "fabconf lab up" in err and "Traceback" not in err
    assert not out.exists()


def _gnmic_replace(transforms: list[dict[str, dict[str, str]]], value: str) -> str:
    """gnmic's event-strings ``replace`` transforms in order (Go's regexp.ReplaceAllString: ``${1}`` is group 1)."""
    for transform in transforms:
        step = transform["replace"]
        value = re.sub(step["old"], step["new"].replace("${1}", r"\g<1>"), value)
    return value


def test_gnmic_config_targets_the_streaming_switches_without_credentials(generated: Path) -> None:
    """fabconf-gnmic.yml: the switches with a gNMI server as targets named as in the inventory, at their
    management address and the server's port, every path of the intent subscribed, a Prometheus output and the
    API server's target metrics; no credential and no skip-verify in the file; plain gRPC only for an EOS server
    without a TLS profile."""
    text = (generated / "fabconf-gnmic.yml").read_text()
    config = yaml.safe_load(text)
    assert set(config["targets"]) == {"leaf2", "leaf3", "leaf4", "spine1", "spine2"}  # leaf1: Cumulus 5.12, none
    assert config["targets"]["leaf3"] == {"address": "192.0.2.13:9339", "insecure": True}  # EOS, no tls_profile
    assert config["targets"]["leaf4"] == {"address": "192.0.2.14:9339"}  # NX-OS: TLS, verified
    for forbidden in ("password", "username", "skip-verify", "token"):
        assert forbidden not in text.lower().replace("gnmic_password", "").replace("gnmic_username", "")
    assert config["subscriptions"]["fabconf"]["paths"] == list(TELEMETRY_PATHS.values())
    assert config["outputs"]["fabconf"]["listen"] == ":9804" and config["api-server"]["enable-metrics"] is True
    speed = config["processors"]["fabconf-port-speed"]["event-strings"]
    state = config["processors"]["fabconf-bgp-state"]["event-strings"]
    assert re.search(speed["value-names"][0], TELEMETRY_PATHS["port_speed"])
    assert re.search(state["value-names"][0], TELEMETRY_PATHS["bgp_state"])
    assert _gnmic_replace(speed["transforms"], "openconfig-if-ethernet:SPEED_400GB") == "400000"  # Mb/s
    assert _gnmic_replace(speed["transforms"], "SPEED_2500MB") == "2500"
    assert _gnmic_replace(speed["transforms"], "SPEED_UNKNOWN") == "SPEED_UNKNOWN"  # not a number: dropped
    assert _gnmic_replace(state["transforms"], "ESTABLISHED") == "6"
    assert _gnmic_replace(state["transforms"], "openconfig-bgp:ACTIVE") == "3"
    assert _gnmic_replace(state["transforms"], "IDLE") == "1"


def test_without_a_streaming_switch_the_gnmic_config_has_no_target(tmp_path: Path) -> None:
    inv = _inventory_with(tmp_path, {"telemetry": {"enabled": False}})
    for hosts in ("hosts.yaml", "groups.yaml"):
        path = inv / hosts
        path.write_text(path.read_text().replace("telemetry: true", "telemetry: false"))
    out = tmp_path / "out"
    assert main(["monitoring", "-i", str(inv), "-o", str(out)]) == 0
    assert yaml.safe_load((out / "fabconf-gnmic.yml").read_text())["targets"] == {}
    rules_text = (out / "fabconf-rules.yml").read_text()
    assert N.gnmi_target_up not in rules_text and N.gnmi_bgp_state not in rules_text
