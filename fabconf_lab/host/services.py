"""Host-level commands of a lab GPU host: ``systemctl`` (boot-time units), ``pgrep``, ``lldpad``, ``hostname``,
``hostnamectl``, ``uname``, and the boot sequence that runs every enabled unit.

``systemctl`` forms: ``enable [--now] UNIT``, ``disable [--now] UNIT``, ``is-enabled UNIT``, ``daemon-reload``,
``start|stop|restart UNIT``, ``is-active UNIT``, ``status UNIT``. Unit files are read from
``/etc/systemd/system`` then ``/lib/systemd/system``. A unit runs ``ExecStartPre=`` then ``ExecStart=`` lines
(in order; a leading ``-`` ignores failure) through the host shell as root, so anything the shell subset can do a
unit can do. ``Type=oneshot`` units are ``active`` afterwards only with ``RemainAfterExit=yes``. A unit without an
``[Install]`` section cannot be enabled. ``start`` uses the unit as loaded at the last ``daemon-reload`` (or boot)
and warns when the file changed on disk since, as systemd does; a unit never loaded is loaded on demand.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field

from fabconf_lab.host.nicstate import HostState
from fabconf_lab.host.shell import Invocation, Result

UNIT_DIRS = ("/etc/systemd/system", "/lib/systemd/system")
WANTS = "/etc/systemd/system/multi-user.target.wants"


# [U] systemd's wording for a unit without [Install], shortened to its first sentence
NO_INSTALL = (
    "The unit files have no installation config (WantedBy=, RequiredBy=, Also=,\n"
    "Alias= settings in the [Install] section, and DefaultInstance= for template\n"
    "units). This means they are not meant to be enabled using systemctl.\n"
)


@dataclass
class UnitFile:
    description: str = ""
    type: str = "simple"
    remain_after_exit: bool = False
    exec_lines: list[str] = field(default_factory=list)  # ExecStartPre then ExecStart, in file order
    stop_lines: list[str] = field(default_factory=list)
    installable: bool = False


def parse_unit(text: str) -> UnitFile:
    unit = UnitFile()
    section = ""
    pre: list[str] = []
    main: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        key, _, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if section == "Unit" and key == "Description":
            unit.description = value
        elif section == "Service":
            if key == "Type":
                unit.type = value
            elif key == "RemainAfterExit":
                unit.remain_after_exit = value.lower() in ("yes", "true", "1", "on")
            elif key == "ExecStartPre" and value:
                pre.append(value)
            elif key == "ExecStart" and value:
                main.append(value)
            elif key == "ExecStop" and value:
                unit.stop_lines.append(value)
        elif section == "Install" and key in ("WantedBy", "RequiredBy", "Alias", "Also") and value:
            unit.installable = True
    unit.exec_lines = pre + main
    return unit


def unit_name(name: str) -> str:
    return name if "." in name else name + ".service"


RunAsRoot = Callable[[str], Result]  # run one command line through the host shell as root


class Units:
    """systemd for one host: reads unit files from the host's files, keeps enabled/loaded/active in the state."""

    def __init__(self, state: HostState, run_as_root: RunAsRoot) -> None:
        self.state = state
        self.run_as_root = run_as_root
        self.journal: dict[str, list[str]] = {}

    def path_of(self, name: str) -> str | None:
        for directory in UNIT_DIRS:
            path = f"{directory}/{name}"
            if path in self.state.files:
                return path
        return None

    def reload(self) -> None:
        self.state.units_loaded = {
            posixpath.basename(p): c
            for p, c in self.state.files.items()
            if posixpath.dirname(p) in UNIT_DIRS and p.endswith(".service")
        }

    def start(self, name: str) -> Result:
        path = self.path_of(name)
        if path is None:
            return Result(err=f"Failed to start {name}: Unit {name} not found.\n", status=5)
        err = ""
        disk = self.state.files[path]
        if name not in self.state.units_loaded:
            self.state.units_loaded[name] = disk
        elif self.state.units_loaded[name] != disk:
            err = (
                f"Warning: The unit file, source configuration file or drop-ins of {name} changed on disk. "
                "Run 'systemctl daemon-reload' to reload units.\n"
            )
        unit = parse_unit(self.state.units_loaded[name])
        log = self.journal.setdefault(name, [])
        for line in unit.exec_lines:
            ignore = line.startswith("-")
            command = line.lstrip("-@+!:")
            result = self.run_as_root(command)
            log.append(f"$ {command}\n{result.out}{result.err}[exit {result.status}]")
            if result.status != 0 and not ignore:
                self.state.units_active[name] = "failed"
                return Result(
                    err=err + f"Job for {name} failed because the control process exited with error code.\n"
                    f'See "systemctl status {name}" and "journalctl -xeu {name}" for details.\n',
                    status=1,
                )
        oneshot = unit.type == "oneshot"
        self.state.units_active[name] = "active" if (not oneshot or unit.remain_after_exit) else "inactive"
        return Result(err=err)

    def stop(self, name: str) -> Result:
        if self.path_of(name) is None:
            return Result(err=f"Failed to stop {name}: Unit {name} not loaded.\n", status=5)
        unit = parse_unit(self.state.units_loaded.get(name) or self.state.files[self.path_of(name) or ""])
        for line in unit.stop_lines:
            self.run_as_root(line.lstrip("-@+!:"))
        if name == "lldpad.service":
            self.state.lldpad_running = False
        self.state.units_active[name] = "inactive"
        return Result()

    def boot(self) -> list[str]:
        """Start every enabled unit (sorted by name), as at boot. Returns a log line per unit."""
        self.state.units_active = {}
        self.reload()
        lines = []
        for name in sorted(self.state.units_enabled):
            result = self.start(name)
            lines.append(f"{name}: {self.state.units_active.get(name, 'failed')} (exit {result.status})")
        return lines

    # -- the systemctl command -------------------------------------------------------------------------
    def systemctl(self, inv: Invocation) -> Result:
        args = [a for a in inv.argv[1:] if a not in ("--no-pager", "-q", "--quiet", "--no-ask-password")]
        now = "--now" in args
        args = [a for a in args if a != "--now"]
        if not args:
            return Result(err="systemctl: a command is required in the lab\n", status=1)
        verb, names = args[0], [unit_name(a) for a in args[1:]]
        if verb == "daemon-reload":
            if not inv.root:
                return Result(err="Failed to reload daemon: Access denied\n", status=1)
            self.reload()
            return Result()
        if not names:
            return Result(err="Too few arguments.\n", status=1)
        if verb == "is-enabled":
            return self._is_enabled(names)
        if verb == "is-active":
            states = [self.state.units_active.get(n, "inactive") for n in names]
            return Result("".join(s + "\n" for s in states), status=0 if all(s == "active" for s in states) else 3)
        if verb == "status":
            return self._status(names[0])
        if not inv.root:
            action = {"enable": "enable unit", "disable": "disable unit"}.get(verb, f"{verb} {names[0]}")
            return Result(err=f"Failed to {action}: Access denied\n", status=1)
        if verb == "enable":
            return self._enable(names, now)
        if verb == "disable":
            return self._disable(names, now)
        if verb in ("start", "restart", "stop"):
            out = Result()
            for name in names:
                step = self.stop(name) if verb in ("stop", "restart") else Result()
                if step.status == 0 and verb != "stop":
                    step = self.start(name)
                out = Result(out.out + step.out, out.err + step.err, step.status or out.status)
            return out
        return Result(err=f"Unknown command verb {verb}.\n", status=1)

    def _is_enabled(self, names: list[str]) -> Result:
        out, err, status = [], [], 0
        for name in names:
            path = self.path_of(name)
            if path is None:
                err.append(f"Failed to get unit file state for {name}: No such file or directory\n")
                status = 1
                continue
            if name in self.state.units_enabled:
                out.append("enabled\n")
            elif not parse_unit(self.state.files[path]).installable:
                out.append("static\n")
            else:
                out.append("disabled\n")
                status = 1
        return Result("".join(out), "".join(err), status)

    def _enable(self, names: list[str], now: bool) -> Result:
        err = []
        for name in names:
            path = self.path_of(name)
            if path is None:
                return Result(err=f"Failed to enable unit: Unit file {name} does not exist.\n", status=1)
            if not parse_unit(self.state.files[path]).installable:
                err.append(NO_INSTALL)
                continue
            if name not in self.state.units_enabled:
                self.state.units_enabled.add(name)
                err.append(f"Created symlink {WANTS}/{name} \u2192 {path}.\n")
            if now:
                started = self.start(name)
                err.append(started.err)
                if started.status:
                    return Result(err="".join(err), status=started.status)
        return Result(err="".join(err))

    def _disable(self, names: list[str], now: bool) -> Result:
        err = []
        for name in names:
            if self.path_of(name) is None:
                return Result(err=f"Failed to disable unit: Unit file {name} does not exist.\n", status=1)
            if name in self.state.units_enabled:
                self.state.units_enabled.discard(name)
                err.append(f"Removed {WANTS}/{name}.\n")
            if now:
                self.stop(name)
        return Result(err="".join(err))

    def _status(self, name: str) -> Result:
        path = self.path_of(name)
        if path is None:
            return Result(err=f"Unit {name} could not be found.\n", status=4)
        unit = parse_unit(self.state.files[path])
        enabled = "enabled" if name in self.state.units_enabled else "disabled"
        active = self.state.units_active.get(name, "inactive")
        shown = {"active": "active (exited)" if unit.type == "oneshot" else "active (running)"}.get(active, active)
        if active == "inactive":
            shown = "inactive (dead)"
        text = (
            f"\u25cf {name} - {unit.description or name}\n"
            f"     Loaded: loaded ({path}; {enabled}; vendor preset: enabled)\n"
            f"     Active: {shown}\n"
        )
        for entry in self.journal.get(name, [])[-5:]:
            text += "".join(f"   {ln}\n" for ln in entry.splitlines())
        return Result(text, status=0 if active == "active" else 3)


