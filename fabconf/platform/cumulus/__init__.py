"""Cumulus Linux 5.x on NVIDIA Spectrum switches, configured through the NVUE REST API.

fabconf's facts about the platform, with their sources: its row of the registry (fabconf.platforms) and
where it can do each optional feature. Source tags as in fabconf/platforms.py."""

from __future__ import annotations

import re

from fabconf.platforms import Candidate, Feature, Kind, Platform, Revert, register

PLATFORM = Platform(
    name="cumulus",
    label="Cumulus",
    kind=Kind.SWITCH,
    description="NVIDIA Spectrum, Cumulus Linux 5.x (NVUE REST API)",
    driver="fabconf.platform.cumulus.driver:CumulusDriver",
    connection_section="nvue",
    default_port=8765,  # [V] NVUE REST API port (docs/reference/roce-lossless.md §1.5)
    candidate=Candidate.NVUE_TREE,
    revert=Revert.TIMER,  # [U] `nv config apply --confirm <N>s` over SSH (CLI form unverified)
    merge_diff_from_device=True,
    suffix=".yaml",
    qos_dialect="nvue",
    management=(
        "interface/eth0",
        "vrf/mgmt",
        "system/api",
        "system/aaa",
        "system/ssh-server",
        "system/gnmi-server",
        "service",
        # the operator's SNMP agent, NTP and syslog (5.13 and later keep them under system) [V: nvueschema 5.15
        # NvueConfigSystem: snmp-server, ntp, syslog]; a replace never removes them (issue 38)
        "system/snmp-server",
        "system/ntp",
        "system/syslog",
    ),
    owned=(
        "system/hostname",
        "interface/*",
        "bridge/domain/br_default/vlan",
        "qos",
        "router/bgp",
        "router/adaptive-routing",  # load_balancing intent (ecmp: off)
        "vrf/default/router/bgp",
    ),
    owned_when_rendered=("system/gnmi-server",),
    # [V] NVUE link mtu 552-9216; multipaths ebgp 1-128; reserved internal VLANs 3725-3999 and L3-VNI
    # VLANs 4000-4064 (defaults). ECN thresholds in bytes.
    min_mtu=552,
    max_mtu=9216,
    max_ecmp=128,
    port_pattern=re.compile(r"^swp\d+(s\d+)?$"),
    reserved_vlans=((3725, 3999), (4000, 4064)),
    # [V: nvueschema] 5.15 renamed interface `ip` to `ipv4` and `enable: on` to `state: enabled`; the tree
    # fabconf renders is one of two lines, each checked against NVIDIA's schema of a release in it
    default_version="5.12.0",
    release_lines=(("5.9", "5.14", "5.9"), ("5.15", "5.15", "5.15")),
    # [V: nvueschema 0.1.0, models v5_16, v5_17, v5_18] the 5.15-line trees fabconf renders validate unchanged on
    # the 5.16, 5.17 and 5.18 schemas (tests/unit/compile/test_render.py), so `assume_release: "5.15"` fits them
    watchdog_polling_ms=(100, 5000),  # [V: nvueschema 5.12] qos pfc-watchdog polling-interval 100-5000 ms
    # [V: nvueschema 5.12] robustness 1-1000, "number of consecutive polling-interval to detect pause storm
    # before taking action"
    watchdog_multiple=(1, 1000),
    max_ecmp_by_line=(("5.15", 256),),  # [V: nvueschema 5.15] multipaths ebgp 1-256 (5.12: 1-128)
    design="fabconf.platform.cumulus.design",  # its QoS builder, device-data type, chain reader and checks
    # source of truth (fabconf sot: what each field means is in fabconf/platforms.py)
    mgmt_interface="eth0",
    loopback_interface="lo",
    manufacturer="NVIDIA",
    network_driver="cumulus_linux",  # [3P: netutils lib_mapper] Nautobot's network_driver name
    snmp_modules=("fabconf_cumulus_pfc",),  # monitoring: its PFC counters (fabconf/monitoring/names.py)
)

# feature -> where this platform can do it (fabconf.platforms.FEATURES)
FEATURES: dict[str, Feature] = {
    # [V] NVUE reference, "Adaptive Routing" (set and show commands): `interface <swp> router adaptive-routing` and
    # `router adaptive-routing`, introduced in 5.1; "Cumulus Linux 5.6 supports adaptive routing on Spectrum-4;
    # 5.5 and earlier on Spectrum-3 and Spectrum-2 as a beta feature"; not on subinterfaces, SVIs, bonds or bond
    # members; 5.14 and earlier spell it `enable on`, 5.15 `state enabled` (also nvueschema 5.12 / 5.15).
    # Spectrum-4 models: SN5600, SN5400 [V: NVIDIA Spectrum-4 switch family]. Later ASICs are not listed [U].
    # Port speeds (issue 38): a review read the adaptive-routing page as covering 400G and 200G ports, not 800G
    # ports of Spectrum-4; no NVIDIA page fabconf could read names the speeds [U: adaptive routing port speeds]. AR is
    # rendered only on switch-to-switch ports, which fabconf models at 400G (compile/model.py DEFAULT_LINK_SPEED):
    # nothing fabconf renders asks for it on an 800G port, so validate has nothing to refuse or warn about.
    "adaptive": Feature(models=r"SN5[46]00", hardware="adaptive routing is supported on Spectrum-4"),
    # [V] NVIDIA Cumulus Linux 5.13 "gNMI Streaming": `nv set system gnmi-server listening-address|port|state`,
    # default port 9339, not on Spectrum-1; nvueschema 5.13 is the first release with system/gnmi-server and takes
    # port 1024-65535 (5.12's user guide documents only the NetQ agent's gNMI).
    "telemetry": Feature(
        min_version="5.13",
        not_models=r"SN2(010|100|201|410|700)",
        hardware="Spectrum-1 switches have no gNMI server",
        port_range=(1024, 65535),
        # [V] NVIDIA Cumulus Linux 5.13-5.19 "gNMI Streaming", Configure gNMI Dial-in Mode: "you must specify the
        # gNMI server listening address" and enable the server; nvueschema 5.15 system/gnmi-server/listening-address
        # is a set of addresses. fabconf renders the management address (the inventory's hostname).
        listening_address=True,
    ),
}

register(PLATFORM, FEATURES)
