"""The Cumulus/NVUE simulator driven through real clients over real sockets (HTTPS + SSH on 127.13.x.x)."""

from __future__ import annotations

import base64
import http.client
import itertools
import json
import os
import shutil
import socket
import ssl
import subprocess
import time
from pathlib import Path
from typing import Any

import paramiko
import pytest
import yaml
from nvue_frr import frr_conf
from nvue_netns import FrrFabric
from nvue_netns import available as netns_available

from fabconf_lab.faults import Faults
from fabconf_lab.nvue.schema import Validator
from fabconf_lab.nvue.sim import NvueSim, default_startup_config
from fabconf_lab.tls import LabCA
from fabconf_lab.world import World

USER, PASSWORD = "cumulus", "Lab-Pass-1"
PORTS = ["swp1", "swp2", "swp3", "swp4"]
_hosts = itertools.count(1)
_BLOCK = 1 + os.getpid() % 250  # a /24 of 127.13.0.0/16 per test process: concurrent runs do not collide


def _address() -> str:
    n = next(_hosts)
    return f"127.13.{_BLOCK}.{n % 250 + 1}"


@pytest.fixture
def ca(tmp_path: Path) -> LabCA:
    # one CA per test: certificates are cached per device name, and names repeat across tests
    return LabCA(tmp_path / "tls")


@pytest.fixture
def make_sim(ca: LabCA, tmp_path: Path):
    sims: list[NvueSim] = []

    def make(**kwargs: Any) -> NvueSim:
        name = kwargs.pop("name", f"leaf{len(sims) + 1}")
        kwargs.setdefault("ports", PORTS)
        kwargs.setdefault("state_dir", tmp_path)
        kwargs.setdefault("apply_seconds", 0.05)
        sim = NvueSim(name, _address(), username=USER, password=PASSWORD, ca=ca, **kwargs)
        sim.start()
        sims.append(sim)
        return sim

    yield make
    for sim in sims:
        sim.stop()


