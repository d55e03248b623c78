"""Cisco NX-OS simulator: NX-API, checkpoints and rollback, SSH + SCP, configure replace with a commit timeout."""

from fabconf_lab.registry import LabPlatform, register

register(
    LabPlatform(
        platform="nxos",
        simulator=("fabconf_lab.nxos.sim", "NxosSim"),
        services=("https", "ssh"),
        port_args=(("port", "https"), ("ssh_port", "ssh")),  # NX-API, and SSH for NAPALM's SCP
        exporter="switch",
    )
)
