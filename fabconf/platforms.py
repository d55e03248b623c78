"""The one table of per-platform facts. No module outside this one and ``fabconf/drivers/`` compares a
platform name: everything else asks this table (``platform(name).kind``, ``.revert``, ``.suffix``, …).

Source tags: [V] verified in docs/reference/roce-lossless.md (or the reference named), [U] unverified
assumption stated here. Adding a platform means adding a row here, its driver, its templates and its lab
simulator; nothing in the deploy or CLI layers changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    SWITCH = "switch"
    HOST = "host"


class Candidate(StrEnum):
    """What a rendered configuration is, and so how a driver stages it."""

    CLI = "cli text"  # EOS / NX-OS configuration lines, staged as hier_config remediation in merge mode
    NVUE_TREE = "nvue tree"  # the NVUE object tree (startup.yaml form)
    HOST_STATE = "host state"  # the desired NIC state document of a GPU host


class Revert(StrEnum):
    """How a commit is undone when fabconf cannot confirm it."""

    TIMER = "device revert timer"  # the device reverts by itself unless confirmed (commit-confirm)
    CHECKPOINT = "checkpoint"  # fabconf rolls back from a checkpoint; nothing reverts if fabconf dies


@dataclass(frozen=True)
class Platform:
    name: str
    kind: Kind
    label: str  # the name people use in messages
    description: str
    # -- deploy ----------------------------------------------------------------------------------------------
    driver: str  # "napalm:<name>" (wrapped with hier_config staging) or "module:Class" of our own drivers
    connection_section: str  # the Nornir connection_options key whose port/extras reach the driver
    default_port: int | None  # None: the driver's own default
    candidate: Candidate
    revert: Revert
    merge_diff_from_device: bool  # merge mode: show the device's own diff (True) or the staged remediation
    # -- compile -----------------------------------------------------------------------------------------------
    suffix: str  # rendered file name suffix
    qos_dialect: str  # which design builder turns the RoCE intent into this platform's QoS terms
    # Owned sections: CLI root-line regexes (hier_config dialect ``remediation``) or NVUE paths ("a/*/c").
    owned: tuple[str, ...] = ()
    # Owned only when the rendered configuration sets them (CLI root-line regexes or NVUE paths): fabconf's form of
    # a management-plane service (the gNMI server) is staged in merge mode, and one it does not render is never
    # removed by a merge (replace keeps it through ``management``).
    owned_when_rendered: tuple[str, ...] = ()
    remediation: str | None = None  # hier_config Platform member name, for CLI candidates
    wrapper: str = ""  # napalm drivers: "module:Class" of the staging wrapper ("": chosen by ``revert``)
    # Replace mode never locks fabconf out: the management plane (CLI root-line regexes or NVUE paths) is kept
    # from the running configuration when the rendered one does not set it. [U] the lists are fabconf's choice.
    management: tuple[str, ...] = ()
    # -- limits ------------------------------------------------------------------------------------------------
    min_mtu: int = 0
    max_mtu: int = 0
    max_ecmp: int = 0
    port_pattern: re.Pattern[str] = re.compile(r"^\S+$")
    reserved_vlans: tuple[tuple[int, int], ...] = ()
    ecn_unit_bytes: int = 1  # ECN thresholds must be a multiple of this many bytes
    # -- releases and hardware ---------------------------------------------------------------------------------
    default_version: str = ""  # what design assumes (and the lab runs) when the inventory names no os_version
    # (first release, last release, line name): the release lines fabconf renders for, oldest first. A line ends at
    # the newest release fabconf knows (``version_key`` prefix: "5.15" takes 5.15.x): a release after it may change
    # the syntax, so it is refused at validate until a line names it, unless the device (or its group) sets
    # ``data.assume_release`` to a release of the newest line: a newer release of the same major version is then
    # rendered as that one, with a warning on every run (a new major release is never assumed).
    release_lines: tuple[tuple[str, str, str], ...] = ()
    # (model regex, family): hardware families whose configuration differs (first match wins)
    hardware_families: tuple[tuple[str, str], ...] = ()
    max_ecmp_by_line: tuple[tuple[str, int], ...] = ()  # release lines whose ECMP maximum differs from max_ecmp
    watchdog_polling_ms: tuple[int, int] = (1, 60000)  # accepted PFC watchdog polling interval
    watchdog_step_ms: int = 1  # watchdog timers are rendered in steps of this many ms
    # (lo, hi) polling intervals the watchdog acts after, where the platform takes a count rather than a timeout
    # (the intent's timeout must be that whole multiple of its polling interval); None: it takes the timeout itself
    watchdog_multiple: tuple[int, int] | None = None
    # --confirm-timeout the device's commit timer accepts, in seconds (revert-timer platforms)
    confirm_timeout_s: tuple[int, int] = (1, 86400)
    # seconds one device's push takes to prepare (connect, read, stage the diff), commit, verify and confirm, for
    # `fabconf push --plan` before any push to such a device is in the audit log: fabconf's planning defaults,
    # not a vendor's figures
    push_phases_s: tuple[float, float, float, float] = (3.0, 5.0, 15.0, 2.0)

    def release_line(self, version: str | None, assume: str | None = None) -> str:
        """The release line ``version`` (default: ``default_version``) belongs to; ValueError when fabconf does
        not render for it. ``assume`` (a device's ``data.assume_release``): a release fabconf knows on its newest
        line, that a newer ``version`` of the same major release is rendered as (``assumed`` says when it is)."""
        line = self._known_line(version)
        if line is not None:
            return line
        if self.assumed(version, assume):
            return self.release_lines[-1][2]
        known = self.known_releases()
        if assume:
            raise ValueError(f"{self.label} {version}: data.assume_release {assume} {self._assume_refusal(version)}")
        if self._newer_same_major(version):
            newest = self.release_lines[-1][1]
            raise ValueError(
                f"{self.label} {version} is newer than the releases fabconf renders for (known: {known}); if its "
                f'syntax is unchanged, set data.assume_release: "{newest}" to render it as {self.label} {newest}'
            )
        if self.release_lines[-1][1] and version_key(version or "")[:1] > version_key(self.release_lines[-1][1])[:1]:
            raise ValueError(
                f"{self.label} {version} is a new major release, which fabconf does not render for (known: {known})"
            )
        raise ValueError(f"{self.label} {version} is not a release fabconf renders for (known: {known})")

    def assumption(self, version: str, assume: str) -> str:
        """The warning every run gives for a release rendered as an assumed one (both named)."""
        return (
            f"{self.label} {version} is newer than the releases fabconf renders for; it is rendered as "
            f"{self.label} {assume} (data.assume_release), which is right only if {version} kept {assume}'s syntax"
        )

    def known_releases(self) -> str:
        """The releases fabconf renders for, in words (``5.9-5.14, 5.15``)."""
        return ", ".join(a if a == b else f"{a}-{b}" if b else f"{a} and later" for a, b, _l in self.release_lines)

    def _known_line(self, version: str | None) -> str | None:
        wanted = version_key(version or self.default_version)
        for first, last, line in self.release_lines:
            if version_key(first) <= wanted and (not last or wanted[: len(version_key(last))] <= version_key(last)):
                return line
        return "" if not self.release_lines else None

    def _newer_same_major(self, version: str | None) -> bool:
        """``version`` is after the newest release fabconf knows, in the same major release (5.16 after 5.15: a
        new major release, 6.x, may change anything and is never assumed)."""
        if not self.release_lines or not self.release_lines[-1][1]:
            return False
        newest = version_key(self.release_lines[-1][1])
        wanted = version_key(version or self.default_version)
        return wanted[: len(newest)] > newest and wanted[:1] == newest[:1]

    def _assume_refusal(self, version: str | None) -> str:
        newest = self.release_lines[-1][1]
        if self._newer_same_major(version):
            return f'is not a release of fabconf\'s newest line; use "{newest}"'
        if version_key(version or self.default_version)[:1] > version_key(newest)[:1]:
            return f"cannot stand for a new major release, which may change anything (known: {self.known_releases()})"
        return f"is only for a release newer than fabconf knows (known: {self.known_releases()})"

    def assumed(self, version: str | None, assume: str | None) -> bool:
        """Whether ``version``, newer than fabconf knows, is rendered as the known release ``assume``: it is in the
        same major release, and ``assume`` is on fabconf's newest line."""
        if not assume or self._known_line(version) is not None or not self._newer_same_major(version):
            return False
        first, last, _line = self.release_lines[-1]
        key = version_key(assume)
        return bool(key) and version_key(first) <= key and key[: len(version_key(last))] <= version_key(last)

    def ecmp_limit(self, version: str | None, assume: str | None = None) -> int:
        """The maximum ECMP width on the release line of ``version`` (``assume``: as ``release_line``)."""
        try:
            line = self.release_line(version, assume)
        except ValueError:
            return self.max_ecmp
        return dict(self.max_ecmp_by_line).get(line, self.max_ecmp)

    def hardware_family(self, model: str | None) -> str:
        """The family of ``model``; ValueError when the platform has families and the model is in none."""
        if not self.hardware_families:
            return ""
        for pattern, family in self.hardware_families:
            if model and re.match(pattern, model, re.IGNORECASE):
                return family
        families = "; ".join(f"{f}: {p}" for p, f in self.hardware_families)
        if not model:
            raise ValueError(
                f"no data.model: the {self.label} configuration differs by hardware family; set the model ({families})"
            )
        raise ValueError(f"model {model!r} is in no known {self.label} hardware family ({families})")

    @property
    def is_host(self) -> bool:
        return self.kind is Kind.HOST

    @property
    def checks_lldp(self) -> bool:
        """Whether verify compares this device's LLDP neighbours with the cabling (switches do)."""
        return self.kind is Kind.SWITCH


def version_key(version: str) -> tuple[int, ...]:
    """``5.14.0`` -> (5, 14, 0); ``4.32.2F`` -> (4, 32, 2); ``10.3(4a)`` -> (10, 3, 4)."""
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


# Root lines whose whole section fabconf owns on the CLI platforms. VLAN 1 is the default VLAN, never owned.
# Interfaces fabconf renders are owned too (the staging driver adds every ``interface X`` of the candidate).
_CLI_COMMON = (r"hostname \S+", r"vlan (?!1$)\d+", r"interface [Vv]lan\d+", r"router bgp \d+")

PLATFORMS: dict[str, Platform] = {
    "cumulus": Platform(
        name="cumulus",
        label="Cumulus",
        kind=Kind.SWITCH,
        description="NVIDIA Spectrum, Cumulus Linux 5.x (NVUE REST API)",
        driver="fabconf.drivers.cumulus.driver:CumulusDriver",
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
    ),
    "eos": Platform(
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
    ),
    "nxos": Platform(
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
        ),
        wrapper="fabconf.drivers.cli.nxos_replace:NxosTimerDriver",
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
    ),
    "linux": Platform(
        name="linux",
        label="Linux",
        kind=Kind.HOST,
        description="GPU host with ConnectX NICs (SSH)",
        driver="fabconf.drivers.linux.driver:LinuxDriver",
        connection_section="netmiko",
        default_port=22,
        candidate=Candidate.HOST_STATE,
        revert=Revert.CHECKPOINT,  # hosts have no commit timer; the driver keeps a checkpoint on the host
        merge_diff_from_device=True,
        suffix=".yaml",
        qos_dialect="host",
        # host MTU limits are not checked per platform: mtu.host <= every switch port MTU is the rule that matters
        port_pattern=re.compile(r"^[A-Za-z0-9_.-]{1,15}$"),  # [V] Linux IFNAMSIZ 16 incl. NUL (linux/if.h)
    ),
}