class Client:
    """A plain HTTPS client (http.client) that verifies the lab CA."""

    def __init__(self, sim: NvueSim, ca: LabCA, auth: str | None = None, timeout: float = 10.0) -> None:
        self.sim, self.ctx, self.timeout = sim, ca.client_context(), timeout
        self.auth = auth or "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        conn = http.client.HTTPSConnection(self.sim.address, self.sim.port, context=self.ctx, timeout=self.timeout)
        try:
            data = json.dumps(body).encode() if body is not None else None
            headers = {"Authorization": self.auth, "Content-Type": "application/json"}
            conn.request(method, "/nvue_v1" + path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
            return resp.status, (json.loads(raw) if raw else None)
        finally:
            conn.close()

    def new_revision(self) -> str:
        status, body = self.call("POST", "/revision")
        assert status == 200
        (rev_id,) = body
        assert body[rev_id] == {"state": "pending", "transition": {"issue": {}, "progress": ""}}
        return rev_id

    def apply(self, rev_id: str, ays: bool = True) -> dict[str, Any]:
        body: dict[str, Any] = {"state": "apply"}
        if ays:
            body["auto-prompt"] = {"ays": "ays_yes"}
        status, reply = self.call("PATCH", f"/revision/{rev_id}", body)
        assert status == 200, reply
        assert reply["state"] == "applying"
        deadline = time.time() + 5
        while time.time() < deadline:
            _, rev = self.call("GET", f"/revision/{rev_id}")
            if rev["state"] not in ("applying", "pending"):
                return rev
            time.sleep(0.02)
        raise AssertionError("apply did not finish")

    def applied(self, path: str = "/") -> Any:
        status, body = self.call("GET", f"{path}?rev=applied")
        assert status == 200
        return body


def ssh_exec(sim: NvueSim, command: str) -> tuple[str, int]:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect(sim.address, sim.ssh_port, USER, PASSWORD, look_for_keys=False, allow_agent=False, timeout=10)
    try:
        _, stdout, _ = client.exec_command(command, timeout=10)
        out = stdout.read().decode()
        return out, stdout.channel.recv_exit_status()
    finally:
        client.close()


# -- the REST revision flow -----------------------------------------------------------------------
def test_create_patch_diff_apply_and_applied_tree(make_sim, ca) -> None:
    sim = make_sim()
    c = Client(sim, ca)
    rev = c.new_revision()
    status, change = c.call("PATCH", f"/?rev={rev}", {"qos": {"roce": {"enable": "on", "mode": "lossless"}}})
    assert status == 200 and change == {"qos": {"roce": {"enable": "on", "mode": "lossless"}}}
    status, change = c.call("PATCH", f"/interface/swp1/link?rev={rev}", {"mtu": 9000})
    assert (status, change) == (200, {"mtu": 9000})  # 5.10+: only the change comes back
    # the revision holds the brownfield applied tree plus the patches
    _, tree = c.call("GET", f"/?rev={rev}")
    assert tree["system"]["hostname"] == sim.name and tree["interface"]["swp1"]["link"]["mtu"] == 9000
    _, diff = c.call("GET", f"/?rev=applied&diff={rev}")
    assert diff == [
        {"set": {"interface": {"swp1": {"link": {"mtu": 9000}}}, "qos": {"roce": {"enable": "on", "mode": "lossless"}}}}
    ]
    _, sub = c.call("GET", f"/interface/swp1?rev=applied&diff={rev}")
    assert sub == [{"set": {"link": {"mtu": 9000}}}]
    assert c.applied("/qos/roce") == {}  # nothing applied yet

    result = c.apply(rev)
    assert result == {"state": "applied_and_saved", "transition": {"issue": {}, "progress": ""}}
    assert c.applied("/qos/roce") == {"enable": "on", "mode": "lossless"}
    assert c.applied("/interface/swp1/link/mtu") == 9000
    _, startup = c.call("GET", "/qos/roce?rev=startup")  # auto-save (CL >= 5.9 default)
    assert startup == {"enable": "on", "mode": "lossless"}
    _, revs = c.call("GET", "/revision")
    assert revs[rev]["state"] == "applied_and_saved"
    # an applied revision is read-only
    status, err = c.call("PATCH", f"/?rev={rev}", {"system": {"hostname": "x"}})
    assert status == 400 and "applied_and_saved" in err["detail"]
    # operational view: mtu from the applied config
    _, ifaces = c.call("GET", "/interface")
    assert ifaces["swp1"]["link"]["mtu"] == 9000 and ifaces["swp2"]["link"]["mtu"] == 9216
    assert sim.lab_view().ports["swp1"].mtu == 9000
    # operational RoCE summary, as `nv show qos roce` prints it (reference §1.1)
    roce = c.call("GET", "/qos/roce")[1]
    assert roce["pfc"]["pfc-priority"] == 3 and roce["congestion-control"]["min-threshold"] == "146.48 KB"
    assert roce["congestion-control"]["max-threshold"] == "1.43 MB"
    system = c.call("GET", "/system")[1]
    assert system["hostname"] == sim.name and system["product-release"].startswith("5.12")
    assert c.call("GET", "/platform")[1]["serial-number"].startswith("MT")


def test_delete_unsets_and_save_without_autosave(make_sim, ca, tmp_path: Path) -> None:
    startup = default_startup_config("leafx", PORTS)
    startup["system"]["config"] = {"auto-save": {"state": "disabled"}}
    sim = make_sim(name="leafx", startup_config=startup)
    c = Client(sim, ca)
    rev = c.new_revision()
    status, body = c.call("DELETE", f"/bridge/domain/br_default/vlan/100?rev={rev}")
    assert (status, body) == (204, None)
    assert c.call("DELETE", f"/interface/swp4/bridge?rev={rev}")[0] == 204
    assert c.call("PATCH", f"/qos/roce?rev={rev}", {"enable": "on"})[0] == 200
    assert c.apply(rev)["state"] == "applied"
    assert "100" not in c.applied("/bridge/domain/br_default/vlan")
    assert c.call("GET", "/bridge/domain/br_default/vlan?rev=startup")[1] == {"100": {}}  # not saved yet
    status, _ = c.call("PATCH", "/revision/applied", {"state": "save"})
    assert status == 200
    assert c.call("GET", "/bridge/domain/br_default/vlan?rev=startup")[1] == {}
    saved = (tmp_path / "nvue" / "leafx" / "startup.yaml").read_text()
    assert "enable: 'on'" in saved  # YAML 1.1: on/off stay strings
    # rollback to startup: an unsaved change goes away
    rev = c.new_revision()
    c.call("PATCH", f"/system?rev={rev}", {"hostname": "unsaved"})
    assert c.apply(rev)["state"] == "applied"
    status, reply = c.call("PATCH", "/revision/startup", {"state": "apply", "auto-prompt": {"ays": "ays_yes"}})
    assert status == 200 and reply["state"] == "applying"
    time.sleep(0.3)
    assert c.applied("/system/hostname") == "leafx"
    assert sim.store.history[-1].action == "rollback"
    # a restarted switch boots from its saved startup.yaml
    sim.stop()
    again = NvueSim("leafx", sim.address, ports=PORTS, username=USER, password=PASSWORD, ca=ca, state_dir=tmp_path)
    assert again.store.applied["qos"]["roce"] == {"enable": "on"}
    parsed = yaml.safe_load(saved)
    assert parsed[0]["header"]["nvue-api-version"] == "nvue_v1"


def test_invalid_values_fail_and_leave_applied_untouched(make_sim, ca) -> None:
    sim = make_sim()
    c = Client(sim, ca)
    before = c.applied()
    rev = c.new_revision()
    # schema errors are refused at PATCH time, like `nv set` refusing a value
    status, err = c.call("PATCH", f"/interface/swp1/link?rev={rev}", {"mtu": 10000})
    assert status == 400 and "interface swp1 link mtu" in err["detail"]
    status, err = c.call("PATCH", f"/qos/roce?rev={rev}", {"enable": True})  # the YAML 1.1 trap
    assert status == 400
    status, err = c.call("PATCH", f"/qos?rev={rev}", {"roce": {"colour": "blue"}})
    assert status == 400 and "colour" in err["detail"]
    # reserved internal VLANs pass the schema but fail the apply
    assert c.call("PATCH", f"/bridge/domain/br_default/vlan?rev={rev}", {"3800": {}})[0] == 200
    result = c.apply(rev)
    assert result["state"] == "apply_fail"
    messages = [i["message"] for i in result["transition"]["issue"].values()]
    assert any("3800" in m and "reserved" in m for m in messages)
    assert c.applied() == before

    # with PATCH validation off, the out-of-range value reaches the apply and fails there
    lax = make_sim(patch_validation=False)
    c2 = Client(lax, ca)
    rev = c2.new_revision()
    assert c2.call("PATCH", f"/?rev={rev}", {"interface": {"swp2": {"link": {"mtu": 10000}}}})[0] == 200
    assert (
        c2.call(
            "PATCH",
            f"/?rev={rev}",
            {
                "vrf": {
                    "default": {"router": {"bgp": {"address-family": {"ipv4-unicast": {"multipaths": {"ebgp": 129}}}}}}
                }
            },
        )[0]
        == 200
    )
    result = c2.apply(rev)
    assert result["state"] == "apply_fail"
    text = json.dumps(result["transition"]["issue"])
    assert "mtu" in text and "ebgp" in text
    assert c2.applied("/interface/swp2/link") == {}


# issue #39: each is refused by a real switch at `nv config apply`; the simulator applied the first two over REST
REFUSED_ON_APPLY = [
    ("/interface/swp1/qos/pfc", {"profile": "NO_SUCH_PROFILE"}, "no such profile under qos pfc"),
    ("/bridge/domain/br_default/vlan", {"5000": {}}, "VLAN 5000 is out of range 1-4094"),
    (
        "/interface/swp1",
        {"bridge": {"domain": {"br_default": {}}}, "ip": {"address": {"10.9.9.1/31": {}}}},
        "cannot be set on a bridge member",
    ),
    (
        "/interface",
        {"swp1": {"ip": {"address": {"10.9.9.1/31": {}}}}, "swp2": {"ip": {"address": {"10.9.9.1/31": {}}}}},
        "address already in use on swp1",
    ),
]


@pytest.mark.parametrize(("path", "body", "message"), REFUSED_ON_APPLY, ids=[m for _p, _b, m in REFUSED_ON_APPLY])
def test_rest_apply_refuses_what_the_switch_refuses(make_sim, ca, path: str, body: Any, message: str) -> None:
    sim = make_sim()
    c = Client(sim, ca)
    before = c.applied()
    rev = c.new_revision()
    assert c.call("PATCH", f"{path}?rev={rev}", body)[0] == 200  # the schema takes it: the apply refuses it
    result = c.apply(rev)
    assert result["state"] == "apply_fail", result
    assert any(message in i["message"] for i in result["transition"]["issue"].values()), result
    assert c.applied() == before


def test_rest_apply_takes_a_defined_pfc_profile_and_vlan_4094(make_sim, ca) -> None:
    sim = make_sim()
    c = Client(sim, ca)
    rev = c.new_revision()
    body = {
        "qos": {"pfc": {"my_pfc_ports": {"switch-priority": {"3": {}}, "tx": "enable", "rx": "enable"}}},
        "interface": {"swp2": {"qos": {"pfc": {"profile": "my_pfc_ports"}}}},
        "bridge": {"domain": {"br_default": {"vlan": {"4094": {}}}}},
    }
    assert c.call("PATCH", f"/?rev={rev}", body)[0] == 200
    result = c.apply(rev)
    assert result["state"] == "applied_and_saved", result
    assert c.applied("/interface/swp2/qos/pfc") == {"profile": "my_pfc_ports"}


def test_unknown_interface_and_neighbor_without_remote_as_fail(make_sim, ca) -> None:
    c = Client(make_sim(), ca)
    rev = c.new_revision()
    c.call("PATCH", f"/?rev={rev}", {"interface": {"swp99": {"type": "swp"}}})
    c.call("PATCH", f"/vrf/default/router/bgp/neighbor/swp1?rev={rev}", {"type": "unnumbered"})
    result = c.apply(rev)
    text = json.dumps(result["transition"]["issue"])
    assert result["state"] == "apply_fail" and "swp99" in text and "remote-as" in text


def test_qos_change_without_ays_fails(make_sim, ca) -> None:
    c = Client(make_sim(), ca)
    rev = c.new_revision()
    c.call("PATCH", f"/qos/roce?rev={rev}", {"enable": "on"})
    assert c.apply(rev, ays=False)["state"] == "ays_fail"
    assert c.applied("/qos/roce") == {}


def test_rollback_by_applying_an_older_revision_and_startup(make_sim, ca) -> None:
    sim = make_sim()
    c = Client(sim, ca)
    r1 = c.new_revision()
    c.call("PATCH", f"/system?rev={r1}", {"hostname": "alpha"})
    c.apply(r1)
    r2 = c.new_revision()
    c.call("PATCH", f"/system?rev={r2}", {"hostname": "beta"})
    c.call("PATCH", f"/interface/swp3/link?rev={r2}", {"state": {"down": {}}})
    c.apply(r2)
    assert c.applied("/system/hostname") == "beta" and not sim.lab_view().ports["swp3"].enabled
    c.apply(r1)  # roll back
    assert c.applied("/system/hostname") == "alpha"
    assert c.applied("/interface/swp3/link") == {}
    assert sim.lab_view().ports["swp3"].enabled
    actions = [(h.rev_id, h.action) for h in sim.store.history]
    assert actions == [(r1, "apply"), (r2, "apply"), (r1, "rollback")]
    out, rc = ssh_exec(sim, f"nv config apply {r2} -y")  # forward again over the CLI
    assert rc == 0 and "beta" in out
    assert c.call("GET", "/system/hostname?rev=startup")[1] == "beta"  # auto-save keeps startup in step


def test_revision_from_an_old_base_still_applies_its_full_tree(make_sim, ca) -> None:
    c = Client(make_sim(), ca)
    old = c.new_revision()  # based on the brownfield tree
    new = c.new_revision()
    c.call("PATCH", f"/system?rev={new}", {"hostname": "from-new"})
    c.apply(new)
    c.call("PATCH", f"/interface/swp2?rev={old}", {"description": "from-old"})
    c.apply(old)
    applied = c.applied()
    assert applied["interface"]["swp2"]["description"] == "from-old"
    assert applied["system"]["hostname"] != "from-new"  # full tree of `old`, not a merge
    assert applied["interface"]["swp1"]["description"] == "old uplink - decom 2023"


# -- authentication -----------------------------------------------------------------------------
def test_basic_auth_and_bearer_token(make_sim, ca) -> None:
    sim = make_sim()
    bad = Client(sim, ca, auth="Basic " + base64.b64encode(b"cumulus:wrong").decode())
    assert bad.call("GET", "/system?rev=applied")[0] == 401
    status, body = Client(sim, ca).call("GET", "/api-token")
    assert status == 200 and body["token"].count(".") == 2
    bearer = Client(sim, ca, auth=f"Bearer {body['token']}")
    status, system = bearer.call("GET", "/system?rev=applied")
    assert status == 200 and system["hostname"] == sim.name
    forged = body["token"][:-4] + ("AAAA" if not body["token"].endswith("AAAA") else "BBBB")
    assert Client(sim, ca, auth=f"Bearer {forged}").call("GET", "/system")[0] == 401
    # TLS: the certificate verifies against the lab CA for the device's address
    with (
        socket.create_connection((sim.address, sim.port)) as raw,
        ca.client_context().wrap_socket(raw, server_hostname=sim.address) as tls,
    ):
        assert tls.version() is not None


# -- commit-confirm over SSH ------------------------------------------------------------------------
def test_confirm_timer_expiry_reverts(make_sim, ca) -> None:
    sim = make_sim()
    c = Client(sim, ca)
    rev = c.new_revision()
    c.call("PATCH", f"/system?rev={rev}", {"hostname": "trial"})
    out, rc = ssh_exec(sim, f"nv config apply {rev} -y --confirm 2s")
    assert rc == 0 and f"applied [rev_id: {rev}]" in out
    assert c.applied("/system/hostname") == "trial"
    out, rc = ssh_exec(sim, "nv config apply --confirm-status")
    assert rc == 0 and f"Revision {rev} is waiting" in out
    assert c.call("GET", "/system/hostname?rev=startup")[1] == sim.name  # not saved while pending
    time.sleep(2.6)
    assert c.applied("/system/hostname") == sim.name
    assert c.call("GET", f"/revision/{rev}")[1]["state"] == "confirm_fail"
    out, _ = ssh_exec(sim, "nv config history")
    assert "confirm-timeout" in out
    out, _ = ssh_exec(sim, "nv config apply --confirm-status")
    assert "No pending confirmation" in out


def test_confirm_yes_keeps_the_change(make_sim, ca) -> None:
    sim = make_sim()
    c = Client(sim, ca)
    rev = c.new_revision()
    c.call("PATCH", f"/system?rev={rev}", {"hostname": "kept"})
    assert ssh_exec(sim, f"nv config apply {rev} -y --confirm 2s")[1] == 0
    other = c.new_revision()
    out, rc = ssh_exec(sim, f"nv config apply {other} -y")  # refused while a confirm is pending
    assert rc == 1 and "waiting for confirmation" in out
    out, rc = ssh_exec(sim, "nv config apply --confirm-yes")
    assert rc == 0 and f"Revision {rev} confirmed" in out
    time.sleep(2.4)
    assert c.applied("/system/hostname") == "kept"
    assert c.call("GET", "/system/hostname?rev=startup")[1] == "kept"


def test_netmiko_cumulus_session_reads_config(make_sim) -> None:
    from netmiko import ConnectHandler

    sim = make_sim()
    conn = ConnectHandler(
        device_type="cumulus_linux",
        host=sim.address,
        port=sim.ssh_port,
        username=USER,
        password=PASSWORD,
        fast_cli=False,
        timeout=10,
    )
    try:
        assert conn.find_prompt() == f"{USER}@{sim.name}:mgmt:~$"
        tree = json.loads(str(conn.send_command("nv config show -o json")))
        assert tree["system"]["hostname"] == sim.name
        commands = conn.send_command("nv config show -o commands")
        assert "nv set bridge domain br_default vlan 100" in commands
        assert "command not found" in conn.send_command("vtysh -c 'show run'")
        # the nv set / apply path of a person at the prompt
        assert conn.send_command("nv set interface swp2-3 link mtu 9000") == ""
        assert "is not a valid keyword" in conn.send_command("nv set interface swp2 lnk mtu 9000")
        assert "applied [rev_id:" in conn.send_command("nv config apply -y")
        assert conn.send_command("nv show interface swp3 link mtu") == "9000"
        assert sim.lab_view().ports["swp2"].mtu == 9000
    finally:
        conn.disconnect()


# -- faults ---------------------------------------------------------------------------------------
def test_fault_reject_fails_matching_apply(make_sim, ca) -> None:
    faults = Faults()
    faults.set("reject", r"link mtu 9000")
    c = Client(make_sim(faults=faults), ca)
    rev = c.new_revision()
    c.call("PATCH", f"/interface/swp1/link?rev={rev}", {"mtu": 9000})
    result = c.apply(rev)
    assert result["state"] == "apply_fail"
    assert "nv set interface swp1 link mtu 9000" in json.dumps(result["transition"]["issue"])
    rev2 = c.new_revision()
    c.call("PATCH", f"/interface/swp1/link?rev={rev2}", {"mtu": 9100})
    assert c.apply(rev2)["state"] == "applied_and_saved"


def test_fault_drop_on_commit_closes_without_applying(make_sim, ca) -> None:
    faults = Faults()
    sim = make_sim(faults=faults)
    c = Client(sim, ca)
    rev = c.new_revision()
    c.call("PATCH", f"/system?rev={rev}", {"hostname": "dropped"})
    faults.set("drop-on-commit")
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError, ssl.SSLError)):
        c.call("PATCH", f"/revision/{rev}", {"state": "apply", "auto-prompt": {"ays": "ays_yes"}})
    try:  # the SSH connection is closed under the exec: no output, no exit status
        out, rc = ssh_exec(sim, f"nv config apply {rev} -y")
    except (paramiko.SSHException, EOFError, ConnectionError):
        out, rc = "", -1
    assert (out, rc) == ("", -1)
    faults.clear()
    assert c.applied("/system/hostname") == sim.name
    assert c.call("GET", f"/revision/{rev}")[1]["state"] == "pending"
    assert c.apply(rev)["state"] == "applied_and_saved"


