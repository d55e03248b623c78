"""SONiC over SSH through the Generic Config Updater: NAPALM's lifecycle on CONFIG_DB (docs/reference/sonic.md).

- ``load_merge_candidate`` / ``load_replace_candidate`` take the rendered CONFIG_DB (``templates/sonic/device.j2``),
  read the running one (``show runningconfiguration all``) and stage the RFC 6902 patch from it to the target
  (``fabconf.platform.sonic.patch``: merge changes only what fabconf owns, replace also drops the fields it does not
  render from its rows; the management plane and every other table are kept in both modes).
- ``compare_config`` is that patch as a diff (``- PORT|Ethernet0 mtu: "9100"`` then ``+ … "9216"``).
- ``commit_config`` takes a checkpoint of the whole configuration (``config checkpoint``), sends the patch by SCP
  and applies it (``config apply-patch``). GCU has no commit timer, so like NX-OS the platform reverts from the
  checkpoint (``rollback()``, ``config rollback``) when fabconf does not confirm: ``revert_in`` is accepted and
  left to fabconf. The patch carries RFC 6902 ``test`` operations on the tables it touches, with the values
  read: when another changer moved them meanwhile, GCU refuses it whole and ``CommitConflict`` is raised (the
  other change stays). A refused patch changes nothing (GCU validates the whole result first) and raises
  ``CommitError`` with GCU's reason; a patch that fails part-way is rolled back from the checkpoint at once.
- ``Leftovers``: a push names its checkpoint after its run id (``own_run``) and records it before the commit
  (``leftovers``); the next push rolls back to a checkpoint a killed run left and deletes it (``clean_leftovers``).
- ``confirm_commit`` deletes the checkpoint (``config delete-checkpoint``), as does a clean ``close`` after a
  commit that was neither confirmed nor rolled back (fabconf confirms only drivers with a device timer).

Connection settings (``optional_args``): ``port`` (SSH, default 22), ``ssh_known_hosts``, ``ssh_strict``.
"""

from __future__ import annotations

import io
import json
import logging
import re
import time
from typing import Any

import paramiko

from fabconf.drivers.base import CommitConfirmException, CommitError, ConnectionException, DriverBase
from fabconf.drivers.contract import CommitConflict
from fabconf.drivers.sshlogin import ssh_login
from fabconf.drivers.textdiff import unified
from fabconf.platform.sonic.patch import (
    ConfigDb,
    PatchError,
    base_moved,
    describe,
    guarded,
    json_patch,
    parse,
    target,
)

log = logging.getLogger(__name__)

# the checkpoint of a commit outside a push (no run id); a push names its own after fabconf's run id (``own_run``), so
# that the next push finds the one a killed run left (``clean_leftovers``)
CHECKPOINT = "fabconf_before_commit"
PATCH_FILE = "/tmp/fabconf-patch.json"


