"""SONiC simulator: CONFIG_DB and the Generic Config Updater's commands over SSH (SCP for the patch file), the YANG
models' refusals in GCU's words, and the show commands verify, drift and preflight read."""

import json

from fabconf_lab.registry import LabPlatform, register


def metric_sources(running: str) -> frozenset[str]:
    """The metric sources a CONFIG_DB enables: [U] the SNMP agent while ``SNMP_COMMUNITY`` or ``SNMP_USER`` has an
    entry (sonic-snmp.yang's tables; the snmp container's own defaults are not modelled); the gNMI server while
    ``GNMI|gnmi`` names a port (sonic-gnmi.yang's table, what fabconf renders) [U: the gnmi container's FEATURE
    state and its built-in default port are not modelled]."""
    db = json.loads(running) or {}
    sources = {"snmp"} if db.get("SNMP_COMMUNITY") or db.get("SNMP_USER") else set()
    if ((db.get("GNMI") or {}).get("gnmi") or {}).get("port"):
        sources.add("gnmi")
    return frozenset(sources)


register(
    LabPlatform(
        platform="sonic",
        simulator=("fabconf_lab.sonic.sim", "SonicSim"),
        services=("ssh",),
        port_args=(("ssh_port", "ssh"),),
        exporter="switch",
        metric_sources=metric_sources,
    )
)