# -- small host commands ------------------------------------------------------------------------------

PIDS = {"systemd": 1, "sshd": 812, "lldpad": 1342}


def pgrep(state: HostState, inv: Invocation) -> Result:
    args = inv.argv[1:]
    long_form = "-l" in args or "-a" in args
    names = [a for a in args if not a.startswith("-")]
    if not names:
        return Result(err="pgrep: no matching criteria specified\n", status=2)
    running = {"systemd", "sshd"} | ({"lldpad"} if state.lldpad_running else set())
    running |= {"lldpd"} if state.lldpd_running else set()
    exact = "-x" in args
    hits = sorted(p for p in running if (p == names[0] if exact else names[0] in p))
    if not hits:
        return Result(status=1)
    return Result("".join(f"{PIDS[p]} {p}\n" if long_form else f"{PIDS[p]}\n" for p in hits))


def lldpad(state: HostState, inv: Invocation) -> Result:
    """The daemon: starting it (``lldpad -d`` / a unit's ``lldpad -t``) makes it run."""
    if not inv.root:
        return Result(err="lldpad: must be run as root\n", status=1)
    state.lldpad_running = True
    return Result()


def hostname(state: HostState, inv: Invocation) -> Result:
    args = [a for a in inv.argv[1:] if not a.startswith("-")]
    if not args:
        return Result(f"{state.hostname}\n")
    if not inv.root:
        return Result(err="hostname: you must be root to change the host name\n", status=1)
    state.hostname = args[0]
    return Result()


def hostnamectl(state: HostState, inv: Invocation) -> Result:
    args = inv.argv[1:]
    if len(args) >= 2 and args[0] == "set-hostname":
        if not inv.root:
            return Result(err="Could not set hostname: Access denied\n", status=1)
        state.hostname = args[1]
        state.files["/etc/hostname"] = args[1] + "\n"
        return Result()
    return Result(
        f" Static hostname: {state.hostname}\n  Operating System: {state.os_name}\n"
        f"            Kernel: Linux {state.kernel}\n      Architecture: x86-64\n"
    )


def uname(state: HostState, inv: Invocation) -> Result:
    flags = "".join(a[1:] for a in inv.argv[1:] if a.startswith("-")) or "s"
    if "a" in flags:
        return Result(
            f"Linux {state.hostname} {state.kernel} #129-Ubuntu SMP Fri Aug 2 19:25:20 UTC 2024 "
            "x86_64 x86_64 x86_64 GNU/Linux\n"
        )
    parts = {"s": "Linux", "n": state.hostname, "r": state.kernel, "m": "x86_64", "o": "GNU/Linux"}
    return Result(" ".join(parts[f] for f in "snrmo" if f in flags) + "\n")
