"""A generic SSH server for lab devices (paramiko), independent of any platform.

One ``SshService`` per device listens on ``(address, port)`` (default 22) in a background thread and
speaks real SSH: password (and keyboard-interactive) authentication, ``exec`` requests, an interactive
``shell`` on a pty with a device-supplied prompt and echo, and an SCP sink (``scp -t PATH``).

Public API (stable; other simulators build on it)::

    svc = SshService(
        name, address, port=22,
        username=..., password=...,
        handler=lambda command: (output, status),   # simple devices: one callback ...
        prompt="host$ ",                             # ... and a fixed prompt (str or callable)
        session_factory=None,                        # OR: SessionContext -> ShellSession (stateful, per channel)
        faults=None, state_dir=None,
        scp_sink=None,                               # (path, data) -> None on success, or an error message
        banner="",                                   # printed once when an interactive shell opens
    )
    svc.start()          # returns once listening; svc.port holds the bound port (port=0 picks one)
    svc.stop()
    svc.disconnect_all() # drop every open connection (a device reboot), keep listening
    svc.commands         # the last 10 000 (kind, command) received: kind is "exec", "shell" or "scp"
    svc.host_key         # paramiko.PKey; persisted as STATE_DIR/ssh/<name>_host_ecdsa_key when state_dir is set

``ShellSession`` is the per-channel object a device returns from ``session_factory``:

- ``prompt() -> str``: printed after every command in a shell (e.g. ``"leaf1# "``, ``"root@gpu1:~# "``).
- ``handle(command) -> (output, status)``: runs one complete command. For ``exec`` the whole request
  string is passed (it may contain newlines, e.g. a heredoc); in a shell each complete input line is.
- ``needs_more(text) -> bool``: in a shell, True while ``text`` (the lines so far) is incomplete (an
  open heredoc); the service then prints ``continuation_prompt()`` (``"> "``) and appends the next line.
- ``handle_exec(command) -> (stdout, stderr, status)``: for exec requests; the default calls ``handle`` and
  sends nothing on stderr. Override it to separate stderr (as a Linux host does).
- ``banner() -> str``: printed once when the shell opens (default: the service's ``banner``).
- To end a shell session (``exit``), raise ``CloseSession(output)`` from ``handle``.

Semantics:

- Output conventions: ``handle`` returns text as the tool prints it. In a shell with a pty every ``\\n``
  is sent as ``\\r\\n`` (like a tty with ONLCR) and a newline is added before the prompt if the output
  did not end with one. Exec output is sent raw on stdout; the status is sent as the exit status.
- Echo: in a shell every typed character is echoed; ``\\r``, ``\\n`` and ``\\r\\n`` each end a line;
  backspace/DEL edit the line; Ctrl-C drops the line (``^C``); Ctrl-D on an empty line closes the shell.
- Faults (``fabconf_lab.faults.Faults``): ``auth_refuse`` fails every authentication; ``delay`` and
  ``hang`` are applied (``Faults.before_request``) before each exec request, each shell command and each
  SCP transfer; a ``DropConnection`` raised from ``handle`` or the SCP sink closes the whole SSH
  connection at once without a reply (use ``Faults.on_commit()`` in the device's commit path).
- SCP sink: an exec of ``scp [-v] [-p] [-d] -t TARGET`` runs the sink side of the classic SCP protocol
  (what the python ``scp`` package, netmiko's file transfer and ``scp -O`` speak). For each file the
  device's ``scp_sink(path, data)`` is called; ``path`` is TARGET, or TARGET joined with the sent file
  name when TARGET ends with ``/`` or ``:``. Returning a string refuses the file with that message.
  Directories (``-r``) and ``scp -f`` (download) are refused. Without ``scp_sink`` the exec goes to
  ``handle`` like any other command. OpenSSH 9 ``scp`` defaults to SFTP: use ``scp -O``.
- Host key: ECDSA P-256, generated once per device; persisted under ``state_dir/ssh/`` if given so that
  ``known_hosts`` stays valid across lab restarts.
"""

from __future__ import annotations

import contextlib
import io
import select
import shlex
import socket
import struct
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import paramiko

