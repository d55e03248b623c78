"""GPU host simulator: a shell over SSH with stateful ConnectX tools (mlnx_qos, mlxconfig, sysfs, systemd)."""

from fabconf_lab.registry import LabPlatform, register

register(
    LabPlatform(
        platform="linux",
        simulator=("fabconf_lab.host.sim", "GpuHostSim"),
        services=("ssh",),
        port_args=(("port", "ssh"),),
        exporter="host",
        connection_extras={"device_type": "linux"},  # netmiko's device type
    )
)
