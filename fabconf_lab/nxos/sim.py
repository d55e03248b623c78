"""Cisco NX-OS simulator: NX-API (JSON-RPC over HTTPS ``POST /ins``) and SSH/SCP on port 22.

The unmodified NAPALM ``nxos`` driver (NX-API transport, plus netmiko over SSH for replace candidates),
netmiko's ``cisco_nxos`` and plain ``requests``/``http.client`` talk to it as to a Nexus switch.

NX-API (``cli`` / ``cli_ascii`` JSON-RPC methods):

- a request is one JSON-RPC object or a batch (list); commands run in order in one CLI context, so
  configuration lines need no ``configure terminal`` and sub-modes carry over between them;
- a reply is one object for a one-command request, else a list; ``cli`` gives ``result.body`` (structured,
  ``null`` for config lines), ``cli_ascii`` gives ``result.msg`` (text);
- the first failing command ends the batch ([U] NX-API "stop-on-error" is assumed to be the default): its
  entry carries ``error`` = ``{"code": -32602, "message": "Invalid params", "data": {"msg": ...}}``, later
  commands are not run and get no entry, and the HTTP status is 500 (as NX-OS answers JSON-RPC errors).
  Lines before the failing one stay applied: the NAPALM driver then rolls back to its checkpoint.

SSH: ``hostname#`` prompt with echo, exec/config modes with NX-OS mode prompts (``(config-if)#``), the
netmiko session-preparation commands, and an SCP sink into bootflash (``scp -t bootflash:/NAME``).

Faults: ``reject`` refuses matching config lines with the invalid-command error; ``drop-on-commit`` closes
the connection (HTTP or SSH) when a config batch, a rollback, a ``configure replace`` or its ``commit``
arrives, before anything is applied (a pending commit-timeout keeps running); ``delay``/``hang``/
``auth-refuse`` apply to both front ends (the shared HTTPS and SSH services do that).

Modules: ``nxos_config`` (NX-OS dialect on cliconf, line semantics, validation), ``nxos_render`` (show
running-config, rollback patch, lab view, brownfield default), ``nxos_show`` (show output shapes),
``nxos_cli`` (the device: state and commands), ``nxos_replace`` (``configure replace`` + commit-timeout).

Public API beyond the lab contract: ``running_config`` / ``startup_config`` (text), ``bootflash()``,
``http_port`` / ``ssh_port`` (bound ports), ``device`` (the ``NxosDevice``), ``default_startup_config``.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from typing import Any, Unpack

from fabconf_lab.contract import SimArgs, SimBase
from fabconf_lab.httpd import HttpDevice, HttpReply, HttpRequest, HttpsService
from fabconf_lab.nxos.cli import NxosDevice
from fabconf_lab.nxos.config import NXOS_VERSION, ExecSession, NxosCliError, ensure_ports, load
from fabconf_lab.nxos.render import default_startup_config, render_config
from fabconf_lab.ports import VENDOR, default_port
from fabconf_lab.sshd import CloseSession, SessionContext, ShellSession, SshService
from fabconf_lab.world import DeviceView

__all__ = ["NxosSim", "default_startup_config"]

BANNER = (
    "Cisco Nexus Operating System (NX-OS) Software\n"
    "TAC support: http://www.cisco.com/tac\n"
    "This is a fabconf lab simulation, not Cisco software.\n"
)

_MODE_PROMPTS = {
    "root": "config",
    "interface": "config-if",
    "router-bgp": "config-router",
    "address-family": "config-router-af",
    "bgp-neighbor": "config-router-neighbor",
    "neighbor-af": "config-router-neighbor-af",
    "bgp-vrf": "config-router-vrf",
    "vlan": "config-vlan",
    "vrf-context": "config-vrf",
    "vrf-af": "config-vrf-af-ipv4",
    "class-map": "config-cmap-qos",
    "policy-map": "config-pmap-qos",
    "pmap-class": "config-pmap-c-qos",
    "system-qos": "config-sys-qos",
    "route-map": "config-route-map",
    "acl": "config-acl",
    "line": "config-line",
}


class NxosSim(SimBase, HttpDevice):
    """One NX-OS switch.

    ``port`` is the NX-API port: 443 with TLS (``ca`` given), 80 plain HTTP without (each +10000 in a process
    that may not bind it: ``fabconf_lab.ports.default_port``); 0 picks a free one.
    SSH listens on ``ssh_port`` (22 by default, as the NAPALM driver forces 22 for its SCP session;
    None disables SSH). ``state_dir`` is this device's own directory: it keeps ``startup-config``,
    ``bootflash/`` and ``ssh/`` (host key) there across restarts; a saved startup-config wins over
    ``startup_config``.
    """

    def __init__(
        self,
        name: str,
        address: str,
        *,
        port: int | None = None,
        startup_config: str | None = None,
        ssh_port: int | None = VENDOR,
        **common: Unpack[SimArgs],
    ) -> None:
        super().__init__(name, address, **common)
        self.http_port = default_port(443 if self.ca is not None else 80) if port is None else port
        self.ssh_port = default_port(22) if ssh_port == VENDOR else ssh_port
        startup = startup_config if startup_config is not None else default_startup_config(name, self.ports)
        saved = self.state_dir / "startup-config" if self.state_dir is not None else None
        if saved is not None and saved.exists():
            startup = saved.read_text()
        running = load(
            startup, self.ports, self.os_version or NXOS_VERSION
        )  # raises NxosCliError for an invalid startup-config
        ensure_ports(running, self.ports)
        self.device = NxosDevice(
            name=name,
            ports=self.ports,
            running=running,
            startup=render_config(running),
            faults=self.faults,
            world=self.world,
            state_dir=self.state_dir,
            version=self.os_version or NXOS_VERSION,
            model=self.model,
        )
        self._https: HttpsService | None = None
        self._ssh: SshService | None = None
        self._lock = threading.Lock()

    # -- lifecycle -----------------------------------------------------------------------------------------
    def start(self) -> None:
        ctx = self.ca.server_context(self.name, self.address) if self.ca is not None else None
        self._https = HttpsService(self, self.address, self.http_port, ctx)
        _no_delay(self._https)
        self.http_port = self._https.port
        if self.ssh_port is not None:
            self._ssh = SshService(
                self.name,
                self.address,
                self.ssh_port,
                username=self.username,
                password=self.password,
                session_factory=self._ssh_session,
                faults=self.faults,
                state_dir=self.state_dir,
                scp_sink=self._scp_sink,
                banner=BANNER,
                moment=self.ssh_moment,
                refuse=lambda command: ("% Invalid command at '^' marker.\n", "", 1),
            )
            self._ssh.start()
            self.ssh_port = self._ssh.port
        self._https.start()
        if self.world is not None:
            self.world.register(self)

    def stop(self) -> None:
        self.device.config_replace.cancel()
        if self.world is not None:
            self.world.unregister(self.name)
        if self._https is not None:
            self._https.stop()
            self._https = None
        if self._ssh is not None:
            self._ssh.stop()
            self._ssh = None

    # -- lab contract ----------------------------------------------------------------------------------------
    @property
    def error_ratio(self) -> dict[str, float]:
        """port -> share of received frames in error (``fabconf lab fault DEV link PORT:errors=R``)."""
        return self.device.error_ratio

    @property
    def pfc_pauses(self) -> Callable[[], int]:
        """PFC frames received so far on each PFC port (``fabconf lab fault DEV pfc-storm``)."""
        return self.device.pfc_pauses

    @pfc_pauses.setter
    def pfc_pauses(self, source: Callable[[], int]) -> None:
        self.device.pfc_pauses = source

    def lab_view(self) -> DeviceView:
        return self.device.view()

    def running_config(self) -> str:
        """The running configuration body (no header lines), as ``show running-config`` prints it."""
        return self.device.running_text()

    def startup_config(self) -> str:
        with self.device.lock:
            return self.device.startup

    def bootflash(self) -> dict[str, bytes]:
        with self.device.lock:
            return {n: f.data for n, f in self.device.files.items()}

    # -- NX-API -----------------------------------------------------------------------------------------------
    def handle_http(self, request: HttpRequest) -> HttpReply:
        with self.device.lock:
            nxapi_on = "feature nxapi" in self.device.running.leaves()
        if not nxapi_on:  # lock-out: a replace that dropped `feature nxapi` leaves NX-API off
            return HttpReply(503, b'{"error": "NX-API is not enabled (feature nxapi)"}')
        if request.path.rstrip("/") != "/ins":
            return HttpReply(404, b'{"error": "Not Found"}')
        if request.method != "POST":
            return HttpReply(405, b'{"error": "Method Not Allowed"}')
        try:
            payload = request.json()
        except ValueError:
            return HttpReply.json(_rpc_error(None, -32700, "Parse error", "Invalid JSON"), 500)
        single = isinstance(payload, dict)
        calls = [payload] if single else payload
        if not isinstance(calls, list) or not calls or not all(isinstance(c, dict) for c in calls):
            return HttpReply.json(_rpc_error(None, -32600, "Invalid request", "Request is not valid JSON-RPC"), 500)
        session = ExecSession(nxapi=True)
        replies: list[dict[str, Any]] = []
        failed = False
        for call in calls:
            reply = self._rpc_call(call, session)
            replies.append(reply)
            if "error" in reply:
                failed = True
                break
        body: Any = replies[0] if len(calls) == 1 else replies
        return HttpReply.json(body, 500 if failed else 200)

    # -- step faults (fabconf_lab.faults) ----------------------------------------------------------------------
    def _pending(self) -> bool:
        return self.device.config_replace.pending is not None

    def _command_moment(self, cmd: str) -> str | None:
        """The moment of one NX-OS command, or None for one that decides nothing (terminal settings, save)."""
        cmd = " ".join(cmd.split())
        if cmd == "configure replace commit":
            return "confirm"
        if cmd.startswith("configure replace ") and "show-patch" not in cmd:
            return "commit"
        if cmd.startswith(("rollback running-config", "dir rollback_config")):
            return "rollback"
        if cmd.startswith(("checkpoint ", "dir bootflash", "show file bootflash", "delete ", "scp ")):
            return "verify" if self._pending() else "stage"
        if cmd.startswith(("terminal ", "copy run", "no terminal")):
            return None
        if cmd.startswith("show ") or cmd == "show":
            return "verify" if self._pending() else "read"
        return "commit"  # configuration lines sent as a batch: NAPALM's plain (merge) commit

    @staticmethod
    def _calls(request: HttpRequest) -> tuple[Any, list[dict[str, Any]], list[str]]:
        payload = request.json()
        calls = [payload] if isinstance(payload, dict) else list(payload)
        return payload, calls, [" ".join(str((c.get("params") or {}).get("cmd", "")).split()) for c in calls]

    def _decisive(self, cmds: list[str]) -> tuple[str | None, int]:
        """The request's moment and the index of the command that decides it."""
        moments = [self._command_moment(c) for c in cmds]
        for decisive in ("commit", "confirm", "rollback", "stage"):
            if decisive in moments:
                return decisive, moments.index(decisive)
        if cmds == ["show hostname"] and not self._pending():
            return "connect", 0
        found = [(m, i) for i, m in enumerate(moments) if m is not None]
        return found[0] if found else (None, 0)

    def moment_of(self, request: HttpRequest) -> str | None:
        if request.path.rstrip("/") != "/ins":
            return None
        return self._decisive(self._calls(request)[2])[0]

    def reject_reply(self, request: HttpRequest) -> HttpReply:
        """The request's decisive command is refused with NX-OS's invalid-command error (the batch stops there)."""
        try:
            _payload, calls, cmds = self._calls(request)
        except (ValueError, AttributeError, TypeError):
            return HttpReply.json(_rpc_error(None, -32700, "Parse error", "Invalid JSON"), 500)
        index = self._decisive(cmds)[1]
        session = ExecSession(nxapi=True)
        replies = [self._rpc_call(c, session) for c in calls[:index]]
        replies.append(
            _rpc_error(calls[index].get("id"), -32602, "Invalid params", "% Invalid command at '^' marker.\n")
        )
        return HttpReply.json(replies[0] if len(calls) == 1 else replies, 500)

    def ssh_moment(self, kind: str, command: str) -> str | None:
        return self._command_moment(command)

    def _rpc_call(self, call: dict[str, Any], session: ExecSession) -> dict[str, Any]:
        rid = call.get("id")
        method = call.get("method")
        params = call.get("params") or {}
        if call.get("jsonrpc") != "2.0":
            return _rpc_error(rid, -32600, "Invalid request", "jsonrpc must be 2.0")
        if method not in ("cli", "cli_ascii"):
            return _rpc_error(rid, -32601, "Method not found", f"Method {method} not supported")
        cmd = params.get("cmd") if isinstance(params, dict) else None
        if not isinstance(cmd, str):
            return _rpc_error(rid, -32602, "Invalid params", "cmd is required")
        try:
            reply = self.device.run(cmd, session)
        except NxosCliError as err:
            msg = err.message if err.message.endswith("\n") else err.message + "\n"
            return _rpc_error(rid, -32602, "Invalid params", msg)
        if method == "cli_ascii":
            return {"jsonrpc": "2.0", "result": {"msg": reply.text}, "id": rid}
        if reply.body is None:
            return {"jsonrpc": "2.0", "result": None, "id": rid}
        return {"jsonrpc": "2.0", "result": {"body": reply.body}, "id": rid}

    # -- SSH ---------------------------------------------------------------------------------------------------
    def _ssh_session(self, ctx: SessionContext) -> ShellSession:
        return _NxosShell(self.device, interactive=ctx.interactive)

    def _scp_sink(self, path: str, data: bytes) -> str | None:
        try:
            self.device.write_file(path, data)
        except NxosCliError as err:
            return err.message
        return None