class SonicDriver(DriverBase):
    platform = "sonic"

    def setup(self) -> None:
        args = self.optional_args
        self.port = int(args.get("port") or 22)
        self.known_hosts: str | None = args.get("ssh_known_hosts")
        self.strict = bool(args.get("ssh_strict", True))
        self._client: paramiko.SSHClient | None = None
        self._patch: list[dict[str, Any]] | None = None
        self._running: ConfigDb | None = None
        self._target: ConfigDb | None = None
        self._pending = False
        self.checkpoint = CHECKPOINT

    @property
    def where(self) -> str:
        return f"ssh://{self.username}@{self.hostname}:{self.port}"

    # -- connection ------------------------------------------------------------------------------------------
    def open(self) -> None:
        self._drop()
        client = ssh_login(
            self.hostname,
            self.port,
            self.username,
            self.password,
            timeout=self.timeout,
            known_hosts=self.known_hosts,
            strict=self.strict,
            where=self.where,
        )
        self._client = client

    def close(self) -> None:
        """A commit of this session that was neither rolled back nor confirmed stands once the session ends
        cleanly (fabconf confirms only drivers with a device timer, and rolls a checkpoint platform back when
        verify fails): its checkpoint is deleted then. A run that dies leaves it, for the next run to roll back to."""
        if self._pending and self._client is not None and self._transport_active():
            try:
                self._config("delete-checkpoint", self.checkpoint)
            except (CommitError, ConnectionException) as exc:
                log.warning("%s: the checkpoint %s stays: %s", self.hostname, self.checkpoint, exc)
            self._pending = False
        if self._client is not None:
            self._client.close()
            self._client = None

    def _drop(self) -> None:
        """Close the connection, nothing else (a reconnect keeps what this session committed pending)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def _transport(self) -> paramiko.Transport:
        if self._client is None:
            self.open()
        assert self._client is not None
        transport = self._client.get_transport()
        if transport is None or not transport.is_active():
            self.open()
            assert self._client is not None
            transport = self._client.get_transport()
        assert transport is not None
        return transport

    def _run(self, command: str) -> tuple[str, str, int]:
        """(stdout, stderr, exit status) of one exec request."""
        try:
            channel = self._transport().open_session(timeout=self.timeout)
            channel.settimeout(self.timeout)
            channel.exec_command(command)
            out, err = channel.makefile("rb").read(), channel.makefile_stderr("rb").read()
            deadline = time.monotonic() + self.timeout
            if not channel.status_event.wait(max(0.0, deadline - time.monotonic())):
                raise TimeoutError
            status = channel.recv_exit_status()
        except (TimeoutError, paramiko.SSHException, OSError, EOFError) as exc:
            self._drop()
            raise ConnectionException(f"{self.where}: the session broke during '{command}': {exc}") from None
        if status == -1 or self._client is None or not self._transport_active():
            # closed without an exit status (dropped mid-command): whether the command took effect is unknown
            self._drop()
            raise ConnectionException(f"{self.where}: the connection closed during '{command}' without an answer")
        return out.decode(errors="replace"), err.decode(errors="replace"), status

    def _transport_active(self) -> bool:
        transport = self._client.get_transport() if self._client is not None else None
        return transport is not None and transport.is_active()

    def _send(self, path: str, data: bytes) -> None:
        """The classic SCP sink protocol (``scp -t PATH``), what SONiC's sshd and ours accept."""
        try:
            channel = self._transport().open_session(timeout=self.timeout)
            channel.settimeout(self.timeout)
            channel.exec_command(f"scp -t {path}")
            stream = io.BytesIO(data)

            def ack() -> None:
                reply = channel.recv(1)
                if reply != b"\0":
                    rest = channel.recv(1024)
                    raise CommitError(f"{self.where}: scp refused {path}: {(reply + rest).decode(errors='replace')}")

            ack()
            channel.sendall(f"C0600 {len(data)} {path.rsplit('/', 1)[-1]}\n".encode())
            ack()
            channel.sendall(stream.read() + b"\0")
            ack()
            channel.shutdown_write()
            channel.recv_exit_status()
        except (TimeoutError, paramiko.SSHException, OSError, EOFError) as exc:
            self._drop()
            raise ConnectionException(f"{self.where}: the session broke while sending {path}: {exc}") from None

    def _config(self, *words: str) -> None:
        command = "sudo config " + " ".join(words)
        out, err, status = self._run(command)
        if status != 0:
            reason = next((ln[len("Error: ") :] for ln in err.splitlines() if ln.startswith("Error: ")), err.strip())
            raise CommitError(f"{self.hostname}: '{command}' failed: {reason or out.strip()}")

    def running(self) -> ConfigDb:
        out, err, status = self._run("show runningconfiguration all")
        if status != 0:
            raise ConnectionException(f"{self.hostname}: show runningconfiguration all: {err.strip() or out.strip()}")
        try:
            return parse(out, f"{self.hostname}: show runningconfiguration all")
        except PatchError as exc:
            raise ConnectionException(str(exc)) from None

    # -- configuration lifecycle -----------------------------------------------------------------------------
    def _load(self, filename: str | None, config: str | None, replace: bool) -> None:
        if config is None:
            if filename is None:
                raise CommitError(f"{self.hostname}: no configuration given")
            with open(filename, encoding="utf-8") as fh:
                config = fh.read()
        try:
            rendered = parse(config, f"{self.hostname}: rendered configuration")
            running = self.running()
            want = target(running, rendered, replace=replace)
            self._patch = json_patch(running, want)
        except PatchError as exc:
            raise CommitError(str(exc)) from None
        self._running = running
        self._target = want

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        self._load(filename, config, replace=False)

    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        self._load(filename, config, replace=True)

    def compare_config(self) -> str:
        if self._patch is None or self._running is None:
            return ""
        return describe(self._patch, self._running)

    def config_diff(self) -> str:
        """``ConfigDiff``: the running CONFIG_DB and the one the patch leads to, as a unified diff of their JSON
        (keys sorted, indent 4)."""
        if self._patch is None or self._running is None or self._target is None:
            return ""

        def text(db: ConfigDb) -> str:
            return json.dumps(db, indent=4, sort_keys=True) + "\n"

        return unified(text(self._running), text(self._target), self.hostname)

    def discard_config(self) -> None:
        self._patch = None
        self._running = None
        self._target = None

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        if self._patch is None:
            raise CommitError(f"{self.hostname}: no candidate is loaded")
        patch, self._patch = self._patch, None
        if not patch:
            return
        self._config("checkpoint", self.checkpoint)
        # the tables the patch touches must still be as read: GCU refuses the whole patch otherwise (#43)
        self._send(PATCH_FILE, json.dumps(guarded(patch, self._running or {})).encode())
        try:
            self._config("apply-patch", PATCH_FILE)
        except CommitError as exc:
            if base_moved(str(exc)):  # refused before any step: the other change stays, the checkpoint goes
                self._config("delete-checkpoint", self.checkpoint)
                raise CommitConflict(
                    f"{self.hostname}: the device changed since its diff was computed (another changer?): "
                    f"GCU refused the patch: {exc}"
                ) from None
            # GCU validates the whole result before it writes, but applies the sorted steps one by one: whatever a
            # failure left is undone from the checkpoint before the error is reported
            self._config("rollback", self.checkpoint)
            self._config("delete-checkpoint", self.checkpoint)
            raise
        self._pending = True

    def confirm_commit(self) -> None:
        if not self._pending:
            raise CommitConfirmException(f"{self.hostname}: no commit is waiting for confirmation")
        try:
            self._config("delete-checkpoint", self.checkpoint)
        except CommitError as exc:
            raise CommitConfirmException(str(exc)) from None
        self._pending = False

    def has_pending_commit(self) -> bool:
        try:
            return self.checkpoint in self._checkpoints()
        except CommitError:
            return False

    def _checkpoints(self) -> list[str]:
        out, err, status = self._run("sudo config list-checkpoints")
        if status != 0:
            raise CommitError(f"{self.hostname}: 'sudo config list-checkpoints' failed: {err.strip() or out.strip()}")
        try:
            names = json.loads(out or "[]")
        except json.JSONDecodeError:
            raise CommitError(f"{self.hostname}: config list-checkpoints: not a JSON list: {out[:200]!r}") from None
        return [str(n) for n in names] if isinstance(names, list) else []

    def reattach(self, lost: Any) -> None:
        """``Reattach``: recovery on a new connection rolls back to the checkpoint the lost one took (named after
        the push's run id)."""
        if isinstance(lost, SonicDriver):
            self.checkpoint, self._pending = lost.checkpoint, lost._pending

    # -- what a killed run leaves (fabconf.deploy.leftovers) -------------------------------------------------
    def own_run(self, run: str) -> dict[str, str]:
        """This push's checkpoint is named after its run id (GCU keeps it as a file: letters, digits and ``_``);
        staging leaves nothing on the switch (the patch is computed here)."""
        self.checkpoint = f"fabconf_{''.join(c for c in run if c.isalnum())}"
        return {}

    def leftovers(self) -> dict[str, str]:
        return {"checkpoint": self.checkpoint}

    def clean_leftovers(self, recorded: list[dict[str, str]]) -> list[str]:
        """A checkpoint a killed run left means its patch may stand unverified (killed after ``apply-patch``) or
        was never applied (killed before): either way the switch is rolled back to it (a no-op in the second case)
        and the checkpoint deleted, so this push starts from the configuration before the killed one. Checkpoints
        fabconf did not record (an operator's) are left alone: a checkpoint is no pending change."""
        ours = {r["checkpoint"]: r.get("run", "?") for r in recorded if r.get("checkpoint")}
        if not ours:
            return []
        present = set(self._checkpoints())
        done: list[str] = []
        for name, run in ours.items():
            if name in present:
                self._config("rollback", name)
                self._config("delete-checkpoint", name)
                done.append(f"rolled back to checkpoint {name} that killed run {run} left, and deleted it")
        return done

    def rollback(self) -> None:
        self._config("rollback", self.checkpoint)
        self._config("delete-checkpoint", self.checkpoint)
        self._pending = False

    # -- getters --------------------------------------------------------------------------------------------
    def get_facts(self) -> dict[str, Any]:
        db = self.running()
        meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
        return {
            "hostname": meta.get("hostname", ""),
            "fqdn": meta.get("hostname", ""),
            "vendor": "SONiC",
            "model": meta.get("hwsku", ""),
            "os_version": "",
            "serial_number": "",
            "uptime": -1.0,
            "interface_list": sorted(db.get("PORT", {})),
        }

    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False) -> dict[str, str]:
        text = json.dumps(self.running(), indent=4, sort_keys=True) + "\n"
        return {"running": text if retrieve in ("all", "running") else "", "startup": "", "candidate": ""}

    def _oper(self) -> dict[str, bool]:
        """The operational state per port from ``show interfaces status`` (intfutil's columns, by header)."""
        out, err, status = self._run("show interfaces status")
        if status != 0:
            raise ConnectionException(f"{self.hostname}: show interfaces status: {err.strip() or out.strip()}")
        lines = [ln for ln in out.splitlines() if ln.strip()]
        if len(lines) < 2:
            return {}
        # columns by the spans of the rule under the header: a cell may be empty (a port in no VLAN)
        spans = [m.span() for m in re.finditer(r"-+", lines[1])]
        head = [lines[0][a:b].strip() for a, b in spans]
        oper: dict[str, bool] = {}
        for line in lines[2:]:
            cells = dict(zip(head, (line[a:b].strip() for a, b in spans), strict=True))
            if cells.get("Interface"):
                oper[cells["Interface"]] = cells.get("Oper") == "up"
        return oper

    def get_interfaces(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        oper = self._oper()  # CONFIG_DB holds the admin state only
        for port, f in sorted(self.running().get("PORT", {}).items()):
            up = f.get("admin_status") == "up"
            out[port] = {
                "is_up": oper.get(port, False),
                "is_enabled": up,
                "description": f.get("description", ""),
                "last_flapped": -1.0,
                "speed": float(int(f.get("speed", "0"))),  # CONFIG_DB speed is in Mb/s, as NAPALM reports it
                "mtu": int(f.get("mtu", "9100")),
                "mac_address": "",
            }
        return out

    def get_lldp_neighbors(self) -> dict[str, list[dict[str, str]]]:
        """``show lldp table`` (sonic-utilities' lldpshow): the rows between the header rule and the closing one."""
        out, err, status = self._run("show lldp table")
        if status != 0:
            raise ConnectionException(f"{self.hostname}: show lldp table: {err.strip() or out.strip()}")
        neighbors: dict[str, list[dict[str, str]]] = {}
        rows = out.splitlines()
        start = next((i + 1 for i, ln in enumerate(rows) if ln.startswith("---") and i > 0), len(rows))
        for line in rows[start:]:
            if line.startswith("-" * 10) or not line.strip():
                break
            cells = re.split(r"\s{2,}", line.strip())
            if len(cells) >= 3:
                neighbors.setdefault(cells[0], []).append({"hostname": cells[1], "port": cells[2]})
        return neighbors

    def get_bgp_neighbors(self) -> dict[str, Any]:
        """FRR's ``show ip bgp summary json`` through vtysh [3P: FRR field names remoteAs, state, pfxRcd,
        peerUptimeMsec], in NAPALM's shape; the configured description from CONFIG_DB's BGP_NEIGHBOR."""
        out, err, status = self._run('vtysh -c "show ip bgp summary json"')
        if status != 0:
            raise ConnectionException(f"{self.hostname}: show ip bgp summary json: {err.strip() or out.strip()}")
        try:
            summary = json.loads(out or "{}").get("ipv4Unicast", {})
        except (json.JSONDecodeError, AttributeError):
            raise ConnectionException(f"{self.hostname}: show ip bgp summary json: not JSON") from None
        configured = self.running().get("BGP_NEIGHBOR", {})
        local_as = int(summary.get("as") or 0)
        peers: dict[str, Any] = {}
        for peer, p in sorted(summary.get("peers", {}).items()):
            received = int(p.get("pfxRcd") or 0)
            peers[peer] = {
                "local_as": local_as,
                "remote_as": int(p.get("remoteAs") or 0),
                "remote_id": "",
                "is_up": p.get("state") == "Established",
                "is_enabled": configured.get(peer, {}).get("admin_status", "up") == "up",
                "description": configured.get(peer, {}).get("name", ""),
                "uptime": int(p.get("peerUptimeMsec") or 0) // 1000,
                "address_family": {
                    "ipv4": {"received_prefixes": received, "accepted_prefixes": received, "sent_prefixes": -1}
                },
            }
        return {"global": {"router_id": str(summary.get("routerId") or ""), "peers": peers}}

    def pfc_counters(self, ports: list[str]) -> dict[str, dict[str, int]]:
        """port -> priority -> PFC frames received so far, from ``show pfc counters`` (sonic-utilities'
        ``scripts/pfcstat``: a ``Port Rx`` table, then a ``Port Tx`` one, counts with thousands commas; ``N/A``
        where the ASIC counts none: left out). After ``sonic-clear pfccounters`` the counts are since the clear,
        which still only grow between preflight's two reads. A port not in the table is left out."""
        out, err, status = self._run("show pfc counters")
        if status != 0:
            raise ConnectionException(f"{self.hostname}: show pfc counters: {err.strip() or out.strip()}")
        return {k: v for k, v in parse_pfc_rx(out).items() if k in set(ports)}

    def get_interfaces_counters(self) -> dict[str, dict[str, int]]:
        """``show interfaces counters`` (sonic-utilities' portstat) in NAPALM's shape. portstat's RX_OK / TX_OK
        count every good frame; NAPALM's unicast counters take them [U: no per-cast split in that table]."""
        out, err, status = self._run("show interfaces counters")
        if status != 0:
            raise ConnectionException(f"{self.hostname}: show interfaces counters: {err.strip() or out.strip()}")
        lines = [ln for ln in out.splitlines() if ln.strip()]
        if len(lines) < 2:
            return {}
        head = lines[0].split()

        def num(cells: dict[str, str], column: str) -> int:
            value = cells.get(column, "0").replace(",", "")
            return int(value) if value.isdigit() else 0

        counters: dict[str, dict[str, int]] = {}
        for line in lines[2:]:
            cells = dict(zip(head, re.split(r"\s{2,}", line.strip()), strict=False))
            port = cells.get("IFACE", "")
            if not port:
                continue
            counters[port] = {
                "rx_unicast_packets": num(cells, "RX_OK"),
                "tx_unicast_packets": num(cells, "TX_OK"),
                "rx_errors": num(cells, "RX_ERR"),
                "tx_errors": num(cells, "TX_ERR"),
                "rx_discards": num(cells, "RX_DRP"),
                "tx_discards": num(cells, "TX_DRP"),
                "rx_octets": -1,
                "tx_octets": -1,
                "rx_multicast_packets": -1,
                "tx_multicast_packets": -1,
                "rx_broadcast_packets": -1,
                "tx_broadcast_packets": -1,
            }
        return counters

    def route_paths(self, prefix: str) -> list[str]:
        """``RouteLookup``: the next hops of the selected route for exactly ``prefix`` (FRR's
        ``show ip route PREFIX json`` through vtysh; keys ``selected``, ``nexthops``, ``ip``, ``active`` [3P])."""
        if not re.fullmatch(r"[0-9.]+/\d+", prefix):
            raise ValueError(f"{self.hostname}: not an IPv4 prefix: {prefix!r}")
        out, err, status = self._run(f'vtysh -c "show ip route {prefix} json"')
        if status != 0:
            raise ConnectionException(f"{self.hostname}: show ip route {prefix} json: {err.strip() or out.strip()}")
        try:
            entries = json.loads(out or "{}").get(prefix, [])
        except (json.JSONDecodeError, AttributeError):
            raise ConnectionException(f"{self.hostname}: show ip route {prefix} json: not JSON") from None
        selected = next((e for e in entries if isinstance(e, dict) and e.get("selected")), None)
        if selected is None:
            return []
        return sorted(h["ip"] for h in selected.get("nexthops", []) if h.get("active") and h.get("ip"))


def parse_pfc_rx(text: str) -> dict[str, dict[str, int]]:
    """The received (``Port Rx``) table of ``show pfc counters``: port -> "0".."7" -> frames."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.split()[:2] == ["Port", "Rx"]), None)
    if start is None:
        return {}
    titles = lines[start].split()[2:]  # PFC0 … PFC7
    out: dict[str, dict[str, int]] = {}
    for line in lines[start + 2 :]:
        cells = line.split()
        if not cells:
            break  # the blank line before the Tx table
        values = dict(zip((t.removeprefix("PFC") for t in titles), cells[1:], strict=False))
        out[cells[0]] = {p: int(v.replace(",", "")) for p, v in values.items() if v.replace(",", "").isdigit()}
    return out
