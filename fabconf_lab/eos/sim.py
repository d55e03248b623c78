"""Arista EOS eAPI simulator: JSON-RPC ``runCmds`` on HTTPS ``/command-api``, with config sessions.

What the unmodified napalm ``eos`` driver (over pyeapi) does against it, and what the simulator models:

- Every request is ``{"method": "runCmds", "params": {"version": 1, "cmds": [...], "format": "json"|"text"}}``
  with ``enable`` first; results are aligned with the commands. A failing command stops the request and
  returns a JSON-RPC error ``{"code": 1002, "message": "CLI command N of M 'cmd' failed: invalid command",
  "data": [results so far..., {"errors": [...]}]}`` (pyeapi raises ``CommandError``); bad credentials give
  HTTP 401 (pyeapi raises ``ConnectionError``).
- Startup config (``flash:startup-config``) and running config are separate; other flash files
  (``flash:rollback-0``) are kept too, and written to ``state_dir/flash`` when a state directory is given.
- Config sessions: ``configure session NAME`` starts from a copy of running config; lines arrive with the
  indentation stripped and follow sub-modes (``fabconf_lab.cliconf``); ``rollback clean-config`` empties the
  session; ``end`` leaves it pending. ``configure session NAME commit`` replaces running config with the
  session's; ``... commit timer HH:MM:SS`` does so with a real timer that restores the previous running config
  when it expires, unless a plain ``commit`` confirms it first; ``... abort`` discards (and reverts a
  timer commit at once). ``show configuration sessions [detail]`` lists sessions (``pending``,
  ``pendingCommitTimer``); with a timer pending, ``detail`` carries the EOS >= 4.32 top-level
  ``commitTimerSessionName``/``commitTimerExpireTime`` (seconds of uptime), or for an older configured
  version the per-session ``commitBy``. [U] the exact EOS 4.32 field set: napalm 5.2 reads only those two keys
  and treats their presence as "a timer is pending", so they are present only while one is.
- ``copy startup-config flash:rollback-0``, ``configure replace flash:FILE``, ``write memory`` and
  ``copy running-config startup-config`` as napalm's commit/rollback use them.
- Several sessions may be pending at once (EOS allows up to 5 open sessions); napalm refuses to load while
  another one is pending. [U] On commit, a session's config replaces running config even if running config
  changed since the session started (EOS warns about this; the simulator does not).
- Faults: ``reject`` refuses matching config lines as invalid input; ``drop-on-commit`` closes the
  connection when a commit or ``configure replace`` arrives, without doing it; delay/hang/auth-refuse
  are applied by ``fabconf_lab.httpd``.

Public API::

    EosSim(name, address, *, ports, username, password, ca, world=None, state_dir=None, faults=None,
           port=None,            # 443 with a CA, 80 (plain HTTP, napalm transport "http") without
           startup_config=None,  # EOS config text; None: default_startup_config(name, ports) (brownfield)
           version="4.32.2F")    # < 4.32 switches 'show configuration sessions detail' to the commitBy form
    .start() / .stop() / .name / .faults / .port / .lab_view()
    .running_config() -> str, .startup_config() -> str   # rendered, for tests and the orchestrator
    .flash: dict[str, str]          # flash files by name ("startup-config", "rollback-0", ...)
    .sessions: dict[str, Session]   # config sessions by name (state, commit_by)
    .run_cmds(cmds, fmt) -> dict    # one eAPI request in-process (same code path as HTTPS)
    default_startup_config(hostname, ports) -> str

Not modelled: ``show priority-flow-control``/``show qos`` (their JSON shapes are unverified here: read PFC
from the running config), VRFs other than default, IPv6 BGP sessions, heredoc commands (banners, ``comment``).

Lock-out: once the running config has no ``management api http-commands`` with ``no shutdown`` (a replace that
dropped it), eAPI answers nothing but HTTP 503, as a switch whose API is off answers nothing at all.
"""

from __future__ import annotations

