"""SONiC on Spectrum and Broadcom switches: CONFIG_DB through the Generic Config Updater, over SSH.

fabconf's facts about the platform, with their sources (docs/reference/sonic.md): its row of the registry
(fabconf.platforms) and where it can do each optional feature. Source tags as in fabconf/platforms.py."""

from __future__ import annotations

import re

from fabconf.platforms import Candidate, Feature, Kind, Platform, Revert, register

PLATFORM = Platform(
    name="sonic",
    label="SONiC",
    kind=Kind.SWITCH,
    description="SONiC (CONFIG_DB through the Generic Config Updater, over SSH)",
    driver="fabconf.platform.sonic.driver:SonicDriver",
    connection_section="netmiko",  # an SSH section: port and trust extras reach the driver (fabconf.drivers.factory)
    default_port=22,
    candidate=Candidate.CONFIG_DB,
    # [V: sonic-utilities config/main.py] GCU has no commit timer: fabconf takes a checkpoint and rolls back to it
    revert=Revert.CHECKPOINT,
    merge_diff_from_device=False,  # the staged JSON Patch, read as a diff (fabconf.platform.sonic.patch.describe)
    suffix=".json",
    qos_dialect="sonic_configdb",
    # owned: the tables and rows of fabconf.platform.sonic.patch (OWNED); the management plane (MGMT_INTERFACE,
    # AAA, features …) is never in a patch
    owned=(
        "INTERFACE",
        "LOOPBACK_INTERFACE",
        "BGP_NEIGHBOR",
        "VLAN",
        "VLAN_MEMBER",
        "VLAN_INTERFACE",
        "PORT_QOS_MAP",
        "QUEUE",
        "BUFFER_PG",
        "PFC_WD",
        "DSCP_TO_TC_MAP",
        "TC_TO_QUEUE_MAP",
        "TC_TO_PRIORITY_GROUP_MAP",
        "MAP_PFC_PRIORITY_TO_QUEUE",
        "WRED_PROFILE",
        "SCHEDULER",
        "PORT",
        "DEVICE_METADATA",
    ),
    management=("MGMT_INTERFACE", "MGMT_PORT", "MGMT_VRF_CONFIG", "AAA", "TACACS_SERVER", "SSH_SERVER", "FEATURE"),
    # [V: sonic-port.yang] PORT mtu 68..9216; [V: sonic-vlan.yang] VLAN 2..4094 (no reserved block in the model)
    min_mtu=68,
    max_mtu=9216,
    max_ecmp=64,  # the lab assumes SONiC's bgpd template "maximum-paths 64" (docs/reference/sonic.md)
    port_pattern=re.compile(r"^Ethernet\d+$"),
    ecn_unit_bytes=1,  # [V: sonic-wred-profile.yang] thresholds are uint64 in bytes
    default_version="202505",
    # the releases whose YANG models fabconf checks its CONFIG_DB against: sonic-buildimage master of 2026-08
    release_lines=(("202305", "202511", "202305"),),
    watchdog_polling_ms=(100, 1000),  # [V: sonic-pfcwd.yang] POLL_INTERVAL 100..1000 ms
    watchdog_step_ms=1,
    # [V: sonic-pfcwd.yang] PFC_WD action is drop, forward or alert: the intent's drop is SONiC's drop; no-drop has no
    # counterpart there (the YANG refuses it)
    watchdog_actions=("drop",),
    design="fabconf.platform.sonic.design",
    mgmt_interface="eth0",
    loopback_interface="Loopback0",
    manufacturer="SONiC",
    network_driver="sonic",
)

# feature -> where this platform can do it (fabconf.platforms.FEATURES)
FEATURES: dict[str, Feature] = {
    # [V: the file list of sonic-buildimage src/sonic-yang-models/yang-models at 086b03bd] no adaptive-routing model
    "adaptive": Feature(
        unsupported="SONiC's YANG models have no adaptive-routing table (no sonic-ars model at sonic-buildimage "
        "086b03bd), so the Generic Config Updater would refuse it"
    ),
    # [V: sonic-buildimage src/sonic-yang-models/yang-models/sonic-gnmi.yang (97adc9c1): CONFIG_DB GNMI|gnmi with
    # port, client_auth, user_auth]; the template renders it, the patch stages its fields (patch.FIELDS_ONLY)
    "telemetry": Feature(),
}

register(PLATFORM, FEATURES)
