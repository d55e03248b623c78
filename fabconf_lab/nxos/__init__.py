"""Cisco NX-OS simulator: NX-API, checkpoints and rollback, SSH + SCP, configure replace with a commit timeout."""

import re

from fabconf_lab.registry import LabPlatform, register

# [U] the lab's SNMP agent answers while a community or a user is configured (a real NX-OS runs its agent with the
# admin user by default; the lab's brownfield config carries a community); the gNMI server runs with ``feature
# grpc`` [V: Cisco Nexus 9000 Programmability Guide, "gRPC Agent"]
_SNMP_AGENT = re.compile(r"^snmp-server (?:community|user) ", re.M)
_GNMI = re.compile(r"^feature grpc\s*$", re.M)


def metric_sources(running: str) -> frozenset[str]:
    """The metric sources an NX-OS running-config enables (``LabPlatform.metric_sources``)."""
    found = {"snmp"} if _SNMP_AGENT.search(running) else set()
    return frozenset(found | ({"gnmi"} if _GNMI.search(running) else set()))


register(
    LabPlatform(
        platform="nxos",
        simulator=("fabconf_lab.nxos.sim", "NxosSim"),
        services=("https", "ssh"),
        port_args=(("port", "https"), ("ssh_port", "ssh")),  # NX-API, and SSH for NAPALM's SCP
        exporter="switch",
        metric_sources=metric_sources,
    )
)
