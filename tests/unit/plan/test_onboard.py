"""`fabconf onboard rack`: a rack from the intent, appended to the inventory; twice is a no-op; every existing
byte stays; each refusal leaves both files untouched; the result validates and renders."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from pristine import EXAMPLE

from fabconf.cli import main
from fabconf.compile.pipeline import compile_inventory

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def inv(tmp_path: Path) -> Path:
    target = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, target)
    return target


def _files(inv: Path) -> dict[str, bytes]:
    return {name: (inv / name).read_bytes() for name in ("hosts.yaml", "cabling.yaml", "fabric.yaml", "groups.yaml")}


def test_a_rack_is_appended_and_twice_is_a_no_op(inv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _files(inv)
    assert main(["onboard", "rack", "--pod", "pod1", "-i", str(inv)]) == 0
    out = capsys.readouterr().out
    assert (
        "onboarded rack rack1 into pod pod1: 6 device(s) (leaf5, leaf6, gpu09, gpu10, gpu11, gpu12), 12 link(s)" in out
    )
    after = _files(inv)
    for name in ("hosts.yaml", "cabling.yaml"):
        assert after[name].startswith(before[name].rstrip(b"\n")), name  # every existing byte kept
    assert after["fabric.yaml"] == before["fabric.yaml"] and after["groups.yaml"] == before["groups.yaml"]
    compiled = compile_inventory(inv)
    assert compiled.data["leaf5"]["asn"] == 65105 and compiled.data["gpu09"]["nics"][0]["leaf"] == "leaf5"
    links = yaml.safe_load((inv / "cabling.yaml").read_text())["links"]
    assert ["leaf5:swp63", "spine1:Ethernet5/1"] in links and ["leaf6:swp64", "spine2:Ethernet1/6"] in links
    assert main(["onboard", "rack", "--pod", "pod1", "--rack", "rack1", "-i", str(inv)]) == 0
    assert "rack rack1 of pod pod1 is already in" in capsys.readouterr().out
    assert _files(inv) == after
    assert main(["render", "-i", str(inv), "-o", str(inv.parent / "out"), "--limit", "rack1"]) == 0  # a rack selects
    assert sorted(p.stem for p in (inv.parent / "out").iterdir()) == [
        "gpu09",
        "gpu10",
        "gpu11",
        "gpu12",
        "leaf5",
        "leaf6",
    ]


def test_a_second_rack_takes_the_next_ids_ports_and_addresses(inv: Path) -> None:
    assert main(["onboard", "rack", "--pod", "pod1", "-i", str(inv)]) == 0
    assert main(["onboard", "rack", "--pod", "pod1", "-i", str(inv)]) == 0
    compiled = compile_inventory(inv)
    assert {"leaf7", "leaf8", "gpu13", "gpu16"} <= set(compiled.data)
    assert compiled.model.devices["leaf7"].data["rack"] == "rack2"
    assert compiled.model.devices["gpu16"].hostname == "192.0.2.120"


def test_dry_run_writes_nothing(inv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _files(inv)
    assert main(["onboard", "rack", "--pod", "pod1", "--dry-run", "-i", str(inv)]) == 0
    out = capsys.readouterr().out
    assert "+leaf5:\n+  hostname: 192.0.2.17" in out and "+  - [gpu12:ens2f0np0, leaf6:swp4]" in out
    assert _files(inv) == before


@pytest.mark.parametrize(
    ("inventory", "command"),
    [("inventory", ["onboard", "rack"]), ("examples/two-pods", ["onboard", "pod"])],
)
def test_a_dry_run_prints_exactly_the_change_it_would_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], inventory: str, command: list[str]
) -> None:
    """`--dry-run` prints a unified diff of every file; `patch -p1` of it gives byte for byte what the real run
    writes (it previewed the wrong line of fabric.yaml for a pod). A one-pod fabric needs no --pod."""
    previewed, written = tmp_path / "previewed", tmp_path / "written"
    for copy in (previewed, written):
        shutil.copytree(EXAMPLE if inventory == "inventory" else ROOT / inventory, copy)
    assert main([*command, "--dry-run", "-i", str(previewed)]) == 0
    diff = capsys.readouterr().out
    assert diff.startswith("--- a/")
    patch = subprocess.run(["patch", "-p1", "-s"], input=diff, text=True, cwd=previewed, capture_output=True)
    assert patch.returncode == 0, patch.stdout + patch.stderr
    assert main([*command, "-i", str(written)]) == 0
    assert {f.name: f.read_bytes() for f in previewed.iterdir()} == {f.name: f.read_bytes() for f in written.iterdir()}


def test_a_rack_of_a_fabric_of_several_pods_needs_its_pod(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["onboard", "rack", "--dry-run", "-i", str(ROOT / "examples" / "two-pods")]) == 1
    assert "the fabric has 2 pods (pod1, pod2): name one with --pod" in capsys.readouterr().err


def _edit_yaml(path: Path, edit) -> None:
    doc = yaml.safe_load(path.read_text())
    edit(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


@pytest.mark.parametrize(
    ("label", "file", "edit", "message"),
    [
        (
            "exhausted management pool",
            "fabric.yaml",
            lambda d: d["onboarding"].update(management_pool={"leaf": "192.0.2.11/32", "gpu_host": "192.0.2.112/28"}),
            "onboarding.management_pool 192.0.2.11/32 has 0 free address(es), 2 needed",
        ),
        (
            "name collision",
            "fabric.yaml",
            lambda d: d["onboarding"].update(names={"leaf": "leaf{id}", "gpu_host": "spine1"}),
            "name(s) already in the inventory",
        ),
        (
            "no free port on a spine",
            "groups.yaml",
            lambda d: d["dcs-7280r3"]["data"].update(ports=["Ethernet{1-4}/1"]),
            "spine1 has no free port for leaf5",
        ),
        (
            "a result that does not validate",
            "fabric.yaml",
            lambda d: d["onboarding"]["rack"]["leaves"][0].update(groups=["leaves", "sn9999"]),
            "the onboarded inventory would not validate, nothing was written",
        ),
        ("an unknown pod", None, None, "pod 'pod9' has no switches"),
    ],
)
def test_a_refusal_changes_nothing(
    inv: Path, capsys: pytest.CaptureFixture[str], label: str, file: str | None, edit, message: str
) -> None:
    if file is not None:
        _edit_yaml(inv / file, edit)
    before = _files(inv)
    pod = "pod9" if file is None else "pod1"
    assert main(["onboard", "rack", "--pod", pod, "-i", str(inv)]) == 1, label
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err
    assert _files(inv) == before


@pytest.mark.parametrize(
    ("rack", "what"),
    [("pod1", "a pod"), ("leaves", "a group"), ("sn5600", "a group"), ("leaf2", "a device"), ("all", "every device")],
)
def test_a_rack_named_like_a_pod_group_or_device_is_refused_before_anything_is_written(
    inv: Path, capsys: pytest.CaptureFixture[str], rack: str, what: str
) -> None:
    """`--limit RACK` and a runbook's `{{ rack }}` select by name: a rack called `pod1` would select the whole pod."""
    before = _files(inv)
    assert main(["onboard", "rack", "--pod", "pod1", "--rack", rack, "-i", str(inv)]) == 1
    err = capsys.readouterr().err
    assert f"rack name {rack!r} is already" in err and what in err and "Traceback" not in err, err
    assert _files(inv) == before


