"""Arista EOS simulator: eAPI, config sessions with commit timers, flash rollback files."""

import re

from fabconf_lab.registry import LabPlatform, register

# [U] the SNMP agent answers once a community or a v3 user is configured (EOS runs no agent on a factory config);
# the gNMI server runs while ``management api gnmi`` has a ``transport grpc`` and no ``shutdown`` in it
# [V: AVD eos_cli_config_gen management-api-gnmi: transport grpc NAME, shutdown per transport]
_SNMP_AGENT = re.compile(r"^snmp-server (?:community|user) ", re.M)
_GNMI = re.compile(r"^management api gnmi\n((?:[ \t]+.*\n?)*)", re.M)


def metric_sources(running: str) -> frozenset[str]:
    """The metric sources an EOS running-config enables (``LabPlatform.metric_sources``)."""
    found = {"snmp"} if _SNMP_AGENT.search(running) else set()
    block = _GNMI.search(running)
    body = block.group(1) if block else ""
    if re.search(r"^\s+transport grpc \S+", body, re.M) and not re.search(r"^\s+shutdown\s*$", body, re.M):
        found.add("gnmi")
    return frozenset(found)


register(
    LabPlatform(
        platform="eos",
        simulator=("fabconf_lab.eos.sim", "EosSim"),
        services=("https",),
        port_args=(("port", "https"),),  # its eAPI
        exporter="switch",
        metric_sources=metric_sources,
    )
)
