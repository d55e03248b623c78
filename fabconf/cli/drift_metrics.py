"""The drift run as Prometheus metrics, for node_exporter's textfile collector (built with ``prometheus-client``
in a registry of its own; written atomically by ``write_to_textfile``).

Series (labels ``device``, ``platform``, ``role``):
- ``fabconf_drift_device_state{state}``: 1 for the device's state (in_sync, drifted, unreachable, failed), 0
  for the others;
- ``fabconf_drift_drifted``: 1 drifted, 0 in sync; absent for a device that could not be checked;
- ``fabconf_drift_section_drifted{section}``: per section, 1 when it drifted; only for checked devices;
- ``fabconf_drift_reachable``: 0 when fabconf could not connect or authenticate;
- ``fabconf_drift_unmanaged_changes``: settings changed since the last backup outside what fabconf owns;
and per run ``fabconf_drift_devices{state}``, ``fabconf_drift_last_run_timestamp_seconds``,
``fabconf_drift_run_duration_seconds`` and ``fabconf_drift_exit_code``.
"""

from __future__ import annotations

from pathlib import Path

from prometheus_client import CollectorRegistry, Gauge, generate_latest, write_to_textfile

from fabconf.cli.drift_report import DriftRun
from fabconf.deploy.drift import DriftState, summary
from fabconf.deploy.sections import SECTIONS

DEVICE = ("device", "platform", "role")


def registry_for(run: DriftRun) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=True)

    def gauge(name: str, doc: str, labels: tuple[str, ...] = ()) -> Gauge:
        return Gauge(name, doc, list(labels), registry=registry)

    state = gauge("fabconf_drift_device_state", "1 for the device's drift state, 0 for the others", (*DEVICE, "state"))
    drifted = gauge(
        "fabconf_drift_drifted",
        "1 when a dry-run push would change the device, 0 in sync (absent: not checked)",
        DEVICE,
    )
    section = gauge(
        "fabconf_drift_section_drifted", "1 when this owned section of the device drifted", (*DEVICE, "section")
    )
    reachable = gauge("fabconf_drift_reachable", "0 when fabconf could not connect to the device", DEVICE)
    unmanaged = gauge(
        "fabconf_drift_unmanaged_changes", "settings changed since the last backup outside what fabconf owns", DEVICE
    )
    for d in run.devices:
        labels = (d.device, d.platform, d.role)
        for s in DriftState:
            state.labels(*labels, str(s)).set(1 if d.state is s else 0)
        reachable.labels(*labels).set(0 if d.state is DriftState.UNREACHABLE else 1)
        if d.state.checked:
            drifted.labels(*labels).set(1 if d.state is DriftState.DRIFTED else 0)
            for name in SECTIONS:
                section.labels(*labels, name).set(1 if name in d.sections else 0)
            unmanaged.labels(*labels).set(len(d.unmanaged))
    devices = gauge("fabconf_drift_devices", "devices per drift state in the last run", ("state",))
    for name, count in summary(run.devices).items():
        devices.labels(name).set(count)
    gauge("fabconf_drift_last_run_timestamp_seconds", "when the last drift run started (Unix time)").set(run.started)
    gauge("fabconf_drift_run_duration_seconds", "how long the last drift run took").set(round(run.duration, 3))
    gauge("fabconf_drift_exit_code", "0 in sync, 2 drift found, 1 a device could not be checked").set(run.exit_code)
    return registry


def as_text(run: DriftRun) -> str:
    return generate_latest(registry_for(run)).decode("utf-8")


def write(run: DriftRun, path: Path) -> None:
    """Atomically (a temporary file, then a rename), as the textfile collector needs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_to_textfile(str(path), registry_for(run))
