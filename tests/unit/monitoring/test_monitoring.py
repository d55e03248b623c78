"""``fabconf monitoring``: rules that promtool accepts and that fire, each on a synthetic series, with the
device's role and pod; the inventory series; a Grafana dashboard whose queries use the same metric names."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from fabconf.cli import main
from fabconf.monitoring.names import Names

ROOT = Path(__file__).resolve().parents[3]
PROMTOOL = shutil.which("promtool")
N = Names()

INFO = {
    "leaf1": ("leaf", "pod1", "cumulus"),
    "leaf2": ("leaf", "pod1", "cumulus"),
    "leaf3": ("leaf", "pod1", "eos"),
    "leaf4": ("leaf", "pod1", "nxos"),
    "spine1": ("spine", "pod1", "eos"),
    "gpu01": ("gpu_host", "pod1", "linux"),
    "gpu02": ("gpu_host", "pod1", "linux"),
}
# alert -> (input series {series: values}, the labels it fires with besides role, pod, severity, source)
CASES = {
    "FabconfPortErrorRate": (
        {
            f'{N.switch_in_errors}{{device="leaf1",port="swp1"}}': "0+100x30",
            f'{N.switch_in_packets}{{device="leaf1",port="swp1"}}': "0+1000000x30",
        },
        {"device": "leaf1", "port": "swp1"},
        "warning",
    ),
    "FabconfRoceRetransmits": (
        {
            f'{N.host_rdma_counter}{{device="gpu01",port="ens1f0np0",counter="local_ack_timeout_err"}}': "0+60x30",
            f'{N.host_rdma_sent}{{device="gpu01",port="ens1f0np0"}}': "0+60000x30",
        },
        {"device": "gpu01", "port": "ens1f0np0"},
        "warning",
    ),
    "FabconfPfcPauseStorm": (
        {f'{N.switch_pfc_pauses}{{device="leaf3",port="Ethernet1/1",priority="3"}}': "0+12000000x30"},
        {"device": "leaf3", "port": "Ethernet1/1", "priority": "3"},
        "critical",
    ),
    "FabconfPfcWatchdogTriggered": (
        {f'{N.switch_pfc_watchdog}{{device="leaf4",port="Ethernet1/1"}}': "0+1x30"},
        {"device": "leaf4", "port": "Ethernet1/1"},
        "critical",
    ),
    "FabconfEcnMarkRate": (
        {f'{N.switch_ecn_marked}{{device="leaf1",port="swp2"}}': "0+60000000x30"},
        {"device": "leaf1", "port": "swp2"},
        "warning",
    ),
    "FabconfCnpRate": (
        {f'{N.host_rdma_counter}{{device="gpu02",port="ens1f0np0",counter="np_cnp_sent"}}': "0+60000000x30"},
        {"device": "gpu02", "port": "ens1f0np0", "counter": "np_cnp_sent"},
        "warning",
    ),
    "FabconfPortBelowIntendedSpeed": (
        {
            f'{N.switch_speed_mbps}{{device="leaf1",port="swp3"}}': "200000x30",
            f'{N.intended_speed}{{device="leaf1",port="swp3"}}': "400000000000x30",
        },
        {"device": "leaf1", "port": "swp3"},
        "warning",
    ),
    "FabconfBgpSessionDown": (
        {f'{N.switch_bgp_peer_state}{{device="spine1",peer="10.254.0.1"}}': "3x30"},
        {"device": "spine1", "peer": "10.254.0.1"},
        "critical",
    ),
    "FabconfDrift": (
        {f'{N.drift}{{device="leaf2",platform="cumulus",role="leaf"}}': "1x30"},
        {"device": "leaf2", "platform": "cumulus"},
        "warning",
    ),
}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("monitoring")
    assert main(["monitoring", "-i", str(ROOT / "inventory"), "-o", str(out)]) == 0
    return out


def test_inventory_series_and_dashboard(generated: Path) -> None:
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families((generated / "fabconf-inventory.prom").read_text())
        for s in family.samples
    }
    assert samples[(N.device_info, (("device", "leaf3"), ("platform", "eos"), ("pod", "pod1"), ("role", "leaf")))] == 1
    assert samples[(N.intended_speed, (("device", "gpu01"), ("port", "ens1f0np0")))] == 400e9
    assert samples[(N.intended_speed, (("device", "leaf1"), ("port", "swp63")))] == 400e9
    board = json.loads((generated / "fabconf-dashboard.json").read_text())
    exprs = " ".join(t["expr"] for p in board["panels"] for t in p["targets"])
    for name in (N.switch_in_errors, N.host_in_errors, N.switch_pfc_pauses, N.switch_ecn_marked, N.drift):
        assert name in exprs
    assert {v["name"] for v in board["templating"]["list"]} == {"datasource", "device"}


@pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian's prometheus package) is not installed")
def test_promtool_accepts_the_rules_and_each_alert_fires(generated: Path, tmp_path: Path) -> None:
    rules = generated / "fabconf-rules.yml"
    checked = subprocess.run([str(PROMTOOL), "check", "rules", str(rules)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    summaries = {
        r["alert"]: r["annotations"]["summary"] for r in yaml.safe_load(rules.read_text())["groups"][0]["rules"]
    }
    assert sorted(summaries) == sorted(CASES)
    series = [
        {"series": f'{N.device_info}{{device="{d}",role="{r}",pod="{p}",platform="{pl}"}}', "values": "1x30"}
        for d, (r, p, pl) in INFO.items()
    ]
    tests = []
    for alert, (inputs, labels, severity) in CASES.items():
        role, pod, _platform = INFO[labels["device"]]
        expected = {**labels, "role": role, "pod": pod, "severity": severity, "source": "fabconf"}
        summary = summaries[alert]
        for key, value in expected.items():
            summary = summary.replace(f"{{{{ $labels.{key} }}}}", value)
        annotations = {"summary": summary}
        tests.append(
            {
                "interval": "1m",
                "input_series": series + [{"series": k, "values": v} for k, v in inputs.items()],
                "alert_rule_test": [
                    {
                        "eval_time": "15m",
                        "alertname": a,
                        "exp_alerts": [{"exp_labels": expected, "exp_annotations": annotations}] if a == alert else [],
                    }
                    for a in CASES
                ],
            }
        )
    spec = tmp_path / "rules_test.yml"
    spec.write_text(yaml.safe_dump({"rule_files": [str(rules)], "evaluation_interval": "1m", "tests": tests}))
    tested = subprocess.run([str(PROMTOOL), "test", "rules", str(spec)], capture_output=True, text=True)
    assert tested.returncode == 0, tested.stdout + tested.stderr
