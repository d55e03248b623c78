"""SONiC simulator: CONFIG_DB and the Generic Config Updater's commands over SSH (SCP for the patch file), the YANG
models' refusals in GCU's words, and the show commands verify, drift and preflight read."""

from fabconf_lab.registry import LabPlatform, register

register(
    LabPlatform(
        platform="sonic",
        simulator=("fabconf_lab.sonic.sim", "SonicSim"),
        services=("ssh",),
        port_args=(("ssh_port", "ssh"),),
        exporter="switch",
    )
)