from fabconf.private import private_dir, write_private
from fabconf_lab.acceptor import acceptor, serve_apart
from fabconf_lab.faults import DropConnection, Faults, StepFault

__all__ = [
    "CloseSession",
    "ScpSink",
    "SessionContext",
    "ShellSession",
    "SimpleSession",
    "SshService",
    "load_or_create_host_key",
]

ScpSink = Callable[[str, bytes], "str | None"]


class CloseSession(Exception):
    """Raised by ``ShellSession.handle`` to end the shell (after printing ``output``)."""

    def __init__(self, output: str = "", status: int = 0) -> None:
        super().__init__(output)
        self.output = output
        self.status = status


@dataclass
class SessionContext:
    """What the service knows about a channel when it asks the device for a session."""

    username: str
    peer: str
    interactive: bool  # True for a shell, False for exec
    pty: bool = False
    term: str = ""
    env: dict[str, str] = field(default_factory=dict)
    # the step fault for one command inside an exec'd script, its ``before`` part done (drop, hang raise here);
    # None when the device names no moment for commands inside a script (``SshService(part_moment=...)``)
    part_step: Callable[[str], StepFault | None] | None = None


class ShellSession:
    """Per-channel device state. Subclass it, or use ``SimpleSession`` around a plain callback."""

    def prompt(self) -> str:
        return "$ "

    def continuation_prompt(self) -> str:
        return "> "

    def banner(self) -> str:
        return ""

    def needs_more(self, text: str) -> bool:
        return False

    def handle(self, command: str) -> tuple[str, int]:  # pragma: no cover - interface
        raise NotImplementedError

    def handle_exec(self, command: str) -> tuple[str, str, int]:
        """An exec request: (stdout, stderr, status). Default: ``handle`` with nothing on stderr."""
        try:
            output, status = self.handle(command)
        except CloseSession as close:
            output, status = close.output, close.status
        return output, "", status


class SimpleSession(ShellSession):
    """A session over a ``handle(command) -> (output, status)`` callback; ``exit``/``logout`` end it."""

    def __init__(
        self,
        handler: Callable[[str], tuple[str, int]],
        prompt: str | Callable[[], str] = "$ ",
        banner: str = "",
    ) -> None:
        self._handler = handler
        self._prompt = prompt
        self._banner = banner

    def prompt(self) -> str:
        return self._prompt() if callable(self._prompt) else self._prompt

    def banner(self) -> str:
        return self._banner

    def handle(self, command: str) -> tuple[str, int]:
        if command.strip() in ("exit", "logout"):
            raise CloseSession("logout\n" if command.strip() == "logout" else "")
        return self._handler(command)


def load_or_create_host_key(path: Path | None) -> paramiko.PKey:
    """An ECDSA host key: read from ``path`` if it exists, else generated (and written there if given)."""
    if path is not None and path.exists():
        return paramiko.ECDSAKey(filename=str(path))
    key = paramiko.ECDSAKey.generate(bits=256)
    if path is not None:
        private_dir(path.parent)
        pem = io.StringIO()
        key.write_private_key(pem)
        write_private(path, pem.getvalue())  # 0600 from its creation, never through a symlink
    return key


_MSG_CHANNEL_SUCCESS, _MSG_CHANNEL_FAILURE = 99, 100
_MSG_CHANNEL_REQUEST = 98
# seconds a worker waits for paramiko to send the reply to its channel's request before it answers anyway: long,
# as a loaded lab can take that long to get to it; a request that wants no reply is not waited for at all
_REPLY_WAIT = 30.0
# seconds a new connection may take to send its first byte before it is served anyway (``_closed_unheard``)
_PROBE_WAIT = 0.05


