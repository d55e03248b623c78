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
from datetime import datetime
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


def pending(api: str) -> list[dict[str, str]]:
    """The labels of every alert pending or firing."""
    try:
        alerts = get(f"{api}/alerts")["data"]["alerts"]
    except OSError:
        return []
    return [a["labels"] for a in alerts]


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


def query_at(api: str, expr: str, at: float) -> list[dict[str, Any]]:
    """An instant query evaluated at ``at`` (Unix seconds): each series' labels and value."""
    url = f"{api}/query?query={urllib.parse.quote(expr)}&time={at:.3f}"
    return [{**r["metric"], "__value__": r["value"][1]} for r in get(url)["data"]["result"]]


def rules(api: str) -> list[dict[str, Any]]:
    """Every alerting rule as the rules API reports it (name, state, health, its group's last evaluation)."""
    out: list[dict[str, Any]] = []
    for group in get(f"{api}/rules?type=alert")["data"]["groups"]:
        out += [{**r, "group_last": group.get("lastEvaluation", "")} for r in group["rules"]]
    return out


def quiet_window(api: str, seconds: int, scrape_misses: tuple[str, ...] = ()) -> float:
    """Nothing firing, and nothing pending, for ``seconds`` of real rule evaluation; returns the window's end (Unix
    seconds). ``scrape_misses``: alerts that may go pending (never firing) when one scrape misses its timeout on a
    loaded machine, which their ``for`` hold is there to absorb.

    Looks every second, failing at the first alert seen, then asks Prometheus's own record: ``ALERTS`` (a sample for
    every evaluation at which a rule was pending or firing) has no such sample in the window, and every rule is
    inactive, healthy, and was evaluated after the window ended."""
    end = time.time() + seconds
    while time.time() < end:
        alerts = get(f"{api}/alerts")["data"]["alerts"]
        loud = [(a["state"], a["labels"]) for a in alerts if _loud(a["state"], a["labels"], scrape_misses)]
        assert not loud, f"pending or firing on a healthy fabric: {loud}"
        time.sleep(1.0)
    tolerated = "|".join(scrape_misses) or "^$"
    for expr in (
        f'count_over_time(ALERTS{{alertstate="firing"}}[{seconds}s])',
        f'count_over_time(ALERTS{{alertstate="pending",alertname!~"{tolerated}"}}[{seconds}s])',
    ):
        seen = query_at(api, expr, end)
        assert not seen, f"during the quiet window, {expr}: {seen}"
    deadline = time.monotonic() + DEADLINE_S
    while not all(_evaluated_after(r, end) for r in rules(api)) and time.monotonic() < deadline:
        time.sleep(0.5)
    for rule in rules(api):
        assert rule["health"] == "ok", rule
        assert rule["state"] == "inactive" or (rule["state"] == "pending" and rule["name"] in scrape_misses), rule
        assert _evaluated_after(rule, end), f"{rule['name']} not evaluated since the window ended"
    return end


def _loud(state: str, labels: dict[str, str], scrape_misses: tuple[str, ...]) -> bool:
    return state == "firing" or labels.get("alertname") not in scrape_misses


def _evaluated_after(rule: dict[str, Any], at: float) -> bool:
    """The rule's (else its group's) last evaluation, an RFC 3339 time with Go's nanoseconds, is at or after ``at``."""
    stamp = str(rule.get("lastEvaluation") or rule.get("group_last") or "")
    m = re.match(r"^(\S+T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", stamp)
    if not m or stamp.startswith("0001"):
        return False
    zone = "+00:00" if m.group(3) == "Z" else m.group(3)
    parsed = datetime.fromisoformat(f"{m.group(1)}.{(m.group(2) or '0')[:6].ljust(6, '0')}{zone}")
    return parsed.timestamp() >= at


def wait_until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")