import re
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Unpack

from fabconf.platforms import platform as platform_spec
from fabconf.private import private_dir, write_private
from fabconf_lab.cliconf import EOS, CliError, Editor, Node, load, render, unified_diff
from fabconf_lab.contract import SimArgs, SimBase
from fabconf_lab.eos import config as ec
from fabconf_lab.eos import show, strict
from fabconf_lab.httpd import HttpDevice, HttpReply, HttpRequest, HttpsService
from fabconf_lab.ports import default_port
from fabconf_lab.world import DeviceView

MAX_OPEN_SESSIONS = 5


class _CmdError(Exception):
    def __init__(self, code: int, kind: str, errors: list[str]) -> None:
        super().__init__(errors[0] if errors else kind)
        self.code = code
        self.kind = kind  # the end of the JSON-RPC message: "invalid command", "could not run command", ...
        self.errors = errors


def _invalid(message: str) -> _CmdError:
    return _CmdError(1002, "invalid command", [message])


def _failed(message: str) -> _CmdError:
    return _CmdError(1000, "could not run command", [message])


@dataclass
class Session:
    name: str
    tree: Node
    state: str = "pending"  # pending | pendingCommitTimer | completed | aborted (timer expired) [U] name
    user: str = ""
    completed_time: float | None = None
    commit_by: float | None = None  # uptime (s) at which a commit timer expires
    before: Node | None = None  # running config before a timer commit
    timer: threading.Timer | None = field(default=None, repr=False)


@dataclass
class _Cli:
    """Per-request CLI state: eAPI keeps none between requests."""

    mode: str = "exec"  # exec | config | session
    editor: Editor | None = None
    session: Session | None = None
    changed: bool = False  # a command since the view was last made may have changed the running config


def _keeps_running(cli: _Cli, cmd: str) -> bool:
    """Whether ``cmd`` (not a show) surely leaves the running config as it is, so the lab's view of it need not be
    made again (``EosSim._refresh_view``, a tenth of an EOS switch's CPU in a diff when made after every request):
    a line of a session's own tree, or entering a session. Anything else counts as a change (a commit, an abort,
    configure mode, copy, replace...)."""
    if cli.mode == "session":
        return cmd not in ("abort", "commit") and not cmd.startswith("commit timer ")
    if cli.mode != "exec":
        return False
    return cmd in ("enable", "disable", "terminal dont-ask") or _SESSION_ENTRY.fullmatch(cmd) is not None


_SESSION_ENTRY = re.compile(r"configure session (\S+)")


def _hms(text: str) -> int:
    m = re.fullmatch(r"(\d{1,2}):(\d{2}):(\d{2})", text)
    if not m:
        raise _invalid(f"Invalid input (at token 4: '{text}')")
    h, mi, s = (int(x) for x in m.groups())
    return h * 3600 + mi * 60 + s


