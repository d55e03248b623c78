"""known_hosts files parsed once per process (``fabconf.drivers.known_hosts``), and the narrowed file handed to
netmiko (napalm's NX-OS SCP): only the connecting host's keys, from the user's file and fabconf's, so netmiko does
not parse a fabric-sized file on every connection; a host it does not list stays unknown."""

from __future__ import annotations

from pathlib import Path

import paramiko
import pytest

from fabconf.drivers import known_hosts
from fabconf.drivers.trust import Trust


def _key() -> paramiko.PKey:
    return paramiko.ECDSAKey.generate()


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    keys = {name: _key() for name in ("10.0.0.1", "10.0.0.2", "10.0.0.3", "user-only")}
    ours = tmp_path / "known_hosts"
    hashed = paramiko.HostKeys.hash_host("10.0.0.3")
    lines = [f"10.0.0.1 {keys['10.0.0.1'].get_name()} {keys['10.0.0.1'].get_base64()}"]
    lines.append(f"[10.0.0.2]:22 {keys['10.0.0.2'].get_name()} {keys['10.0.0.2'].get_base64()}")
    lines.append(f"10.0.0.2 {keys['10.0.0.2'].get_name()} {keys['10.0.0.2'].get_base64()}")
    lines.append(f"{hashed} {keys['10.0.0.3'].get_name()} {keys['10.0.0.3'].get_base64()}")
    ours.write_text("\n".join(lines) + "\n")
    user = keys["user-only"]
    (home / ".ssh" / "known_hosts").write_text(f"user-only {user.get_name()} {user.get_base64()}\n")
    return {"keys": keys, "ours": str(ours)}


@pytest.mark.parametrize("host", ["10.0.0.1", "10.0.0.2", "10.0.0.3", "user-only"])
def test_the_narrowed_file_lists_the_host_alone(files: dict, host: str) -> None:
    path = known_hosts.narrowed_file(host, 22, files["ours"])
    listed = paramiko.HostKeys(path)
    assert list(listed) == [host]  # nothing of the other hosts
    assert listed.lookup(host) == {files["keys"][host].get_name(): files["keys"][host]}
    assert known_hosts.narrowed_file(host, 22, files["ours"]) == path  # the same content: one file


def test_an_unlisted_or_unreadable_host_gets_an_empty_file(files: dict, tmp_path: Path) -> None:
    assert Path(known_hosts.narrowed_file("10.9.9.9", 22, files["ours"])).read_text() == ""
    assert Path(known_hosts.narrowed_file("10.0.0.1", 22, str(tmp_path / "missing"))).read_text() == ""


def test_a_changed_file_is_read_again(files: dict) -> None:
    first = known_hosts.narrowed_file("10.0.0.1", 22, files["ours"])
    new = _key()
    Path(files["ours"]).write_text(f"10.0.0.1 {new.get_name()} {new.get_base64()}\n")
    second = known_hosts.narrowed_file("10.0.0.1", 22, files["ours"])
    assert second != first and paramiko.HostKeys(second).lookup("10.0.0.1") == {new.get_name(): new}


def test_napalm_nxos_is_given_the_narrowed_file_and_no_whole_file(files: dict) -> None:
    args = Trust(known_hosts=files["ours"]).napalm_args("nxos", "10.0.0.2")
    assert args["ssh_strict"] is True and args["system_host_keys"] is False and args["alt_host_keys"] is True
    assert list(paramiko.HostKeys(args["alt_key_file"])) == ["10.0.0.2"]
    insecure = Trust(insecure=True, known_hosts=files["ours"]).napalm_args("nxos", "10.0.0.2")
    assert insecure["ssh_strict"] is False and "alt_key_file" not in insecure
