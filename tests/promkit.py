"""Shared by the tests that run Debian's real ``prometheus`` and ``prometheus-node-exporter``: the binaries,
free ports, starting and stopping them, and reading Prometheus's HTTP API."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

NODE_EXPORTER = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
needs_prometheus = pytest.mark.skipif(
    not (NODE_EXPORTER and PROMETHEUS and PROMTOOL),
    reason="needs Debian's prometheus and prometheus-node-exporter packages",
)
DEADLINE_S = 90  # how long alerts may take to fire (they need seconds; the machine may be slow)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def textfile_exporter(directory: Path, port: int) -> list[str]:
    """node_exporter as on the Prometheus host: only the textfile collector, reading fabconf's files."""
    return [
        str(NODE_EXPORTER),
        "--collector.disable-defaults",
        "--collector.textfile",
        f"--collector.textfile.directory={directory}",
        f"--web.listen-address=127.0.0.1:{port}",
    ]


def prometheus(config: Path, data: Path, port: int) -> list[str]:
    return [
        str(PROMETHEUS),
        f"--config.file={config}",
        f"--storage.tsdb.path={data}",
        f"--web.listen-address=127.0.0.1:{port}",
    ]


def check_config(config: Path) -> None:
    checked = subprocess.run([str(PROMTOOL), "check", "config", str(config)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def version(binary: str) -> tuple[int, ...]:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True)
    found = re.search(r"version (\d+)\.(\d+)\.(\d+)", out.stdout + out.stderr)
    return tuple(int(x) for x in found.groups()) if found else (0, 0, 0)


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def firing(api: str) -> list[dict[str, str]]:
    try:
        alerts = get(f"{api}/alerts")["data"]["alerts"]
    except OSError:
        return []
    return [a["labels"] for a in alerts if a["state"] == "firing"]


def query(api: str, expr: str) -> list[dict[str, str]]:
    try:
        result = get(f"{api}/query?query={urllib.parse.quote(expr)}")["data"]["result"]
    except OSError:
        return []
    return [r["metric"] for r in result]


def has(alerts: list[dict[str, str]], want: dict[str, str]) -> bool:
    return any(all(a.get(k) == v for k, v in want.items()) for a in alerts)


def wait_firing(
    api: str, wanted: list[dict[str, str]], log: Path, step: Callable[[], None] = lambda: None
) -> list[dict[str, str]]:
    """Until every wanted alert has fired (``step`` between looks); fails naming the missing ones. Returns every
    alert seen firing at any look: a one-event alert (the PFC watchdog's) may resolve before a slower one fires."""
    deadline = time.monotonic() + DEADLINE_S
    alerts: list[dict[str, str]] = []
    while time.monotonic() < deadline:
        step()
        alerts += [a for a in firing(api) if a not in alerts]
        if all(has(alerts, w) for w in wanted):
            return alerts
        time.sleep(0.5)
    missing = [w for w in wanted if not has(alerts, w)]
    tail = log.read_text()[-2000:] if log.exists() else ""
    raise AssertionError(f"not firing: {missing}\nfiring: {alerts}\nprometheus log tail:\n{tail}")


def quiet_for(api: str, seconds: float) -> None:
    """No alert fires at any look for ``seconds`` (a healthy fabric); fails naming what fired."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alerts = firing(api)
        assert not alerts, f"fired on a healthy fabric: {alerts}"
        time.sleep(0.5)


def wait_until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")