def test_a_pod_is_declared_cabled_to_the_super_spines_and_twice_is_a_no_op(tmp_path: Path) -> None:
    inv = tmp_path / "two-pods"
    shutil.copytree(ROOT / "examples" / "two-pods", inv)
    before = _files(inv)
    assert main(["onboard", "pod", "-i", str(inv)]) == 0
    after = _files(inv)
    added = [
        ln for ln in after["fabric.yaml"].decode().splitlines() if ln not in before["fabric.yaml"].decode().splitlines()
    ]
    assert added == ["  pod3: {id: 3}   # added by `fabconf onboard pod`"]  # one line, every other byte kept
    for name in ("hosts.yaml", "cabling.yaml"):
        assert after[name].startswith(before[name].rstrip(b"\n")), name
    compiled = compile_inventory(inv)
    assert compiled.data["p3-spine5"]["asn"] == 65102  # bgp.spine_asn + pod id - 1
    links = yaml.safe_load((inv / "cabling.yaml").read_text())["links"]
    assert ["p3-spine5:swp63", "ss1:swp5"] in links and ["p3-spine6:swp64", "ss2:Ethernet1/6"] in links
    assert main(["onboard", "pod", "--pod", "pod3", "-i", str(inv)]) == 0
    assert _files(inv) == after


