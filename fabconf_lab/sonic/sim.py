"""A SONiC switch over SSH: the Generic Config Updater's commands on a CONFIG_DB, and the reads verify, drift and
preflight use. Facts and sources: docs/reference/sonic.md.

Commands (each an ``exec`` request, ``sudo`` accepted in front; anything else is refused as bash would)::

    show runningconfiguration all              the CONFIG_DB as JSON (indent 4) plus "bgpraw"
    config apply-patch [-d] [-v] FILE          FILE sent first by SCP (``scp -t FILE``)
    config checkpoint NAME | rollback NAME | delete-checkpoint NAME | list-checkpoints
    show pfcwd config | show pfcwd stats       tables as SONiC's pfcwd prints them
    show interfaces counters                   portstat's table

It keeps the lab's ``Simulator`` contract (``fabconf_lab.contract``) but is not registered with the orchestrator
yet: tests start it directly (``SonicSim(...).start()``). Faults: the SSH service's (refused authentication,
delay, hang), and ``drop_on_commit`` drops the connection in the middle of ``config apply-patch`` after GCU has
applied the patch, so the client never learns the result.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import shlex
from collections.abc import Callable
from typing import Any, Unpack

from fabconf.private import UnsafePath, read_private, write_private
from fabconf_lab.contract import SimArgs, SimBase
from fabconf_lab.sonic.gcu import ConfigDb, PatchRefused
from fabconf_lab.sshd import SessionContext, ShellSession, SshService
from fabconf_lab.world import DeviceView, NeighborView, PortView

_CLICK_USAGE = {
    "apply-patch": 'Usage: config apply-patch [OPTIONS] PATCH_FILE_PATH\nTry "config apply-patch -h" for help.\n\n',
    "rollback": 'Usage: config rollback [OPTIONS] CHECKPOINT_NAME\nTry "config rollback -h" for help.\n\n',
    "checkpoint": 'Usage: config checkpoint [OPTIONS] CHECKPOINT_NAME\nTry "config checkpoint -h" for help.\n\n',
    "delete-checkpoint": "Usage: config delete-checkpoint [OPTIONS] CHECKPOINT_NAME\n"
    'Try "config delete-checkpoint -h" for help.\n\n',
}
_FAILED = {
    "apply-patch": "Failed to apply patch due to: {}",
    "rollback": "Failed to rollback config",
    "checkpoint": "Failed to create a config checkpoint",
    "delete-checkpoint": "Failed to delete config checkpoint",
}
_DONE = {
    "apply-patch": "Patch applied successfully.",
    "rollback": "Config rolled back successfully.",
    "checkpoint": "Checkpoint created successfully.",
    "delete-checkpoint": "Checkpoint deleted successfully.",
}


STORM_PRIORITY = 3  # a lab pause storm's priority, as on the lab's NVUE (fabconf_lab.nvue.oper) [U: a lab model]


def _natural(name: str) -> tuple[str, int]:
    """natsort's order for port names (Ethernet2 before Ethernet10), as pfcstat sorts them."""
    head = name.rstrip("0123456789")
    return head, int(name[len(head) :] or 0)


