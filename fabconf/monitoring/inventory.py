"""The inventory as Prometheus series (a textfile for node_exporter's textfile collector on the Prometheus host,
or any scraped file): ``fabconf_device_info{device, role, pod, platform} 1`` for the alerts' role and pod labels,
and ``fabconf_port_intended_speed_bytes{device, port}`` (bytes/s, as node_exporter's ``node_network_speed_bytes``:
Prometheus's naming convention has bytes, not bits, as the base unit) for every cabled switch port and GPU NIC."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Gauge, generate_latest

from fabconf.compile.pipeline import Compiled
from fabconf.monitoring.names import Names


def registry(compiled: Compiled, names: Names) -> CollectorRegistry:
    reg = CollectorRegistry()
    info = Gauge(
        names.device_info, "a device of the fabconf inventory", ["device", "role", "pod", "platform"], registry=reg
    )
    speed = Gauge(
        names.intended_speed, "the speed a port's link is designed for (bytes/s)", ["device", "port"], registry=reg
    )
    for name, device in sorted(compiled.model.devices.items()):
        data = compiled.data.get(name) or {}
        info.labels(name, device.role, str(data.get("pod") or device.data.get("pod") or ""), device.platform).set(1)
        for itf in data.get("interfaces", []):
            peer, _, peer_port = str(itf.get("peer", "")).partition(":")
            if peer:
                gbps = compiled.model.link_speed(name, itf["name"], peer, peer_port)
                speed.labels(name, itf["name"]).set(gbps * 1_000_000_000 // 8)
        for nic in data.get("nics", []):
            speed.labels(name, nic["netdev"]).set(int(nic.get("speed_gbps") or 400) * 1_000_000_000 // 8)
    return reg


def as_text(compiled: Compiled, names: Names) -> str:
    return generate_latest(registry(compiled, names)).decode()
