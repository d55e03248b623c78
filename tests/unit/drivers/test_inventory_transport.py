"""Issue #43: an inventory (a Nornir host, the lab's inventory) never weakens how fabconf connects on its own. The
driver factory refuses what fabconf does not document, and a documented setting that weakens transport security
(plain HTTP, a CA or known_hosts file of the inventory's choosing) unless the operator allowed it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabconf.drivers.factory import driver_for
from fabconf.drivers.inventory_transport import TransportRefused
from fabconf.drivers.trust import Trust

NAPALM = "napalm"


def _build(platform: str, section: str, extras: dict[str, Any], trust: Trust) -> Any:
    return driver_for(platform, "127.0.0.1", "u", "p", connection_options={section: {"extras": extras}}, trust=trust)


@pytest.mark.parametrize(
    ("platform", "section", "extras", "names"),
    [
        ("eos", NAPALM, {"optional_args": {"transport": "http"}}, "extras.optional_args.transport"),
        ("nxos", NAPALM, {"optional_args": {"transport": "http"}}, "extras.optional_args.transport"),
        ("eos", NAPALM, {"optional_args": {"context": None}}, "extras.optional_args.context"),
        ("nxos", NAPALM, {"optional_args": {"ssl_verify": False}}, "extras.optional_args.ssl_verify"),
        ("cumulus", "nvue", {"verify": False}, "extras.verify"),
        ("cumulus", "nvue", {"ca_file": "/tmp/impostor-ca.pem"}, "extras.ca_file"),
        ("linux", "netmiko", {"ssh_strict": False}, "extras.ssh_strict"),
        ("linux", "netmiko", {"known_hosts": "/tmp/impostor_known_hosts"}, "extras.known_hosts"),
    ],
)
def test_what_weakens_transport_security_is_refused_by_default(
    platform: str, section: str, extras: dict[str, Any], names: str
) -> None:
    with pytest.raises(TransportRefused, match=f"connection_options.{section}.{names}"):
        _build(platform, section, extras, Trust())


def test_verification_is_never_turned_off_by_the_inventory_even_when_allowed() -> None:
    allowed = Trust(inventory_transport=True)
    with pytest.raises(TransportRefused, match="--insecure"):
        _build("cumulus", "nvue", {"verify": False}, allowed)
    with pytest.raises(TransportRefused, match="ssl_verify"):
        _build("nxos", NAPALM, {"optional_args": {"ssl_verify": False}}, allowed)


def test_allowed_settings_are_honoured_and_verification_stays_fabconfs(tmp_path: Path) -> None:
    allowed = Trust(inventory_transport=True)
    eos = _build("eos", NAPALM, {"optional_args": {"transport": "http"}}, allowed)
    assert eos.napalm.transport == "http"
    ca = str(tmp_path / "device-ca.pem")
    nvue = _build("cumulus", "nvue", {"ca_file": ca, "ssh_port": 2222}, allowed)
    assert (nvue.ca_file, nvue.verify, nvue.ssh_strict, nvue.ssh_port) == (ca, True, True, 2222)


def test_the_operators_own_files_named_again_by_the_inventory_are_not_a_weakening(tmp_path: Path) -> None:
    """The lab's inventory names its CA and known_hosts, which lab.env (FABCONF_CA_FILE, FABCONF_KNOWN_HOSTS)
    gives the operator's environment too."""
    ca, known = str(tmp_path / "ca.pem"), str(tmp_path / "known_hosts")
    trust = Trust(ca_file=ca, known_hosts=known)
    nvue = _build("cumulus", "nvue", {"ca_file": ca, "known_hosts": known}, trust)
    assert (nvue.ca_file, nvue.verify) == (ca, True)
    with pytest.raises(TransportRefused):
        _build("cumulus", "nvue", {"ca_file": ca + ".other"}, trust)


def test_no_environment_variable_allows_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FABCONF_ALLOW_INVENTORY_TRANSPORT", "FABCONF_INVENTORY_TRANSPORT"):
        monkeypatch.setenv(name, "1")
    assert Trust.from_env().inventory_transport is False
