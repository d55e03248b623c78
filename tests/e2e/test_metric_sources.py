"""A lab switch serves its SNMP series only while its running configuration has an SNMP agent (issue 38): the lab's
brownfield switches carry the operator's agent, so a fresh lab answers every scrape; an agent removed (as a replace
push did before the keep-lists kept ``snmp-server``) makes the endpoint answer as snmp_exporter does when the agent
never replies -- HTTP 500 with the ``snmp_error`` body -- so Prometheus marks the switch ``up == 0`` (the
unreachable alert) and its error, speed and BGP series vanish. After a replace push with the keep-lists the series
stay (``test_replace_mode``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from labkit import lab_fixture, napalm_merge, scrape, ssh_change

from fabconf_lab.metrics import switch_sources
from fabconf_lab.orchestrator import Lab

SWITCHES = ("spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4")


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    yield from lab_fixture(tmp_path, monkeypatch)


def test_snmp_series_need_the_agent(lab: Lab) -> None:
    for name in SWITCHES:  # the brownfield switches run the operator's SNMP agent
        status, body = scrape(lab, name)
        assert status == 200 and "ifHCInUcastPkts{" in body, (name, status, body[:300])
    # the agent removed on one switch of each platform, through the device's own interface
    napalm_merge(lab, "leaf3", "eos", "no snmp-server community lab-ro\n")
    napalm_merge(lab, "leaf4", "nxos", "no snmp-server community lab-ro group network-operator\n")
    ssh_change(lab, "leaf1", "nv unset system snmp-server", "nv config apply -y")
    for name in ("leaf1", "leaf3", "leaf4"):
        assert "snmp" not in switch_sources(lab.devices[name].sim, lab.devices[name].platform), name
        status, body = scrape(lab, name)
        assert status == 500, (name, status, body[:300])
        assert body.startswith("An error has occurred while serving metrics:"), body
        assert 'fqName: "snmp_error"' in body and lab.devices[name].address in body, body
        assert "ifHCInUcastPkts" not in body and "bgpPeerState" not in body
    for name in ("spine1", "spine2", "leaf2"):  # the others still answer
        assert scrape(lab, name)[0] == 200, name
    # the agent back: the series are back
    napalm_merge(lab, "leaf3", "eos", "snmp-server community lab-ro ro\n")
    status, body = scrape(lab, "leaf3")
    assert status == 200 and "ifHCInUcastPkts{" in body