def _no_delay(service: HttpsService) -> None:
    """TCP_NODELAY on the listening socket (Linux copies it to accepted sockets): the shared HTTP server writes
    headers and body in two sends, which Nagle plus the client's delayed ACK turn into ~40 ms per request."""
    with contextlib.suppress(OSError, AttributeError):
        service._server.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _rpc_error(rid: Any, code: int, message: str, msg: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": {"code": code, "message": message, "data": {"msg": msg}}, "id": rid}


class _NxosShell(ShellSession):
    """One SSH channel: exec mode ``host#``, config modes ``host(config-if)#``."""

    def __init__(self, device: NxosDevice, interactive: bool) -> None:
        self.device = device
        self.session = ExecSession(nxapi=False)
        self.interactive = interactive

    def banner(self) -> str:
        return BANNER

    def prompt(self) -> str:
        host = self.device.hostname
        if self.session.config is None:
            return f"{host}# "
        return f"{host}({_MODE_PROMPTS.get(self.session.config.mode, 'config')})# "

    def handle(self, command: str) -> tuple[str, int]:
        out: list[str] = []
        status = 0
        for line in command.splitlines() or [command]:
            text = " ".join(line.split())
            if text in ("exit", "quit", "logout") and (self.session.config is None or text != "exit"):
                raise CloseSession("".join(out))
            if text == "exit" and self.session.config is not None:
                if self.session.config.mode == "root":
                    self.session.config = None
                else:
                    self.session.config.editor.apply("exit")
                continue
            self.session.committed = False  # over SSH every config line is its own commit
            try:
                reply = self.device.run(line, self.session)
            except NxosCliError as err:
                out.append(_caret(line, err.message))
                status = 1
                continue
            out.append(reply.text if reply.text else "")
        return "".join(out), status


def _caret(line: str, message: str) -> str:
    """NX-OS prints a caret under the refused line before the message."""
    if "'^' marker" not in message:
        return message if message.endswith("\n") else message + "\n"
    pad = len(line) - len(line.lstrip())
    return " " * (pad + 10) + "^\n" + message + "\n"