def test_a_pod_needs_a_declared_pods_block_and_free_super_spine_ports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv = tmp_path / "two-pods"
    shutil.copytree(ROOT / "examples" / "two-pods", inv)
    _edit_yaml(inv / "hosts.yaml", lambda d: d["ss1"]["data"].update(ports=["swp{1-4}"]))  # every port cabled
    before = _files(inv)
    assert main(["onboard", "pod", "-i", str(inv)]) == 1
    assert "ss1 has no free port for p3-spine5" in capsys.readouterr().err
    assert _files(inv) == before
    single = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, single)
    assert main(["onboard", "pod", "-i", str(single)]) == 1
    assert "onboarding: has no pod: shape" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("pattern", "name"),
    [("p{pod_id}-gpu{id:02d}", "p3-gpu07"), ("{pod}-{rack}-leaf{id:03}", "pod3-rack2-leaf007"), ("ss{id}", "ss7")],
)
def test_a_naming_rule_fills_in_exactly_its_fields(pattern: str, name: str) -> None:
    from fabconf.plan.onboard import device_name

    assert device_name(pattern, id=7, pod="pod3", pod_id=3, rack="rack2") == name


@pytest.mark.parametrize("pattern", ["leaf{x}", "leaf{0}", "leaf{id.__class__}", "spine{rack.__len__}", "a{"])
def test_a_naming_rule_past_validation_never_reaches_pythons_formatter(pattern: str) -> None:
    from fabconf.plan.onboard import OnboardError, device_name

    with pytest.raises(OnboardError, match=re.escape("only {id}, {pod}, {pod_id}, {rack} are filled in")):
        device_name(pattern, id=7, pod="pod3", pod_id=3, rack="rack2")


def test_a_pod_may_have_its_own_rack_shape_and_templates_set_os_version(tmp_path: Path) -> None:
    """`onboarding.pods.<pod>.rack` shapes that pod's racks (the others keep `onboarding.rack`), and a leaf or spine
    template's `os_version` becomes the new switch's: written so that it reads back as the same text ("5.15", not
    the number 5.15), and the result validates."""
    inv = tmp_path / "inventory"
    shutil.copytree(ROOT / "examples" / "two-pods", inv)
    fabric = yaml.safe_load((inv / "fabric.yaml").read_text())
    shape = fabric["onboarding"]["rack"]
    own = {**shape, "hosts": 4, "leaves": [{**leaf, "os_version": "5.15"} for leaf in shape["leaves"]]}
    fabric["onboarding"]["pods"] = {"pod2": {"rack": own}}
    for spine in fabric["onboarding"]["pod"]["spines"]:
        spine["os_version"] = "5.15"
    (inv / "fabric.yaml").write_text(yaml.safe_dump(fabric, sort_keys=False))
    assert main(["onboard", "rack", "--pod", "pod2", "--rack", "big", "-i", str(inv)]) == 0
    assert main(["onboard", "rack", "--pod", "pod1", "--rack", "small", "-i", str(inv)]) == 0
    assert main(["onboard", "pod", "--pod", "pod3", "-i", str(inv)]) == 0
    model = compile_inventory(inv).model
    racks: dict[str, list[str]] = {}
    for name, dev in model.devices.items():
        racks.setdefault(str(dev.data.get("rack")), []).append(name)
    assert sum(model.devices[n].role == "gpu_host" for n in racks["big"]) == 4
    assert sum(model.devices[n].role == "gpu_host" for n in racks["small"]) == 2
    assert {model.devices[n].data.get("os_version") for n in racks["big"] if model.devices[n].role == "leaf"} == {
        "5.15"
    }
    assert all("os_version" not in model.devices[n].data for n in racks["small"])
    spines = [d for d in model.devices.values() if d.role == "spine" and d.pod == "pod3"]
    assert spines and {d.data.get("os_version") for d in spines} == {"5.15"}
