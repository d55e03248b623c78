"""Every command that starts the lab (``--lab``) takes ``--network`` and, without it, reads FABCONF_LAB_NETWORK; a
network that is not loopback is refused in one line before anything binds."""

from __future__ import annotations

import pytest

from fabconf.cli import devices
from fabconf.cli.lab import DEFAULT_NETWORK, lab_network, start_lab
from fabconf.cli.main import build_parser
from fabconf.errors import UsageError

LAB_COMMANDS = [
    ["diff"],
    ["push"],
    ["verify"],
    ["drift"],
    ["preflight"],
    ["run", "tasks/onboard-rack.yaml"],
]


@pytest.mark.parametrize("command", LAB_COMMANDS, ids=lambda c: c[0])
def test_every_lab_command_takes_network_and_the_environment(
    command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    parser = build_parser()
    monkeypatch.delenv("FABCONF_LAB_NETWORK", raising=False)
    assert lab_network(parser.parse_args([*command, "--lab"]).network) == DEFAULT_NETWORK
    monkeypatch.setenv("FABCONF_LAB_NETWORK", "127.61.0.0/16")
    args = parser.parse_args([*command, "--lab"])
    assert lab_network(args.network) == "127.61.0.0/16"
    args = parser.parse_args([*command, "--lab", "--network", "127.62.0.0/16"])
    assert lab_network(args.network) == "127.62.0.0/16"  # the option wins
    if command[0] in ("diff", "push", "verify", "drift", "preflight"):
        assert devices.target_of(args).network == "127.62.0.0/16"


def test_lab_up_reads_the_environment_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABCONF_LAB_NETWORK", "127.63.0.0/16")
    assert lab_network(build_parser().parse_args(["lab", "up"]).network) == "127.63.0.0/16"


def test_a_network_off_loopback_is_refused_before_anything_binds(tmp_path) -> None:
    with pytest.raises(UsageError, match="the lab binds only loopback addresses"):
        start_lab(tmp_path / "inventory", tmp_path / "state", "10.0.0.0/16", quiet=True)


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("FABCONF_LAB_PORTS", "low", "FABCONF_LAB_PORTS=low: expected one of standard, high, shared"),
        ("FABCONF_LAB_BASE_PORT", "80", "FABCONF_LAB_BASE_PORT=80: expected a port number from 1024 to 65535"),
    ],
)
def test_a_bad_port_setting_is_refused_before_the_lab_starts(
    tmp_path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, message: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(UsageError, match=message):
        start_lab(tmp_path / "inventory", tmp_path / "state", DEFAULT_NETWORK, quiet=True)
    assert not (tmp_path / "state" / "lab.log").exists()  # nothing was started
