"""fabconf's NAPALM-shaped driver for GPU hosts with ConnectX NICs, over one SSH connection (paramiko).

``LinuxDriver(hostname, username, password, timeout=60, optional_args={"port": 22, "allow_fw_reset": False})``.
The login user runs privileged commands through ``sudo -n`` (passwordless sudo is required; a ``root`` login
runs them directly). Other optional_args: ``check_hostname`` (default True: a candidate whose ``hostname`` is
not the host's is refused), ``known_hosts`` (a file besides ``~/.ssh/known_hosts``), ``ssh_strict`` (default True:
an unknown host key is refused; False accepts it, ``--insecure`` only).

OWNED: the settings named in the desired-state document (``templates/linux``): per NIC the mlnx_qos trust, PFC
bits and DSCP map, the MTU, the DCQCN/ECN sysfs files, the RDMA-CM ToS and the OFED traffic class; per RDMA
device the listed ``mlxconfig`` keys; ``/etc/nccl.conf``; and the boot unit ``fabconf-roce.service`` with its
script, which re-applies the runtime settings at boot. Merge and replace candidates are the same thing here.

Lifecycle: ``load_merge_candidate`` -> ``compare_config`` (one line per wrong setting) -> ``commit_config``
(capture, apply only what differs, read everything back; on any difference restore the capture and raise
``CommitError``) -> ``rollback`` (restore the capture of the last commit; the capture is also stored on the
host, ``/var/lib/fabconf/linux-rollback.json``, so a later session can roll back). Hosts have no commit timer:
``commit_config(revert_in=N)`` raises NotImplementedError and ``supports_revert_timer`` is False.
``mlxconfig`` changes stay pending until a reboot; ``mlxfwreset`` runs only with ``allow_fw_reset``.
Extra: ``preflight()`` and ``pending_firmware()``.

Tool failures and unreadable (garbled) output raise ``HostCommandError`` / ``HostOutputError`` (napalm
``CommandErrorException`` subclasses) naming the host, the command and an excerpt of what came back.

Modules: ``linux_ssh`` (the connection; a host's state is read in ONE batched exec), ``linux_parse`` (the real
tool formats), ``linux_state`` (desired/observed model, the running document), ``linux_plan`` (diff lines and
the commands that fix them, the boot unit, restore targets, preflight checks).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Any

from napalm.base.exceptions import (
    CommandTimeoutException,
    CommitError,
    ConnectionException,
    MergeConfigException,
    ReplaceConfigException,
)

from fabconf.drivers.base import DriverBase
from fabconf.drivers.contract import CommitConflict
from fabconf.drivers.textdiff import unified
from fabconf.platform.linux import routing
from fabconf.platform.linux.fastyaml import block_dump
from fabconf.platform.linux.lock import HostLock
from fabconf.platform.linux.parse import (
    ParseError,
    check_clean,
    parse_bus_info,
    parse_cma_roce_tos,
    parse_ibdev2netdev,
    parse_ibstat,
    parse_int,
    parse_int_lines,
    parse_ip_link,
    parse_ip_links,
    parse_lldpctl,
    parse_mlnx_qos,
    parse_mlxconfig_query,
    parse_os_release,
    parse_rdma_link,
    parse_traffic_class,
)
from fabconf.platform.linux.plan import (
    HIDDEN_MAP,
    Change,
    desired_target,
    diff_text,
    file_write,
    link_problems,
    plan,
    restore_limits,
    sh,
    target_from_snapshot,
)
from fabconf.platform.linux.routing import RoutingObserved
from fabconf.platform.linux.ssh import HostCommandError, HostOutputError, HostShell, LinuxHostError, Output
from fabconf.platform.linux.state import (
    CHECKPOINT_PATH,
    CHECKPOINT_RECORD,
    NCCL_CONF,
    PRIOS,
    SCRIPT_PATH,
    UNIT_NAME,
    UNIT_PATH,
    DocumentError,
    HostObserved,
    HostTarget,
    NicObserved,
    Snapshot,
    block_yaml,
    comparable_data,
    load_document,
    running_data,
    running_document,
    same,
)

__all__ = ["HostCommandError", "HostOutputError", "LinuxDriver", "LinuxHostError"]

log = logging.getLogger(__name__)
FAILURES = (LinuxHostError, ConnectionException, CommandTimeoutException)
NIC_READS = 6  # commands per NIC in a state read


def _one_word(text: str) -> str:
    check_clean(text)
    if len(text.split()) != 1:
        raise ParseError("expected one word")
    return text.strip()


def _recorded(digest: Output, record: Output) -> bool | None:
    """The "applying" flag of a checkpoint record whose SHA-256 is the one ``sha256sum`` printed for the
    checkpoint (GNU format ``HEX  NAME``), else None."""
    if digest.status != 0 or record.status != 0:
        return None
    try:
        data = json.loads(record.stdout)
    except ValueError:
        return None
    if not isinstance(data, dict) or set(data) != {"applying", "sha256"}:
        return None
    applying, sha = data["applying"], data["sha256"]
    if not isinstance(applying, bool) or not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
        return None
    return applying if digest.stdout == f"{sha}  {CHECKPOINT_PATH}\n" else None


class LinuxDriver(DriverBase):
    platform = "linux"
    supports_revert_timer = False

    def setup(self) -> None:
        self.port = int(self.optional_args.get("port", 22))
        self.allow_fw_reset = bool(self.optional_args.get("allow_fw_reset", False))
        self.check_hostname = bool(self.optional_args.get("check_hostname", True))
        self.sudo = "" if self.username == "root" else "sudo -n "
        strict = bool(self.optional_args.get("ssh_strict", True))
        known_hosts = self.optional_args.get("known_hosts")
        self._shell = HostShell(
            self.hostname,
            self.port,
            self.username,
            self.password,
            self.timeout,
            strict=strict,
            known_hosts=known_hosts,
        )
        self._candidate: HostTarget | None = None
        self._candidate_text = ""
        self._candidate_data: Any = None  # the candidate parsed once (load_document), for config_diff
        self._preview: tuple[HostTarget, HostObserved, list[Change]] | None = None
        self._snapshot: Snapshot | None = None
        self._lock = HostLock(self._shell, self.sudo)
        self._expected: str | None = None  # GuardedCommit: the running document the next commit must find
        self._fw_reset_done = False
        self._pci: dict[str, str] = {}  # netdev -> PCI address, learnt once per driver (``ethtool -i``)
        self.commands_sent: list[str] = []  # every changing command of the last commit/rollback, in order
        self.restore_notes: list[str] = []  # what the last restore could not put back exactly

    # -- connection ----------------------------------------------------------------------------------
    def open(self) -> None:
        self._shell.open()

    def close(self) -> None:
        self._shell.close()

    def is_alive(self) -> dict[str, bool]:
        return {"is_alive": self._shell.alive}

    @property
    def _label(self) -> str:
        return self._shell.label

    def _run(self, command: str, *, check: bool = True) -> Output:
        return self._shell.run(command, check=check)

    def read_tools(self, commands: list[str], *, root: bool = False) -> dict[str, tuple[int, str]]:
        """Read-only commands in ONE batched exec (``sudo`` first with ``root``): {command: (exit status, output
        with stderr merged)}. For ``fabconf preflight``, which parses them itself."""
        prefix = self.sudo if root else ""
        results = self._shell.batch([prefix + c for c in commands])
        return {c: (r.status, r.stdout) for c, r in zip(commands, results, strict=True)}

    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, str]:
        """NAPALM's ``cli``: each command's output as the host printed it (no sudo added)."""
        return {command: self._run(command, check=False).stdout for command in commands}

    # -- reading the current state (one batched exec per read) ---------------------------------------------
    def _pci_of(self, netdevs: list[str]) -> dict[str, str]:
        """The PCI address of each NIC port, read once (one batched ``ethtool -i``): MFT's ``-d`` takes a PCI
        address or an mst device [V: NVIDIA MFT "Examples of mlxconfig Usage"], not the RDMA device name. A port
        that does not exist gets no entry (its state read reports it absent)."""
        missing = [n for n in netdevs if n not in self._pci]
        if missing:
            commands = [sh("ethtool", "-i", n) for n in missing]
            self._learn_pci(missing, commands, self._shell.batch(commands))
        return {n: self._pci[n] for n in netdevs if n in self._pci}

    def _learn_pci(self, netdevs: list[str], commands: list[str], results: list[Output]) -> None:
        for netdev, command, result in zip(netdevs, commands, results, strict=True):
            if result.status == 0:
                self._pci[netdev] = self._shell.parse(command, result, parse_bus_info)

    def _hostname(self, target: HostTarget) -> str:
        """The host's name, read in one batched exec with the PCI addresses of the candidate's NIC ports that are
        not known yet (``_pci_of``): the compare that follows needs them, and each exec channel costs CPU on both
        ends (issue 42)."""
        missing = [nic.netdev for nic in target.nics if nic.netdev not in self._pci]
        commands = ["hostname"] + [sh("ethtool", "-i", n) for n in missing]
        results = self._shell.batch(commands)
        actual = self._shell.parse(commands[0], results[0], _one_word)
        self._learn_pci(missing, commands[1:], results[1:])
        return actual

    def _nic_reads(self, netdev: str, rdma: str, pci: str) -> list[str]:
        base = f"/sys/class/net/{netdev}/ecn"
        paths = [f"{base}/{kind}/enable/{p}" for kind in ("roce_np", "roce_rp") for p in range(PRIOS)]
        paths += [f"{base}/roce_np/cnp_dscp", f"{base}/roce_np/cnp_802p_prio"]
        return [
            sh("ip", "-j", "link", "show", "dev", netdev),
            self.sudo + sh("mlnx_qos", "-i", netdev),
            sh("cat", *paths),
            self.sudo + sh("cma_roce_tos", "-d", rdma),
            sh("cat", f"/sys/class/infiniband/{rdma}/tc/1/traffic_class"),
            self.sudo + sh("mlxconfig", "-d", pci or netdev, "-e", "q"),
        ]

    def _nic(self, netdev: str, rdma: str, reads: list[tuple[str, Output]]) -> NicObserved:
        shell = self._shell
        (link_cmd, link_out), qos, ecn_read, tos, (tc_cmd, tc_out), mlx = reads
        if link_out.status != 0 and "does not exist" in link_out.stderr:
            return NicObserved(netdev, rdma, present=False)
        link = shell.parse(link_cmd, link_out, lambda text: parse_ip_link(text, netdev))
        report = shell.parse(*qos, parse_mlnx_qos)
        ecn = shell.parse(*ecn_read, lambda text: parse_int_lines(text, 2 * PRIOS + 2, "ECN sysfs", 0, 63))
        nic = NicObserved(netdev, rdma, mtu=link.mtu, oper_up=link.oper_up, trust=report.trust, pfc=report.pfc)
        nic.pci = self._pci.get(netdev, "")
        nic.dscp2prio, nic.lldpad_warning = report.dscp2prio, report.lldpad_warning
        nic.ecn_np, nic.ecn_rp = ecn[:PRIOS], ecn[PRIOS : 2 * PRIOS]
        nic.cnp_dscp, nic.cnp_802p_prio = ecn[-2], ecn[-1]
        nic.cma_tos = shell.parse(*tos, parse_cma_roce_tos)
        if tc_out.status != 0 and "No such file" in tc_out.stderr:
            nic.traffic_class_file = False  # inbox driver: the OFED-only file is absent (§4.2)
        else:
            nic.traffic_class = shell.parse(tc_cmd, tc_out, parse_traffic_class)
        nic.mlx = shell.parse(*mlx, parse_mlxconfig_query)
        return nic

    def _enabled(self, command: str, result: Output) -> bool:
        word = result.stdout.strip()
        if word == "enabled":
            return True
        if word in ("disabled", "static", "masked", "indirect", "linked") or "No such file" in result.stderr:
            return False
        raise self._shell.failure(command, result)

    def _observe(self, pairs: list[tuple[str, str]]) -> HostObserved:
        host = ["hostname", f"cat {NCCL_CONF}", f"cat {UNIT_PATH}", f"cat {SCRIPT_PATH}"]
        host.append(f"systemctl is-enabled {UNIT_NAME}")
        host += routing.reads([netdev for netdev, _rdma in pairs])
        pci = self._pci_of([netdev for netdev, _rdma in pairs])
        commands = host + [c for netdev, rdma in pairs for c in self._nic_reads(netdev, rdma, pci.get(netdev, ""))]
        results = list(zip(commands, self._shell.batch(commands), strict=True))
        shell = self._shell
        observed = HostObserved(shell.parse(*results[0], _one_word), {})
        observed.nccl, observed.unit, observed.script = (shell.file(*r) for r in results[1:4])
        observed.enabled = self._enabled(*results[4])
        addresses, routes, rules, sysctl = results[5 : len(host)]
        observed.routing = RoutingObserved(
            shell.parse(*addresses, routing.parse_addresses),
            shell.parse(*routes, routing.parse_routes),
            shell.parse(*rules, routing.parse_rules),
            shell.parse(*sysctl, routing.parse_sysctl),
        )
        for i, (netdev, rdma) in enumerate(pairs):
            start = len(host) + i * NIC_READS
            observed.nics[netdev] = self._nic(netdev, rdma, results[start : start + NIC_READS])
        return observed

    def _pairs(self, target: HostTarget | None) -> list[tuple[str, str]]:
        if target is not None:
            return [(nic.netdev, nic.rdma) for nic in target.nics]
        found = self._shell.read("ibdev2netdev", parse_ibdev2netdev)
        return [(netdev, rdma) for rdma, (netdev, _state) in sorted(found.items())]

    # -- candidate --------------------------------------------------------------------------------------
    def _load(self, filename: str | None, config: str | None, error: type[Exception]) -> None:
        if config is None:
            if filename is None:
                raise error(f"{self._label}: give a filename or a config")
            config = Path(filename).read_text()
        try:
            data = load_document(config)
            target = desired_target(data)
        except DocumentError as exc:
            raise error(f"{self._label}: candidate rejected: {exc}") from None
        target.activate_firmware = self.allow_fw_reset
        if self.check_hostname and self._shell.alive:
            actual = self._hostname(target)
            if actual.split(".")[0] != target.hostname.split(".")[0]:
                raise error(f"{self._label}: candidate is for {target.hostname!r} but the host is {actual!r}")
        self._candidate, self._candidate_text, self._candidate_data = target, config, data
        if target.hostname != self.hostname:
            self._shell.label = f"{target.hostname} ({self.hostname})"

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        self._load(filename, config, MergeConfigException)

    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        self._load(filename, config, ReplaceConfigException)

    def discard_config(self) -> None:
        self._candidate, self._candidate_text, self._candidate_data = None, "", None
        self._preview = None

    def _changes(self, target: HostTarget) -> tuple[HostObserved, list[Change]]:
        observed = self._observe(self._pairs(target))
        return observed, plan(target, observed, sudo=self.sudo)

    def _staged(self) -> tuple[HostObserved, list[Change]]:
        """The host as read by the last compare of this candidate, and its plan: one read of the host serves
        compare_config, commands_preview and config_diff (a commit always reads it again)."""
        assert self._candidate is not None
        if self._preview is None or self._preview[0] is not self._candidate:
            self._preview = (self._candidate, *self._changes(self._candidate))
        return self._preview[1], self._preview[2]

    def compare_config(self) -> str:
        """What a commit would do, one line per setting (``ens1f0np0: trust pcp -> dscp``)."""
        if self._candidate is None:
            return ""
        self._preview = None  # a compare reads the host afresh
        return diff_text(self._staged()[1])

    def commands_preview(self) -> str:
        """Every shell command a commit would run now, in order (file contents travel base64-encoded)."""
        if self._candidate is None:
            return ""
        return "\n".join(cmd for change in self._staged()[1] for cmd in change.commands)

    def config_diff(self) -> str:
        """The host's NIC-state document as it is and as the candidate wants it, cut to the settings the
        candidate names, as a unified diff ("" when equal). The boot unit is not in the document: its
        changes show in ``compare_config``."""
        if self._candidate is None:
            return ""
        # the documents as data: printing the running one and parsing both again gave the same (issue 42)
        _head, running = running_data(self._staged()[0])
        before, after = comparable_data(running, self._candidate_data)
        if same(before, after):  # the same text: no diff to print (the change is the boot unit's)
            return ""
        return unified(block_dump(before, block_yaml), block_dump(after, block_yaml), self.hostname)

    # -- commit, verify, restore ------------------------------------------------------------------------------
    def _execute(self, changes: list[Change]) -> bool:
        """Run the changes' commands in order, stopping at the first failure, in one exec channel (a firmware
        reset in one of its own, between the others); True when a firmware reset ran."""
        reset = False
        pending: list[str] = []
        for command in [c for change in changes for c in change.commands]:
            if "mlxfwreset" not in command:
                pending.append(command)
                continue
            self._run_all(pending)
            pending = []
            self.commands_sent.append(command)
            reset = self._fw_reset_done = True
            self._run(command)
        self._run_all(pending)
        return reset

    def _run_all(self, commands: list[str]) -> None:
        """Run changing commands in one exec (``HostShell.run_all``); ``commands_sent`` gets those that ran --
        every one of them when the connection was lost, since any may have."""
        try:
            results = self._shell.run_all(commands)
        except BaseException:
            self.commands_sent.extend(commands)
            raise
        self.commands_sent.extend(commands[: len(results)])
        self._shell.check_all(commands, results)

    def _apply(self, target: HostTarget, changes: list[Change]) -> None:
        """Firmware first (a firmware reset drops runtime state, so plan again after one), then runtime, then
        files. A trust change made the DSCP map visible only now: plan the runtime part again."""
        if self._execute([c for c in changes if c.phase == 0]):
            changes = self._changes(target)[1]
        runtime = [c for c in changes if c.phase == 1]
        self._execute(runtime)
        if any(c.replan for c in runtime):
            self._execute([c for c in self._changes(target)[1] if c.phase == 1])
        self._execute([c for c in changes if c.phase == 2])

    def _after_apply(self) -> None:
        """Called between apply and verify; a seam for subclasses (e.g. to wait for DCBX to settle)."""

    def expect_running(self, running: str) -> None:
        self._expected = running

    def _check_expected(self) -> None:
        """Under the host's commit lock: the host's state is still the one the change was computed from."""
        expected, self._expected = self._expected, None
        if expected is None:
            return
        now = running_document(self._observe(self._pairs(None)))
        old, new = _lines(expected), _lines(now)
        if old != new:
            changed = [ln for ln in difflib.unified_diff(old, new, "read before the diff", "now", lineterm="", n=0)]
            raise CommitConflict(
                f"{self._label}: the host's state changed since its diff was computed (another changer?):\n"
                + "\n".join(changed[:20])
            )

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        """Under the host's commit lock (``linux_lock``): check the expected state (``expect_running``), save the
        checkpoint marked "applying", apply, read back, and mark the checkpoint finished -- or restore it."""
        self._preview = None
        if revert_in is not None:
            raise NotImplementedError("GPU hosts have no commit timer: commit_config(revert_in=...) is not supported")
        if self._candidate is None:
            raise CommitError(f"{self._label}: no candidate loaded")
        self._lock.acquire()
        try:
            self._check_expected()
            self._commit(self._candidate, message)
        finally:
            self._lock.release()

    def _commit(self, target: HostTarget, message: str) -> None:
        observed, changes = self._changes(target)
        blocked = [c.line for c in changes if not c.commands]
        if blocked:
            raise CommitError(f"{self._label}: cannot apply, nothing changed: " + "; ".join(blocked))
        self.commands_sent, self.restore_notes, self._fw_reset_done = [], [], False
        if not changes:
            return  # nothing changes: the capture of the last commit that did stays the rollback point
        self._snapshot = snapshot = Snapshot(observed, target, applying=True)
        self._save_checkpoint(snapshot)  # before anything changes, so that any later session can roll back
        log.info("%s: commit %r: %d change(s)", self._label, message, len(changes))
        try:
            self._apply(target, changes)
            self._after_apply()
            problems = diff_text(self._changes(target)[1]).splitlines()
        except FAILURES as exc:
            problems = [f"apply failed: {exc}"]
        if self._fw_reset_done and problems:  # the restore must know a reset ran, even if it is cut short
            snapshot.fw_reset = True
            try:
                self._save_checkpoint(snapshot)
            except FAILURES as exc:
                log.warning("%s: could not update the rollback checkpoint: %s", self._label, exc)
        snapshot.fw_reset = snapshot.fw_reset or self._fw_reset_done
        if not problems:
            self._finished(snapshot)
            return
        left, self.restore_notes = self._restore(snapshot, list(self.commands_sent))
        if not left:
            self._finished(snapshot)
        restored = "previous state restored" if not left else "RESTORE INCOMPLETE: " + "; ".join(left)
        notes = f" ({'; '.join(self.restore_notes)})" if self.restore_notes else ""
        raise CommitError(f"{self._label}: commit did not stick: {'; '.join(problems)}; {restored}{notes}")

    def _finished(self, snapshot: Snapshot) -> None:
        """The commit ended (applied, or restored): the checkpoint stays as the rollback point, no longer
        "applying". A failed write leaves it "applying": the next push restores once more (harmless)."""
        snapshot.applying = False
        try:
            self._save_checkpoint(snapshot)
        except FAILURES as exc:
            log.warning("%s: could not update the rollback checkpoint: %s", self._label, exc)

    # -- interrupted commits (Unfinished) ---------------------------------------------------------------------
    def interrupted_commit(self) -> str:
        if not self._checkpoint_applying() or self._lock.held_by_other() is not None:
            return ""
        return f"{self._label}: an interrupted commit left this host half-applied (checkpoint {CHECKPOINT_PATH})"

    def finish_interrupted(self) -> str:
        snapshot = self._load_checkpoint()
        if snapshot is None or not snapshot.applying:
            return ""
        self._lock.acquire()  # a live run still applying it raises CommitConflict
        try:
            snapshot = self._load_checkpoint()
            if snapshot is None or not snapshot.applying:
                return ""
            self.commands_sent = []
            left, self.restore_notes = self._restore(snapshot, None)  # what the interrupted run sent is unknown
            if left:
                raise CommitError(f"{self._label}: restoring an interrupted commit left: " + "; ".join(left))
            self._finished(snapshot)
        finally:
            self._lock.release()
        notes = f" ({'; '.join(self.restore_notes)})" if self.restore_notes else ""
        return f"an interrupted commit had left this host half-applied: restored from its checkpoint first{notes}"

    def _save_checkpoint(self, snapshot: Snapshot) -> None:
        """The checkpoint, then its record (``_checkpoint_applying``), in one exec: a record is only ever
        written after the checkpoint it describes."""
        directory = CHECKPOINT_PATH.rsplit("/", 1)[0]
        text = snapshot.to_json() + "\n"
        digest = hashlib.sha256(text.encode()).hexdigest()
        record = json.dumps({"applying": snapshot.applying, "sha256": digest}, sort_keys=True)
        commands = [
            self.sudo + sh("mkdir", "-p", directory),
            file_write(self.sudo, CHECKPOINT_PATH, text),
            file_write(self.sudo, CHECKPOINT_RECORD, record),
        ]
        self._shell.check_all(commands, self._shell.run_all(commands))

    def _checkpoint_applying(self) -> bool | None:
        """Whether the host's checkpoint is marked "applying" (None: there is none), in one batched exec of
        small reads instead of the whole checkpoint (~144 KB for 8 NICs, read by every diff and verify;
        issue 42): the host prints the checkpoint's SHA-256 (``sha256sum``) and the record written after it
        (``_save_checkpoint``). Only when the digest is the record's is the record's flag taken: the bytes are
        then those fabconf wrote. With no record (a checkpoint an older fabconf wrote) the same exec prints the
        whole checkpoint; any other answer -- another digest (damaged, cut short, or written by something
        else), a failed read -- reads the whole checkpoint in an exec of its own. Either way it is read and
        parsed as before (``_parse_checkpoint``: a damaged one is reported the same way)."""
        whole = f"{self.sudo}cat {CHECKPOINT_PATH}"
        commands = [
            f"{self.sudo}sha256sum {CHECKPOINT_PATH}",
            f"{self.sudo}cat {CHECKPOINT_RECORD}",
            f"{self.sudo}test -e {CHECKPOINT_RECORD} || {whole}",
        ]
        digest, record, fallback = self._shell.batch(commands)
        if digest.status != 0 and "No such file" in digest.stdout:
            return None  # as ``cat`` of a missing checkpoint (``HostShell.file``)
        applying = _recorded(digest, record)
        if applying is not None:
            return applying
        if record.status != 0 and "No such file" in record.stdout:  # no record: the checkpoint was printed
            snapshot = self._parse_checkpoint(whole, fallback)
        else:
            snapshot = self._load_checkpoint()
        return None if snapshot is None else snapshot.applying

    def _load_checkpoint(self) -> Snapshot | None:
        command = f"{self.sudo}cat {CHECKPOINT_PATH}"
        return self._parse_checkpoint(command, self._run(command, check=False))

    def _parse_checkpoint(self, command: str, result: Output) -> Snapshot | None:
        text = self._shell.file(command, result)
        if text is None:
            return None
        try:
            return Snapshot.from_json(text)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise HostOutputError(self._label, command, f"holds a damaged rollback checkpoint ({exc})", text) from None

    def _restore(self, snapshot: Snapshot, committed: list[str] | None) -> tuple[list[str], list[str]]:
        """Put back what ``snapshot.managed`` touches. Returns (what still differs, what cannot be restored).
        ``committed``: the changing commands the commit sent (None when unknown: a checkpoint of another run)."""
        activate = self.allow_fw_reset and snapshot.fw_reset
        target = target_from_snapshot(snapshot.observed, snapshot.managed, activate_firmware=activate)
        notes: list[str] = []
        try:
            changes = [c for c in self._changes(target)[1] if c.commands]
            self._apply(target, changes)
            after, left_changes = self._changes(target)
            left = diff_text(left_changes).splitlines()
            notes = restore_limits(snapshot.observed, after, snapshot.managed, committed)
        except FAILURES as exc:
            left = [f"restore failed: {exc}"]
        if left:
            log.error("%s: restore incomplete: %s", self._label, left)
        return left, notes

    def rollback(self) -> None:
        """Restore the state captured before the last commit that changed something -- from this session, or
        from the checkpoint that commit left on the host (nothing to do when there is none); under the host's
        commit lock (this run's own, after a lost session, is taken over)."""
        self._preview = None
        self._lock.acquire()
        try:
            snapshot = self._snapshot or self._load_checkpoint()
            if snapshot is None:
                return
            if not snapshot.applying:  # a restore cut short is finished by the next push, as a commit would be
                snapshot.applying = True
                self._save_checkpoint(snapshot)
            committed = list(self.commands_sent) if self._snapshot is not None else None
            self.commands_sent = []
            left, self.restore_notes = self._restore(snapshot, committed)
            if left:
                raise CommitError(f"{self._label}: rollback incomplete: " + "; ".join(left))
            self._finished(snapshot)
        finally:
            self._lock.release()

    def confirm_commit(self) -> None:
        raise NotImplementedError("GPU hosts have no commit timer: every commit is final (see rollback())")

    def has_pending_commit(self) -> bool:
        return False

    # -- firmware and preflight ----------------------------------------------------------------------------------
    def pending_firmware(self) -> dict[str, dict[str, dict[str, str]]]:
        """mlxconfig values set but not active yet, per RDMA device: {dev: {KEY: {"current", "next_boot"}}}."""
        out: dict[str, dict[str, dict[str, str]]] = {}
        pairs = self._pairs(self._candidate)
        pci = self._pci_of([netdev for netdev, _rdma in pairs])
        devices = [rdma for netdev, rdma in pairs if netdev in pci]
        commands = [
            self.sudo + sh("mlxconfig", "-d", pci[netdev], "-e", "q") for netdev, _rdma in pairs if netdev in pci
        ]
        for rdma, command, result in zip(devices, commands, self._shell.batch(commands), strict=True):
            values = self._shell.parse(command, result, parse_mlxconfig_query)
            pending = {k: {"current": str(v.current), "next_boot": v.next_boot} for k, v in values.items() if v.pending}
            if pending:
                out[rdma] = pending
        return out

    def preflight(self, config: str | None = None) -> list[str]:
        """Problems that make pushing to this host pointless or harmful; [] when fine. Uses the staged candidate
        (or ``config``) for the NIC inventory: netdev/RDMA pairs, speeds."""
        target = desired_target(load_document(config)) if config is not None else self._candidate
        problems: list[str] = []
        commands = ["rdma link show", "ibstat", "ibdev2netdev", "pgrep -x lldpad"]
        results = self._shell.batch(commands)
        links = self._shell.parse(commands[0], results[0], parse_rdma_link)
        rates = self._shell.parse(commands[1], results[1], parse_ibstat)
        pairs = self._shell.parse(commands[2], results[2], parse_ibdev2netdev)
        lldpad = results[3]
        if lldpad.status == 0:
            pid = lldpad.stdout.split()[0] if lldpad.stdout.split() else "?"
            problems.append(f"lldpad is running (pid {pid}): it overwrites mlnx_qos settings; stop and disable it")
        elif lldpad.status != 1:
            raise self._shell.failure(commands[3], lldpad)
        wanted = [(n.netdev, n.rdma, n.speed_gbps) for n in target.nics] if target else []
        if target is None:
            wanted = [(netdev, rdma, None) for rdma, (netdev, _up) in sorted(pairs.items())]
        return problems + link_problems(wanted, links, rates, pairs)

    # -- getters -----------------------------------------------------------------------------------------------
    def _optionals(self, commands: list[str]) -> list[str | None]:
        """Each command's output (stripped), or None where it failed or printed nothing: in ONE exec channel."""
        results = self._shell.batch(commands) if commands else []
        return [r.stdout.strip() if r.status == 0 and r.stdout.strip() else None for r in results]

    def get_facts(self) -> dict[str, Any]:
        hostname = self._shell.read("hostname", _one_word)
        release_text, kernel, uptime_text, vendor, model, fqdn, serial = self._optionals(
            [
                "cat /etc/os-release",
                "uname -r",
                "cat /proc/uptime",
                "cat /sys/class/dmi/id/sys_vendor",
                "cat /sys/class/dmi/id/product_name",
                "hostname -f",
                f"{self.sudo}cat /sys/class/dmi/id/product_serial",
            ]
        )
        release = parse_os_release(release_text or "")
        try:
            uptime = float(uptime_text.split()[0]) if uptime_text else -1.0
        except ValueError:
            uptime = -1.0
        links = self._shell.read("ip -j link show", parse_ip_links)
        os_name = release.get("PRETTY_NAME", "Linux")
        return {
            "uptime": uptime,
            "vendor": vendor or "",
            "model": model or "",
            "hostname": hostname,
            "fqdn": fqdn or hostname,
            "os_version": f"{os_name} (kernel {kernel})" if kernel else os_name,
            "serial_number": serial or "",
            "interface_list": [link.ifname for link in links],
        }

    def get_lldp_neighbors(self) -> dict[str, list[dict[str, str]]]:
        """NAPALM's shape from lldpd's ``lldpctl -f json`` (lldpd, not lldpad: lldpad must not run on RoCE hosts).
        Raises when lldpd does not answer: no neighbours would look like unplugged cables."""
        return self._shell.read("lldpctl -f json", parse_lldpctl)

    def get_interfaces(self) -> dict[str, dict[str, Any]]:
        out = {}
        links = self._shell.read("ip -j link show", parse_ip_links)
        speeds = self._optionals([sh("cat", f"/sys/class/net/{link.ifname}/speed") for link in links])
        for link, speed_text in zip(links, speeds, strict=True):
            try:
                speed = float(parse_int(speed_text, "speed", -1)) if speed_text else -1.0
            except ParseError:
                speed = -1.0
            out[link.ifname] = {
                "is_up": link.oper_up,
                "is_enabled": link.admin_up,
                "description": "",
                "last_flapped": -1.0,
                "speed": speed,
                "mtu": link.mtu,
                "mac_address": link.mac.upper(),
            }
        return out

    def unrestorable(self, before: str, now: str) -> list[str] | None:
        """What the running documents show a restore could not undo, and what they cannot show: a DSCP map
        changed while trust pcp hid it (from the last restore's notes)."""
        kept = unrestorable(before, now)
        if kept is None:
            return None
        return kept + [n for n in self.restore_notes if n.endswith(HIDDEN_MAP)]

    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False) -> dict[str, str]:
        """running: the current state as a desired-state-shaped YAML document; candidate: the staged document;
        startup: the installed boot script (what the host re-applies at boot), "" when none."""
        out = {"running": "", "candidate": "", "startup": ""}
        if retrieve in ("all", "running"):
            observed = self._observe(self._pairs(self._candidate))
            out["running"] = running_document(observed)
        if retrieve in ("all", "candidate"):
            out["candidate"] = self._candidate_text
        if retrieve in ("all", "startup"):
            command = f"cat {SCRIPT_PATH}"
            out["startup"] = self._shell.file(command, self._run(command, check=False)) or ""
        return out


def unrestorable(before: str, now: str) -> list[str] | None:
    """The host's running documents differ only where a restore cannot undo it: a RoCE traffic class that was
    unset (``roce_tos: N``) and is now set (sysfs cannot unset ``tc/1/traffic_class``)."""
    old, new = _lines(before), _lines(now)
    if len(old) != len(new):
        return None
    notes = []
    for a, b in zip(old, new, strict=True):
        if a == b:
            continue
        unset = re.fullmatch(r"(\s*)roce_tos: (\d+)", a)
        kept = unset and re.fullmatch(
            rf"{unset.group(1)}roce_tos: \{{cma_roce_tos: {unset.group(2)}, traffic_class: (\d+)\}}", b
        )
        if not kept:
            return None
        notes.append(f"the RoCE traffic class was unset and stays {kept.group(1)} (sysfs cannot unset it)")
    return notes


def _lines(document: str) -> list[str]:
    return [line.rstrip() for line in document.splitlines() if line.strip()]
