"""One TLS client context per run and trust settings, shared by every device's connection (issue 42): building one
per device loaded the CA bundle -- without ``FABCONF_CA_FILE`` the whole system trust store, about 20 ms of CPU --
for each of thousands of switches. Sharing it weakens nothing: the context still requires a chain to the same
bundle and the device's name."""

from __future__ import annotations

import os
import ssl
from pathlib import Path

from fabconf.drivers.trust import Trust
from fabconf.platform.cumulus.client import tls_context
from fabconf_lab.tls import LabCA


def test_every_eos_device_of_a_run_gets_the_same_verifying_context(tmp_path: Path) -> None:
    ca = str(LabCA(tmp_path / "tls").ca_cert_path)
    trust = Trust(ca_file=ca)
    first = trust.napalm_args("eos", "127.0.0.1")["context"]
    second = trust.for_device({}).napalm_args("eos", "127.0.0.2")["context"]
    assert first is second
    assert first.verify_mode == ssl.CERT_REQUIRED and first.check_hostname
    insecure = Trust(insecure=True, ca_file=ca).napalm_args("eos", "127.0.0.1")["context"]
    assert insecure is not first and insecure.verify_mode == ssl.CERT_NONE
    assert Trust().napalm_args("eos", "127.0.0.1")["context"] is not first  # the system store: its own


def test_every_cumulus_switch_gets_the_same_verifying_context(tmp_path: Path) -> None:
    ca = str(LabCA(tmp_path / "tls").ca_cert_path)
    assert tls_context(ca, True) is tls_context(ca, True)
    assert tls_context(ca, True).verify_mode == ssl.CERT_REQUIRED and tls_context(ca, True).check_hostname
    assert tls_context(ca, False) is not tls_context(ca, True)
    assert tls_context(ca, False).verify_mode == ssl.CERT_NONE


def test_a_ca_file_that_changed_gets_a_new_context(tmp_path: Path) -> None:
    ca = LabCA(tmp_path / "tls").ca_cert_path
    before = Trust(ca_file=str(ca)).ssl_context()
    other = LabCA(tmp_path / "other").ca_cert_path
    ca.write_bytes(other.read_bytes())
    os.utime(ca, ns=(1, 1))  # another modification time, whatever the clock's resolution
    after = Trust(ca_file=str(ca)).ssl_context()
    assert after is not before
    assert after.get_ca_certs() == Trust(ca_file=str(other)).ssl_context().get_ca_certs() != before.get_ca_certs()
