"""NVIDIA Cumulus Linux simulator: NVUE REST revisions, apply and confirm, the nv CLI over SSH."""

import json

from fabconf_lab.registry import LabPlatform, register


def metric_sources(running: str) -> frozenset[str]:
    """The metric sources an applied NVUE tree (``nv config show -o json``) enables: the SNMP agent with ``system
    snmp-server state enabled`` [V: nvueschema 5.12 and 5.15 NvueConfigSystemSnmpServer: disabled by default], the
    gNMI server with ``system gnmi-server state enabled`` and a listening address [V: Cumulus Linux 5.13+ "gNMI
    Streaming": dial-in needs the listening address]."""
    system = (json.loads(running) or {}).get("system") or {}
    found = set()
    snmp = system.get("snmp-server")
    if isinstance(snmp, dict) and snmp.get("state") == "enabled":
        found.add("snmp")
    gnmi = system.get("gnmi-server")
    if isinstance(gnmi, dict) and gnmi.get("state") == "enabled" and gnmi.get("listening-address"):
        found.add("gnmi")
    return frozenset(found)


register(
    LabPlatform(
        platform="cumulus",
        simulator=("fabconf_lab.nvue.sim", "NvueSim"),
        services=("https", "ssh"),
        port_args=(("port", "https"), ("ssh_port", "ssh")),  # NVUE REST, and SSH for the nv CLI
        exporter="switch",
        https_port=8765,  # NVUE's REST port, unprivileged already: the same in every per-address layout
        snmp_pfc=True,
        metric_sources=metric_sources,
    )
)
