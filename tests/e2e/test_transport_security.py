"""Transport security is on by default: a device whose TLS certificate does not chain to a trusted CA, or whose
SSH host key is not in known_hosts, is not talked to (its credentials are never sent); ``--insecure`` is an
explicit opt-in that warns. Against the lab, whose CA and known_hosts are deliberately left out."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from labkit import fab, inv

from fabconf.drivers.known_hosts import host_port_name
from fabconf_lab.orchestrator import Lab

DEVICES = "leaf1,leaf3,leaf4,gpu01"  # NVUE, eAPI, NX-API, SSH host


def _untrusting_inventory(lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The lab's inventory without its CA file and known_hosts, and neither in the environment."""
    for key in ("FABCONF_CA_FILE", "FABCONF_KNOWN_HOSTS"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.ssh/known_hosts of the machine running the tests
    target = tmp_path / "inventory"
    target.mkdir()
    for item in Path(inv(lab)).iterdir():
        (target / item.name).write_text(item.read_text())
    hosts = yaml.safe_load((target / "hosts.yaml").read_text())
    for entry in hosts.values():
        for section in entry.get("connection_options", {}).values():
            for key in ("ca_file", "known_hosts"):
                section.get("extras", {}).pop(key, None)
    (target / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    return str(target)


def test_unverified_devices_are_not_talked_to_and_insecure_is_explicit(
    lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = _untrusting_inventory(lab, tmp_path, monkeypatch)
    code, out = fab(capsys, "diff", "-i", directory, "--limit", DEVICES, "--retries", "0", "--format", "json")
    assert code == 1
    report = {d["device"]: d for d in __import__("json").loads(out[out.index("{") :])["devices"]}
    for name in ("leaf1", "leaf3", "leaf4", "gpu01"):
        assert report[name]["state"] == "unreachable", report[name]
    assert "CERTIFICATE_VERIFY_FAILED" in report["leaf3"]["message"].upper().replace(" ", "_")
    assert "not found in known_hosts" in report["gpu01"]["message"]
    assert "certificate" in report["leaf1"]["message"].lower() and "certificate" in report["leaf4"]["message"].lower()

    code, out = fab(capsys, "diff", "-i", directory, "--limit", DEVICES, "--insecure")
    assert code == 2, out  # reached: the brownfield lab has changes pending
    assert "--insecure: TLS certificates and SSH host keys are NOT verified" in out


@pytest.mark.parametrize(
    ("device", "command"),
    [("gpu01", "diff"), ("leaf4", "push")],  # leaf4: NX-OS, whose configuration goes by netmiko's SCP
)
def test_a_changed_host_key_is_refused(lab: Lab, capsys: pytest.CaptureFixture[str], device: str, command: str) -> None:
    known = lab.known_hosts_path
    text = known.read_text()
    ssh_port = lab.devices[device].service_ports.ssh
    assert ssh_port is not None
    address = host_port_name(lab.devices[device].address, ssh_port)  # as known_hosts names it: [addr]:port off 22
    line = next(ln for ln in text.splitlines() if ln.startswith(address + " "))
    other = next(ln for ln in text.splitlines() if not ln.startswith(address + " "))
    forged = f"{address} {other.split(' ', 1)[1]}"  # another device's key under this device's address
    known.write_text(text.replace(line, forged))
    try:
        argv = [command, "-i", inv(lab), "--limit", device, "--retries", "0"]
        code, out = fab(capsys, *argv, *(["--yes"] if command == "push" else []))
    finally:
        known.write_text(text)
    assert code == 1 and "host key" in out.lower(), out
