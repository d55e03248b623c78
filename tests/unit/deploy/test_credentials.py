"""Credentials come from the environment or a command, never from files, and are redacted everywhere."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend

from fabconf.compile.pipeline import Compiled
from fabconf.deploy.credentials import REDACTOR, CredentialsError, resolve


def test_global_environment(example: Compiled) -> None:
    creds = resolve(example.model.devices["leaf1"], {"FABCONF_USERNAME": "ops", "FABCONF_PASSWORD": "pw-global-1"})
    assert (creds.username, creds.password) == ("ops", "pw-global-1")
    assert "pw-global-1" not in repr(creds)
    assert REDACTOR("error: login pw-global-1 refused") == "error: login *** refused"


def test_group_override_wins_in_group_order(example: Compiled) -> None:
    env = {
        "FABCONF_USERNAME": "ops",
        "FABCONF_PASSWORD": "pw-global-2",
        "FABCONF_N9K_9364D_USERNAME": "nxadmin",
        "FABCONF_N9K_9364D_PASSWORD": "pw-nexus",
    }
    assert resolve(example.model.devices["leaf4"], env).username == "nxadmin"
    assert resolve(example.model.devices["leaf1"], env).username == "ops"


def test_missing_credentials_say_what_to_set(example: Compiled) -> None:
    with pytest.raises(CredentialsError, match="set FABCONF_USERNAME and FABCONF_PASSWORD"):
        resolve(example.model.devices["leaf1"], {})


def test_credentials_command(example: Compiled, tmp_path: Path) -> None:
    script = tmp_path / "creds.py"
    script.write_text(
        "import json, os\n"
        "print(json.dumps({'username': 'vault-' + os.environ['FABCONF_DEVICE'], 'password': 'pw-from-vault'}))\n"
    )
    env = {
        "FABCONF_CREDENTIALS_COMMAND": f"{sys.executable} {script}",
        "FABCONF_USERNAME": "ignored",
        "FABCONF_PASSWORD": "ignored",
    }
    creds = resolve(example.model.devices["spine2"], env)
    assert (creds.username, creds.password) == ("vault-spine2", "pw-from-vault")
    assert REDACTOR(json.dumps({"p": "pw-from-vault"})) == '{"p": "***"}'


def test_broken_credentials_command(example: Compiled, tmp_path: Path) -> None:
    script = tmp_path / "bad.py"
    script.write_text("print('not json')\n")
    with pytest.raises(CredentialsError, match="must print JSON"):
        resolve(example.model.devices["leaf1"], {"FABCONF_CREDENTIALS_COMMAND": f"{sys.executable} {script}"})


class _MemoryKeyring(KeyringBackend):
    """A keyring backend in memory (the keyring library's own extension point), standing in for Secret Service."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.store.pop((service, username), None)


@pytest.fixture
def memory_keyring() -> Iterator[_MemoryKeyring]:
    previous = keyring.get_keyring()
    ring = _MemoryKeyring()
    keyring.set_keyring(ring)
    try:
        yield ring
    finally:
        keyring.set_keyring(previous)


def test_keyring_per_group_then_default_then_environment(example: Compiled, memory_keyring: _MemoryKeyring) -> None:
    keyring.set_password("fabconf", "n9k-9364d:nxadmin", "pw-from-keyring-nx")
    keyring.set_password("fabconf", "ops", "pw-from-keyring-ops")
    env = {"FABCONF_KEYRING": "fabconf", "FABCONF_USERNAME": "ops", "FABCONF_N9K_9364D_USERNAME": "nxadmin"}
    nexus = resolve(example.model.devices["leaf4"], env)
    assert (nexus.username, nexus.password) == ("nxadmin", "pw-from-keyring-nx")
    assert resolve(example.model.devices["leaf1"], env).password == "pw-from-keyring-ops"  # no group entry: default
    assert REDACTOR("login with pw-from-keyring-nx") == "login with ***"
    # nothing in the keyring: the environment's password is the fall-back
    memory_keyring.store.clear()
    assert resolve(example.model.devices["leaf1"], {**env, "FABCONF_PASSWORD": "pw-env-3"}).password == "pw-env-3"
    with pytest.raises(CredentialsError, match="FABCONF_KEYRING"):
        resolve(example.model.devices["leaf1"], env)
