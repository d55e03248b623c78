"""GPU hosts with ConnectX NICs, configured over SSH.

fabconf's facts about the platform, with their sources: its row of the registry (fabconf.platforms) and
where it can do each optional feature. Source tags as in fabconf/platforms.py."""

from __future__ import annotations

import re

from fabconf.platforms import Candidate, Kind, Platform, Revert, register

PLATFORM = Platform(
    name="linux",
    label="Linux",
    kind=Kind.HOST,
    description="GPU host with ConnectX NICs (SSH)",
    driver="fabconf.platform.linux.driver:LinuxDriver",
    connection_section="netmiko",
    default_port=22,
    candidate=Candidate.HOST_STATE,
    revert=Revert.CHECKPOINT,  # hosts have no commit timer; the driver keeps a checkpoint on the host
    merge_diff_from_device=True,
    suffix=".yaml",
    qos_dialect="host",
    # host MTU limits are not checked per platform: mtu.host <= every switch port MTU is the rule that matters
    port_pattern=re.compile(r"^[A-Za-z0-9_.-]{1,15}$"),  # [V] Linux IFNAMSIZ 16 incl. NUL (linux/if.h)
    # source of truth (fabconf sot: what each field means is in fabconf/platforms.py)
    mgmt_interface="mgmt0",
    manufacturer="Generic",
    network_driver="linux",  # [3P: netutils lib_mapper] Nautobot's network_driver name
)

register(PLATFORM)
