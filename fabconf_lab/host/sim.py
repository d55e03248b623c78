"""A lab GPU host with ConnectX NICs, reached over real SSH (exec and interactive shell).

``GpuHostSim(name, address, *, ports, username, password, ca=None, world=None, state_dir=None, faults=None,
port=None (22; 10022 without the privilege to bind 22), startup_config=None, nics=None)``: ``ports`` are the NIC
netdevs (default ``ens1f0np0``, ``ens1f1np1``); ``nics`` (list of dicts: netdev, rdma, pci, speed, mac, address,
fw_version, part, psid, mlxconfig overrides) takes precedence; ``startup_config`` is a ``HostState``
(``default_startup_config`` builds the brownfield default). ``ca`` is unused (SSH only). ``.start()``, ``.stop()``,
``.reboot()``, ``.lab_view()``, ``.state`` (the live ``HostState``; hold ``.lock`` when changing it from another
thread), ``.faults`` (a ``HostFaults``: the shared kinds plus ``garbled``), ``.ssh`` (the ``SshService``), ``.port``.

Users: the login user gets a ``user@host:~$`` prompt and needs ``sudo`` for privileged commands (passwordless);
``sudo -s``/``sudo -i``/``sudo su`` in a shell switch it to ``root@host:~#`` until ``exit``. Logging in as
``root`` gives a root shell directly. Each exec request runs in a fresh shell; an interactive shell keeps ``$?``,
variables and the working directory.

Shell subset: see ``fabconf_lab.host.shell`` (quotes, ``$?``, ``;``/``&&``/``||``, pipes, redirections,
here-documents, ``sudo``, ``bash -c``, scripts by path, core utilities). Host commands: ``mlnx_qos``
(``fabconf_lab.host.mlnxqos``), ``ip``, ``rdma``, ``ibstat``, ``ibv_devinfo``, ``show_gids``, ``ibdev2netdev``,
``cma_roce_tos`` (``fabconf_lab.host.niccmds``), ``mlxconfig``, ``mlxfwreset`` (``fabconf_lab.host.mlxcmds``),
``systemctl``, ``pgrep``, ``lldpad``, ``hostname``, ``hostnamectl``, ``uname`` (``fabconf_lab.host.services``), sysfs
and configfs files (``fabconf_lab.host.nicsysfs``), ``/proc/sys`` files of the modelled sysctls (``ProcSys``) and
the lab-only ``reboot``.

``reboot`` (command or method) ends every SSH session and loses the runtime state (mlnx_qos settings,
sysfs ECN, ToS, MTU back to 1500, lldpad stopped), makes pending ``mlxconfig`` values current, clears ``/tmp``
and ``/run``, then starts every ENABLED unit through the same shell (so a boot unit that re-applies NIC
settings really does). New connections are accepted at once, or after ``boot_seconds`` (constructor argument
or attribute) during which connections are refused.

A NIC port's link is up when it is administratively up and, if a ``World`` is given, cabled in it.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Unpack

from fabconf.private import private_dir, write_private
from fabconf_lab.contract import SimArgs, SimBase
from fabconf_lab.faults import DropConnection, Faults
from fabconf_lab.host import iproute, mlnxqos, mlxcmds, niccmds, platcmds
from fabconf_lab.host import services as hostsvc
from fabconf_lab.host.memfs import FsError
from fabconf_lab.host.nicstate import HostState, NicPort, default_host_state
from fabconf_lab.host.nicsysfs import NicContext, NicSysfs
from fabconf_lab.host.shell import CommandFn, Invocation, MemoryFs, Output, Result, Shell, is_incomplete
from fabconf_lab.ports import default_port
from fabconf_lab.sshd import CloseSession, SessionContext, ShellSession, SshService, garble_text
from fabconf_lab.world import DeviceView, PortView

__all__ = ["GpuHostSim", "HostFaults", "default_startup_config"]

ROOT_SHELL_COMMANDS = ("sudo -s", "sudo -i", "sudo su", "sudo su -", "sudo bash", "sudo -s bash", "sudo -i bash")


@dataclass
class HostFaults(Faults):
    """The shared fault kinds plus ``garbled``: NIC tool output and sysfs reads come back corrupted."""

    garbled: bool = False

    def set(
        self, kind: str, arg: str | None = None, *, at: str | None = None, after: int = 1, every: bool = False
    ) -> None:
        if kind == "garbled" and at is None:
            if arg is not None:
                raise ValueError(f"fault 'garbled' takes no argument, got {arg!r}")
            self.clear()  # a new fault replaces the active one, as for every kind
            self.garbled = True
            return
        super().set(kind, arg, at=at, after=after, every=every)

    def clear(self) -> None:
        super().clear()
        self.garbled = False

    def active(self) -> list[str]:
        return [*super().active(), *(["garbled"] if self.garbled else [])]


class ProcSys:
    """A ``VirtualFiles`` tree for ``/proc/sys``: the keys of ``HostState.sysctls`` as files (``net.ipv4.ip_forward``
    is ``/proc/sys/net/ipv4/ip_forward``); a write takes the same values ``sysctl -w`` does."""

    def __init__(self, state: HostState) -> None:
        self.state = state

    def _files(self) -> dict[str, str]:
        return {"/proc/sys/" + key.replace(".", "/"): key for key in self.state.sysctls}

    def read(self, path: str) -> str | None:
        key = self._files().get(path)
        return None if key is None else f"{self.state.sysctls[key]}\n"

    def listdir(self, path: str) -> list[str] | None:
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix) :].split("/", 1)[0] for p in self._files() if p.startswith(prefix)}
        return sorted(names) if names else None

    def write(self, path: str, data: str) -> None:
        key = self._files().get(path)
        if key is None:
            raise FsError("Is a directory" if self.listdir(path) is not None else "No such file or directory")
        low, high = iproute.SYSCTL_RANGES.get(key.rsplit(".", 1)[-1], (0, 2**31))
        value = data.strip()
        if not value.isdigit() or not low <= int(value) <= high:
            raise FsError("Invalid argument")
        self.state.sysctls[key] = int(value)


# what changes a host's state (step faults "commit"/"rollback", drop-on-commit, reject); batched reads and
# fabconf's own bookkeeping (its commit lock, its checkpoint) do not count
_WRITE = re.compile(
    r"\b(?:(?:tee|chmod|rm|mv|cp|ln|reboot|mlxfwreset)\b"
    r"|systemctl\s+(?:enable|disable|daemon-reload|start|stop|restart)\b|sysctl\s+(?:-\S+\s+)*-w\b"
    r"|mlnx_qos\s+-i\s+\S+\s+-|cma_roce_tos\s.*-t\b|mlxconfig\s.*\bset\b"
    r"|ip\s+(?:link\s+set|addr\s+(?:add|del)|route\s+(?:replace|add|del)|rule\s+(?:add|del))\b)"
)
_BOOKKEEPING = ("/run/fabconf", "/var/lib/fabconf")
_LOCK_DIR = "/run/fabconf/commit.lock"
_CHECKPOINT = "/var/lib/fabconf/linux-rollback.json"
# fabconf reads the checkpoint whole (cat) or asks for its digest first (sha256sum): either starts a new push
_READ_CHECKPOINT = (f"cat {_CHECKPOINT}", f"sha256sum {_CHECKPOINT}")


def changes_state(command: str) -> bool:
    """A command line that changes the host (not a batched read, not fabconf's lock or checkpoint)."""
    if "echo @@" in command or any(path in command for path in _BOOKKEEPING):
        return False
    return _WRITE.search(command) is not None


def refusal(command: str) -> tuple[str, str, int]:
    """How the tool of a refused command fails: exit status 1 and its own kind of message."""
    words = [w for w in re.split(r"[\s|;&]+", command) if w and w not in ("sudo", "-n")]
    tool = next((w for w in words if _WRITE.match(w) or w in ("ip", "sysctl", "mlnx_qos", "cma_roce_tos")), words[0])
    if tool == "ip":
        return "", "RTNETLINK answers: Invalid argument\n", 2
    if tool == "tee":
        target = next((w for w in reversed(words) if w.startswith("/")), "")
        return "", f"tee: {target}: Invalid argument\n", 1
    if tool == "sysctl":
        return "", "sysctl: setting key: Invalid argument\n", 255
    return "", f"{tool}: Invalid argument\n", 1


class RebootRequested(Exception):
    """Raised by the ``reboot`` command; the session reboots the host and drops the connection."""


def default_startup_config(hostname: str, ports: list[str]) -> HostState:
    """The brownfield start of a GPU host (see ``fabconf_lab.host.nicstate.default_host_state``)."""
    return default_host_state(hostname, ports)


class GpuHostSim(SimBase):
    def __init__(
        self,
        name: str,
        address: str,
        *,
        port: int | None = None,
        startup_config: HostState | None = None,
        nics: list[dict[str, Any]] | None = None,
        boot_seconds: float = 0.0,
        **common: Unpack[SimArgs],
    ) -> None:
        super().__init__(name, address, **common)
        saved = self._saved_state()
        if startup_config is not None:
            self.state = startup_config.copy()
        elif saved is not None and saved.exists():  # the host as `lab down` left it
            self.state = HostState.from_json(saved.read_text())
        else:
            self.state = default_host_state(name, self.ports, nics)
        self.lock = threading.RLock()
        self.boot_seconds = boot_seconds  # SSH is down this long after a reboot (0: back at once)
        self._booting = False
        self._running = False
        self.ctx = NicContext(self.state, self._carrier, lambda: bool(getattr(self.faults, "garbled", False)))
        home = "/root" if self.username == "root" else f"/home/{self.username}"
        platform = platcmds.PlatformFiles(self.state)
        virtual = {"/sys": NicSysfs(self.ctx), "/proc/sys": ProcSys(self.state), "/proc/cmdline": platform}
        self.fs = MemoryFs(self.state.files, {**virtual, "/proc/driver": platform}, home=home)
        self.fs.dirs.add(home)
        self.units = hostsvc.Units(self.state, self._run_as_root)
        self.commands = self._commands()
        self.ssh = SshService(
            name,
            address,
            default_port(22) if port is None else port,
            username=self.username,
            password=self.password,
            session_factory=self._session,
            faults=self.faults,
            state_dir=self.state_dir,
            moment=self.ssh_moment,
            refuse=refusal,
            connect_moment=True,
            part_moment=self.ssh_part_moment,
        )
        self._phase = "idle"  # of a push, as the host sees it: idle, commit, verify, rollback (step self.faults)
        if self.world is not None:
            self.world.register(self)

    # -- lifecycle ------------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self.ssh.port

    def start(self) -> None:
        self.ssh.start()
        self._running = True

    def stop(self) -> None:
        self._running = False
        self.ssh.stop()
        saved = self._saved_state()
        if saved is not None:  # hosts keep their state across `lab down`/`lab up`, as switches do
            private_dir(saved.parent)
            with self.lock:
                write_private(saved, self.state.to_json())  # never through a symlink

    def _saved_state(self) -> Path | None:
        return self.state_dir / "host-state.json" if self.state_dir is not None else None

    def running_config(self) -> str:
        """The host's whole state (NICs, files, units) as deterministic JSON."""
        with self.lock:
            return self.state.to_json()

    def new_faults(self) -> Faults:
        return HostFaults()

    def _come_back(self) -> None:
        if self._running:
            self.ssh.start()
        self.faults.changed()  # the host is back from its reboot: look at its view again (shards)

    def reboot(self) -> None:
        """Lose runtime state, apply pending firmware config, then run every enabled boot unit."""
        with self.lock:
            state = self.state
            self._booting = True
            try:
                for nic in state.nics:
                    nic.apply_pending()
                    nic.reset_runtime()
                state.lldpad_running = False
                state.reset_network()
                for path in [p for p in state.files if p.startswith(("/tmp/", "/run/"))]:
                    del state.files[path]
                state.hostname = state.files.get("/etc/hostname", state.hostname).strip() or state.hostname
                state.boots += 1
                state.boot_log = self.units.boot()
            finally:
                self._booting = False
        if self.boot_seconds > 0 and self._running:
            self.ssh.stop()  # refuses connections while "booting"
            timer = threading.Timer(self.boot_seconds, self._come_back)
            timer.daemon = True
            timer.start()
        else:
            self.ssh.disconnect_all()  # a reboot ends every SSH session

    # -- world ------------------------------------------------------------------------------------------
    def _carrier(self, nic: NicPort) -> bool:
        return not nic.link_down and (self.world is None or self.world.far_end(self.name, nic.netdev) is not None)

    def set_link(
        self,
        netdev: str,
        *,
        speed: int | None = None,
        down: bool | None = None,
        error_ratio: float | None = None,
        fec_off: bool | None = None,
    ) -> None:
        """The physical link of a NIC port as a failing cable or optic leaves it (``fabconf lab fault HOST link``):
        negotiated at ``speed`` Gb/s, without carrier (``down``), with a fraction of frames in error, or up
        without FEC (``fec_off``: mlxlink shows ``No FEC``)."""
        with self.lock:
            nic = next((n for n in self.state.nics if n.netdev == netdev), None)
            if nic is None:
                raise ValueError(f"{self.name} has no NIC port {netdev}")
            if speed is not None:
                nic.speed = speed
            if down is not None:
                nic.link_down = down
            if error_ratio is not None:
                nic.error_ratio = error_ratio
            if fec_off is not None:
                nic.fec_off = fec_off

    def lab_view(self) -> DeviceView:
        with self.lock:
            ports = {
                nic.netdev: PortView(
                    nic.netdev,
                    enabled=nic.admin_up and not nic.link_down,
                    mtu=nic.mtu,
                    address=next(iter(self.state.addresses.get(nic.netdev) or []), None),
                )
                for nic in self.state.nics
            }
            return DeviceView(hostname=self.state.hostname, ports=ports)

    # -- shells -------------------------------------------------------------------------------------------
    def _commands(self) -> dict[str, CommandFn]:
        tools = {**niccmds.TOOLS, **platcmds.TOOLS}
        commands: dict[str, CommandFn] = {name: partial(tool, self.ctx) for name, tool in tools.items()}
        commands["mlnx_qos"] = partial(mlnxqos.mlnx_qos, self.ctx)
        commands["mlxconfig"] = partial(mlxcmds.mlxconfig, self.ctx)
        commands["mlxfwreset"] = partial(mlxcmds.mlxfwreset, self.ctx)
        commands["systemctl"] = self.units.systemctl
        for name in ("pgrep", "lldpad", "hostname", "hostnamectl", "uname"):
            commands[name] = partial(getattr(hostsvc, name), self.state)
        commands["reboot"] = self._reboot_command
        commands["sysctl"] = partial(iproute.sysctl, self.state)
        commands["lldpctl"] = self._lldpctl
        commands["ib_send_bw"] = self._ib_send_bw
        commands["mpirun"] = self._mpirun
        return commands

    def _ib_send_bw(self, inv: Invocation) -> Result:
        """perftest's ``ib_send_bw`` against another lab host, at what the links between them let through."""
        from fabconf_lab import perftest

        out, err, status = perftest.ib_send_bw(self, inv.argv)
        return Result(out, err, status)

    def _mpirun(self, inv: Invocation) -> Result:
        """``mpirun ... all_reduce_perf`` (nccl-tests) across lab hosts, at what their links let through."""
        from fabconf_lab import ncclperf

        out, err, status = ncclperf.mpirun(self, inv.argv)
        return Result(out, err, status)

    def _lldpctl(self, inv: Invocation) -> Result:
        """``lldpctl [-f json|plain|keyvalue] [IF...]``: lldpd's neighbours of the NIC ports, from the World's
        cabling (a port that is down shows none). [U] the JSON shape of lldpd 1.0: a list of {interface:
        {chassis: {NAME: {..}}, port: {id: {type, value}}}}."""
        if not self.state.lldpd_running:
            return Result(err="lldpctl: unable to connect to lldpd daemon: No such file or directory\n", status=1)
        fmt, only, bad = _lldpctl_args(inv.argv[1:])
        if bad is not None:
            return Result(err=bad, status=1)
        rows = self.world.lldp_neighbors(self.name) if self.world is not None else []
        rows = [r for r in rows if not only or r[0] in only]
        if fmt != "json":
            return Result(_lldp_text(rows, fmt))
        interfaces = [
            {
                port: {
                    "via": "LLDP",
                    "chassis": {device: {"id": {"type": "mac", "value": "00:00:00:00:00:00"}}},
                    "port": {"id": {"type": "ifname", "value": rport}, "descr": rport},
                }
            }
            for port, device, rport in rows
        ]
        return Result(json.dumps({"lldp": {"interface": interfaces}}, indent=2) + "\n")

    def new_shell(self, user: str | None = None) -> Shell:
        return Shell(self.fs, self.commands, user=user or self.username, hostname=lambda: self.state.hostname)

    def _run_as_root(self, line: str) -> Result:
        with self.lock:
            out = self.new_shell("root").run(line)
        return Result(out.stdout, out.stderr, out.status)

    def _reboot_command(self, inv: Invocation) -> Result:
        if not inv.root:
            return Result(err="Failed to reboot system via logind: Interactive authentication required.\n", status=1)
        if self._booting:
            return Result(err="reboot: refused while the host is booting\n", status=1)
        raise RebootRequested()

    def _session(self, ctx: SessionContext) -> ShellSession:
        return HostSession(self, ctx)

    # -- step faults (fabconf_lab.faults) --------------------------------------------------------------------
    def _applying(self) -> bool:
        try:
            return bool(json.loads(self.state.files.get(_CHECKPOINT) or "{}").get("applying"))
        except (ValueError, AttributeError):
            return False

    def ssh_moment(self, kind: str, command: str) -> str | None:
        """The moment of a push a command belongs to, from what the host sees: taking the commit lock starts a
        commit (a rollback when a commit was made or left unfinished: checkpoint marked "applying"); its
        release after a commit starts verification; reading the checkpoint (or its digest) with no lock held
        starts a new push. Inside a commit or rollback only the commands that change the host count."""
        with self.lock:
            if re.search(rf"\bmkdir '?{re.escape(_LOCK_DIR)}", command):
                self._phase = "rollback" if self._phase == "verify" or self._applying() else "commit"
                return None
            if f"rm -rf {_LOCK_DIR}" in command:
                self._phase = "verify" if self._phase == "commit" else "idle"
                return None
            if any(read in command for read in _READ_CHECKPOINT) and not self.fs.exists(_LOCK_DIR):
                self._phase = "idle"
            if self._phase in ("commit", "rollback"):
                return self._changing(command)
            return "verify" if self._phase == "verify" else "read"

    def ssh_part_moment(self, command: str) -> str | None:
        """The moment of one command inside a script fabconf sent as one exec (a commit's writes, framed by
        ``echo @@`` markers): the commit or rollback under way when the command changes the host, else none (the
        script as a whole was a request of its moment already)."""
        with self.lock:
            return self._changing(command)

    def _changing(self, command: str) -> str | None:
        """The commit or rollback under way when ``command`` changes the host, else None (the lock is held)."""
        return self._phase if self._phase in ("commit", "rollback") and changes_state(command) else None

    def run(self, command: str, *, root: bool = True) -> Output:
        """Run a command line directly (no SSH), e.g. from tests or the orchestrator."""
        with self.lock:
            return self.new_shell("root" if root else self.username).run(command)


class HostSession(ShellSession):
    """One SSH channel: a shell of the login user (raised to root by ``sudo -s``)."""

    def __init__(self, sim: GpuHostSim, ctx: SessionContext) -> None:
        self.sim = sim
        self.interactive = ctx.interactive
        self.shell = sim.new_shell()
        self.elevated = False
        self.part_step = ctx.part_step

    def prompt(self) -> str:
        host = self.sim.state.hostname
        if self.shell.root:
            return f"root@{host}:~# "
        return f"{self.shell.user}@{host}:~$ "

    def needs_more(self, text: str) -> bool:
        return is_incomplete(text)

    def _run(self, command: str) -> Output:
        if self.interactive and not self.shell.root and command.strip() in ROOT_SHELL_COMMANDS:
            self.shell.root = self.elevated = True
            return Output()
        try:
            with self.sim.lock:
                out = self.shell.run(command)
        except RebootRequested:
            self.sim.reboot()
            raise DropConnection() from None
        if out.exited and self.interactive:
            if self.elevated:
                self.shell.root = self.elevated = False
                out.exited = False
                return out
            raise CloseSession(out.merged + "logout\n", out.status)
        return out

    def _standing(self, command: str) -> tuple[str, str, int] | None:
        """The standing faults that concern a command that changes the host: drop-on-commit, reject PATTERN."""
        faults = self.sim.faults
        if not (faults.drop_on_commit or faults.reject is not None) or not changes_state(command):
            return None
        if faults.drop_on_commit:
            raise DropConnection()
        return refusal(command) if faults.rejects(command) else None

    def handle(self, command: str) -> tuple[str, int]:
        refused = self._standing(command)
        if refused is not None:
            return refused[0] + refused[1], refused[2]
        out = self._run(command)
        return out.merged, out.status

    def handle_exec(self, command: str) -> tuple[str, str, int]:
        refused = self._standing(command)
        if refused is not None:
            return refused
        # a script of framed commands (fabconf's batched reads and writes): faults fire per command inside it, when
        # one is armed (issue 42: asking for each of a batched read's hundreds of commands was a tenth of its cost)
        faults = self.sim.faults
        armed = bool(faults.steps) or faults.drop_on_commit or faults.reject is not None
        framed = armed and self.part_step is not None and "echo @@" in command
        self.shell.around_pipeline = self._part if framed else None
        try:
            out = self._run(command)
        finally:
            self.shell.around_pipeline = None
        return out.stdout, out.stderr, out.status

    def _part(self, command: str) -> tuple[str, str, int] | Callable[[str], str] | None:
        """One command of a script: the standing faults and the step fault of its moment, as for an exec of its own.
        The host's lock is let go while a fault holds the command (a hang must not stall the host's other
        sessions)."""
        refused = self._standing(command)
        if refused is not None:
            return refused
        assert self.part_step is not None
        self.sim.lock.release()
        try:
            fault = self.part_step(command)
        finally:
            self.sim.lock.acquire()
        if fault is None:
            return None
        if fault.refuses:
            return refusal(command)

        def reply(stdout: str) -> str:
            self.sim.lock.release()  # a delay, too, holds only this session
            try:
                return fault.reply(stdout, garble_text)
            finally:
                self.sim.lock.acquire()

        return reply


def _lldpctl_args(args: list[str]) -> tuple[str, list[str], str | None]:
    """``lldpctl [-f plain|keyvalue|json] [IFNAME...]`` [V: lldpctl(8)]: the format (plain by default) and the
    interfaces asked for (none: all)."""
    fmt, only, i = "plain", [], 0
    while i < len(args):
        if args[i] == "-f":
            if i + 1 >= len(args):
                return fmt, only, "lldpctl: option requires an argument -- 'f'\n"
            fmt = args[i + 1]
            if fmt not in ("plain", "keyvalue", "json"):
                return fmt, only, f"lldpctl: unknown output format {fmt!r}\n"  # [U] wording; xml not modelled
            i += 2
        elif args[i].startswith("-"):
            return fmt, only, f"lldpctl: invalid option -- '{args[i].lstrip('-')[:1]}'\n"
        else:
            only.append(args[i])
            i += 1
    return fmt, only, None


def _lldp_text(rows: list[tuple[str, str, str]], fmt: str) -> str:
    """lldpd's plain (boxed, one block per interface) or keyvalue (``lldp.IF.chassis.name=X``) output [U: the
    layout of lldpd 1.0's ``lldpctl``]."""
    rule = "-" * 79 + "\n"
    if fmt == "keyvalue":
        return "".join(
            f"lldp.{port}.via=LLDP\nlldp.{port}.chassis.name={device}\nlldp.{port}.port.ifname={rport}\n"
            f"lldp.{port}.port.descr={rport}\n"
            for port, device, rport in rows
        )
    out = [rule, "LLDP neighbors:\n", rule]
    for port, device, rport in rows:
        out += [
            f"Interface:    {port}, via: LLDP, RID: 1, Time: 0 day, 00:00:10\n",
            "  Chassis:     \n",
            "    ChassisID:    mac 00:00:00:00:00:00\n",
            f"    SysName:      {device}\n",
            "  Port:        \n",
            f"    PortID:       ifname {rport}\n",
            f"    PortDescr:    {rport}\n",
            rule,
        ]
    return "".join(out)
