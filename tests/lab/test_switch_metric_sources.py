"""What each lab switch platform reads from its running configuration to decide which metric sources it serves
(``LabPlatform.metric_sources``, issue 38): an SNMP agent, a gNMI server. The lab's scrapes themselves are in
``tests/e2e/test_metric_sources.py``."""

from __future__ import annotations

import json

from pristine import EXAMPLE

from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.render import render
from fabconf.monitoring.names import Names
from fabconf_lab import metrics as labmetrics
from fabconf_lab.eos.config import default_eos_config
from fabconf_lab.nvue.sim import default_startup_config as cumulus_startup
from fabconf_lab.nxos.render import default_startup_config as nxos_startup
from fabconf_lab.registry import lab_platform
from fabconf_lab.sonic.sim import default_config as sonic_config


def sources(platform: str, running: str) -> frozenset[str]:
    read = lab_platform(platform).metric_sources
    assert read is not None
    return read(running)


def test_brownfield_switches_run_an_snmp_agent_and_no_gnmi() -> None:
    assert sources("eos", default_eos_config("s", ["Ethernet1"])) == {"snmp"}
    assert sources("nxos", nxos_startup("s", ["Ethernet1/1"])) == {"snmp"}
    assert sources("cumulus", json.dumps(cumulus_startup("s", ["swp1"]))) == {"snmp"}
    assert sources("sonic", json.dumps(sonic_config("s", ["Ethernet0"]))) == {"snmp"}
    assert lab_platform("linux").metric_sources is None  # a host's node_exporter needs no device configuration


def test_the_rendered_gnmi_server_enables_the_gnmi_source() -> None:
    compiled = compile_inventory(EXAMPLE)
    assert sources("eos", render(compiled.data["leaf3"])) == {"gnmi"}  # management api gnmi, no SNMP rendered
    assert sources("nxos", render(compiled.data["leaf4"])) == {"gnmi"}  # feature grpc


def test_eos_gnmi_needs_a_transport_that_is_not_shut_down() -> None:
    on = "management api gnmi\n   transport grpc FABCONF\n      port 9339\n!\n"
    assert sources("eos", on) == {"gnmi"}
    assert sources("eos", "management api gnmi\n!\n") == frozenset()
    assert sources("eos", "management api gnmi\n   transport grpc X\n      shutdown\n!\n") == frozenset()
    assert sources("eos", "snmp-server community c ro\nsnmp-server contact ops\n") == {"snmp"}
    assert sources("eos", "snmp-server contact ops\nsnmp-server location r1\n") == frozenset()  # no agent


def test_nxos_gnmi_is_feature_grpc() -> None:
    assert sources("nxos", "feature grpc\ngrpc port 9339\n") == {"gnmi"}
    assert sources("nxos", "grpc port 9339\nsnmp-server user ops network-operator\n") == {"snmp"}


def test_cumulus_needs_state_enabled_and_a_listening_address() -> None:
    def tree(system: dict[str, object]) -> str:
        return json.dumps({"system": system})

    gnmi = {"state": "enabled", "port": 9339}
    assert sources("cumulus", tree({"gnmi-server": gnmi})) == frozenset()  # no listening address: no dial-in
    assert sources("cumulus", tree({"gnmi-server": {**gnmi, "listening-address": {"10.0.0.1": {}}}})) == {"gnmi"}
    assert sources("cumulus", tree({"snmp-server": {"state": "disabled"}})) == frozenset()
    assert sources("cumulus", tree({"snmp-server": {"state": "enabled"}})) == {"snmp"}


def test_sonic_gnmi_is_the_gnmi_table() -> None:
    both = {"SNMP_USER": {"ops": {}}, "GNMI": {"gnmi": {"port": "9339", "user_auth": "password"}}}
    assert sources("sonic", json.dumps(both)) == {"snmp", "gnmi"}
    assert sources("sonic", json.dumps({"GNMI": {"certs": {"server_crt": "/etc/s.cer"}}})) == frozenset()
    assert sources("sonic", json.dumps({})) == frozenset()


def test_the_lab_serves_gnmic_series_under_the_names_the_rules_read() -> None:
    """The lab does not import the product's monitoring names (import contract): its copies are the same."""
    names = Names()
    assert names.gnmi_in_errors == labmetrics.GNMI_IN_ERRORS
    assert names.gnmi_in_packets == labmetrics.GNMI_IN_PACKETS
    assert names.gnmi_speed_mbps == labmetrics.GNMI_SPEED_MBPS
    assert names.gnmi_bgp_state == labmetrics.GNMI_BGP_STATE
    assert names.gnmi_target_up == labmetrics.GNMI_TARGET_UP
