"""Arista EOS, configured through eAPI (NAPALM eos) with fabconf's staging.

fabconf's facts about the platform, with their sources: its row of the registry (fabconf.platforms) and
where it can do each optional feature. Source tags as in fabconf/platforms.py."""

from __future__ import annotations

import re

from fabconf.platforms import CLI_COMMON as _CLI_COMMON
from fabconf.platforms import Candidate, Feature, Kind, Platform, Revert, register

PLATFORM = Platform(
    name="eos",
    label="EOS",
    kind=Kind.SWITCH,
    description="Arista EOS (eAPI, NAPALM eos)",
    driver="napalm:eos",
    connection_section="napalm",
    default_port=None,
    candidate=Candidate.CLI,
    revert=Revert.TIMER,  # [V] configure session ... commit timer (docs/reference/roce-lossless.md §11)
    merge_diff_from_device=True,  # the config session's own diff
    suffix=".cfg",
    qos_dialect="eos_cli",
    owned=(
        *_CLI_COMMON,
        r"qos map .*",
        r"qos profile FABCONF_\S+",
        r"priority-flow-control .*",
        r"ip routing",
        r"interface Loopback0",
    ),
    remediation="ARISTA_EOS",
    # the timed commit checks its base in its own request (issue #43)
    wrapper="fabconf.drivers.cli.eos_guard:EosTimerDriver",
    owned_when_rendered=(r"management api gnmi",),
    management=(
        r"management .+",
        r"username \S+ .+",
        r"aaa .+",
        r"no aaa root",
        r"enable (password|secret) .+",
        r"interface Management\d+(/\d+)?",
        r"vrf instance \S+",
        r"ip route vrf \S+ .+",
        r"ip (name-server|domain[- ]name) .+",
        r"dns domain \S+",
        # the operator's monitoring and time: a replace never removes the SNMP agent the switch metrics are
        # read through (issue 38), nor NTP and syslog
        r"snmp-server .+",
        r"ntp .+",
        r"logging .+",
    ),
    # [U] EOS L3 MTU maximum 9214 (the reference's sample uses 9214); maximum-paths up to 128.
    # [U] EOS takes internal VLANs for routed ports (fabconf's uplinks) from 1006-1199 by default
    # (`vlan internal order ascending range 1006 1199`); a training VLAN there can collide with one.
    # ECN thresholds are rendered in kbytes when they divide evenly, else bytes (units explicit).
    min_mtu=68,
    max_mtu=9214,
    max_ecmp=128,
    port_pattern=re.compile(r"^Ethernet\d+(/\d+){0,2}$"),
    reserved_vlans=((1006, 1199),),
    default_version="4.32.2F",
    release_lines=(("4.28", "4.34", "4.28"),),  # [U] the CLI fabconf renders is unchanged from 4.28 to 4.34
    # [3P] (docs/reference/roce-lossless.md §9) the egress queue command differs by switching silicon: Strata-based
    # switches take `uc-tx-queue N`, Sand-based (Jericho) ones `tx-queue N`
    hardware_families=(
        (r"(DCS-)?7(050|060|260|300|358|368|388)", "strata"),  # 7050X, 7060X, 7260X, 7300X, 7358X...
        (r"(DCS-)?7(020|280|500|800)", "sand"),  # 7020R, 7280R/R2/R3, 7500R, 7800R
    ),
    # [V: AVD schema] watchdog timers take at most two decimals of a second
    watchdog_step_ms=10,
    # [V: AVD eos_cli_config_gen schema, priority_flow_control.watchdog.action: drop | no-drop, rendered as the
    # global `priority-flow-control pause watchdog action`] (docs/reference/roce-lossless.md §2.1). errdisable (the
    # default) and notify-only are the per-port action's words (`... watchdog port action drop | notify-only`) [V: AVD
    # qos_profiles schema], which fabconf does not render; what no-drop does on a stuck queue is [U]
    watchdog_actions=("drop", "no-drop"),
    design="fabconf.platform.eos.design",  # its QoS builder, device-data type, chain reader and checks
    # source of truth (fabconf sot: what each field means is in fabconf/platforms.py)
    mgmt_interface="Management1",
    loopback_interface="Loopback0",
    manufacturer="Arista",
    network_driver="arista_eos",  # [3P: netutils lib_mapper] Nautobot's network_driver name
)

# feature -> where this platform can do it (fabconf.platforms.FEATURES)
FEATURES: dict[str, Feature] = {
    # [V] Arista TOI "Dynamic Load Balancing" (EOS 4.30.2F, ECMP groups) names the feature; its commands are not
    # in any source fabconf could verify [U], so fabconf renders none.
    "adaptive": Feature(
        unsupported="EOS dynamic load balancing (EOS 4.30.2F and later) has no command form fabconf can verify, so "
        "fabconf does not render it; set data.load_balancing: ecmp on this switch"
    ),
    # [V: AVD eos_cli_config_gen `management api gnmi` / `transport grpc <name>` / `port` / `ssl profile`]; a
    # transport without an ssl profile serves plain gRPC [U: Arista's public gNMI examples dial it with --insecure]
    "telemetry": Feature(plain_without_tls=True),
}

register(PLATFORM, FEATURES)
