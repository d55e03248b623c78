"""Cisco NX-OS on Nexus 9000 switches, configured through NX-API (NAPALM nxos) with fabconf's staging.

fabconf's facts about the platform, with their sources: its row of the registry (fabconf.platforms) and
where it can do each optional feature. Source tags as in fabconf/platforms.py."""

from __future__ import annotations

import re

from fabconf.platforms import CLI_COMMON as _CLI_COMMON
from fabconf.platforms import Candidate, Feature, Kind, Platform, Revert, register

PLATFORM = Platform(
    name="nxos",
    label="NX-OS",
    kind=Kind.SWITCH,
    description="Cisco NX-OS (NX-API, NAPALM nxos)",
    driver="napalm:nxos",
    connection_section="napalm",
    default_port=None,
    candidate=Candidate.CLI,
    # [V] napalm nxos has no commit-confirm (docs/reference/roce-lossless.md §11); fabconf's wrapper uses NX-OS's
    # own `configure replace ... commit-timeout` (9.3(1)+) so an unconfirmed commit reverts on the switch
    revert=Revert.TIMER,
    # [V] Cisco Nexus 9000 System Management guide, "Configure Replace": commit-timeout 30-3600 s (a longer
    # --confirm-timeout is capped at 3600 by the driver; a shorter one would be refused by the switch at commit)
    confirm_timeout_s=(30, 3600),
    merge_diff_from_device=False,  # napalm's NX-OS merge diff omits negations: show the remediation
    suffix=".cfg",
    qos_dialect="nxos_cli",
    owned=(
        *_CLI_COMMON,
        r"feature (bgp|interface-vlan|lldp)",
        r"system jumbomtu \d+",
        r"class-map type qos match-\S+ FABCONF_\S+",
        r"policy-map type \S+ FABCONF_\S+",
        r"system qos",
        r"priority-flow-control .*",
        r"interface loopback0",
        r"hardware profile dlb",
    ),
    remediation="CISCO_NXOS",
    owned_when_rendered=(r"feature grpc", r"grpc .+"),
    management=(
        r"feature (nxapi|ssh|scp-server|sftp-server|tacacs\+|grpc)",
        r"nxapi .+",
        r"username \S+ .+",
        r"interface mgmt0",
        r"vrf context management",
        r"ssh .+",
        r"aaa .+",
        r"role .+",
        r"ip (domain-name|name-server) .+",
        r"line (console|vty)",
        # the operator's monitoring and time (issue 38): SNMP agent, NTP and syslog survive a replace
        r"feature ntp",
        r"snmp-server .+",
        r"ntp .+",
        r"logging .+",
    ),
    wrapper="fabconf.platform.nxos.nxos_replace:NxosTimerDriver",
    # [V] NX-OS interface / network-qos / system jumbomtu 9216; ECN thresholds in kbytes.
    # [U] maximum-paths 1-64.
    # [V] Cisco Nexus 9000 Layer 2 Switching Configuration Guide, "VLAN ranges": 3968-4047 and 4094 are
    # allocated for internal use; the reserved block (default 3968-4094, moved with `system vlan N reserve`)
    # is refused as a whole here.
    min_mtu=576,
    max_mtu=9216,
    max_ecmp=64,
    port_pattern=re.compile(r"^Ethernet\d+/\d+(/\d+)?$"),
    reserved_vlans=((3968, 4094),),
    ecn_unit_bytes=1000,
    default_version="10.3(4a)",
    release_lines=(("9.3", "10.5", "9.3"),),  # [U] the CLI fabconf renders is unchanged from 9.3 to 10.5
    # [V: Cisco Nexus 9000 NX-OS QoS Configuration Guide 10.5(x), "Configuring Priority Flow Control"] the watchdog
    # is `priority-flow-control watch-dog-interval on`, an interval and a shutdown multiplier (the queue is shut
    # after interval x multiplier), with a 100 ms poll timer; Cisco's NDFC fabric setting takes 101-1000 ms with
    # a 100 ms default [3P: CiscoDevNet ndfc Terraform provider, pfc_watch_int].
    watchdog_polling_ms=(100, 1000),  # [U] `priority-flow-control watch-dog interval` range 100-1000 ms
    watchdog_multiple=(1, 10),  # [U] `priority-flow-control watch-dog shutdown-multiplier` range 1-10
    design="fabconf.platform.nxos.design",  # its QoS builder, device-data type, chain reader and checks
    # source of truth (fabconf sot: what each field means is in fabconf/platforms.py)
    mgmt_interface="mgmt0",
    loopback_interface="loopback0",
    manufacturer="Cisco",
    network_driver="cisco_nxos",  # [3P: netutils lib_mapper] Nautobot's network_driver name
)

# feature -> where this platform can do it (fabconf.platforms.FEATURES)
FEATURES: dict[str, Feature] = {
    # [V] Cisco Nexus 9000 NX-OS Unicast Routing Configuration Guide 10.5(x), "Configure Dynamic Load Balancing"
    # (Layer 3 ECMP DLB, with RoCE, PFC and ECN in AI/ML back-end fabrics); flowlet is the default mode [V: Cisco
    # Nexus 9000 QoS Configuration Guide 10.6(x), "Policy-driven Dynamic Load Balancing"]. [3P] first in 10.5(1)F on
    # some Cloud Scale switches. Which models: the guide names "the supported Nexus 9000 switches" without a list in
    # any copy fabconf could read (issue 38); fabconf's list, the 9300-GX2 and 9300-H2R/H1 Cloud Scale switches that
    # Cisco's AI/ML fabric material shows, is a guess [U: DLB model list], so another model is a warning at validate,
    # not a refusal. Command form
    # `hardware profile dlb` / `dlb-interface <ports>` [3P: Cisco pyATS genielibs nxos dlb conf; a published
    # example]; it takes effect after `copy running-config startup-config` and a reload [3P: the switch lists it
    # under `show system config reload-pending`].
    "adaptive": Feature(
        min_version="10.5(1)F",
        likely_models=r"N9K-C93\d+[A-Z]*-(GX2A|GX2B|H2R|H1)$",
        likely_source="Cisco lists the Nexus 9000 models with DLB in its 10.5(x) unicast routing guide, which fabconf "
        "has not verified; fabconf expects it on 9300-GX2, -H2R and -H1 switches",
    ),
    # [V] Cisco Nexus 9000 NX-OS Programmability Guide (9.3(x), 10.x), "gNMI" and "gRPC Agent": gNMI dial-in from
    # 9.3(1); `feature grpc`, `grpc port`, `grpc certificate <trustpoint>`
    "telemetry": Feature(min_version="9.3(1)"),
}

register(PLATFORM, FEATURES)
