"""Golden files: whole devices, each feature template per platform, and the design data.

Regenerate after an intended change with ``FABCONF_UPDATE_GOLDEN=1 pytest tests/test_golden.py`` and
review the diff. Every file under tests/golden/ must be produced by a case here (no orphan fixtures),
and every case must have its file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from fabconf.compile.pipeline import Compiled, compile_inventory
from fabconf.compile.render import environment, filename, render

GOLDEN = Path(__file__).resolve().parents[2] / "golden"

UPDATE = os.environ.get("FABCONF_UPDATE_GOLDEN") == "1"
# one representative device per platform for the feature-level goldens
REPRESENTATIVE = {"cumulus": "leaf1", "eos": "leaf3", "nxos": "leaf4", "linux": "gpu01"}
FEATURES = {
    "cumulus": ["base", "interfaces", "vlans", "qos", "routing"],
    "eos": ["base", "vlans", "qos", "interfaces", "routing", "features"],
    "nxos": ["base", "vlans", "qos", "interfaces", "routing", "features"],
    "linux": ["nics", "qos", "firmware", "nccl", "routing"],
}
DESIGN_DEVICES = ["leaf1", "leaf3", "leaf4", "spine1", "spine2", "gpu01"]
# the three-tier example: every device rendered, and the design of one device per role and attachment
TWO_PODS_DESIGN = ["ss1", "ss2", "p1-spine1", "p2-leaf1", "p1-gpu01", "p2-gpu01"]
# the mixed example with SONiC leaves: its SONiC devices rendered (CONFIG_DB, indented: the rendered document is
# one line of JSON), and the design of one of them
SONIC_MIX = GOLDEN.parents[1] / "examples" / "sonic-mix"
SONIC_MIX_DESIGN = ["p1-leaf1"]


def _cases(example_names: list[str], platforms: dict[str, str]) -> dict[str, tuple[str, str]]:
    """golden relative path -> (kind, argument)."""
    cases: dict[str, tuple[str, str]] = {}
    for name in example_names:
        cases[f"devices/{filename(name, platforms[name])}"] = ("device", name)
    for platform, features in FEATURES.items():
        for feature in features:
            cases[f"features/{platform}/{feature}.txt"] = ("feature", f"{platform}/{feature}")
    for name in DESIGN_DEVICES:
        cases[f"design/{name}.yaml"] = ("design", name)
    return cases


def _produce(example: Compiled, kind: str, arg: str) -> str:
    if kind == "device":
        return render(example.data[arg])
    if kind == "configdb":  # one line of JSON as rendered: kept indented so that a change reads as a diff
        return json.dumps(json.loads(render(example.data[arg])), indent=4, sort_keys=True) + "\n"
    if kind == "feature":
        platform, feature = arg.split("/")
        data = example.data[REPRESENTATIVE[platform]]
        return environment().get_template(f"{platform}/{feature}.j2").render(data)
    text = yaml.safe_dump(example.data[arg], sort_keys=False, default_flow_style=None, width=120)
    # a YAML anchor means two places share one object: a test (or a template) changing one changes both
    assert "&id0" not in text, f"{arg}: device data shares an object between two keys"
    return text


def _two_pods_cases(compiled: Compiled) -> dict[str, tuple[str, str]]:
    cases = {f"two-pods/devices/{filename(n, d['platform'])}": ("device", n) for n, d in compiled.data.items()}
    cases.update({f"two-pods/design/{n}.yaml": ("design", n) for n in TWO_PODS_DESIGN})
    return cases


def _sonic_mix_cases(compiled: Compiled) -> dict[str, tuple[str, str]]:
    sonic = [n for n, d in compiled.data.items() if d["platform"] == "sonic"]
    cases = {f"sonic-mix/devices/{filename(n, 'sonic')}": ("configdb", n) for n in sonic}
    cases.update({f"sonic-mix/design/{n}.yaml": ("design", n) for n in SONIC_MIX_DESIGN})
    return cases


@pytest.fixture(scope="module")
def sonic_mix() -> Compiled:
    return compile_inventory(SONIC_MIX)


@pytest.fixture(scope="module")
def cases(example: Compiled, two_pods: Compiled, sonic_mix: Compiled) -> dict[str, tuple[str, str]]:
    platforms = {n: d["platform"] for n, d in example.data.items()}
    return {**_cases(sorted(example.data), platforms), **_two_pods_cases(two_pods), **_sonic_mix_cases(sonic_mix)}


def test_sonic_mix_goldens_cover_every_sonic_device(sonic_mix: Compiled) -> None:
    sonic = sorted(n for n, d in sonic_mix.data.items() if d["platform"] == "sonic")
    assert sonic, "examples/sonic-mix has no SONiC device"
    assert set(SONIC_MIX_DESIGN) <= set(sonic)
    on_disk = sorted(p.name for p in (GOLDEN / "sonic-mix" / "devices").glob("*") if p.is_file())
    assert on_disk == sorted(filename(n, "sonic") for n in sonic), on_disk


def test_golden_files(
    example: Compiled, two_pods: Compiled, sonic_mix: Compiled, cases: dict[str, tuple[str, str]]
) -> None:
    by_prefix = {"two-pods/": two_pods, "sonic-mix/": sonic_mix}
    mismatched = []
    for rel, (kind, arg) in sorted(cases.items()):
        path = GOLDEN / rel
        compiled = next((c for prefix, c in by_prefix.items() if rel.startswith(prefix)), example)
        got = _produce(compiled, kind, arg)
        if UPDATE:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(got, encoding="utf-8")
            continue
        assert path.exists(), f"missing golden file {rel} (run with FABCONF_UPDATE_GOLDEN=1)"
        if path.read_text(encoding="utf-8") != got:
            mismatched.append(rel)
    assert not mismatched, f"rendered output differs from golden files: {mismatched}"


def test_every_golden_file_is_used(cases: dict[str, tuple[str, str]]) -> None:
    on_disk = {str(p.relative_to(GOLDEN)) for p in Path(GOLDEN).rglob("*") if p.is_file()}
    assert on_disk, "no golden files found"
    orphans = on_disk - set(cases)
    assert not orphans, f"golden files that no case produces (misnamed or stale): {sorted(orphans)}"


def test_every_feature_template_has_a_golden() -> None:
    templates = Path(environment().loader.searchpath[0])  # type: ignore[union-attr]
    for platform, features in FEATURES.items():
        on_disk = {p.stem for p in (templates / platform).glob("*.j2")} - {"device"}
        assert on_disk == set(features), f"{platform}: templates {sorted(on_disk)} vs golden cases {features}"