def test_fault_delay_hang_and_auth_refuse(make_sim, ca) -> None:
    faults = Faults()
    sim = make_sim(faults=faults)
    c = Client(sim, ca)
    faults.set("delay", "0.5")
    started = time.monotonic()
    assert c.call("GET", "/system?rev=applied")[0] == 200
    assert time.monotonic() - started >= 0.5
    faults.clear()
    faults.set("hang")
    with pytest.raises(TimeoutError):
        Client(sim, ca, timeout=0.5).call("GET", "/system?rev=applied")
    faults.clear()
    assert c.call("GET", "/system?rev=applied")[0] == 200
    faults.set("auth-refuse")
    assert c.call("GET", "/system?rev=applied")[0] == 401
    with pytest.raises(paramiko.AuthenticationException):
        ssh_exec(sim, "nv config history")
    faults.clear()


# -- state that follows config --------------------------------------------------------------------
def test_lldp_and_bgp_follow_the_world(make_sim, ca) -> None:
    world = World([("spine1", "swp1", "leaf1", "swp1"), ("spine1", "swp2", "leaf9", "swp1")])
    spine = make_sim(name="spine1", world=world)
    leaf = make_sim(name="leaf1", world=world)
    fabric = {
        "router": {"bgp": {"autonomous-system": 0, "router-id": ""}},
        "vrf": {
            "default": {
                "router": {
                    "bgp": {
                        "neighbor": {"swp1": {"type": "unnumbered", "peer-group": "fabric"}},
                        "peer-group": {"fabric": {"remote-as": "external"}},
                        "address-family": {"ipv4-unicast": {"network": {}, "multipaths": {"ebgp": 16}}},
                        "path-selection": {"multipath": {"aspath-ignore": "on"}},
                    }
                }
            }
        },
    }
    for sim, asn, rid in ((spine, 65100, "10.0.0.100"), (leaf, 65101, "10.0.0.1")):
        c = Client(sim, ca)
        rev = c.new_revision()
        body = json.loads(json.dumps(fabric))
        body["router"]["bgp"] = {"autonomous-system": asn, "router-id": rid}
        body["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]["network"] = {f"{rid}/32": {}}
        body["interface"] = {"lo": {"ip": {"address": {f"{rid}/32": {}}}}}
        assert c.call("PATCH", f"/?rev={rev}", body)[0] == 200
        assert c.apply(rev)["state"] == "applied_and_saved", c.call("GET", f"/revision/{rev}")
    c = Client(leaf, ca)
    ifaces = c.call("GET", "/interface")[1]
    assert ifaces["swp1"]["link"]["oper-status"] == "up" and ifaces["swp2"]["link"]["oper-status"] == "down"
    assert ifaces["swp1"]["lldp"]["neighbor"]["spine1"]["port"]["name"] == "swp1"
    neighbors = c.call("GET", "/vrf/default/router/bgp/neighbor")[1]
    assert neighbors["swp1"]["session-state"] == "established"
    assert neighbors["swp1"]["peer-hostname"] == "spine1"
    assert world.ecmp_paths("leaf1") == {"10.0.0.100/32": 1}
    assert world.routes("leaf1") is world.routes("leaf1")  # made once while the best paths stand
    # a GET of one top-level key works out only that key, and it is the same subtree as in the whole tree
    whole = leaf.operational()
    assert set(whole) >= {"system", "platform", "interface", "vrf", "qos", "router"}
    for top in whole:
        part = leaf.operational(top)
        assert list(part) == [top]
        if top == "system":
            part[top]["uptime"] = whole[top]["uptime"]  # seconds since boot: may tick between the two reads
        if top == "interface":  # counters grow between the two reads
            for name, iface in part[top].items():
                if "stats" in iface.get("link", {}):
                    iface["link"]["stats"] = whole[top][name]["link"]["stats"]
        assert part[top] == whole[top], top
    assert (
        c.call("GET", "/vrf/default/router/rib/ipv4/route")[1]["10.0.0.100/32"]["route-entry"]["1"]["protocol"] == "bgp"
    )
    # a GET of one route or of the BGP neighbours works out no more of the RIB (issue 42), with the same subtree
    vrf = whole["vrf"]["default"]["router"]
    one = c.call("GET", "/vrf/default/router/rib/ipv4/route/10.0.0.100%2F32")[1]
    assert one == vrf["rib"]["ipv4"]["route"]["10.0.0.100/32"]
    assert leaf.operational("vrf", ["vrf", "default", "router", "rib", "ipv4", "route", "10.0.0.100/32"])["vrf"][
        "default"
    ]["router"]["rib"]["ipv4"]["route"] == {"10.0.0.100/32": one}
    assert c.call("GET", "/vrf/default/router/rib/ipv4/route/10.9.9.9%2F32")[1] == {}
    assert c.call("GET", "/vrf/default/router/bgp")[1] == vrf["bgp"]
    assert "rib" not in leaf.operational("vrf", ["vrf", "default", "router", "bgp"])["vrf"]["default"]["router"]
    view = leaf.lab_view()
    assert (view.asn, view.router_id, view.maximum_paths) == (65101, "10.0.0.1", 16)
    assert view.neighbors[0].peer == "swp1" and view.neighbors[0].remote_as == "external"
    assert view.networks == ("10.0.0.1/32",) and view.ports["lo"].address == "10.0.0.1/32"
    # shutting the spine's port takes the session and the LLDP neighbor down
    s = Client(spine, ca)
    rev = s.new_revision()
    s.call("PATCH", f"/interface/swp1/link?rev={rev}", {"state": {"down": {}}})
    s.apply(rev)
    assert c.call("GET", "/vrf/default/router/bgp/neighbor")[1]["swp1"]["session-state"] == "active"
    assert "10.0.0.100/32" not in c.call("GET", "/vrf")[1]["default"]["router"]["rib"]["ipv4"]["route"]  # not kept
    assert "lldp" not in c.call("GET", "/interface/swp1")[1]
    assert c.call("GET", "/interface/swp77")[0] == 404


# -- brownfield default and schema --------------------------------------------------------------
def test_brownfield_default_is_valid_and_not_empty() -> None:
    tree = default_startup_config("leaf7", PORTS)
    for validator in (Validator(), Validator(use_nvueschema=False)):
        assert validator.apply_errors(tree, PORTS) == [], validator.source
    assert "roce" not in tree["qos"]
    assert tree["bridge"]["domain"]["br_default"]["vlan"] == {"100": {}}
    assert tree["interface"]["swp1"]["description"]


def test_hand_written_schema_catches_what_fabconf_renders_wrong() -> None:
    v = Validator(use_nvueschema=False)
    bad = {
        "interface": {"swp1": {"link": {"mtu": 551}}},
        "qos": {"roce": {"enable": True}, "pfc-watchdog": {"polling-interval": 50}},
        "vrf": {"default": {"router": {"bgp": {"neighbor": {"swp1": {"type": "bgp", "remote-as": "elsewhere"}}}}}},
        "system": {"hostnam": "typo"},
    }
    text = "\n".join(v.schema_errors(bad))
    for needle in ("mtu", "roce enable", "polling-interval", "neighbor swp1 type", "remote-as", "hostnam"):
        assert needle in text


def test_cli_views_of_a_rest_revision(make_sim, ca) -> None:
    sim = make_sim()
    c = Client(sim, ca)
    rev = c.new_revision()
    c.call("PATCH", f"/?rev={rev}", {"interface": {"swp2": {"link": {"mtu": 9100}}}})
    c.call("DELETE", f"/interface/swp1/description?rev={rev}")
    out, rc = ssh_exec(sim, f"nv config diff {rev} -o commands")
    assert rc == 0
    assert out.splitlines() == ["nv unset interface swp1 description", "nv set interface swp2 link mtu 9100"]
    out, _ = ssh_exec(sim, f"nv config diff applied {rev}")
    assert yaml.safe_load(out)[1] == {"set": {"interface": {"swp2": {"link": {"mtu": 9100}}}}}
    out, _ = ssh_exec(sim, f"nv config show -r {rev} -o json")
    assert json.loads(out)["interface"]["swp2"]["link"]["mtu"] == 9100
    out, _ = ssh_exec(sim, "nv config revision")
    assert f"{rev}       pending" in out
    doomed = c.new_revision()
    assert c.call("DELETE", f"/revision/{doomed}")[0] == 204
    assert c.call("GET", f"/revision/{doomed}")[0] == 404
    assert ssh_exec(sim, "nv config apply --bogus")[1] == 1


# -- stretch: the applied tree drives a real FRR -------------------------------------------------
def _fabric_tree(host: str, asn: int, rid: str, uplinks: list[str]) -> dict[str, Any]:
    return {
        "system": {"hostname": host},
        "interface": {
            "lo": {"type": "loopback", "ip": {"address": {f"{rid}/32": {}}}},
            **{p: {"type": "swp", "link": {"mtu": 9216}} for p in uplinks},
        },
        "router": {"bgp": {"autonomous-system": asn, "router-id": rid}},
        "vrf": {
            "default": {
                "router": {
                    "bgp": {
                        "peer-group": {"fabric": {"remote-as": "external"}},
                        "neighbor": {p: {"type": "unnumbered", "peer-group": "fabric"} for p in uplinks},
                        "address-family": {"ipv4-unicast": {"network": {f"{rid}/32": {}}, "multipaths": {"ebgp": 64}}},
                        "path-selection": {"multipath": {"aspath-ignore": "on"}},
                    }
                }
            }
        },
    }


@pytest.mark.skipif(shutil.which("vtysh") is None, reason="FRR (vtysh) is not installed")
def test_frr_conf_parses_in_real_vtysh(tmp_path: Path) -> None:
    tree = _fabric_tree("leaf1", 65101, "10.0.0.1", ["swp1", "swp2"])
    tree["vrf"]["default"]["router"]["bgp"]["neighbor"]["10.1.0.1"] = {"remote-as": 65100, "description": "numbered"}
    conf = tmp_path / "frr.conf"
    conf.write_text(frr_conf(tree))
    result = subprocess.run(["vtysh", "-C", "-f", str(conf)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr
    text = conf.read_text()
    assert " neighbor swp1 interface peer-group fabric" in text and " neighbor 10.1.0.1 remote-as 65100" in text
    assert "  maximum-paths 64" in text and " bgp bestpath as-path multipath-relax" in text
    broken = tmp_path / "broken.conf"
    broken.write_text(text.replace("maximum-paths 64", "maximum-pathz 64"))
    assert subprocess.run(["vtysh", "-C", "-f", str(broken)], capture_output=True, timeout=30).returncode != 0


@pytest.mark.skipif(not netns_available(), reason="needs root, iproute2 and FRR")
def test_applied_trees_run_real_frr_and_match_the_world(make_sim, ca, tmp_path: Path) -> None:
    cables = [
        ("spine1", "swp1", "leaf1", "swp1"),
        ("spine2", "swp1", "leaf1", "swp2"),
        ("spine1", "swp2", "leaf2", "swp1"),
        ("spine2", "swp2", "leaf2", "swp2"),
    ]
    world = World(cables)
    plan = {"spine1": (65100, "10.0.0.100"), "spine2": (65200, "10.0.0.200"), "leaf1": (65101, "10.0.0.1")}
    plan["leaf2"] = (65102, "10.0.0.2")
    sims = {}
    for name, (asn, rid) in plan.items():
        sim = sims[name] = make_sim(name=name, world=world, ports=["swp1", "swp2"], ssh_port=None)
        c = Client(sim, ca)
        rev = c.new_revision()
        assert c.call("PATCH", f"/?rev={rev}", _fabric_tree(name, asn, rid, ["swp1", "swp2"]))[0] == 200
        assert c.apply(rev)["state"] == "applied_and_saved"
    assert world.ecmp_paths("leaf1")["10.0.0.2/32"] == 2  # what the simulated world predicts
    fabric = FrrFabric(f"fcnv{os.getpid() % 10000}", tmp_path)
    for name, sim in sims.items():
        fabric.add(name, sim.store.tree("applied"), sim.ports)
    for cable in cables:
        fabric.cable(*cable)
    try:
        fabric.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and fabric.route_paths("leaf1", "10.0.0.2/32") < 2:
            time.sleep(0.5)
        assert fabric.bgp_states("leaf1") == {"swp1": "Established", "swp2": "Established"}
        assert fabric.route_paths("leaf1", "10.0.0.2/32") == 2  # real kernel ECMP in the namespace
    finally:
        fabric.stop()
    assert not [
        ns
        for ns in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
        if ns.startswith(fabric.prefix)
    ]


# -- a GET ?rev= of an unchanged tree answers remembered JSON (issue 42): always the tree as it is now -----------
def test_get_of_a_revision_answers_the_tree_as_it_is_now(ca) -> None:
    import random

    from fabconf_lab.httpd import HttpRequest

    sim = NvueSim("sw1", "127.0.0.1", ports=["swp1", "swp2"], username=USER, password=PASSWORD, ca=ca)

    def call(method: str, path: str, query: dict[str, str], body: Any = None) -> tuple[int, bytes]:
        raw = json.dumps(body).encode() if body is not None else b""
        reply = sim.handle_http(HttpRequest(method, "/nvue_v1" + path, query, {}, raw, USER))
        return reply.status, reply.body

    (rev,) = json.loads(call("POST", "/revision", {})[1])
    rng = random.Random(42)
    for step in range(60):
        what = rng.choice(["patch", "delete", "get", "get"])
        port = rng.choice(["swp1", "swp2"])
        if what == "patch":
            assert call("PATCH", f"/interface/{port}", {"rev": rev}, {"description": f"d{step}"})[0] == 200
        elif what == "delete":
            assert call("DELETE", f"/interface/{port}/description", {"rev": rev})[0] == 204
        for ref in (rev, "applied", "startup"):
            for path in ("/", f"/interface/{port}", "/system", "/nothing-here"):
                status, body = call("GET", path, {"rev": ref})
                parts = [p for p in path.split("/") if p]
                tree = sim.store.tree_now(ref)
                node = tree
                for part in parts:
                    node = node.get(part, {}) if isinstance(node, dict) else {}
                assert status == 200 and body == json.dumps(node).encode(), (step, ref, path)