class _LabTransport(paramiko.Transport):
    """A server transport that tells channel workers when the reply to their request has been sent.

    paramiko calls ``check_channel_*_request`` before it sends CHANNEL_SUCCESS; a worker that answered
    (and closed the channel) before that reply would make clients see the channel close first.
    """

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(sock)
        self._reply_waiters: dict[int, threading.Event] = {}
        self._wants_reply: dict[int, bool] = {}
        self._waiters_lock = threading.Lock()
        # note, per channel, whether the request being handled wants a reply (paramiko does not tell the server)
        table = dict(self._channel_handler_table)
        handle_request = table[_MSG_CHANNEL_REQUEST]

        def noting(chan: paramiko.Channel, m: paramiko.Message) -> None:
            at = m.packet.tell()
            m.get_text()
            want = m.get_boolean()
            m.packet.seek(at)
            with self._waiters_lock:
                self._wants_reply[chan.remote_chanid] = want
            handle_request(chan, m)

        table[_MSG_CHANNEL_REQUEST] = noting
        self._channel_handler_table = table

    def reply_event(self, channel: paramiko.Channel) -> threading.Event:
        event = threading.Event()
        with self._waiters_lock:
            if self._wants_reply.get(channel.remote_chanid, True):
                self._reply_waiters[channel.remote_chanid] = event
            else:
                event.set()  # no reply will be sent: nothing to wait for
        return event

    def _send_user_message(self, data: object) -> None:
        super()._send_user_message(data)
        if isinstance(data, paramiko.Message):
            raw = data.asbytes()
            if len(raw) >= 5 and raw[0] in (_MSG_CHANNEL_SUCCESS, _MSG_CHANNEL_FAILURE):
                (chanid,) = struct.unpack(">I", raw[1:5])
                with self._waiters_lock:
                    event = self._reply_waiters.pop(chanid, None)
                if event is not None:
                    event.set()


class _Server(paramiko.ServerInterface):
    """paramiko callbacks for one connection; channel work runs in threads of its own."""

    def __init__(self, service: SshService, peer: str, transport: paramiko.Transport | None = None) -> None:
        self.service = service
        self.peer = peer
        self.transport = transport
        self.user = ""
        self.pty: dict[int, tuple[str, int]] = {}
        self.env: dict[int, dict[str, str]] = {}

    # -- authentication ------------------------------------------------------------------------
    def get_allowed_auths(self, username: str) -> str:
        return "password,keyboard-interactive"

    def _check(self, username: str, password: str) -> int:
        svc = self.service
        if svc.faults.auth_refuse or username != svc.username or password != svc.password:
            return paramiko.AUTH_FAILED
        fault = svc.faults.step("connect") if svc.connect_moment and svc.faults.steps else None
        if fault is not None:
            if fault.kind in ("auth-refuse", "reject", "garbled"):
                return paramiko.AUTH_FAILED
            try:
                fault.before()
            except DropConnection:
                if self.transport is not None:
                    svc._drop_transport(self.transport)
                return paramiko.AUTH_FAILED
            fault.after_reply()
        self.user = username
        return paramiko.AUTH_SUCCESSFUL

    def check_auth_password(self, username: str, password: str) -> int:
        return self._check(username, password)

    def check_auth_interactive(self, username: str, submethods: str) -> paramiko.InteractiveQuery | int:
        self.user = username
        query = paramiko.InteractiveQuery("", "")
        query.add_prompt("Password: ", echo=False)
        return query

    def check_auth_interactive_response(self, responses: list[str]) -> int:
        if len(responses) != 1:
            return paramiko.AUTH_FAILED
        return self._check(self.user, responses[0])

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        return paramiko.AUTH_FAILED

    # -- channels ---------------------------------------------------------------------------------
    def check_channel_request(self, kind: str, chanid: int) -> int:
        if kind == "session":
            return paramiko.OPEN_SUCCEEDED
        return paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_channel_pty_request(
        self, channel: paramiko.Channel, term: bytes | str, width: int, height: int, pw: int, ph: int, modes: bytes
    ) -> bool:
        self.pty[channel.get_id()] = (term.decode() if isinstance(term, bytes) else term, width)
        return True

    def check_channel_window_change_request(self, channel: paramiko.Channel, *args: int) -> bool:
        return True

    def check_channel_env_request(self, channel: paramiko.Channel, name: bytes | str, value: bytes | str) -> bool:
        key = name.decode() if isinstance(name, bytes) else name
        val = value.decode() if isinstance(value, bytes) else value
        self.env.setdefault(channel.get_id(), {})[key] = val
        return True

    def _context(self, channel: paramiko.Channel, interactive: bool) -> SessionContext:
        pty = self.pty.get(channel.get_id())
        return SessionContext(
            username=self.user,
            peer=self.peer,
            interactive=interactive,
            pty=pty is not None,
            term=pty[0] if pty else "",
            env=dict(self.env.get(channel.get_id(), {})),
            part_step=self.service.part_step if self.service.part_moment is not None else None,
        )

    def _reply_sent(self, channel: paramiko.Channel) -> threading.Event:
        transport = channel.get_transport()
        if isinstance(transport, _LabTransport):
            return transport.reply_event(channel)
        event = threading.Event()
        event.set()
        return event

    def check_channel_shell_request(self, channel: paramiko.Channel) -> bool:
        ctx = self._context(channel, interactive=True)
        self.service._spawn(self.service._run_shell, channel, ctx, self._reply_sent(channel))
        return True

    def check_channel_exec_request(self, channel: paramiko.Channel, command: bytes | str) -> bool:
        text = command.decode("utf-8", "replace") if isinstance(command, bytes) else command
        ctx = self._context(channel, interactive=False)
        self.service._spawn(self.service._run_exec, channel, ctx, text, self._reply_sent(channel))
        return True

    def check_channel_subsystem_request(self, channel: paramiko.Channel, name: str) -> bool:
        return False


