"""The NX-OS device behind both the NX-API and the SSH front ends: running and startup config, bootflash
files, checkpoints and rollback, and every command the NAPALM ``nxos`` driver and netmiko send.

``NxosDevice.run(command, session)`` executes one command line and returns a ``Reply`` (structured
``body`` and/or ``text``) or raises ``NxosCliError`` with the device's message. Configuration lines are
applied in the session's config context (NX-API accepts them without ``configure terminal``).

Locking: the device lock guards state changes and snapshots only; questions to the lab ``World`` (which
call other simulators' ``lab_view``) are asked without holding it, so two simulators never deadlock.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fabconf_lab.cliconf import Node
from fabconf_lab.faults import Faults
from fabconf_lab.nxos import show
from fabconf_lab.nxos.config import (
    INVALID,
    NO_SUCH_FILE,
    NXOS_VERSION,
    ConfigSession,
    ExecSession,
    NxosCliError,
    Reply,
    canonical_interface,
    load,
)
from fabconf_lab.nxos.render import hostname_of, lab_view, render_config, rollback_patch_text
from fabconf_lab.nxos.replace import ConfigReplace
from fabconf_lab.world import DeviceView, World

FRAMES_PER_S = 1_000_000  # a busy fabric port, for counters that grow with time (two reads give rates), as on EOS
_EPOCH = time.monotonic()

_EXEC_WORDS = frozenset(
    [
        "show",
        "dir",
        "copy",
        "delete",
        "checkpoint",
        "rollback",
        "terminal",
        "ping",
        "traceroute",
        "reload",
        "install",
        "clear",
        "debug",
        "run",
        "write",
        "move",
        "mkdir",
        "rmdir",
        "cd",
        "pwd",
        "test",
        "where",
    ]
)


@dataclass
class _File:
    data: bytes
    mtime: float


@dataclass
class _LinkMemo:
    up: bool
    since: float


@dataclass
class NxosDevice:
    name: str
    ports: list[str]
    running: Node
    startup: str
    faults: Faults
    world: World | None = None
    state_dir: Path | None = None
    boot_time: float = field(default_factory=time.time)
    lock: threading.RLock = field(default_factory=threading.RLock)
    files: dict[str, _File] = field(default_factory=dict)
    checkpoints: dict[str, str] = field(default_factory=dict)
    last_change: float = field(default_factory=time.time)
    startup_saved: float = field(default_factory=time.time)
    links: dict[str, _LinkMemo] = field(default_factory=dict)
    bgp_since: dict[str, float] = field(default_factory=dict)
    generation: int = 0  # bumped when the running config is replaced as a whole (rollback)
    changes: int = 0  # bumped by every change to the running config: the World view is worked out once per value
    _view: tuple[int, DeviceView] | None = None
    version: str = NXOS_VERSION  # the release and hardware model the device reports
    error_ratio: dict[str, float] = field(default_factory=dict)  # port -> share of received frames in error
    pfc_pauses: Callable[[], int] = field(default=lambda: 0)  # PFC frames received so far (a pfc-storm fault)
    model: str | None = None

    def __post_init__(self) -> None:
        self.config_replace = ConfigReplace(self)
        if self.state_dir is not None:
            flash = self.state_dir / "bootflash"
            flash.mkdir(parents=True, exist_ok=True)
            for path in sorted(flash.iterdir()):
                if path.is_file():
                    self.files[path.name] = _File(path.read_bytes(), path.stat().st_mtime)
            self._persist_startup()

    # -- public helpers -----------------------------------------------------------------------------------
    @property
    def hostname(self) -> str:
        with self.lock:
            return hostname_of(self.running, self.name)

    def running_text(self) -> str:
        with self.lock:
            return render_config(self.running)

    def view(self) -> DeviceView:
        """What the World sees of this device. Worked out under the lock (``lab_view`` reads this device's tree
        alone and asks no other simulator) and kept until the running config changes: the World asks every
        switch for its view on each snapshot, and copying the tree each time was a tenth of a 2,048-device
        lab's switch-worker CPU."""
        with self.lock:
            if self._view is None or self._view[0] != self.changes:
                self._view = (self.changes, lab_view(self.running, self.ports, self.name))
            return self._view[1]

    # -- dispatch -----------------------------------------------------------------------------------------
    def run(self, command: str, session: ExecSession) -> Reply:
        line = " ".join(command.split())
        if not line:
            return Reply(text="")
        if line.endswith("| json") and line.startswith("show "):
            return self._as_json(line, session)
        for pattern, handler in self._table():
            m = pattern.fullmatch(line)
            if m:
                return handler(m, session)
        if (session.config is None and not session.nxapi) or line.split()[0] in _EXEC_WORDS:
            raise NxosCliError(line, INVALID)  # an exec command the lab does not know: not a config line
        return self._config_line(command, session)

    def _as_json(self, line: str, session: ExecSession) -> Reply:
        """``show ... | json``: the structured output printed as JSON text (what a ``cli_ascii`` call, NAPALM's
        ``cli()``, returns) [3P: Ansible's cisco.nxos facts and ansible.netcommon's ``cli_parse`` documentation
        send ``show interface | json`` over the CLI]."""
        reply = self.run(line[: -len("| json")].strip(), session)
        if reply.body is None:
            raise NxosCliError(line, INVALID)
        text = json.dumps(reply.body)
        return Reply(reply.body, text + "\n")

    def _table(self) -> list[tuple[re.Pattern[str], Callable[[re.Match[str], ExecSession], Reply]]]:
        r = re.compile
        return [
            *self.config_replace.commands(),
            (r(r"conf(?:ig(?:ure)?)?(?: t(?:erminal)?)?"), self._configure),
            (r(r"end"), self._end),
            (r(r"(no )?terminal dont-ask"), self._dont_ask),
            (r(r"terminal (?:length|width|session-timeout) \d+"), lambda m, s: Reply(text="")),
            (r(r"show hostname"), self._show_hostname),
            (r(r"show version"), self._show_version),
            (r(r"show inventory"), self._show_inventory),
            (r(r"show interfaces?(?: (\S+))? priority-flow-control"), self._show_pfc),
            (r(r"show interfaces?(?: (\S+))?"), self._show_interface),
            (r(r"show lldp neighbors( detail)?"), self._show_lldp),
            (r(r"show run(?:ning-config|ning)?( all)?"), self._show_running),
            (r(r"show start(?:up-config)?"), self._show_startup),
            (r(r"show (?:bgp all|ip bgp|bgp ipv4 unicast) summary(?: vrf (?:all|default))?"), self._show_bgp),
            (r(r"show ip route (\d[\d./]*)(?: vrf default)?"), self._show_route),
            (r(r"show clock"), lambda m, s: Reply(text=time.strftime("%H:%M:%S.000 UTC %a %b %d %Y\n"))),
            (r(r"show file (\S+)( md5sum)?"), self._show_file),
            (r(r"show diff rollback-patch (.+)"), self._show_diff),
            (r(r"dir(?: (\S+))?"), self._dir),
            (r(r"delete (\S+)(?: no-prompt)?"), self._delete),
            (r(r"copy (\S+) (\S+)(?: vrf \S+)?"), self._copy),
            (r(r"checkpoint (file )?(\S+)(?: description .*)?"), self._checkpoint),
            (r(r"no checkpoint (\S+)"), self._no_checkpoint),
            (r(r"rollback running-config (file|checkpoint) (\S+)(?: (?:atomic|best-effort|stop-at-first-failure))?"),
             self._rollback),
        ]  # fmt: skip

    # -- modes ----------------------------------------------------------------------------------------------
    def _configure(self, m: re.Match[str], s: ExecSession) -> Reply:
        if s.config is None or s.generation != self.generation:
            s.config = ConfigSession(self.running, self.ports, version=self.version)
            s.generation = self.generation
        else:
            s.config.reset()
        return Reply(text="Enter configuration commands, one per line. End with CNTL/Z.\n" if not s.nxapi else "")

    def _end(self, m: re.Match[str], s: ExecSession) -> Reply:
        if s.nxapi:
            if s.config is not None:
                s.config.reset()
        else:
            s.config = None
        return Reply(text="")

    def _dont_ask(self, m: re.Match[str], s: ExecSession) -> Reply:
        s.dont_ask = m.group(1) is None
        return Reply(text="")

    def _config_line(self, command: str, s: ExecSession) -> Reply:
        line = " ".join(command.split())
        if self.faults.rejects(line):
            raise NxosCliError(line, INVALID)
        if not s.committed:
            self.faults.on_commit()  # drop-on-commit: the connection closes before anything is applied
            s.committed = True
        with self.lock:
            if s.config is None or s.generation != self.generation:
                # first config line, or the running config was replaced (rollback) under this session
                s.config = ConfigSession(self.running, self.ports, version=self.version)
                s.generation = self.generation
            try:
                s.config.apply(command)
            finally:  # a rejected line may have changed the tree before it failed
                self.changes += 1
            self.last_change = time.time()
        return Reply(text="")

    # -- show -------------------------------------------------------------------------------------------------
    def _show_hostname(self, m: re.Match[str], s: ExecSession) -> Reply:
        body = show.show_hostname(self.hostname)
        return Reply(body, body["hostname"] + "\n")

    def _show_version(self, m: re.Match[str], s: ExecSession) -> Reply:
        uptime = time.time() - self.boot_time
        body = show.show_version(self.hostname, show.serial_for(self.name), uptime, self.version, self.model)
        return Reply(body, show.show_version_text(body))

    def _show_inventory(self, m: re.Match[str], s: ExecSession) -> Reply:
        body = show.show_inventory(show.serial_for(self.name), len(self.ports))
        return Reply(body, show.show_inventory_text(body))

    def interface_states(self) -> list[show.IfState]:
        with self.lock:
            root = self.running.copy()
        linked: set[str] | None = None
        if self.world is not None:
            linked = {local for local, _r, _p in self.world.lldp_neighbors(self.name)}
        now = time.time()
        states = []
        for node in root.children:
            if not node.text.startswith("interface "):
                continue
            name = node.text.split(" ", 1)[1]
            texts = [c.text for c in node.children]
            admin = "shutdown" not in texts
            desc = next((t.split(" ", 1)[1] for t in texts if t.startswith("description ")), None)
            mtu = next((int(t.split()[1]) for t in texts if re.fullmatch(r"mtu \d+", t)), 1500)
            addr = next((t.split()[2] for t in texts if t.startswith("ip address ") and "secondary" not in t), None)
            speed = next((int(t.split()[1]) for t in texts if re.fullmatch(r"speed \d+", t)), None)
            if name.startswith("Ethernet"):
                oper = admin and (linked is None or name in linked)
                speed_mbps = speed or show.DEFAULT_SPEED_MBPS
                mac = show.mac_for(self.name, 1 + self.ports.index(name) if name in self.ports else 0)
            else:
                oper = admin
                speed_mbps = 1000 if name == "mgmt0" else 8000
                mac = show.mac_for(self.name)
            with self.lock:
                memo = self.links.get(name)
                if memo is None:
                    memo = self.links[name] = _LinkMemo(oper, self.boot_time)
                elif memo.up != oper:
                    memo.up, memo.since = oper, now
                flapped = None if memo.since == self.boot_time and not oper else now - memo.since
            routed = "no switchport" in texts or not name.startswith("Ethernet")
            frames = int(FRAMES_PER_S * (time.monotonic() - _EPOCH)) if oper and name.startswith("Ethernet") else 0
            errors = int(frames * self.error_ratio.get(name, 0.0))
            states.append(
                show.IfState(name, admin, oper, mtu, desc, mac, routed, addr, speed_mbps, flapped, frames, errors)
            )
        return states

    def _show_interface(self, m: re.Match[str], s: ExecSession) -> Reply:
        states = self.interface_states()
        if m.group(1):
            want = canonical_interface(m.group(1))
            states = [st for st in states if st.name == want]
            if not states:
                raise NxosCliError(m.group(0), "% Invalid interface format at '^' marker.")
        return Reply(show.show_interface(states), show.show_interface_text(states))

    def pfc_states(self) -> list[show.PfcState]:
        """PFC per Ethernet port: the interface's ``priority-flow-control mode`` and the ``pause pfc-cos`` classes
        of the network-qos policy attached under ``system qos``. Operational only with mode ``on`` on a link that
        is up ([U] ``auto`` needs DCBX, which the lab does not negotiate: it stays off)."""
        with self.lock:
            root = self.running.copy()
        bitmap = 0
        sysqos = root.find("system qos")
        for c in sysqos.children if sysqos is not None else []:
            if c.text.startswith("service-policy type network-qos "):
                pmap = root.find(f"policy-map type network-qos {c.text.split()[-1]}")
                for cls in pmap.children if pmap is not None else []:
                    for g in cls.children:
                        if g.text.startswith("pause ") and "pfc-cos " in g.text:
                            for cos in g.text.split("pfc-cos ", 1)[1].split(","):
                                if cos.strip().isdigit():
                                    bitmap |= 1 << int(cos)
        oper_up = {st.name: st.oper_up for st in self.interface_states()}
        rows = []
        for port in self.ports:
            node = root.find(f"interface {port}")
            mode = next(
                (
                    c.text.split()[2]
                    for c in (node.children if node else [])
                    if c.text.startswith("priority-flow-control mode ")
                ),
                "auto",
            )
            oper = mode == "on" and bitmap != 0 and oper_up.get(port, False)
            rows.append(show.PfcState(port, mode, oper, bitmap if oper else 0, self.pfc_pauses() if oper else 0))
        return rows

    def _show_pfc(self, m: re.Match[str], s: ExecSession) -> Reply:
        rows = self.pfc_states()
        if m.group(1):
            want = canonical_interface(m.group(1))
            rows = [r for r in rows if r.name == want]
            if not rows:
                raise NxosCliError(m.group(0), "% Invalid interface format at '^' marker.")
        return Reply(show.show_pfc(rows), show.show_pfc_text(rows))

    def _require_feature(self, feature: str, line: str) -> None:
        with self.lock:
            if f"feature {feature}" not in self.running.leaves():
                raise NxosCliError(line, INVALID)

    def _show_lldp(self, m: re.Match[str], s: ExecSession) -> Reply:
        self._require_feature("lldp", m.group(0))
        neighbors = self.world.lldp_neighbors(self.name) if self.world is not None else []
        if m.group(1):
            return Reply(None, show.show_lldp_neighbors_detail(neighbors))
        return Reply(None, show.show_lldp_neighbors(neighbors))

    def _show_running(self, m: re.Match[str], s: ExecSession) -> Reply:
        command = "show running-config" + (" all" if m.group(1) else "")
        with self.lock:
            text = show.config_header(command, time.time(), self.last_change) + render_config(
                self.running, defaults=bool(m.group(1))
            )
        return Reply(text, text)

    def _show_startup(self, m: re.Match[str], s: ExecSession) -> Reply:
        with self.lock:
            text = show.config_header("show startup-config", time.time(), saved=self.startup_saved) + self.startup
        return Reply(text, text)

    def _show_bgp(self, m: re.Match[str], s: ExecSession) -> Reply:
        self._require_feature("bgp", m.group(0))
        view = self.view()
        with self.lock:
            bgp = next((c for c in self.running.children if c.text.startswith("router bgp ")), None)
            bgp = bgp.copy() if bgp is not None else None
        if bgp is None:
            return Reply(None, "")
        configured: dict[str, tuple[str, bool]] = {}
        for c in bgp.children:
            if c.text.startswith("neighbor "):
                remote = next((g.text.split()[1] for g in c.children if g.text.startswith("remote-as ")), "0")
                configured[c.text.split()[1]] = (remote, any(g.text == "shutdown" for g in c.children))
        sessions = self.world.bgp_sessions(self.name) if self.world is not None else []
        with self.lock:
            rows = show.peer_rows(sessions, configured, time.time(), self.bgp_since)
        asn = bgp.text.split()[2]
        router_id = view.router_id or self._default_router_id(view)
        body = show.show_bgp_summary(asn, router_id, rows, len(view.networks))
        return Reply(body, show.show_bgp_summary_text(asn, router_id, rows))

    def _show_route(self, m: re.Match[str], s: ExecSession) -> Reply:
        routes = self.world.routes(self.name) if self.world is not None else {}
        wanted = m.group(1)
        found = [routes[wanted]] if wanted in routes and routes[wanted].next_hops else []
        with self.lock:
            bgp = next((c for c in self.running.children if c.text.startswith("router bgp ")), None)
        asn = bgp.text.split()[2] if bgp is not None else "0"
        body, text = show.show_ip_route(asn, found)
        return Reply(body, text)

    def _default_router_id(self, view: DeviceView) -> str:
        with self.lock:
            lo = self.running.find("interface loopback0")
            for c in lo.children if lo is not None else []:
                if c.text.startswith("ip address "):
                    return c.text.split()[2].split("/")[0]
        for port in view.ports.values():
            if port.address:
                return port.address.split("/")[0]
        return "0.0.0.0"

    # -- files ------------------------------------------------------------------------------------------------
    @staticmethod
    def _fname(path: str) -> str:
        """``bootflash:/x``, ``bootflash://x``, ``bootflash:x`` and ``x`` all name bootflash file ``x``."""
        if ":" in path:
            fs, _, rest = path.partition(":")
            if fs != "bootflash":
                raise NxosCliError(path, "% Invalid file system at '^' marker.")
            path = rest
        path = path.lstrip("/")
        if path.startswith("sup-local/"):
            path = path[len("sup-local/") :]
        return path

    def write_file(self, path: str, data: bytes) -> None:
        name = self._fname(path)
        if not name or "/" in name:
            raise NxosCliError(path, "% Invalid file name")
        with self.lock:
            self.files[name] = _File(data, time.time())
            if self.state_dir is not None:
                (self.state_dir / "bootflash" / name).write_bytes(data)

    def read_file(self, path: str) -> bytes | None:
        with self.lock:
            f = self.files.get(self._fname(path))
            return f.data if f is not None else None

    def _remove_file(self, name: str) -> bool:
        with self.lock:
            if self.files.pop(name, None) is None:
                return False
            if self.state_dir is not None:
                (self.state_dir / "bootflash" / name).unlink(missing_ok=True)
            return True

    def _file_table(self) -> dict[str, tuple[int, float]]:
        with self.lock:
            return {n: (len(f.data), f.mtime) for n, f in self.files.items()}

    def _dir(self, m: re.Match[str], s: ExecSession) -> Reply:
        name = self._fname(m.group(1) or "bootflash:")
        table = self._file_table()
        if not name:
            return Reply(None, show.dir_listing(table))
        if name not in table:
            # the NAPALM driver and netmiko both look for this text in a normal (non-error) reply
            return Reply(None, f"{NO_SUCH_FILE}\n")
        return Reply(None, show.dir_listing(table, [name]))

    def _delete(self, m: re.Match[str], s: ExecSession) -> Reply:
        name = self._fname(m.group(1))
        if not self._remove_file(name):
            raise NxosCliError(m.group(0), f"{NO_SUCH_FILE}\n")
        return Reply(None, "")

    def _show_file(self, m: re.Match[str], s: ExecSession) -> Reply:
        data = self.read_file(m.group(1))
        if data is None:
            raise NxosCliError(m.group(0), f"{NO_SUCH_FILE}\n")
        if m.group(2):
            return Reply(None, hashlib.md5(data, usedforsecurity=False).hexdigest() + "\n")
        return Reply(None, data.decode("utf-8", "replace"))

    # -- checkpoints, rollback, copy ---------------------------------------------------------------------------
    def _checkpoint_text(self) -> str:
        with self.lock:
            return show.config_header("Checkpoint cmd vdc 1", time.time()) + render_config(self.running)

    def _checkpoint(self, m: re.Match[str], s: ExecSession) -> Reply:
        text = self._checkpoint_text()
        if m.group(1):
            self.write_file(m.group(2), text.encode())
        else:
            with self.lock:
                self.checkpoints[m.group(2)] = text
        return Reply(None, "Done\n" if not m.group(1) else "")

    def _no_checkpoint(self, m: re.Match[str], s: ExecSession) -> Reply:
        with self.lock:
            if self.checkpoints.pop(m.group(1), None) is None:
                raise NxosCliError(m.group(0), "Checkpoint name not found\n")
        return Reply(None, "")

    def _source(self, kind: str, name: str, line: str) -> str:
        if kind == "running-config":
            return self.running_text()
        if kind == "startup-config":
            with self.lock:
                return self.startup
        if kind == "checkpoint":
            with self.lock:
                text = self.checkpoints.get(name)
        else:
            data = self.read_file(name)
            text = data.decode("utf-8", "replace") if data is not None else None
        if text is None:
            raise NxosCliError(line, f"{NO_SUCH_FILE}\n")
        return text

    def _show_diff(self, m: re.Match[str], s: ExecSession) -> Reply:
        words = m.group(1).split()
        specs: list[tuple[str, str]] = []
        while words:
            kind = words.pop(0)
            if kind in ("file", "checkpoint") and words:
                specs.append((kind, words.pop(0)))
            elif kind in ("running-config", "startup-config"):
                specs.append((kind, ""))
            else:
                raise NxosCliError(m.group(0), INVALID)
        if len(specs) != 2:
            raise NxosCliError(m.group(0), INVALID)
        a, b = (load(self._source(k, n, m.group(0)), self.ports, self.version) for k, n in specs)
        return Reply(None, rollback_patch_text(a, b))

    def _rollback(self, m: re.Match[str], s: ExecSession) -> Reply:
        kind, name = m.group(1), m.group(2)
        text = self._source(kind, name, m.group(0))
        self.faults.on_commit()
        try:
            target = load(text, self.ports, self.version)
        except NxosCliError as err:
            # [U] failure wording; atomic: nothing of the target was applied
            raise NxosCliError(
                m.group(0),
                f"Collecting Running-Config\n#Generating Rollback Patch\nSyntax error while parsing '{err.line}': "
                f"{err.message}\nRollback Patch is Invalid\nRollback failed.\n",
            ) from err
        patch = self.replace_running(target)
        return Reply(
            None,
            "Note: Applying config parallelly may fail Rollback verification\n"
            + patch
            + "Executing Rollback Patch\nGenerating Running-config for verification\n"
            "Generating Patch for verification\nVerification is Successful.\n\nRollback completed successfully.\n",
        )

    def replace_running(self, target: Node) -> str:
        """Install ``target`` as the whole running config at once; returns the rollback-patch text."""
        with self.lock:
            patch = rollback_patch_text(self.running, target)
            self.running.children = target.children
            self.generation += 1
            self.changes += 1
            self.last_change = time.time()
        return patch

    def _copy(self, m: re.Match[str], s: ExecSession) -> Reply:
        src, dst = m.group(1), m.group(2)
        run = re.fullmatch(r"run(?:ning-config)?|system:running-config", src) is not None
        start_dst = re.fullmatch(r"start(?:up-config)?", dst) is not None
        if run and start_dst:
            with self.lock:
                self.startup = render_config(self.running)
                self.startup_saved = time.time()
                self._persist_startup()
            return Reply(None, "[########################################] 100%\nCopy complete.\n")
        if run:
            self.write_file(dst, self.running_text().encode())
            return Reply(None, "Copy complete.\n")
        if re.fullmatch(r"start(?:up-config)?", src) and not start_dst:
            with self.lock:
                data = self.startup.encode()
            self.write_file(dst, data)
            return Reply(None, "Copy complete.\n")
        data = self.read_file(src)
        if data is None:
            raise NxosCliError(m.group(0), f"{NO_SUCH_FILE}\n")
        if start_dst:
            load(data.decode("utf-8", "replace"), self.ports, self.version)  # refuse an invalid startup-config
            with self.lock:
                self.startup = data.decode("utf-8", "replace")
                self.startup_saved = time.time()
                self._persist_startup()
            return Reply(None, "Copy complete.\n")
        if re.fullmatch(r"run(?:ning-config)?", dst):
            # copy FILE running-config merges the file line by line, like typing it
            sub = ExecSession(nxapi=True)
            for line in data.decode("utf-8", "replace").splitlines():
                if line.strip() and not line.strip().startswith("!") and not line.startswith("version "):
                    self._config_line(line, sub)
            return Reply(None, "Copy complete.\n")
        self.write_file(dst, data)
        return Reply(None, "Copy complete.\n")

    def _persist_startup(self) -> None:
        if self.state_dir is not None:
            (self.state_dir / "startup-config").write_text(self.startup)