class EosSim(SimBase, HttpDevice):
    """One simulated EOS switch. See the module docstring for the behaviour."""

    def __init__(
        self,
        name: str,
        address: str,
        *,
        port: int | None = None,
        startup_config: str | None = None,
        version: str = show.VERSION,
        **common: Unpack[SimArgs],
    ) -> None:
        super().__init__(name, address, **common)
        self.port = port if port is not None else default_port(443 if self.ca is not None else 80)
        self.version = self.os_version or version
        self.model = self.model or show.MODEL
        self.family = platform_spec("eos").hardware_family(self.model)  # strata | sand: which queue command it takes
        crc = zlib.crc32(name.encode())
        self.serial = f"JPE{crc % 10**8:08d}"
        self.system_mac = f"00:1c:73:{crc >> 16 & 255:02x}:{crc >> 8 & 255:02x}:{crc & 255:02x}"
        self.boot_time = time.time() - 7 * 86400 - (crc % 86400)
        self._lock = threading.RLock()
        self._service: HttpsService | None = None
        self._bgp_clock = show.BgpClock()
        self.sessions: dict[str, Session] = {}
        self.flash: dict[str, str] = {}
        self.negotiated: dict[str, int] = {}  # port -> Gb/s its link came up at (a cable/optic fault)
        self.error_ratio: dict[str, float] = {}  # port -> share of received frames in error (a cable/optic fault)
        self._load_flash()
        if startup_config is not None:
            self.flash["startup-config"] = startup_config
        elif "startup-config" not in self.flash:
            self.flash["startup-config"] = ec.default_eos_config(name, self.ports)
        self._save_flash("startup-config")
        self.running: Node = ec.load_startup(self.flash["startup-config"], self.ports)
        self._view: DeviceView = ec.lab_view(self.running, self.name, self.ports)

    # -- lifecycle --------------------------------------------------------------------------------------------
    def start(self) -> None:
        ctx = self.ca.server_context(self.name, self.address) if self.ca is not None else None
        self._service = HttpsService(self, self.address, self.port, ctx)
        # Wrap, not edit, the shared httpd: its per-device handler class writes headers and body separately,
        # and Nagle + delayed ACK then cost ~40 ms per eAPI call (measured 47 ms -> 2.5 ms for get_facts).
        server = getattr(self._service, "_server", None)
        if server is not None:
            server.RequestHandlerClass.disable_nagle_algorithm = True
        self.port = self._service.port
        self._service.start()
        if self.world is not None:
            self.world.register(self)

    def stop(self) -> None:
        if self._service is not None:
            self._service.stop()
            self._service = None
        with self._lock:
            for s in self.sessions.values():
                if s.timer is not None:
                    s.timer.cancel()
        if self.world is not None:
            self.world.unregister(self.name)

    # -- state the orchestrator and tests may read ---------------------------------------------------------------
    def lab_view(self) -> DeviceView:
        """The view of the running config as of the last change. Lock-free on purpose: the World asks every
        simulator for its view while one of them is answering a request (and holding its own lock)."""
        return self._view

    def _refresh_view(self) -> None:
        view = ec.lab_view(self.running, self.name, self.ports)
        if view != self._view:
            self._view = view
            if self.world is not None:  # this device's own next question sees its change at once
                self.world.invalidate()

    def running_config(self) -> str:
        with self._lock:
            return render(self.running, EOS)

    def startup_config(self) -> str:
        with self._lock:
            return self.flash["startup-config"]

    def uptime(self) -> float:
        return time.time() - self.boot_time

    # -- flash ------------------------------------------------------------------------------------------------
    def _flash_dir(self) -> Path | None:
        return self.state_dir / "flash" if self.state_dir is not None else None

    def _load_flash(self) -> None:
        d = self._flash_dir()
        if d is not None and d.is_dir():
            for f in d.iterdir():
                if f.is_file():
                    self.flash[f.name] = f.read_text()

    def _save_flash(self, name: str) -> None:
        d = self._flash_dir()
        if d is None:
            return
        private_dir(d)
        if name in self.flash:
            write_private(d / name, self.flash[name])  # never through a symlink
        else:
            (d / name).unlink(missing_ok=True)

    def _flash_name(self, url: str) -> str:
        if url in ("startup-config", "flash:startup-config", "flash:/startup-config"):
            return "startup-config"
        m = re.fullmatch(r"flash:/?(\S+)", url)
        if not m:
            raise _invalid(f"Invalid input (at token 1: '{url}')")
        return m.group(1)

    # -- HTTP / JSON-RPC --------------------------------------------------------------------------------------------
    def _eapi_enabled(self) -> bool:
        with self._lock:
            api = self.running.find("management api http-commands")
            return api is not None and "no shutdown" in api.leaves()

    def handle_http(self, request: HttpRequest) -> HttpReply:
        if not self._eapi_enabled():
            return HttpReply(503, b'{"error": "eAPI is not enabled (management api http-commands)"}')
        if request.path != "/command-api":
            return HttpReply(404, b'{"error": "Not Found"}')
        if request.method != "POST":
            return HttpReply(405, b'{"error": "Method Not Allowed"}')
        try:
            body = request.json()
        except ValueError:
            return HttpReply.json(_rpc_error(None, -32700, "Parse error"))
        if not isinstance(body, dict) or body.get("jsonrpc") != "2.0" or "method" not in body:
            return HttpReply.json(
                _rpc_error(body.get("id") if isinstance(body, dict) else None, -32600, "Invalid request")
            )
        req_id = body.get("id")
        if body["method"] != "runCmds":
            return HttpReply.json(_rpc_error(req_id, -32601, f"Unknown method: {body['method']}"))
        params = body.get("params") or {}
        cmds = params.get("cmds")
        fmt = params.get("format") or "json"
        if (
            params.get("version", 1) not in (1, "1", "latest")
            or not isinstance(cmds, list)
            or fmt not in ("json", "text")
        ):
            return HttpReply.json(_rpc_error(req_id, -32602, "Invalid params"))
        return HttpReply.json(self.run_cmds(cmds, fmt, req_id, request.user))

    # -- step faults (fabconf_lab.faults) ------------------------------------------------------------------------
    @staticmethod
    def _rpc_cmds(request: HttpRequest) -> tuple[list[str], str, Any]:
        body = request.json()
        params = body.get("params") or {}
        cmds = [" ".join(str(c.get("cmd", "") if isinstance(c, dict) else c).split()) for c in params.get("cmds") or []]
        return cmds, params.get("format") or "json", body.get("id")

    def _classify(self, cmds: list[str]) -> tuple[str | None, int]:
        """The moment of an eAPI request and the index of the command that makes it so (what ``reject`` refuses:
        for a staged session its last line, so the lines before it are in the session)."""
        with self._lock:
            pending = any(s.state == "pendingCommitTimer" for s in self.sessions.values())
            timed = {n for n, s in self.sessions.items() if s.state == "pendingCommitTimer"}
        last = max(0, len(cmds) - 1)
        for i, cmd in enumerate(cmds):
            m = re.fullmatch(r"configure session (\S+)(?: (commit|abort)(?: timer \S+)?)?", cmd)
            if m and m.group(2) == "commit":
                return ("commit" if "timer" in cmd else "confirm"), i
            if m and m.group(2) == "abort":
                return ("rollback" if m.group(1) in timed else "stage"), i
            if m:
                lines = [j for j in range(i + 1, len(cmds)) if cmds[j] not in ("end", "commit", "abort")]
                return ("verify" if pending else "stage"), (lines[-1] if lines else i)
            if cmd.startswith("configure replace"):
                return "rollback", i
        reads = [c for c in cmds if c != "enable"]
        if reads == ["show version"] and not pending:
            return "connect", last
        return ("verify" if pending else "read"), last

    def moment_of(self, request: HttpRequest) -> str | None:
        if request.path != "/command-api":
            return None
        return self._classify(self._rpc_cmds(request)[0])[0]

    def reject_reply(self, request: HttpRequest) -> HttpReply:
        """The command that makes the request's moment is refused as invalid input (earlier ones run)."""
        try:
            cmds, fmt, req_id = self._rpc_cmds(request)
        except (ValueError, AttributeError, TypeError):
            return HttpReply.json(_rpc_error(None, -32700, "Parse error"))
        return HttpReply.json(self.run_cmds(cmds, fmt, req_id, request.user, reject=self._classify(cmds)[1]))

    def run_cmds(
        self, cmds: list[Any], fmt: str, req_id: Any = None, user: str = "", reject: int | None = None
    ) -> dict[str, Any]:
        """Run one eAPI request; returns the JSON-RPC reply object. DropConnection propagates. ``reject``: the
        index of a command refused as invalid input (a step fault)."""
        cli = _Cli()
        results: list[dict[str, Any]] = []
        with self._lock:
            try:
                for index, item in enumerate(cmds, start=1):
                    cmd = item.get("cmd", "") if isinstance(item, dict) else str(item)
                    try:
                        if reject == index - 1:
                            word = cmd.split()[0] if cmd.split() else ""
                            raise _invalid(f"Invalid input (at token 0: '{word}')")
                        results.append(self._run_one(cli, cmd, fmt, user))
                    except _CmdError as e:
                        failed: dict[str, Any] = {"errors": e.errors}
                        if fmt == "text":
                            failed = {"output": "".join(f"% {m}\n" for m in e.errors), "errors": e.errors}
                        message = f"CLI command {index} of {len(cmds)} '{cmd}' failed: {e.kind}"
                        return _rpc_error(req_id, e.code, message, [*results, failed])
            finally:
                if cli.changed:
                    self._refresh_view()
        return {"jsonrpc": "2.0", "id": req_id, "result": results}

    # -- command dispatch -------------------------------------------------------------------------------------------
    def _run_one(self, cli: _Cli, raw: str, fmt: str, user: str) -> dict[str, Any]:
        cmd = " ".join(raw.split())
        if cmd.startswith("show "):
            if cli.changed:  # earlier commands of this request may have changed the running config
                self._refresh_view()
                cli.changed = False
            return self._show(cmd, fmt)
        if not _keeps_running(cli, cmd):
            cli.changed = True
        if cli.mode == "exec":
            return self._exec(cli, cmd, fmt, user)
        return self._config_line(cli, cmd, fmt)

    def _ok(self, fmt: str, text: str = "") -> dict[str, Any]:
        return {"output": text} if fmt == "text" else {}

    def _copied(self, fmt: str) -> dict[str, Any]:
        if fmt == "text":
            return {"output": "Copy completed successfully.\n"}
        return {"messages": ["Copy completed successfully."]}

    def _exec(self, cli: _Cli, cmd: str, fmt: str, user: str) -> dict[str, Any]:
        if cmd in ("enable", "disable", "terminal dont-ask") or cmd.startswith(("terminal length", "terminal width")):
            return self._ok(fmt)
        if cmd in ("configure", "configure terminal"):
            cli.mode, cli.editor = "config", Editor(self.running, EOS)
            return self._ok(fmt)
        m = re.fullmatch(r"configure session (\S+)(?: (commit|abort)(?: timer (\S+))?)?", cmd)
        if m:
            name, action, timer = m.groups()
            if action is None:
                return self._enter_session(cli, name, user, fmt)
            if action == "abort":
                self._abort(name)
                return self._ok(fmt)
            if timer is not None:
                self._commit(name, _hms(timer))
            else:
                self._commit(name, None)
            return self._ok(fmt)
        m = re.fullmatch(r"copy (\S+) (\S+)", cmd)
        if m:
            self._copy(*m.groups())
            return self._copied(fmt)
        if cmd in ("write", "write memory"):
            self._copy("running-config", "startup-config")
            return self._copied(fmt)
        m = re.fullmatch(r"configure replace (\S+)(?: force)?", cmd)
        if m:
            self._replace(m.group(1))
            return self._ok(fmt)
        m = re.fullmatch(r"delete (\S+)", cmd)
        if m:
            name = self._flash_name(m.group(1))
            if self.flash.pop(name, None) is None:
                raise _failed(f"Error deleting flash:/{name} (No such file or directory)")
            self._save_flash(name)
            return self._ok(fmt)
        if cmd in ("dir", "dir flash:"):
            listing = "".join(f"       -rw-  {len(v):>10}  {k}\n" for k, v in sorted(self.flash.items()))
            return {"output": f"Directory of flash:/\n\n{listing}"} if fmt == "text" else {"files": sorted(self.flash)}
        raise _invalid(f"Invalid input (at token 0: '{cmd.split()[0] if cmd else ''}')")

    def _config_line(self, cli: _Cli, cmd: str, fmt: str) -> dict[str, Any]:
        assert cli.editor is not None
        if cli.mode == "session" and cli.session is not None:
            if cmd == "rollback clean-config":
                cli.session.tree = Node("")
                cli.editor = Editor(cli.session.tree, EOS)
                return self._ok(fmt)
            if cmd in ("abort", "commit") or cmd.startswith("commit timer "):
                name = cli.session.name
                cli.mode, cli.editor, cli.session = "exec", None, None
                if cmd == "abort":
                    self._abort(name)
                else:
                    self._commit(name, _hms(cmd.split()[2]) if cmd.startswith("commit timer ") else None)
                return self._ok(fmt)
        if cmd == "end" or (cmd == "exit" and len(cli.editor.stack) == 1):
            if cli.session is not None:
                ec.normalize(cli.session.tree, self.ports)
            cli.mode, cli.editor, cli.session = "exec", None, None
            return self._ok(fmt)
        if self.faults.rejects(cmd):
            word = cmd.split()[0] if cmd else ""
            raise _invalid(f"Invalid input (at token 0: '{word}')")
        refused = strict.check(cmd, cli.editor, self.family, self.ports)
        if refused is not None:
            raise _invalid(refused)
        try:
            cli.editor.apply(cmd)
        except CliError as e:
            raise _invalid(e.message) from None
        if cli.mode == "config":
            ec.normalize(self.running, self.ports)
        return self._ok(fmt)

    # -- sessions ----------------------------------------------------------------------------------------------------
    def _enter_session(self, cli: _Cli, name: str, user: str, fmt: str) -> dict[str, Any]:
        session = self.sessions.get(name)
        if session is not None and session.state == "pendingCommitTimer":
            raise _failed(f"Cannot enter session {name} (session has a pending commit timer)")
        if session is None or session.state in ("completed", "aborted"):
            open_ = [s for s in self.sessions.values() if s.state == "pending"]
            if len(open_) >= MAX_OPEN_SESSIONS:
                raise _failed("Maximum number of pending sessions has been reached")
            self.sessions.pop(name, None)
            session = Session(name, self.running.copy(), user=user)
            self.sessions[name] = session
        cli.mode, cli.session = "session", session
        cli.editor = Editor(session.tree, EOS)
        return self._ok(fmt)

    def _get_session(self, name: str) -> Session:
        session = self.sessions.get(name)
        if session is None:
            raise _failed(f"Session {name} not found")
        return session

    def _commit(self, name: str, timer: int | None) -> None:
        session = self._get_session(name)
        self.faults.on_commit()
        if session.state == "pendingCommitTimer":
            if timer is not None:
                raise _failed(f"Session {name} already has a pending commit timer")
            self._cancel_timer(session)
            session.state, session.before, session.commit_by = "completed", None, None
            session.completed_time = time.time()
            return
        if session.state != "pending":
            raise _failed(f"Session {name} has already been committed")
        if timer is not None:
            other = [s.name for s in self.sessions.values() if s.state == "pendingCommitTimer"]
            if other:
                raise _failed(f"Session {other[0]} has a pending commit timer")
        before = self.running
        self.running = ec.normalize(session.tree.copy(), self.ports)
        if timer is None:
            session.state, session.completed_time = "completed", time.time()
            self._trim_completed(keep=name)
            return
        session.state, session.before = "pendingCommitTimer", before
        session.commit_by = self.uptime() + timer
        t = threading.Timer(timer, self._expire, args=(name,))
        t.daemon = True
        session.timer = t
        t.start()

    def _expire(self, name: str) -> None:
        """The commit timer ran out without a confirming commit: restore the previous running config."""
        with self._lock:
            session = self.sessions.get(name)
            if session is None or session.state != "pendingCommitTimer" or session.before is None:
                return
            self.running = session.before
            session.state, session.before, session.commit_by, session.timer = "aborted", None, None, None
            self._refresh_view()
        self.faults.changed()  # the view changed after every request (shards)

    def _abort(self, name: str) -> None:
        session = self._get_session(name)
        if session.state == "pendingCommitTimer" and session.before is not None:
            self._cancel_timer(session)
            self.running = session.before
        elif session.state == "completed":
            raise _failed(f"Session {name} has already been committed")
        self.sessions.pop(name, None)  # pending, or already reverted by its expired timer

    @staticmethod
    def _cancel_timer(session: Session) -> None:
        if session.timer is not None:
            session.timer.cancel()
            session.timer = None

    def _trim_completed(self, keep: str) -> None:
        """EOS keeps one saved (completed) session by default (``maxSavedSessions``)."""
        for name in [n for n, s in self.sessions.items() if s.state == "completed" and n != keep]:
            del self.sessions[name]

    # -- copy / replace -------------------------------------------------------------------------------------------
    def _copy(self, src: str, dst: str) -> None:
        if src in ("running-config", "system:running-config"):
            text = render(self.running, EOS)
        elif src in ("startup-config", "flash:startup-config"):
            text = self.flash["startup-config"]
        else:
            name = self._flash_name(src)
            if name not in self.flash:
                raise _failed(f"Error copying {src} to {dst} (No such file or directory)")
            text = self.flash[name]
        if dst in ("running-config", "system:running-config"):
            self._merge_text(text)
            return
        name = self._flash_name(dst)
        if "/" in name or name in (".", ".."):  # flash is one flat directory here: no path leads out of it
            raise _failed(f"Error copying {src} to {dst} (No such file or directory)")
        self.flash[name] = text
        self._save_flash(name)

    def _merge_text(self, text: str) -> None:
        editor = Editor(self.running, EOS)
        try:
            editor.apply_indented(text.splitlines())
        except CliError as e:
            raise _invalid(e.message) from None
        ec.normalize(self.running, self.ports)

    def _replace(self, url: str) -> None:
        if url == "clean-config":
            text = ""
        else:
            name = self._flash_name(url)
            if name not in self.flash:
                raise _failed(f"Error reading flash:/{name} (No such file or directory)")
            text = self.flash[name]
        try:
            tree = load(text, EOS)
        except CliError as e:
            raise _invalid(e.message) from None
        self.faults.on_commit()
        self.running = ec.normalize(tree, self.ports)

    # -- show ---------------------------------------------------------------------------------------------------------
    def _remote_router_ids(self) -> dict[str, str]:
        """Router-ids of the other devices of the World (the peers shown by ``show ip bgp``)."""
        if self.world is None:
            return {}
        return {name: rid for name, rid in self.world.router_ids().items() if name != self.name}

    def _show(self, cmd: str, fmt: str) -> dict[str, Any]:
        text = fmt == "text"
        if cmd == "show version":
            return {"output": show.show_version_text(self)} if text else show.show_version(self)
        if cmd == "show hostname":
            return {"output": show.show_hostname_text(self)} if text else show.show_hostname(self)
        m = re.fullmatch(r"show interfaces?(?: (\S+))?", cmd)
        if m and (m.group(1) is None or m.group(1)[0].isupper()):
            return {"output": show.show_interfaces_text(self)} if text else show.show_interfaces(self, m.group(1))
        if cmd == "show lldp neighbors":
            return {"output": show.show_lldp_neighbors_text(self)} if text else show.show_lldp_neighbors(self)
        if cmd == "show vrf" and not text:
            return show.show_vrf(self)
        m = re.fullmatch(r"show ip route vrf default (\S+)\s+(?:bgp\s+)?detail", cmd)
        if m and not text:
            return show.show_ip_route(self, m.group(1))
        m = re.fullmatch(r"show ip bgp (\d\S*)\s+vrf default", cmd)
        if m and not text:
            return show.show_ip_bgp(self, m.group(1))
        m = re.fullmatch(r"show (ip|ipv6) bgp (summary|neighbors|peers)(?: vrf (\S+))?", cmd)
        if m:
            return self._show_bgp(m.group(1) == "ipv6", m.group(2), m.group(3) or "default", text)
        m = re.fullmatch(r"show (running|startup)-config((?: all| sanitized)*)(?: section (.+))?", cmd)
        if m:
            out = self._show_config(m.group(1), m.group(3), text)
            if "sanitized" in m.group(2) and "output" in out:
                out["output"] = show.sanitize(out["output"])
            return out
        m = re.fullmatch(r"show configuration sessions( detail)?", cmd)
        if m:
            data = self._sessions_json(detail=bool(m.group(1)))
            return {"output": show.sessions_text(data)} if text else data
        m = re.fullmatch(r"show session-config named (\S+)( diffs)?", cmd)
        if m:
            return self._show_session(m.group(1), bool(m.group(2)), text)
        raise _invalid(f"Invalid input (at token 1: '{cmd.split()[1]}')")

    def _show_bgp(self, v6: bool, what: str, vrf: str, text: bool) -> dict[str, Any]:
        ids = self._remote_router_ids()
        if what == "summary":
            data = show.show_bgp_summary(self, self._bgp_clock, ids, v6)
            if text:
                return {"output": show.show_bgp_summary_text(self, self._bgp_clock, ids)}
        else:
            data = show.show_bgp_neighbors(self, self._bgp_clock, ids, v6)
            if text:
                raise _CmdError(1003, "unconverted command", ["This command is only available as JSON here"])
        if vrf != "all":
            data = {"vrfs": {k: v for k, v in data["vrfs"].items() if k == vrf}}
        return data

    def _show_config(self, which: str, section: str | None, text: bool) -> dict[str, Any]:
        if which == "startup":
            body = self.flash["startup-config"]
            if section is not None:
                body = show.section_text(ec.load_startup(body, self.ports), section)
            if text:
                return {"output": body}
            return show.cmds_json(ec.load_startup(body, self.ports))
        if section is not None:
            body = show.section_text(self.running, section)
            return {"output": body} if text else show.cmds_json(self.running)
        if text:
            return {"output": show.running_text(self, self.running)}
        return show.cmds_json(self.running) | {"header": show.running_header(self).splitlines()}

    def _show_session(self, name: str, diffs: bool, text: bool) -> dict[str, Any]:
        session = self._get_session(name)
        tree = ec.normalize(session.tree.copy(), self.ports)
        if diffs:
            if not text:
                raise _CmdError(1003, "unconverted command", ["Not available in JSON format"])
            out = unified_diff(self.running, tree, EOS, "system:/running-config", f"session:/{name}-session-config")
            return {"output": out}
        if text:
            header = f"! Command: show session-config named {name}\n! device: {self.name}\n!\n"
            return {"output": header + render(tree, EOS)}
        return show.cmds_json(tree)

    def _sessions_json(self, detail: bool) -> dict[str, Any]:
        sessions: dict[str, Any] = {}
        new_form = _version_tuple(self.version) >= (4, 32)
        out: dict[str, Any] = {"maxSavedSessions": 1, "maxOpenSessions": MAX_OPEN_SESSIONS}
        for name, s in self.sessions.items():
            entry: dict[str, Any] = {
                "state": s.state,
                "completedTime": s.completed_time or 0.0,
                "commitUser": s.user,
                "description": "",
                "instances": {},
            }
            if detail and s.state == "pendingCommitTimer" and not new_form:
                entry["commitBy"] = s.commit_by
            sessions[name] = entry
            if detail and new_form and s.state == "pendingCommitTimer":
                out["commitTimerSessionName"] = name
                out["commitTimerExpireTime"] = s.commit_by
        out["sessions"] = sessions
        return out


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


def _rpc_error(req_id: Any, code: int, message: str, data: list[Any] | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": req_id, "error": error}


def default_startup_config(hostname: str, ports: list[str]) -> str:
    """The brownfield startup config an ``EosSim`` boots with when none is given."""
    return ec.default_eos_config(hostname, ports)
