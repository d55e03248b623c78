"""A lab switch serves its SNMP series only while its running configuration has an SNMP agent (issue 38): the lab's
brownfield switches carry the operator's agent, so a fresh lab answers every scrape; an agent removed (as a replace
push did before the keep-lists kept ``snmp-server``) makes the endpoint answer as snmp_exporter does when the agent
never replies -- HTTP 500 with the ``snmp_error`` body -- so Prometheus marks the switch ``up == 0`` (the
unreachable alert) and its error, speed and BGP series vanish. After a replace push with the keep-lists the series
stay (``test_replace_mode``). gnmic's output for a switch (``/gnmic``) carries its series only while its gNMI server
is configured, with the counters its SNMP series show."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from labkit import lab_fixture, napalm_merge, scrape, scrape_gnmic, ssh_change
from prometheus_client.parser import text_string_to_metric_families

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


GNMI_ON = "management api gnmi\n   transport grpc FABCONF\n      port 9339\n"


def test_gnmic_series_need_the_gnmi_server_and_show_the_same_counters(lab: Lab) -> None:
    # the brownfield switches run no gNMI server: gnmic shows each target down and no series
    for name in SWITCHES:
        assert scrape_gnmic(lab, name) == {("gnmic_target_up", (("name", name),)): 0.0}, name
    napalm_merge(lab, "leaf3", "eos", GNMI_ON)
    lab.fault("leaf3", "link", "Ethernet1/1:errors=0.01")
    lab.fault("leaf3", "link", "Ethernet2/1:200g")
    series = scrape_gnmic(lab, "leaf3")
    assert series[("gnmic_target_up", (("name", "leaf3"),))] == 1.0
    tags = (("source", "leaf3"), ("subscription_name", "fabconf"))

    def port(metric: str, ifname: str) -> float:
        return series[(metric, (("interface_name", ifname), *tags))]

    received = port("interfaces_interface_state_counters_in_unicast_pkts", "Ethernet1/1")
    errors = port("interfaces_interface_state_counters_in_errors", "Ethernet1/1")
    assert received > 0 and errors == int(received * 0.01)
    assert port("interfaces_interface_state_counters_in_errors", "Ethernet2/1") == 0
    assert port("interfaces_interface_ethernet_state_port_speed", "Ethernet1/1") == 400_000  # Mb/s
    assert port("interfaces_interface_ethernet_state_port_speed", "Ethernet2/1") == 200_000
    # the same counters as its SNMP series (one truth): the same share in error
    status, body = scrape(lab, "leaf3")
    snmp = {
        (family.name, s.labels.get("ifName")): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
    }
    assert status == 200 and snmp[("ifInErrors", "Ethernet1/1")] == int(snmp[("ifHCInUcastPkts", "Ethernet1/1")] * 0.01)
    # the gNMI server shut down: the series vanish, the target is down
    napalm_merge(lab, "leaf3", "eos", "management api gnmi\n   transport grpc FABCONF\n      shutdown\n")
    assert scrape_gnmic(lab, "leaf3") == {("gnmic_target_up", (("name", "leaf3"),)): 0.0}