NAMES: tuple[str, ...] = tuple(PLATFORMS)


def platform(name: str) -> Platform:
    """The row for ``name``; a KeyError names the known platforms."""
    try:
        return PLATFORMS[name]
    except KeyError:
        raise KeyError(f"unknown platform {name!r} (known: {', '.join(NAMES)})") from None


# -- optional features: where a platform can do them ------------------------------------------------------------------


@dataclass(frozen=True)
class Feature:
    """Where one platform can do an optional feature of the intent: from which release, on which hardware. A
    feature fabconf renders no form of on the platform has ``unsupported`` set to the reason."""

    min_version: str = ""  # the first release that has it ("": every release fabconf renders for)
    models: str = ""  # regex a model must match ("": any model)
    not_models: str = ""  # regex of models that lack it
    hardware: str = ""  # the hardware, in words, for messages
    unsupported: str = ""  # non-empty: fabconf renders it nowhere on this platform, and why
    port_range: tuple[int, int] = (1, 65535)  # telemetry: the server ports the platform accepts

    def refusal(self, label: str, version: str, model: str | None) -> str | None:
        """Why a switch of this platform running ``version`` on ``model`` cannot have the feature, else None."""
        if self.unsupported:
            return self.unsupported
        if self.min_version and version_key(version) < version_key(self.min_version):
            return f"{label} {version} does not have it (needs {self.min_version} or later)"
        fits = (not self.models or re.match(self.models, model or "", re.IGNORECASE)) and not (
            self.not_models and re.match(self.not_models, model or "", re.IGNORECASE)
        )
        if not fits:
            return f"model {model!r} does not have it ({self.hardware})"
        return None


