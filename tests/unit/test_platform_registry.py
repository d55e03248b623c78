"""One package per platform (issue 41, item 1): every registry covers every platform, and no module outside a
platform's own package names one.

The registries: the platform table (fabconf/platforms.py, filled by fabconf/platform/<name>/), each switch
platform's design hooks, its templates, the source-of-truth and monitoring facts of its row, the inventory
schemas' platform enums (expanded from the table), the lab's simulators (fabconf_lab/registry.py, filled by each
simulator package) and the ports and metrics the lab gives each platform."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from fabconf.compile.schema import load
from fabconf.compile.schema import validator as schema_validator
from fabconf.platforms import NAMES, PLATFORMS, SWITCH_NAMES, design_hooks, platform
from fabconf_lab import registry as lab_registry
from fabconf_lab.orchestrator import METRICS_PORTS

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS_WITH_PLATFORM = ("hosts", "groups", "defaults")


def test_the_table_is_discovered_from_the_platform_packages() -> None:
    packages = sorted(p.parent.name for p in (ROOT / "fabconf" / "platform").glob("*/__init__.py"))
    assert sorted(NAMES) == packages
    for name in NAMES:
        assert importlib.import_module(f"fabconf.platform.{name}").PLATFORM is PLATFORMS[name]
    # switches first, then hosts, each by name: the order of the schema enums and of every message naming them
    assert list(NAMES) == sorted(NAMES, key=lambda n: (platform(n).is_host, n))


@pytest.mark.parametrize("name", NAMES)
def test_every_registry_covers_every_platform(name: str) -> None:
    spec = platform(name)
    # its driver and the module its staging wrapper names resolve
    for ref in (spec.driver, spec.wrapper):
        if ref and not ref.startswith("napalm:"):
            module, attr = ref.split(":")
            assert hasattr(importlib.import_module(module), attr), ref
    # its templates
    assert (ROOT / "templates" / name / "device.j2").is_file()
    # compile: a switch's design hooks (QoS builder, device-data type, chain reader)
    if not spec.is_host:
        hooks = design_hooks(name)
        assert callable(hooks.build_qos) and callable(hooks.read_chain)
        assert getattr(hooks.qos_type, "__annotations__", None), "qos_type must be a TypedDict"
    # source of truth and monitoring
    assert spec.mgmt_interface and spec.manufacturer and spec.network_driver
    assert spec.is_host or spec.loopback_interface
    # the inventory schemas: the platform enums and the per-switch-platform max_paths objects
    for kind in SCHEMAS_WITH_PLATFORM:
        assert all(name in enum for enum in _platform_enums(load(kind))), kind
    if not spec.is_host:
        assert all(name in props for props in _per_platform_objects(load("fabric")))
    # the lab: a simulator, its services and port arguments, its metrics port
    entry = lab_registry.lab_platform(name)
    assert entry.services and entry.port_args
    assert {service for _arg, service in entry.port_args} <= set(entry.services)
    assert entry.exporter == ("host" if spec.is_host else "switch")
    assert name in METRICS_PORTS


def test_the_lab_simulates_exactly_the_registered_platforms() -> None:
    assert sorted(lab_registry.table()) == sorted(NAMES)


def test_the_schemas_name_no_platform_and_are_expanded_from_the_table() -> None:
    for path in sorted((ROOT / "fabconf" / "compile" / "schemas").glob("*.json")):
        assert not _NAME_LITERAL.search(path.read_text()), f"{path.name} names a platform: use the x-platform markers"
    for kind in SCHEMAS_WITH_PLATFORM:
        assert _platform_enums(load(kind)) == [list(NAMES)]
        schema_validator(kind)  # builds; that it is a valid schema: tests/unit/compile/test_schemas_valid.py
    objects = _per_platform_objects(load("fabric"))
    assert len(objects) == 3 and all(list(o) == list(SWITCH_NAMES) for o in objects)


# -- no module outside a platform's own package names a platform ------------------------------------------------

_NAME_LITERAL = re.compile("[\"'](" + "|".join(map(re.escape, NAMES)) + ")[\"']")

# Where a platform's own code lives: its product package and its lab simulator package (as the lab registers it).
SIMULATOR_PACKAGES = sorted(e.simulator[0].rsplit(".", 1)[0].replace(".", "/") for e in lab_registry.table().values())
OWN_PACKAGES = ["fabconf/platform/", *(f"{p}/" for p in SIMULATOR_PACKAGES)]

# file -> why it may still name a platform. Keep it short: every entry is a line a new platform may have to touch.
ALLOWED = {
    # an example inventory (`fabconf plan --write`): a concrete switch (NVIDIA SN5600, swp ports) and host platform
    "fabconf/plan/write.py": "plan --write writes a concrete example inventory: SN5600 Cumulus switches, Linux hosts",
    # NAPALM's eos and nxos drivers share one staging driver; NX-OS reads counters through cli() where NAPALM's
    # NX-API driver has none (moving it behind a hook of the NX-OS package is left)
    "fabconf/drivers/cli/staging.py": "the CLI staging driver shared by EOS and NX-OS: NX-OS's counters branch",
    # NAPALM's driver names: napalm's eos driver takes an SSL context, its nxos driver SSH options
    "fabconf/drivers/trust.py": "optional_args per NAPALM driver name (eos: an SSL context; nxos: SSH options)",
    # the CLI engine's dialect table: each dialect is named after the platform it speaks
    "fabconf_lab/cliconf/dialects.py": "the EOS and NX-OS CLI dialects of the shared CLI engine, named by platform",
}


def _offenders() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for top in ("fabconf", "fabconf_lab"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == "fabconf/platforms.py" or any(rel.startswith(p) for p in OWN_PACKAGES):
                continue
            hits = [line.strip() for line in path.read_text().splitlines() if _NAME_LITERAL.search(line)]
            if hits:
                found[rel] = hits
    return found


def test_no_module_outside_a_platform_package_names_a_platform() -> None:
    unexpected = {f: lines for f, lines in _offenders().items() if f not in ALLOWED}
    assert not unexpected, (
        "these modules name a platform: ask the registry (fabconf.platforms / fabconf_lab.registry) or move the "
        f"code into the platform's package: {unexpected}"
    )


def test_the_allow_list_has_no_stale_entry() -> None:
    stale = sorted(set(ALLOWED) - set(_offenders()))
    assert not stale, f"no longer name a platform: drop them from ALLOWED: {stale}"


def _platform_enums(node: object) -> list[list[str]]:
    out: list[list[str]] = []
    if isinstance(node, dict):
        if isinstance(node.get("platform"), dict) and "enum" in node["platform"]:
            out.append(node["platform"]["enum"])
        for value in node.values():
            out += _platform_enums(value)
    elif isinstance(node, list):
        for value in node:
            out += _platform_enums(value)
    return out


def _per_platform_objects(node: object) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    if isinstance(node, dict):
        props = node.get("properties")
        if node.get("type") == "object" and isinstance(props, dict) and set(props) & set(SWITCH_NAMES):
            out.append(props)
        for value in node.values():
            out += _per_platform_objects(value)
    elif isinstance(node, list):
        for value in node:
            out += _per_platform_objects(value)
    return out
