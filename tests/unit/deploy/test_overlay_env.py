"""Issue #43: the lab overlay takes from ``STATE/lab.env`` only the lab's credentials and the files that say whom its
devices are; a ``FABCONF_INSECURE=1`` (or any other key) written there never reaches the environment, where it
would turn verification off for every device without the warning ``--insecure`` gives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from nornir.core.inventory import Host

from fabconf.deploy.overlay import lab_env, lab_overlay
from fabconf.drivers.trust import Trust


def _state(tmp_path: Path) -> Path:
    state = tmp_path / "lab"
    (state / "inventory").mkdir(parents=True)
    (state / "lab.env").write_text(
        "FABCONF_USERNAME=fabconf\nFABCONF_PASSWORD=pw\nFABCONF_CA_FILE=/lab/ca.pem\nFABCONF_KNOWN_HOSTS=/lab/kh\n"
        "FABCONF_INSECURE=1\nFABCONF_ALLOW_INVENTORY_TRANSPORT=1\nPATH=/tmp/evil\n"
    )
    entry = {"hostname": "127.9.0.1", "port": 8765, "connection_options": {"nvue": {"port": 8765}}}
    (state / "inventory" / "hosts.yaml").write_text(yaml.safe_dump({"leaf1": entry}))
    return state


def test_lab_env_keeps_only_the_labs_own_keys(tmp_path: Path) -> None:
    assert sorted(lab_env(_state(tmp_path))) == [
        "FABCONF_CA_FILE",
        "FABCONF_KNOWN_HOSTS",
        "FABCONF_PASSWORD",
        "FABCONF_USERNAME",
    ]


def test_the_overlay_never_turns_verification_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FABCONF_INSECURE", "FABCONF_CA_FILE", "FABCONF_KNOWN_HOSTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", os.environ.get("PATH", ""))  # restored after the test, whatever happens
    host = Host("leaf1")
    lab_overlay(host, _state(tmp_path))
    assert (host.hostname, host.port, host.password) == ("127.9.0.1", 8765, "pw")
    assert os.environ["FABCONF_CA_FILE"] == "/lab/ca.pem"
    assert "FABCONF_INSECURE" not in os.environ and os.environ["PATH"] != "/tmp/evil"
    assert Trust.from_env().insecure is False
