"""The registry of platforms (the core): what a platform is (``Platform``, ``Feature``, ``DesignHooks``) and the
table every other layer asks (``platform(name).kind``, ``.revert``, ``.suffix``, ``design_hooks(name)``, …).

Each platform is one package, ``fabconf/platform/<name>/``: its ``__init__`` holds its row and features with
their sources and calls ``register``; its ``design`` module holds its QoS builder, device-data type, chain reader
and own checks. The packages are discovered (every package under ``fabconf/platform/``) when this module is
first imported, so nothing outside a platform's own package names it (tests/unit/test_platform_registry.py).

Source tags: [V] verified in docs/reference/roce-lossless.md (or the reference named), [3P] third party, [U]
unverified assumption stated where it is used.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Kind(StrEnum):
    SWITCH = "switch"
    HOST = "host"


class Candidate(StrEnum):
    """What a rendered configuration is, and so how a driver stages it."""

    CLI = "cli text"  # EOS / NX-OS configuration lines, staged as hier_config remediation in merge mode
    NVUE_TREE = "nvue tree"  # the NVUE object tree (startup.yaml form)
    HOST_STATE = "host state"  # the desired NIC state document of a GPU host
    CONFIG_DB = "config db"  # a SONiC CONFIG_DB document (JSON), staged as a JSON Patch


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
    # the intent's ``roce.pfc_watchdog.action`` values the platform renders (validate refuses the others); () where
    # its watchdog has no action setting: fabconf renders none, and validate warns that an action other than drop is
    # not applied there
    watchdog_actions: tuple[str, ...] = ()
    # --confirm-timeout the device's commit timer accepts, in seconds (revert-timer platforms)
    confirm_timeout_s: tuple[int, int] = (1, 86400)
    # -- the platform package's hooks and the facts other layers ask for --------------------------------------------
    design: str = ""  # the module whose ``HOOKS`` (a DesignHooks) compile asks; "" for hosts (compile/design/host.py)
    # source of truth (fabconf sot): the management and loopback interface names (a label in Nautobot), the
    # manufacturer and Nautobot's network_driver name (netutils' normalised names)
    mgmt_interface: str = ""  # [U: the usual management interface name on each OS; only a label in Nautobot]
    loopback_interface: str = ""  # "": the platform has no loopback in the source of truth
    manufacturer: str = ""
    network_driver: str = ""
    snmp_modules: tuple[str, ...] = ()  # monitoring: snmp_exporter modules beyond every switch's
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
CLI_COMMON = (r"hostname \S+", r"vlan (?!1$)\d+", r"interface [Vv]lan\d+", r"router bgp \d+")

# The registry: filled by the platform packages (``fabconf/platform/<name>/__init__.py`` calls ``register``), which
# ``_discover`` imports at the end of this module. Switches first, then hosts, each by name.
PLATFORMS: dict[str, Platform] = {}


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
    listening_address: bool = False  # telemetry: the server needs an address to listen on (the management address)
    plain_without_tls: bool = False  # telemetry: without a TLS profile the server speaks plain gRPC (gnmic: insecure)
    # models fabconf believes have it where no source in reach lists them: another model is a warning, not refused
    likely_models: str = ""  # regex ("": no such list)
    likely_source: str = ""  # why these models, in words, for the warning

    def doubt(self, model: str | None) -> str | None:
        """Why fabconf cannot confirm that ``model`` has the feature (a warning), else None."""
        if not self.likely_models or re.match(self.likely_models, model or "", re.IGNORECASE):
            return None
        return f"model {model!r} is not one fabconf knows to have it ({self.likely_source})"

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
# "telemetry" (monitoring.telemetry: a gNMI server on the switch). Each platform package registers its own.
FEATURES: dict[tuple[str, str], Feature] = {}


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


@dataclass(frozen=True)
class DesignHooks:
    """What compile asks a switch platform's package for (the ``HOOKS`` of its ``design`` module)."""

    # (fabric intent, fabric MTU, compile.design.qos.Hardware) -> the device data's ``qos``, in the platform's terms
    build_qos: Callable[[dict[str, Any], int, Any], dict[str, Any]]
    qos_type: type  # the TypedDict that ``qos`` conforms to (compile.devicedata.check_device)
    # (designed qos, RoCE DSCP) -> (traffic class of the DSCP, lossless priorities, None when trust is right or
    # the problem's detail): what the priority-chain check reads back (compile.checks.check_device_data)
    read_chain: Callable[[dict[str, Any], int], tuple[int | None, set[int], str | None]]
    # (model, topology, problems): the platform's own checks, run when a switch of the platform is in the fabric
    checks: tuple[Callable[[Any, Any, Any], None], ...] = ()


def design_hooks(name: str) -> DesignHooks:
    """The design hooks of switch platform ``name``; KeyError for a platform without them (hosts)."""
    spec = platform(name)
    if not spec.design:
        raise KeyError(f"{spec.label} has no design hooks")
    hooks: DesignHooks = importlib.import_module(spec.design).HOOKS
    return hooks


def register(spec: Platform, features: dict[str, Feature] | None = None) -> None:
    """Add a platform (from its package's ``__init__``) and where it can do each optional feature."""
    if spec.name in PLATFORMS:
        raise ValueError(f"platform {spec.name!r} is registered twice")
    PLATFORMS[spec.name] = spec
    for name, where in (features or {}).items():
        FEATURES[(name, spec.name)] = where


PACKAGE = "fabconf.platform"  # every package under it is a platform


def _discover() -> tuple[str, ...]:
    """Import every platform package (each registers itself), then order the table: switches, then hosts."""
    package = importlib.import_module(PACKAGE)
    for info in pkgutil.iter_modules(package.__path__, f"{PACKAGE}."):
        if info.ispkg:
            importlib.import_module(info.name)
    order = sorted(PLATFORMS.values(), key=lambda p: (p.is_host, p.name))
    PLATFORMS.clear()
    PLATFORMS.update((p.name, p) for p in order)
    rank = {name: i for i, name in enumerate(PLATFORMS)}
    features = sorted(FEATURES.items(), key=lambda kv: (kv[0][0], rank[kv[0][1]]))
    FEATURES.clear()
    FEATURES.update(features)
    return tuple(PLATFORMS)


NAMES: tuple[str, ...] = _discover()
SWITCH_NAMES: tuple[str, ...] = tuple(n for n, p in PLATFORMS.items() if not p.is_host)


# -- the inventory schemas' platform markers ----------------------------------------------------------------------

PLATFORM_ENUM = "x-platforms"  # {"x-platforms": "..."}: the enum of every registered platform
PER_SWITCH_PLATFORM = "x-per-switch-platform"  # {"x-per-switch-platform": S}: an object with an S per switch platform


def expand_schema(node: Any) -> Any:
    """A schema with its platform markers replaced by what the registry says: the schemas name no platform, so a
    new platform package needs no edit to them (compile/schema.py validates with it, docs/hooks/schema_reference.py
    writes the page from it)."""
    if isinstance(node, list):
        return [expand_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    if PLATFORM_ENUM in node:
        return {"enum": list(NAMES)}
    if PER_SWITCH_PLATFORM in node:
        item = node[PER_SWITCH_PLATFORM]
        return {
            "type": "object",
            "additionalProperties": False,
            "minProperties": 1,
            "properties": {name: expand_schema(item) for name in SWITCH_NAMES},
        }
    return {k: expand_schema(v) for k, v in node.items()}