# (feature, platform) -> where it works. Features: "adaptive" (fabric.yaml load_balancing.mode adaptive) and
# "telemetry" (monitoring.telemetry: a gNMI server on the switch).
FEATURES: dict[tuple[str, str], Feature] = {
    # [V] NVUE reference, "Adaptive Routing" (set and show commands): `interface <swp> router adaptive-routing` and
    # `router adaptive-routing`, introduced in 5.1; "Cumulus Linux 5.6 supports adaptive routing on Spectrum-4;
    # 5.5 and earlier on Spectrum-3 and Spectrum-2 as a beta feature"; not on subinterfaces, SVIs, bonds or bond
    # members; 5.14 and earlier spell it `enable on`, 5.15 `state enabled` (also nvueschema 5.12 / 5.15).
    # Spectrum-4 models: SN5600, SN5400 [V: NVIDIA Spectrum-4 switch family]. Later ASICs are not listed [U].
    ("adaptive", "cumulus"): Feature(models=r"SN5[46]00", hardware="adaptive routing is supported on Spectrum-4"),
    # [V] Arista TOI "Dynamic Load Balancing" (EOS 4.30.2F, ECMP groups) names the feature; its commands are not
    # in any source fabconf could verify [U], so fabconf renders none.
    ("adaptive", "eos"): Feature(
        unsupported="EOS dynamic load balancing (EOS 4.30.2F and later) has no command form fabconf can verify, so "
        "fabconf does not render it; set data.load_balancing: ecmp on this switch"
    ),
    # [V] Cisco Nexus 9000 NX-OS Unicast Routing Configuration Guide 10.5(x), "Configure Dynamic Load Balancing"
    # (Layer 3 ECMP DLB, with RoCE, PFC and ECN in AI/ML back-end fabrics); flowlet is the default mode [V: Cisco
    # Nexus 9000 QoS Configuration Guide 10.6(x), "Policy-driven Dynamic Load Balancing"]. [3P] first in 10.5(1)F on
    # some Cloud Scale switches; which models exactly is [U] (not checked here). Command form
    # `hardware profile dlb` / `dlb-interface <ports>` [3P: Cisco pyATS genielibs nxos dlb conf; a published
    # example]; it takes effect after `copy running-config startup-config` and a reload [3P: the switch lists it
    # under `show system config reload-pending`].
    ("adaptive", "nxos"): Feature(min_version="10.5(1)F"),
    # [V] NVIDIA Cumulus Linux 5.13 "gNMI Streaming": `nv set system gnmi-server listening-address|port|state`,
    # default port 9339, not on Spectrum-1; nvueschema 5.13 is the first release with system/gnmi-server and takes
    # port 1024-65535 (5.12's user guide documents only the NetQ agent's gNMI).
    ("telemetry", "cumulus"): Feature(
        min_version="5.13",
        not_models=r"SN2(010|100|201|410|700)",
        hardware="Spectrum-1 switches have no gNMI server",
        port_range=(1024, 65535),
    ),
    # [V: AVD eos_cli_config_gen `management api gnmi` / `transport grpc <name>` / `port` / `ssl profile`]
    ("telemetry", "eos"): Feature(),
    # [V] Cisco Nexus 9000 NX-OS Programmability Guide (9.3(x), 10.x), "gNMI" and "gRPC Agent": gNMI dial-in from
    # 9.3(1); `feature grpc`, `grpc port`, `grpc certificate <trustpoint>`
    ("telemetry", "nxos"): Feature(min_version="9.3(1)"),
}


# what each feature is, in messages
FEATURE_NAMES: dict[str, str] = {"adaptive": "adaptive routing / dynamic load balancing", "telemetry": "a gNMI server"}


def features_in_use(data: dict) -> list[str]:
    """The optional features a switch's device data (``fabconf.compile.devicedata.Switch``) renders."""
    used = []
    if (data.get("load_balancing") or {}).get("mode") == "adaptive":
        used.append("adaptive")
    if data.get("telemetry"):
        used.append("telemetry")
    return used


def feature(name: str, platform_name: str) -> Feature:
    """Where ``platform_name`` can do feature ``name``; a platform with no row cannot."""
    return FEATURES.get((name, platform_name)) or Feature(unsupported=f"{platform_name} has no {name} form in fabconf")
