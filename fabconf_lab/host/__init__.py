"""GPU host simulator: a shell over SSH with stateful ConnectX tools (mlnx_qos, mlxconfig, sysfs, systemd)."""
