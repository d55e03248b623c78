"""fabconf's alerts on real exporter output, evaluated by a real Prometheus: Debian's ``prometheus-node-exporter``
reads a fixture sysfs and procfs (an RDMA device's counters, a netdev) and, as on the Prometheus host, a textfile
directory with fabconf's inventory and drift report; Debian's ``prometheus`` scrapes both with the documented
scrape configuration (``contrib/prometheus/prometheus.yml``, only its intervals and the textfile target replaced)
and the targets ``fabconf monitoring`` wrote (the hosts' addresses pointed at the test's exporters), and evaluates
the rules ``fabconf monitoring`` wrote with timing from the intent (``monitoring.window_s``/``for_s`` in
seconds). The test moves the counters and reads the alerts that fire from Prometheus's own API.

Not covered here: ethtool statistics (node_exporter reads them with an ioctl on a real NIC, no fixture can fake
them; their names are taken from the exporter's source, see ``fabconf/monitoring/names.py``) and switches
(snmp_exporter is not run)."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pristine import EXAMPLE
from promkit import (
    NODE_EXPORTER,
    check_config,
    free_port,
    has,
    needs_prometheus,
    prometheus,
    query,
    start,
    stop,
    textfile_exporter,
    version,
    wait_firing,
)

from fabconf.cli import drift_metrics, main
from fabconf.cli.drift_report import DriftRun
from fabconf.deploy.drift import DeviceDrift, DriftState, exit_code
from fabconf.deploy.job import Outcome, State
from fabconf.monitoring.names import Names

ROOT = Path(__file__).resolve().parents[2]
N = Names()
pytestmark = needs_prometheus


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


class Host:
    """A fixture sysfs and procfs in the kernel's formats: netdev ens1f0np0 (linked at 200G, intended 400G) and
    RDMA device mlx5_0 port 1 with ``counters`` and ``hw_counters``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        ib = root / "sys/class/infiniband/mlx5_0"
        _write(ib / "board_id", "MT_0000000838\n")
        _write(ib / "fw_ver", "28.39.1002\n")
        _write(ib / "hca_type", "MT4129\n")
        port = ib / "ports/1"
        _write(port / "state", "4: ACTIVE\n")
        _write(port / "phys_state", "5: LinkUp\n")
        _write(port / "rate", "400 Gb/sec (4X NDR)\n")
        net = root / "sys/class/net/ens1f0np0"
        _write(net / "speed", "200000\n")  # Mb/s: the link came up at 200G
        _write(net / "operstate", "up\n")
        _write(net / "mtu", "9000\n")
        self.port = port
        self.ticks = 0
        self.advance()

    def advance(self) -> None:
        """One step of traffic with errors and retransmission timeouts."""
        self.ticks += 1
        t = self.ticks
        for name, value in {"port_xmit_packets": 1000 * t, "port_rcv_packets": 1000 * t, "port_rcv_errors": 0}.items():
            _write(self.port / "counters" / name, f"{value}\n")
        for name, value in {"local_ack_timeout_err": 50 * t, "np_cnp_sent": 0, "np_ecn_marked_roce_packets": 0}.items():
            _write(self.port / "hw_counters" / name, f"{value}\n")
        _write(
            self.root / "proc/net/dev",
            "Inter-|   Receive                                                |  Transmit\n"
            " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls "
            "carrier compressed\n"
            f"ens1f0np0: {1500 * 1000 * t} {1000 * t} {100 * t} 0 0 0 0 0 {1500 * 1000 * t} {1000 * t} 0 0 0 0 0 0\n",
        )


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[dict[str, Any]]:
    # the rules, from an inventory whose intent sets the timing in seconds
    inv = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, inv)
    fabric = inv / "fabric.yaml"
    intent = yaml.safe_load(fabric.read_text())
    intent["monitoring"] = {**intent.get("monitoring", {}), "window_s": 5, "for_s": 2}  # the telemetry stays
    fabric.write_text(yaml.safe_dump(intent, sort_keys=False))
    prom_dir = tmp_path / "prometheus"
    text_dir = tmp_path / "textfiles"
    assert main(["monitoring", "-i", str(inv), "-o", str(prom_dir)]) == 0
    text_dir.mkdir()
    shutil.move(prom_dir / "fabconf-inventory.prom", text_dir / "fabconf-inventory.prom")
    # a fresh drift report in which gpu01 drifted and leaf1 is missing
    devices = [
        DeviceDrift(Outcome("gpu01", "linux", State.CHANGES, diff="-a\n+b\n"), "gpu_host", DriftState.DRIFTED, ["nic"]),
        DeviceDrift(Outcome("spine1", "eos", State.UNCHANGED), "spine", DriftState.IN_SYNC),
    ]
    drift_metrics.write(DriftRun(devices, exit_code(devices), started=time.time(), duration=1.0), text_dir / "d.prom")

    host = Host(tmp_path / "gpu01")
    ports = {name: free_port() for name in ("textfile", "gpu01", "prometheus", "closed")}
    # the documented scrape configuration, scraping every second, with the targets fabconf monitoring wrote: the
    # hosts' addresses pointed at this test's exporters (gpu02's at a port where nothing listens), no switches
    # (no snmp_exporter here)
    config = yaml.safe_load((ROOT / "contrib/prometheus/prometheus.yml").read_text())
    config["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s"}
    jobs = {j["job_name"]: j for j in config["scrape_configs"]}
    jobs["fabconf"]["static_configs"] = [{"targets": [f"127.0.0.1:{ports['textfile']}"]}]
    (prom_dir / "prometheus.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    hosts = json.loads((prom_dir / "fabconf-targets-hosts.json").read_text())
    where = {"gpu01": f"127.0.0.1:{ports['gpu01']}", "gpu02": f"127.0.0.1:{ports['closed']}"}
    hosts = [dict(g, targets=[where[g["labels"]["device"]]]) for g in hosts if g["labels"]["device"] in where]
    assert len(hosts) == 2
    (prom_dir / "fabconf-targets-hosts.json").write_text(json.dumps(hosts))
    (prom_dir / "fabconf-targets-switches.json").write_text("[]")
    check_config(prom_dir / "prometheus.yml")

    exporter = str(NODE_EXPORTER)
    node = [
        exporter,
        f"--path.sysfs={host.root / 'sys'}",
        f"--path.procfs={host.root / 'proc'}",
        "--collector.disable-defaults",
        "--collector.infiniband",
        "--collector.netclass",
        "--collector.netdev",
        "--no-collector.netdev.netlink",  # /proc/net/dev from --path.procfs
        f"--web.listen-address=127.0.0.1:{ports['gpu01']}",
    ]
    procs = [
        start(textfile_exporter(text_dir, ports["textfile"]), tmp_path / "textfile.log"),
        start(node, tmp_path / "gpu01.log"),
        start(prometheus(prom_dir / "prometheus.yml", tmp_path / "tsdb", ports["prometheus"]), tmp_path / "prom.log"),
    ]
    try:
        yield {"api": f"http://127.0.0.1:{ports['prometheus']}/api/v1", "host": host, "logs": tmp_path}
    finally:
        stop(procs)


def test_alerts_fire_in_a_real_prometheus_on_real_node_exporter_output(stack: dict[str, Any]) -> None:
    api, host = stack["api"], stack["host"]
    gpu01 = {"device": "gpu01", "role": "gpu_host", "pod": "pod1"}
    wanted = [
        {"alertname": "FabconfPortErrorRate", **gpu01, "port": "ens1f0np0"},
        {"alertname": "FabconfPortBelowIntendedSpeed", **gpu01, "port": "ens1f0np0"},
        {"alertname": "FabconfDeviceUnreachable", "device": "gpu02", "role": "gpu_host", "pod": "pod1"},
        {"alertname": "FabconfDrift", **gpu01},  # the join on fabconf's own `device` label survives the scrape
        {"alertname": "FabconfDriftReportStale", "device": "leaf1", "role": "leaf", "pod": "pod1"},
    ]
    hw_counters = version(str(NODE_EXPORTER)) >= (1, 11, 0)  # older node_exporters do not read hw_counters
    if hw_counters:
        wanted.append({"alertname": "FabconfRoceRetransmits", **gpu01, "hca": "mlx5_0", "port": "1"})
    firing = wait_firing(api, wanted, stack["logs"] / "prom.log", host.advance)
    assert not has(firing, {"alertname": "FabconfDriftReportStale", "device": "gpu01"})

    # the series the rules read, as the documented relabelling leaves them
    sent = query(api, N.host_rdma_sent)
    assert sent and all(
        s["device"] == "gpu01" and s["hca"] == "mlx5_0" and s["port"] == "1" and "exported_device" not in s
        for s in sent
    )
    for name in (N.host_in_errors, N.host_in_packets, N.host_speed_bytes):
        assert {(s["device"], s["port"]) for s in query(api, f'{name}{{port="ens1f0np0"}}')} == {
            ("gpu01", "ens1f0np0")
        }, name
    if hw_counters:
        for name in (N.host_rdma_timeouts, N.host_cnp_sent, N.host_ecn_marked):
            assert query(api, name), name
    info = query(api, f'{N.device_info}{{device="leaf1"}}')
    assert info and info[0]["role"] == "leaf" and info[0]["job"] == "fabconf"
    assert query(api, f'{N.drift}{{device="gpu01"}}')
