"""Nautobot as the source of truth, against a real Nautobot (scripts/nautobot-dev): an example fabric exported,
exported again (no changes), imported into a copy that has only the intent (fabric, groups, defaults), and the
copy renders byte-identical configurations; bad input is one line and writes nothing."""

from __future__ import annotations

import uuid
from pathlib import Path

import pynautobot
import pytest
from pristine import EXAMPLE
from sotkit import ROOT, Nautobot, fabric_copy, rename, rendered

from fabconf.cli import main

EXAMPLES = [EXAMPLE, ROOT / "examples" / "two-pods"]
INTENT = ("fabric.yaml", "groups.yaml", "defaults.yaml")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def token(nautobot: Nautobot, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("FABCONF_NAUTOBOT_TOKEN", nautobot.token)
    return nautobot.token


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_export_import_round_trip_renders_identical_configs(
    example: Path, nautobot: Nautobot, token: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, name = fabric_copy(example, tmp_path / "source")
    code, out, err = run(capsys, "sot", "export", "-i", str(source), "--to", nautobot.url)
    assert code == 0, err
    assert f"exported {name}" in out and "created" in out
    assert token not in out + err
    code, out, err = run(capsys, "sot", "export", "-i", str(source), "--to", nautobot.url)
    assert (code, out.strip().rsplit(": ", 1)[-1]) == (0, "no changes"), out + err
    # a copy holding only the intent gets hosts.yaml and cabling.yaml from the Location
    copy, _ = fabric_copy(example, tmp_path / "copy", files=INTENT)
    rename(copy, name)
    code, out, err = run(capsys, "sot", "import", "--from", nautobot.url, "-i", str(copy))
    assert code == 0, err
    assert rendered(copy, tmp_path / "r-copy") == rendered(source, tmp_path / "r-source")
    assert all((copy / f).read_bytes() == (example / f).read_bytes() for f in ("groups.yaml", "defaults.yaml"))
    code, out, err = run(capsys, "sot", "import", "--from", nautobot.url, "-i", str(copy))
    assert (code, out.strip().endswith("no changes")) == (0, True), out + err
    assert run(capsys, "validate", "-i", str(copy))[0] == 0


def test_the_export_is_scoped_to_its_location(
    nautobot: Nautobot, token: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nb = pynautobot.api(nautobot.url, token=token)
    first, name = fabric_copy(EXAMPLE, tmp_path / "one")
    assert run(capsys, "sot", "export", "-i", str(first), "--to", nautobot.url)[0] == 0
    location = nb.dcim.locations.get(name=name)
    before = {d.name: dict(d) for d in nb.dcim.devices.filter(location=location.id)}
    # the same devices under another fabric name: a Location (and namespace) of their own, the first untouched
    second, other = fabric_copy(EXAMPLE, tmp_path / "two")
    code, _out, err = run(capsys, "sot", "export", "-i", str(second), "--to", nautobot.url)
    assert code == 0, err
    after = {d.name: dict(d) for d in nb.dcim.devices.filter(location=location.id)}
    assert after == before
    assert len(list(nb.dcim.devices.filter(location=nb.dcim.locations.get(name=other).id))) == len(before)


def _unchanged(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_an_unreachable_nautobot_or_a_wrong_token_is_one_line(
    nautobot: Nautobot, token: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source, _ = fabric_copy(EXAMPLE, tmp_path / "inv")
    before = _unchanged(source)
    code, _out, err = run(capsys, "sot", "import", "--from", "http://127.0.0.1:9", "-i", str(source))
    assert code == 1 and err.count("\n") == 1 and "cannot reach Nautobot" in err, err
    code, _out, err = run(capsys, "onboard", "rack", "--pod", "pod1", "-i", str(source), "--to", "http://127.0.0.1:9")
    assert code == 1 and err.count("\n") == 1 and "cannot reach Nautobot" in err, err
    monkeypatch.setenv("FABCONF_NAUTOBOT_TOKEN", "0" * 40)
    for args in (
        ("export", "-i", str(source), "--to", nautobot.url),
        ("import", "--from", nautobot.url, "-i", str(source)),
    ):
        code, _out, err = run(capsys, "sot", *args)
        assert code == 1 and err.count("\n") == 1 and "refused the token" in err, err
        assert "Traceback" not in err and "0" * 40 not in err
    monkeypatch.delenv("FABCONF_NAUTOBOT_TOKEN")
    code, _out, err = run(capsys, "sot", "export", "-i", str(source), "--to", nautobot.url)
    assert code == 1 and "FABCONF_NAUTOBOT_TOKEN is not set" in err
    assert _unchanged(source) == before


def test_a_missing_field_or_two_devices_of_one_name_is_one_line_and_writes_nothing(
    nautobot: Nautobot, token: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nb = pynautobot.api(nautobot.url, token=token)
    source, name = fabric_copy(EXAMPLE, tmp_path / "inv")
    assert run(capsys, "sot", "export", "-i", str(source), "--to", nautobot.url)[0] == 0
    before = _unchanged(source)
    leaf1 = nb.dcim.devices.get(name="leaf1", location=nb.dcim.locations.get(name=name).id)
    # a device without its primary address (fabconf's hostname)
    leaf1.update({"primary_ip4": None})
    code, _out, err = run(capsys, "sot", "import", "--from", nautobot.url, "-i", str(source))
    assert code == 1 and err.count("\n") == 1, err
    assert f"Nautobot device leaf1 (Location {name}): no primary IPv4 address" in err
    assert _unchanged(source) == before
    # export restores it; then a second device named leaf1 (another tenant: Nautobot allows that) in the Location
    assert run(capsys, "sot", "export", "-i", str(source), "--to", nautobot.url)[0] == 0
    tenant = nb.tenancy.tenants.create(name=f"t-{uuid.uuid4().hex[:8]}")
    nb.dcim.devices.create(
        name="leaf1",
        location=leaf1.location.id,
        role=leaf1.role.id,
        device_type=leaf1.device_type.id,
        status=leaf1.status.id,
        tenant=tenant.id,
    )
    code, _out, err = run(capsys, "sot", "import", "--from", nautobot.url, "-i", str(source))
    assert code == 1 and err.count("\n") == 1, err
    assert f"Location {name}: two or more devices named leaf1" in err
    assert _unchanged(source) == before
    code, _out, err = run(capsys, "sot", "export", "-i", str(source), "--to", nautobot.url)
    assert code == 1 and "two or more devices named leaf1" in err


def test_a_cable_fabconf_cannot_represent_names_the_nautobot_object(
    nautobot: Nautobot, token: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nb = pynautobot.api(nautobot.url, token=token)
    source, name = fabric_copy(EXAMPLE, tmp_path / "inv")
    assert run(capsys, "sot", "export", "-i", str(source), "--to", nautobot.url)[0] == 0
    before = _unchanged(source)
    leaf1 = nb.dcim.devices.get(name="leaf1", location=nb.dcim.locations.get(name=name).id)
    port = nb.dcim.front_ports.create(
        device=leaf1.id,
        name="fp1",
        type="8p8c",
        rear_port=nb.dcim.rear_ports.create(device=leaf1.id, name="rp1", type="8p8c", positions=1).id,
        rear_port_position=1,
    )
    iface = nb.dcim.interfaces.create(
        device=leaf1.id, name="swp10", type="400gbase-x-qsfpdd", status=nb.extras.statuses.get(name="Active").id
    )
    active = nb.extras.statuses.get(name="Connected")
    nb.dcim.cables.create(
        termination_a_type="dcim.interface",
        termination_a_id=iface.id,
        termination_b_type="dcim.frontport",
        termination_b_id=port.id,
        status=active.id,
        label="patch-7",
    )
    code, _out, err = run(capsys, "sot", "import", "--from", nautobot.url, "-i", str(source))
    assert code == 1 and err.count("\n") == 1, err
    assert f"Nautobot cable patch-7 (Location {name}): its b end is a dcim.frontport" in err
    assert _unchanged(source) == before
