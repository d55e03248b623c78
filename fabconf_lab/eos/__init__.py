"""Arista EOS simulator: eAPI, config sessions with commit timers, flash rollback files."""

from fabconf_lab.registry import LabPlatform, register

register(
    LabPlatform(
        platform="eos",
        simulator=("fabconf_lab.eos.sim", "EosSim"),
        services=("https",),
        port_args=(("port", "https"),),  # its eAPI
        exporter="switch",
    )
)