def table(header: list[str], rows: list[list[str]], right: bool = True) -> str:
    """tabulate's "simple" format as SONiC's show commands print it (two spaces between columns): right-aligned
    (pfcwd, portstat) or left-aligned (tabulate's default for text, lldpshow)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if right else c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]) + "\n"


def default_config(name: str, ports: list[str]) -> dict[str, Any]:
    """A factory-fresh switch: its ports (8 lanes each, 400G, MTU 9100, up), its metadata and the operator's SNMP
    community, nothing routed."""
    return {
        "DEVICE_METADATA": {"localhost": {"hostname": name, "hwsku": "Mellanox-SN5600", "platform": "x86_64-sim"}},
        "PORT": {
            p: {"lanes": ",".join(str(n * 8 + j) for j in range(8)), "speed": "400000", "mtu": "9100",
                "admin_status": "up"}
            for n, p in enumerate(ports)
        },
        "SNMP_COMMUNITY": {"lab-ro": {"TYPE": "RO"}},  # the operator's SNMP agent (the lab's switch metrics need it)
    }  # fmt: skip


class SonicSim(SimBase):
    """``Simulator`` (fabconf_lab.contract): ``config`` is the starting CONFIG_DB (default: ``default_config``)."""

    def __init__(
        self,
        name: str,
        address: str,
        *,
        ssh_port: int = 22,
        config: dict[str, Any] | None = None,
        bgpraw: str = "",
        **common: Unpack[SimArgs],
    ) -> None:
        super().__init__(name, address, **common)
        self.ssh_port = ssh_port
        # the CONFIG_DB survives `lab down` / `lab up` in the device's own state directory (as /etc/sonic does)
        self._saved = self.state_dir / "config_db.json" if self.state_dir is not None else None
        start = config if config is not None else default_config(name, self.ports)
        if config is None and self._saved is not None and self._saved.exists():
            with contextlib.suppress(OSError, UnsafePath, ValueError):
                start = json.loads(read_private(self._saved, limit=64 << 20))
        self.db = ConfigDb(start, save=self._save if self._saved is not None else None)
        self.bgpraw = bgpraw
        self.files: dict[str, bytes] = {}
        self.counters: dict[str, dict[str, int]] = {}  # port -> RX_OK, RX_ERR, RX_DRP, TX_OK, TX_ERR, TX_DRP
        self.storms: dict[str, tuple[int, int]] = {}  # "Ethernet0:3" -> (detected, restored)
        self.pfc_pauses: Callable[[], int] = lambda: 0  # PFC frames received so far (``lab fault DEV pfc-storm``)
        self.ssh = SshService(
            name,
            address,
            ssh_port,
            username=self.username,
            password=self.password,
            session_factory=self._session,
            scp_sink=self._scp_sink,
            faults=self.faults,
            state_dir=self.state_dir,
            refuse=self._refuse,
            moment=self._moment,
            connect_moment=True,
        )

    def _save(self, config: dict[str, Any]) -> None:
        assert self._saved is not None
        write_private(self._saved, json.dumps(config, indent=4, sort_keys=True) + "\n")

    def running_config(self) -> str:
        return json.dumps(self.db.running(), indent=4, sort_keys=True) + "\n"

    def lab_view(self) -> DeviceView:
        """What the World reads: ports (admin state, MTU, routed /31), ASN, router id, BGP neighbours and the
        prefixes advertised. [U] SONiC's bgpcfgd templates advertise Loopback0 and the VLAN subnets of a leaf by
        themselves; the lab assumes that, and ``maximum-paths 64``."""
        db = self.db.running()
        addresses = {k.split("|")[0]: k.split("|")[1] for k in db.get("INTERFACE", {}) if "|" in k}
        ports = {
            p: PortView(
                p, enabled=f.get("admin_status") == "up", mtu=int(f.get("mtu", "9100")), address=addresses.get(p)
            )
            for p, f in db.get("PORT", {}).items()
        }
        loopback = next((k.split("|")[1] for k in db.get("LOOPBACK_INTERFACE", {}) if "|" in k), None)
        networks = [loopback] if loopback else []
        for key in db.get("VLAN_INTERFACE", {}):
            if "|" in key:
                networks.append(str(ipaddress.ip_interface(key.split("|")[1]).network))
        asn = db.get("DEVICE_METADATA", {}).get("localhost", {}).get("bgp_asn")
        return DeviceView(
            hostname=db.get("DEVICE_METADATA", {}).get("localhost", {}).get("hostname", self.name),
            ports=ports,
            asn=int(asn) if asn else None,
            router_id=loopback.split("/")[0] if loopback else None,
            neighbors=tuple(
                NeighborView(peer, int(f["asn"]))
                for peer, f in sorted(db.get("BGP_NEIGHBOR", {}).items())
                if "asn" in f
            ),
            networks=tuple(networks),
            maximum_paths=64,
        )

    @property
    def port(self) -> int:
        return self.ssh.port

    def start(self) -> None:
        self.ssh.start()
        self.ssh_port = self.ssh.port
        if self.world is not None:
            self.world.register(self)

    def stop(self) -> None:
        if self.world is not None:
            self.world.unregister(self.name)
        self.ssh.stop()

    def _scp_sink(self, path: str, data: bytes) -> str | None:
        self.files[path] = data
        return None

    def _session(self, ctx: SessionContext) -> ShellSession:
        return _Session(self)

    # -- step faults (fabconf_lab.faults) ------------------------------------------------------------------------
    def _moment(self, kind: str, command: str) -> str | None:
        """A request's moment of a push: SSH authentication is ``connect``; ``config checkpoint`` and the patch's
        upload (SCP) ``stage``; ``config apply-patch`` ``commit``; while a checkpoint is kept (a commit waiting for
        fabconf to confirm it, or to roll back) every read is ``verify``, ``config delete-checkpoint`` ``confirm``
        and ``config rollback`` ``rollback``; reads before that ``read``."""
        if kind == "scp":
            return "stage"
        try:
            words = shlex.split(command)
        except ValueError:
            return None
        words = words[1:] if words[:1] == ["sudo"] else words
        pending = bool(self.db.checkpoints)
        verb = words[1] if words[:1] == ["config"] and len(words) > 1 else ""
        if verb == "checkpoint":
            return "stage"
        if verb == "apply-patch":
            return "commit"
        if verb == "rollback":
            return "rollback"
        if verb == "delete-checkpoint":
            return "confirm" if pending else "stage"
        return "verify" if pending else "read"

    @staticmethod
    def _refuse(command: str) -> tuple[str, str, int]:
        """The ``reject`` step fault: a ``config`` command fails as GCU's click command does (exit 2, the failure
        line, the usage and ``Error: …``); any other command is unknown to the shell."""
        words = command.split()
        words = words[1:] if words[:1] == ["sudo"] else words
        verb = words[1] if words[:1] == ["config"] and len(words) > 1 else ""
        if verb in _FAILED:
            reason = "rejected by the switch"
            return "", f"{_FAILED[verb].format(reason)}\n{_CLICK_USAGE[verb]}Error: {reason}\n", 2
        return "", f"-bash: {words[0] if words else ''}: command not found\n", 127

    # -- commands -----------------------------------------------------------------------------------------------
    def run(self, command: str) -> tuple[str, str, int]:
        try:
            words = shlex.split(command)
        except ValueError:
            return "", "-bash: syntax error\n", 2
        if words[:1] == ["sudo"]:
            words = words[1:]
        if words == ["show", "runningconfiguration", "all"]:
            doc = self.db.running()
            doc["bgpraw"] = self.bgpraw
            return json.dumps(doc, indent=4) + "\n", "", 0
        if words[:2] == ["show", "pfcwd"] and words[2:] in (["config"], ["stats"]):
            return (self._pfcwd_config() if words[2] == "config" else self._pfcwd_stats()), "", 0
        if words == ["show", "pfc", "counters"]:
            return self._pfc_counters(), "", 0
        if words == ["show", "interfaces", "counters"]:
            return self._counters(), "", 0
        if words == ["show", "interfaces", "status"]:
            return self._status(), "", 0
        if words == ["show", "lldp", "table"]:
            return self._lldp(), "", 0
        if words == ["vtysh", "-c", "show ip bgp summary json"]:
            return json.dumps(self._bgp_summary(), indent=2) + "\n", "", 0
        if len(words) == 3 and words[:2] == ["vtysh", "-c"] and words[2].startswith("show ip route "):
            rest = words[2].split()[3:]
            if len(rest) == 2 and rest[1] == "json":
                return json.dumps(self._route(rest[0]), indent=2) + "\n", "", 0
        if words[:1] == ["config"] and len(words) >= 2:
            return self._config(words[1], [w for w in words[2:] if not w.startswith("-")], set(words[2:]))
        if not words:
            return "", "", 0
        return "", f"-bash: {words[0]}: command not found\n", 127

    def _config(self, verb: str, args: list[str], flags: set[str]) -> tuple[str, str, int]:
        if verb == "list-checkpoints":
            return self.db.list_checkpoints() + "\n", "", 0
        if verb not in _DONE:
            return (
                "",
                'Usage: config [OPTIONS] COMMAND [ARGS]...\nTry "config -h" for help.\n\n'
                f'Error: No such command "{verb}".\n',
                2,
            )
        if len(args) != 1:
            missing = "PATCH_FILE_PATH" if verb == "apply-patch" else "CHECKPOINT_NAME"
            return "", f"{_CLICK_USAGE[verb]}Error: Missing argument '{missing}'.\n", 2
        arg = args[0]
        try:
            if verb == "apply-patch":
                data = self.files.get(arg)
                if data is None:
                    raise PatchRefused(f"[Errno 2] No such file or directory: '{arg}'")
                try:
                    ops = json.loads(data)
                except json.JSONDecodeError as exc:
                    raise PatchRefused(str(exc)) from None
                rejected = [
                    str(op.get("path"))
                    for op in ops
                    if isinstance(op, dict) and self.faults.rejects(str(op.get("path")))
                ]
                if rejected:  # the reject fault: GCU refuses the patch at that path
                    raise PatchRefused(f"Given patch will produce invalid config. Error: rejected {rejected[0]}")
                self.db.apply(ops, dry_run=bool(flags & {"-d", "--dry-run"}))
                self.faults.on_commit()  # drop_on_commit: applied, and the connection drops before the answer
            elif verb == "checkpoint":
                self.db.checkpoint(arg)
            elif verb == "rollback":
                self.db.rollback(arg)
            else:
                self.db.delete_checkpoint(arg)
        except PatchRefused as exc:
            failed = _FAILED[verb].format(exc)
            return "", f"{failed}\n{_CLICK_USAGE[verb]}Error: {exc}\n", 2
        return _DONE[verb] + "\n", "", 0

    # -- reads ----------------------------------------------------------------------------------------------------
    def _pfcwd_config(self) -> str:
        wd = self.db.running().get("PFC_WD", {})
        poll = wd.get("GLOBAL", {}).get("POLL_INTERVAL", "200")
        rows = [
            [port, f.get("action", "drop"), f.get("detection_time", ""), f.get("restoration_time", ""), "disable"]
            for port, f in sorted(wd.items())
            if port != "GLOBAL"
        ]
        head = ["PORT", "ACTION", "DETECTION TIME", "RESTORATION TIME", "HISTORY"]
        return f"Changed polling interval to {poll}ms\n" + table(head, rows)

    def _pfcwd_stats(self) -> str:
        config = self.db.running()
        wd = config.get("PFC_WD", {})
        rows = []
        for port, fields in sorted(config.get("PORT_QOS_MAP", {}).items()):
            if port not in wd:
                continue
            for prio in filter(None, fields.get("pfc_enable", "").split(",")):
                queue = f"{port}:{prio}"
                detected, restored = self.storms.get(queue, (0, 0))
                status = "stormed" if detected > restored else "operational"
                rows.append([queue, status, f"{detected}/{restored}", "0/0", "0/0", "0/0", "0/0"])
        head = ["QUEUE", "STATUS", "STORM DETECTED/RESTORED", "TX OK/DROP", "RX OK/DROP", "TX LAST OK/DROP",
                "RX LAST OK/DROP"]  # fmt: skip
        return table(head, rows)

    def _pfc_counters(self) -> str:
        """``show pfc counters`` (sonic-utilities ``scripts/pfcstat``): the received table (``Port Rx``), a blank
        line, the sent one (``Port Tx``); tabulate "simple", right-aligned, counts with thousands commas. A lab
        pause storm is received on priority 3 of every port that is up, as on the lab's other switches."""
        pauses = self.pfc_pauses()
        ports = sorted(self.db.running().get("PORT", {}).items(), key=lambda kv: _natural(kv[0]))
        titles = [f"PFC{p}" for p in range(8)]
        rx = [
            [port, *(f"{pauses if p == STORM_PRIORITY and f.get('admin_status') == 'up' else 0:,}" for p in range(8))]
            for port, f in ports
        ]
        tx = [[port, *("0" for _ in range(8))] for port, _f in ports]
        return table(["Port Rx", *titles], rx) + "\n" + table(["Port Tx", *titles], tx)

    def _counters(self) -> str:
        rows = []
        for port, fields in sorted(self.db.running().get("PORT", {}).items()):
            c = self.counters.get(port, {})
            state = "U" if fields.get("admin_status") == "up" else "D"
            rows.append(
                [port, state, f"{c.get('RX_OK', 0):,}", "0.00 B/s", "0.00%", f"{c.get('RX_ERR', 0):,}",
                 f"{c.get('RX_DRP', 0):,}", "0", f"{c.get('TX_OK', 0):,}", "0.00 B/s", "0.00%",
                 f"{c.get('TX_ERR', 0):,}", f"{c.get('TX_DRP', 0):,}", "0"]
            )  # fmt: skip
        head = ["IFACE", "STATE", "RX_OK", "RX_BPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR", "TX_OK", "TX_BPS",
                "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR"]  # fmt: skip
        return table(head, rows)

    def _status(self) -> str:
        """``show interfaces status`` as intfutil prints it (sonic-utilities tests/intfutil_test.py): Oper is down
        where the port is shut or the World has no carrier on its cable."""
        db = self.db.running()
        no_carrier = set(self.world.carrier_down(self.name)) if self.world is not None else set()
        members = {k.split("|")[1] for k in db.get("VLAN_MEMBER", {})}
        routed = {k.split("|")[0] for k in db.get("INTERFACE", {})}
        rows = []
        for port, f in sorted(db.get("PORT", {}).items(), key=lambda kv: int(kv[0][8:] or 0)):
            admin = "up" if f.get("admin_status") == "up" else "down"
            oper = "up" if admin == "up" and port not in no_carrier else "down"
            speed = int(f.get("speed", "0"))
            speed_text = f"{speed // 1000}G" if speed >= 1000 else f"{speed}M"
            vlan = "routed" if port in routed else ("trunk" if port in members else "")
            first_lane = f.get("lanes", "").split(",")[0]
            kind = "QSFP-DD Double Density 8X Pluggable Transceiver"
            mtu, fec = f.get("mtu", "9100"), f.get("fec", "N/A")
            rows.append([port, first_lane, speed_text, mtu, fec, port, vlan, oper, admin, kind, "off"])
        head = ["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type", "Asym PFC"]
        return table(head, rows)

    def _lldp(self) -> str:
        """``show lldp table`` as sonic-utilities' lldpshow prints it (tests/lldp_test.py)."""
        neighbors = self.world.lldp_neighbors(self.name) if self.world is not None else []
        rows = [[port, device, rport, "BR", rport] for port, device, rport in neighbors]
        head = ["LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr"]
        out = "Capability codes: (R) Router, (B) Bridge, (O) Other\n" + table(head, rows, right=False)
        return out + "-" * 50 + f"\nTotal entries displayed:  {len(rows)}\n"

    def _bgp_summary(self) -> dict[str, Any]:
        """FRR's ``show ip bgp summary json`` (the keys fabconf reads) [3P: FRR bgp_vty.c field names]."""
        view = self.lab_view()
        sessions = self.world.bgp_sessions(self.name) if self.world is not None else []
        if view.asn is None:
            return {}
        peers = {
            s.peer: {
                "remoteAs": s.remote_as if s.remote_as is not None else 0,
                "state": s.state,
                "pfxRcd": s.prefixes_received,
                "peerUptimeMsec": 0,
            }
            for s in sessions
        }
        if self.world is None:
            peers = {n.peer: {"remoteAs": n.remote_as, "state": "Active", "pfxRcd": 0, "peerUptimeMsec": 0}
                     for n in view.neighbors}  # fmt: skip
        return {"ipv4Unicast": {"routerId": view.router_id or "", "as": view.asn, "peers": peers}}

    def _route(self, prefix: str) -> dict[str, Any]:
        """FRR's ``show ip route PREFIX json``: ``{prefix: [{"selected": true, "nexthops": [{"ip", "interfaceName",
        "active"}]}]}``, ``{}`` when there is no such route [3P: FRR zebra's JSON keys]."""
        route = self.world.routes(self.name).get(prefix) if self.world is not None else None
        if route is None or not route.next_hops:
            return {}
        hops = [{"ip": h.address, "interfaceName": h.interface, "active": True} for h in route.next_hops]
        return {prefix: [{"prefix": prefix, "protocol": "bgp", "selected": True, "nexthops": hops}]}


class _Session(ShellSession):
    def __init__(self, sim: SonicSim) -> None:
        self.sim = sim

    def prompt(self) -> str:
        return f"admin@{self.sim.name}:~$ "

    def handle(self, command: str) -> tuple[str, int]:
        out, err, status = self.sim.run(command)
        return out + err, status

    def handle_exec(self, command: str) -> tuple[str, str, int]:
        return self.sim.run(command)
