"""A device's own ports reach every driver: NX-OS's SCP included, which napalm 5.2 pins to port 22 whatever it is
given ([V] napalm 5.2 ``nxos.py``, ``ensure_netmiko_conn``): fabconf hands netmiko an ssh_config file naming the
port (netmiko takes ``Port`` from it for a port-22 connection), and a known_hosts file of ``[host]:port``'s keys."""

from __future__ import annotations

from pathlib import Path

import paramiko
import pytest

from fabconf.drivers.factory import driver_for
from fabconf.drivers.trust import Trust


def _nxos(extras: dict, known_hosts: str | None = None) -> object:
    options = {"napalm": {"port": 10443, "extras": {"optional_args": {"port": 10443}, **extras}}}
    trust = Trust(known_hosts=known_hosts)
    return driver_for("nxos", "127.9.0.4", "u", "p", connection_options=options, trust=trust)


def test_nxos_scp_goes_to_the_devices_ssh_port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    key = paramiko.ECDSAKey.generate()
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.9.0.4]:10022 {key.get_name()} {key.get_base64()}\n127.9.0.4 {key.get_name()} AAAA\n")
    napalm = _nxos({"ssh_port": 10022}, str(known)).napalm  # type: ignore[attr-defined]
    assert napalm.port == 10443  # NX-API
    args = napalm.netmiko_optional_args
    config = paramiko.SSHConfig.from_path(args["ssh_config_file"])
    assert config.lookup("127.9.0.4")["port"] == "10022"
    assert Path(args["alt_key_file"]).read_text().startswith("[127.9.0.4]:10022 ")


def test_nxos_on_port_22_gets_no_ssh_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    napalm = _nxos({}).napalm  # type: ignore[attr-defined]
    assert "ssh_config_file" not in napalm.netmiko_optional_args


def test_insecure_still_names_the_port() -> None:
    napalm_args = Trust(insecure=True).napalm_args("nxos", "127.9.0.4", 10022)
    assert "alt_key_file" not in napalm_args
    assert paramiko.SSHConfig.from_path(napalm_args["ssh_config_file"]).lookup("127.9.0.4")["port"] == "10022"