class SshService:
    """Serve one lab device over SSH. See the module docstring for the contract."""

    def __init__(
        self,
        name: str,
        address: str,
        port: int = 22,
        *,
        username: str,
        password: str,
        handler: Callable[[str], tuple[str, int]] | None = None,
        prompt: str | Callable[[], str] = "$ ",
        session_factory: Callable[[SessionContext], ShellSession] | None = None,
        faults: Faults | None = None,
        state_dir: Path | None = None,
        scp_sink: ScpSink | None = None,
        banner: str = "",
        host_key: paramiko.PKey | None = None,
        moment: Callable[[str, str], str | None] | None = None,
        refuse: Callable[[str], tuple[str, str, int]] | None = None,
        connect_moment: bool = False,
        part_moment: Callable[[str], str | None] | None = None,
    ) -> None:
        if handler is None and session_factory is None:
            raise ValueError("SshService needs a handler or a session_factory")
        self.name = name
        self.address = address
        self.port = port
        self.username = username
        self.password = password
        self.faults = faults if faults is not None else Faults()
        self.scp_sink = scp_sink
        self.banner = banner
        self._handler = handler
        self._prompt = prompt
        # step faults: the moment of a (kind, command), the device's refusal of a command, and whether SSH
        # authentication is this device's "connect" moment (a GPU host) or only a side channel (NX-OS, NVUE)
        self.moment = moment
        self.refuse = refuse or _invalid_argument
        self.connect_moment = connect_moment
        # the moment of one command inside an exec'd script (a commit's writes sent as one script): a step fault
        # then fires at the command it names, not at the script as a whole
        self.part_moment = part_moment
        self._factory = session_factory
        key_path = Path(state_dir) / "ssh" / f"{name}_host_ecdsa_key" if state_dir is not None else None
        self.host_key = host_key if host_key is not None else load_or_create_host_key(key_path)
        self.commands: deque[tuple[str, str]] = deque(maxlen=10_000)
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._transports: set[paramiko.Transport] = set()
        self._stopping = threading.Event()

    # -- lifecycle ------------------------------------------------------------------------------------
    def start(self) -> None:
        """Bind and listen; returns once connections are accepted."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.address, self.port))
        sock.listen(64)
        # no thread of its own: the process's one acceptor waits on every service's listening socket (a thread per
        # device, 4,096 in a GPU-host worker, made the whole process contend for the GIL)
        self.port = sock.getsockname()[1]
        self._sock = sock
        self._stopping.clear()
        acceptor().add(sock, self._accepted)

    def stop(self) -> None:
        self._stopping.set()
        if self._sock is not None:
            acceptor().remove(self._sock)
            with contextlib.suppress(OSError):
                self._sock.close()
            self._sock = None
        with self._lock:
            transports = list(self._transports)
            self._transports.clear()
        for t in transports:
            with contextlib.suppress(Exception):
                t.close()

    def disconnect_all(self) -> None:
        """Close every open SSH connection at once (as a rebooting device does); keep listening."""
        with self._lock:
            transports = list(self._transports)
        for t in transports:
            with contextlib.suppress(Exception):
                if isinstance(t.sock, socket.socket):
                    t.sock.shutdown(socket.SHUT_RDWR)
            self._forget(t)

    def __enter__(self) -> SshService:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- internals --------------------------------------------------------------------------------------
    def _accepted(self, conn: socket.socket, peer: tuple[str, int]) -> None:
        if self._stopping.is_set():
            conn.close()
            return
        serve_apart(self._serve_connection, conn, f"{peer[0]}:{peer[1]}")  # the acceptor's callback: never waits

    def _spawn(self, target: Callable[..., None], *args: object) -> None:
        threading.Thread(target=target, args=args, name=f"sshd-{self.name}-worker", daemon=True).start()

    def _serve_connection(self, conn: socket.socket, peer: str) -> None:
        conn.settimeout(None)
        if _closed_unheard(conn):  # a port probe (``lab up`` checks every port): no SSH transport for it
            conn.close()
            return
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle stalls on small SSH packets
        transport = _LabTransport(conn)
        transport.add_server_key(self.host_key)
        transport.local_version = "SSH-2.0-OpenSSH_9.2p1 fabconf-lab"
        with self._lock:
            if self._stopping.is_set():
                conn.close()
                return
            self._transports.add(transport)
        try:
            transport.start_server(server=_Server(self, peer, transport))
        except (paramiko.SSHException, EOFError, OSError):
            self._forget(transport)
            return
        # Channels are served from the callbacks. accept() drains paramiko's queue of opened channels;
        # they are kept referenced here (a collected paramiko Channel closes itself) until the client goes.
        channels: list[paramiko.Channel] = []
        while transport.is_active() and not self._stopping.is_set():
            chan = transport.accept(timeout=0.5)
            if chan is not None:
                channels = [c for c in channels if not c.closed] + [chan]
        self._forget(transport)

    def _forget(self, transport: paramiko.Transport) -> None:
        with self._lock:
            self._transports.discard(transport)
        with contextlib.suppress(Exception):
            transport.close()

    def _session(self, ctx: SessionContext) -> ShellSession:
        if self._factory is not None:
            return self._factory(ctx)
        assert self._handler is not None
        return SimpleSession(self._handler, self._prompt, self.banner)

    def _drop(self, channel: paramiko.Channel) -> None:
        self._drop_transport(channel.get_transport())

    def _drop_transport(self, transport: paramiko.Transport | None) -> None:
        with contextlib.suppress(Exception):
            sock = transport.sock if transport is not None else None
            if isinstance(sock, socket.socket):
                sock.shutdown(socket.SHUT_RDWR)
        if transport is not None:
            self._forget(transport)

    def _record(self, kind: str, command: str) -> None:
        with self._lock:
            self.commands.append((kind, command))

    def _step(self, kind: str, command: str) -> StepFault | None:
        """The step fault firing for this command, with its ``before`` part done (drop, hang raise here)."""
        if self.moment is None:
            return None
        moment = self.moment(kind, command)  # the device tracks its phase: ask for every command
        fault = self.faults.step(moment) if self.faults.steps else None
        if fault is not None:
            fault.before()
        return fault

    def part_step(self, command: str) -> StepFault | None:
        """The step fault firing for one command inside a script (``part_moment``), its ``before`` part done."""
        moment = self.part_moment(command) if self.part_moment is not None else None
        fault = self.faults.step(moment) if moment is not None and self.faults.steps else None
        if fault is not None:
            fault.before()
        return fault

    # -- exec -------------------------------------------------------------------------------------
    def _run_exec(self, channel: paramiko.Channel, ctx: SessionContext, command: str, replied: threading.Event) -> None:
        replied.wait(_REPLY_WAIT)
        try:
            self.faults.before_request()
            argv = _scp_argv(command) if self.scp_sink is not None else None
            if argv is not None:
                self._record("scp", command)
                fault = self._step("scp", command)
                if fault is not None and fault.refuses:
                    channel.sendall(b"\x01scp: " + self.refuse(command)[1].strip().encode() + b"\n")
                    status = 1
                else:
                    status = self._scp_receive(channel, argv)
                if fault is not None:
                    fault.after_reply()
            else:
                self._record("exec", command)
                fault = self._step("exec", command)
                if fault is not None and fault.refuses:
                    stdout, stderr, status = self.refuse(command)
                else:
                    stdout, stderr, status = self._session(ctx).handle_exec(command)
                if fault is not None:
                    stdout = fault.reply(stdout, garble_text)
                if ctx.pty:  # one terminal: stderr joins stdout, with tty newlines
                    channel.sendall(_crlf(stdout + stderr).encode())
                else:
                    channel.sendall(stdout.encode())
                    if stderr:
                        channel.sendall_stderr(stderr.encode())
            channel.send_exit_status(status)
        except DropConnection:
            self._drop(channel)
            return
        except (OSError, EOFError, paramiko.SSHException):
            pass
        except BaseException:
            _end(channel)  # a simulator's own error: see _end
            raise
        finally:
            self.faults.after_request()  # the command may have changed the device's view (shards)
        _end(channel)

    # -- scp sink ----------------------------------------------------------------------------------
    def _scp_receive(self, channel: paramiko.Channel, argv: list[str]) -> int:
        assert self.scp_sink is not None
        target = argv[-1]
        reader = _ChannelReader(channel)
        if "-r" in argv or "-f" in argv:
            channel.sendall(b"\x01scp: only single-file uploads are supported\n")
            return 1
        channel.sendall(b"\x00")
        status = 0
        while True:
            line = reader.readline()
            if line is None:
                break
            kind, rest = line[:1], line[1:]
            if kind == b"T":  # times (scp -p): acknowledged and ignored
                channel.sendall(b"\x00")
                continue
            if kind in (b"D", b"E"):
                channel.sendall(b"\x01scp: directories are not supported\n")
                return 1
            if kind != b"C":
                channel.sendall(b"\x01scp: protocol error: unexpected " + line[:40] + b"\n")
                return 1
            try:
                _mode, size_text, filename = rest.decode("utf-8", "replace").split(" ", 2)
                size = int(size_text)
            except ValueError:
                channel.sendall(b"\x01scp: protocol error: bad file header\n")
                return 1
            channel.sendall(b"\x00")
            data = reader.read(size)
            trailer = reader.read(1)
            if data is None or trailer is None:
                return 1
            path = target + filename if target.endswith(("/", ":")) else target
            error = self.scp_sink(path, data)
            if error:
                channel.sendall(b"\x01scp: " + error.encode() + b"\n")
                status = 1
            else:
                channel.sendall(b"\x00")
        return status

    # -- interactive shell -----------------------------------------------------------------------
    def _run_shell(self, channel: paramiko.Channel, ctx: SessionContext, replied: threading.Event) -> None:
        replied.wait(_REPLY_WAIT)
        session = self._session(ctx)
        term = _Terminal(channel, crlf=ctx.pty)
        try:
            banner = session.banner() or self.banner
            if banner:
                term.write(banner if banner.endswith("\n") else banner + "\n")
            term.write(session.prompt())
            pending: list[str] = []
            while True:
                line = term.read_line()
                if line is None:
                    break
                pending.append(line)
                text = "\n".join(pending)
                if session.needs_more(text):
                    term.write(session.continuation_prompt())
                    continue
                pending = []
                if not text.strip():
                    term.write(session.prompt())
                    continue
                self._record("shell", text)
                self.faults.before_request()
                try:
                    fault = self._step("shell", text)
                    if fault is not None and fault.refuses:
                        refused = self.refuse(text)
                        output = refused[0] + refused[1]
                    else:
                        output, _status = session.handle(text)
                    if fault is not None:
                        output = fault.reply(output, garble_text)
                except CloseSession as close:
                    term.write(close.output)
                    with contextlib.suppress(Exception):
                        channel.send_exit_status(close.status)
                    break
                finally:
                    self.faults.after_request()  # the command may have changed the device's view (shards)
                if output and not output.endswith("\n"):
                    output += "\n"
                term.write(output + session.prompt())
        except DropConnection:
            self._drop(channel)
            return
        except (OSError, EOFError, paramiko.SSHException):
            pass
        except BaseException:
            _end(channel)  # a simulator's own error: see _end
            raise
        with contextlib.suppress(Exception):
            channel.close()


def _end(channel: paramiko.Channel) -> None:
    """End a channel: EOF, then close. Also where a simulator's own error (a lab bug) ends its channel at once, with
    no exit status sent, as a command killed on a real host ends: the client sees the channel close instead of
    waiting out its timeout (a GPU host's commit, issue 42); the traceback still goes to ``lab.log`` (the thread's
    exception hook)."""
    with contextlib.suppress(Exception):
        channel.shutdown_write()
        channel.close()


def _scp_argv(command: str) -> list[str] | None:
    """``scp ... -t TARGET`` split into words, or None when the command is not an SCP sink/source."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    if len(argv) < 3 or argv[0] != "scp" or not ({"-t", "-f"} & set(argv)):
        return None
    return argv


