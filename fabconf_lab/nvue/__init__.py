"""NVIDIA Cumulus Linux simulator: NVUE REST revisions, apply and confirm, the nv CLI over SSH."""

from fabconf_lab.registry import LabPlatform, register

register(
    LabPlatform(
        platform="cumulus",
        simulator=("fabconf_lab.nvue.sim", "NvueSim"),
        services=("https", "ssh"),
        port_args=(("port", "https"), ("ssh_port", "ssh")),  # NVUE REST, and SSH for the nv CLI
        exporter="switch",
        https_port=8765,  # NVUE's REST port, unprivileged already: the same in every per-address layout
        snmp_pfc=True,
    )
)
