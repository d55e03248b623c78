"""Remediation round trip on the golden configurations (hier_config's own contract): a brownfield running
configuration plus fabconf's remediation is the intended configuration, in every owned section. Run for the
example profile and for the second RoCE profile. (fabconf never undoes a change with hier_config's rollback
text: it uses the device's own rollback or checkpoint. The rollback text is checked where hier_config's
model is the device's: NX-OS.)

The "apply" side is the device: the lab's CLI model of EOS and NX-OS (config modes, stored negations such
as EOS ``no switchport``, single-valued commands), which the end-to-end tests push to. hier_config's own
``future()`` is checked too where it models the device (it reads ``no switchport`` as the removal of a
``switchport`` line, so it is not the judge for EOS interfaces)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hier_config import HConfig, get_hconfig
from profiles import profile_inventory

from fabconf.compile.pipeline import Compiled, compile_inventory
from fabconf.compile.render import render
from fabconf.drivers.cli.remediation import _dialect, owned_trees, remediate, rendered_interfaces
from fabconf_lab.cliconf.core import Dialect, Editor, load
from fabconf_lab.cliconf.core import render as render_cli
from fabconf_lab.cliconf.dialects import EOS, NXOS
from fabconf_lab.eos.config import default_eos_config
from fabconf_lab.nxos.render import default_startup_config as default_nxos_config

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "devices"
CLI_DEVICES = sorted(p.stem for p in GOLDEN.glob("*.cfg"))
BROWNFIELD = {"eos": default_eos_config, "nxos": default_nxos_config}
DEVICE = {"eos": EOS, "nxos": NXOS}


def _applied(running: str, commands: str, dialect: Dialect) -> str:
    """``running`` after the device ran ``commands`` (indented, as NX-OS keeps them; EOS's own form too)."""
    root = load(running, dialect)
    Editor(root, dialect).apply_indented(commands.splitlines())
    return render_cli(root, dialect)


def _lines(tree: HConfig) -> set[tuple[str, ...]]:
    """Every line as its path from the root: order-insensitive, as the device compares configuration."""
    return {tuple(child.path()) for child in tree.all_children()}


def _case(compiled: Compiled, name: str) -> tuple[str, str, str, list[str]]:
    data = compiled.data[name]
    platform = data["platform"]
    ports = sorted({i["name"] for i in data["interfaces"]} | {"Ethernet1/1", "Ethernet2/1"})
    return platform, BROWNFIELD[platform](name, ports), render(data), rendered_interfaces(render(data))


@pytest.fixture(scope="module")
def profile_b(tmp_path_factory: pytest.TempPathFactory) -> Compiled:
    return compile_inventory(profile_inventory(tmp_path_factory.mktemp("profile-b")))


@pytest.mark.parametrize("name", CLI_DEVICES)
@pytest.mark.parametrize("profile", ["example", "profile-b"])
def test_running_plus_remediation_is_intended_and_back(
    name: str, profile: str, example: Compiled, profile_b: Compiled
) -> None:
    compiled = example if profile == "example" else profile_b
    if profile == "example":
        assert render(compiled.data[name]) == (GOLDEN / f"{name}.cfg").read_text()  # the golden is what we test
    platform, running, intended, _interfaces = _case(compiled, name)
    rem = remediate(platform, running, intended)
    assert not rem.empty
    dialect = _dialect(platform)
    # what fabconf owns: its sections, the interfaces and the owned-when-rendered lines (gNMI) the candidate renders
    run_owned, want_owned = owned_trees(platform, running, intended)

    device = DEVICE[platform]
    after = _applied(running, rem.config, device)
    assert _lines(owned_trees(platform, after, intended)[0]) == _lines(want_owned)
    if platform == "nxos":  # hier_config's own model agrees on NX-OS, both ways
        assert _lines(run_owned.future(get_hconfig(dialect, rem.config))) == _lines(want_owned)
        assert _lines(want_owned.future(get_hconfig(dialect, rem.rollback))) == _lines(run_owned)

    # and at intent there is nothing left to do
    assert remediate(platform, intended, intended).empty