def _closed_unheard(conn: socket.socket) -> bool:
    """True when the client closed the connection without sending a byte, seen within ``_PROBE_WAIT`` seconds: a
    port probe such as ``lab up``'s, which a paramiko transport (a thread, a key exchange attempt, a logged
    traceback) would cost some 10 ms of CPU each in a busy lab. An SSH client sends its version line at once; one
    that waits for the server's first is served after the wait, as before."""
    poller = select.poll()  # not select.select: a lab worker's descriptors go far past FD_SETSIZE (1,024)
    poller.register(conn, select.POLLIN)
    try:
        return bool(poller.poll(_PROBE_WAIT * 1000)) and conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def _invalid_argument(command: str) -> tuple[str, str, int]:
    words = command.split()
    return "", f"{words[0] if words else 'sh'}: Invalid argument\n", 1


def garble_text(text: str) -> str:
    """A command's output corrupted: cut to two thirds, every seventh character replaced."""
    cut = text[: max(1, len(text) * 2 // 3)] if text else "\x00"
    return "".join("\ufffd" if i % 7 == 3 else ch for i, ch in enumerate(cut))


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


class _ChannelReader:
    """Buffered reads from a channel (SCP control lines and file bodies)."""

    def __init__(self, channel: paramiko.Channel) -> None:
        self.channel = channel
        self.buf = b""

    def _fill(self) -> bool:
        chunk = self.channel.recv(65536)
        if not chunk:
            return False
        self.buf += chunk
        return True

    def readline(self) -> bytes | None:
        while b"\n" not in self.buf:
            if not self._fill():
                return None
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def read(self, size: int) -> bytes | None:
        while len(self.buf) < size:
            if not self._fill():
                return None
        data, self.buf = self.buf[:size], self.buf[size:]
        return data


class _Terminal:
    """Line discipline of a shell channel: echo, line editing, CR/LF handling."""

    def __init__(self, channel: paramiko.Channel, crlf: bool) -> None:
        self.channel = channel
        self.crlf = crlf
        self.pending = ""  # decoded input not yet consumed
        self.last_cr = False

    def write(self, text: str) -> None:
        if text:
            self.channel.sendall((_crlf(text) if self.crlf else text).encode())

    def read_line(self) -> str | None:
        line = ""
        while True:
            if not self.pending:
                chunk = self.channel.recv(4096)
                if not chunk:
                    return None
                self.pending = chunk.decode("utf-8", "replace")
            ch, self.pending = self.pending[0], self.pending[1:]
            if ch == "\n" and self.last_cr:
                self.last_cr = False
                continue
            self.last_cr = ch == "\r"
            if ch in ("\r", "\n"):
                self.channel.sendall(b"\r\n")
                return line
            if ch in ("\x7f", "\x08"):
                if line:
                    line = line[:-1]
                    self.channel.sendall(b"\x08 \x08")
                continue
            if ch == "\x03":
                self.channel.sendall(b"^C\r\n")
                return ""
            if ch == "\x04":
                if not line:
                    return None
                continue
            line += ch
            self.channel.sendall(ch.encode())
