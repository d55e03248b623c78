"""NX-OS ``configure replace`` with ``commit-timeout`` (NX-OS 9.3(1) and later) for the lab simulator.

- ``configure replace bootflash:FILE [commit-timeout N] [best-effort|verbose|show-patch]``: the file replaces
  the whole running config (atomically: an invalid file changes nothing). With ``commit-timeout N``
  (30-3600 s, [V] Cisco Nexus configuration guide) the previous running config comes back by itself after N
  seconds unless ``configure replace commit`` arrives first. ``show-patch`` only prints the patch.
- ``configure replace commit``: confirms the pending replace (stops the timer).
- ``show config-replace status``: the last operation and the timer.

The NAPALM ``nxos`` driver does not use this (it checkpoints and rolls back itself); fabconf's own code can,
to get a device-side commit timer on NX-OS as on EOS. [U] the output wording below is assumed, not copied
from a device; ``best-effort`` is accepted and behaves like the default (atomic) mode in the lab.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from fabconf_lab.cliconf import Node
from fabconf_lab.faults import Faults
from fabconf_lab.nxos.config import NO_SUCH_FILE, ExecSession, NxosCliError, Reply, load
from fabconf_lab.nxos.render import rollback_patch_text


class NxosDevice(Protocol):
    """What config-replace needs of the switch (``nxos_cli.NxosDevice``), without importing it."""

    faults: Faults
    lock: threading.RLock
    ports: list[str]
    running: Node

    def read_file(self, name: str) -> bytes | None: ...
    def replace_running(self, root: Node) -> None: ...


TIMEOUT_RANGE = (30, 3600)


@dataclass
class _Pending:
    previous: Node
    started: float
    timeout: int
    timer: threading.Timer


class ConfigReplace:
    def __init__(self, device: NxosDevice) -> None:
        self.device = device
        self.pending: _Pending | None = None
        self.last: dict[str, str] = {}
        self.min_timeout = TIMEOUT_RANGE[0]  # a lab knob: tests lower it to see a timer expire quickly
        self._lock = threading.Lock()

    def commands(self) -> list[tuple[re.Pattern[str], Callable[[re.Match[str], ExecSession], Reply]]]:
        r = re.compile
        return [
            (r(r"configure replace commit"), self._commit),
            (
                r(r"configure replace (\S+)(?: commit-timeout (\d+))?(?: (best-effort|verbose|show-patch))?"),
                self._replace,
            ),
            (r(r"show config-replace status"), self._status),
        ]

    # -- commands -------------------------------------------------------------------------------------------
    def _replace(self, m: re.Match[str], s: ExecSession) -> Reply:

        path, timeout_text, option = m.group(1), m.group(2), m.group(3)
        data = self.device.read_file(path)
        if data is None:
            raise NxosCliError(m.group(0), f"{NO_SUCH_FILE}\n")
        timeout = int(timeout_text) if timeout_text else None
        if timeout is not None and not self.min_timeout <= timeout <= TIMEOUT_RANGE[1]:
            raise NxosCliError(m.group(0), "% Invalid range at '^' marker.")
        with self._lock:
            if self.pending is not None and option != "show-patch":
                raise NxosCliError(m.group(0), "Configure replace with commit-timeout is in progress\n")
        try:
            target = load(data.decode("utf-8", "replace"), self.device.ports, self.device.version)
        except NxosCliError as err:
            self.last = {"operation": "Config replace", "status": "Failed", "detail": err.message}
            raise NxosCliError(
                m.group(0),
                f"Syntax error while parsing '{err.line}': {err.message}\nConfigure replace failed.\n",
            ) from err
        if option == "show-patch":
            with self.device.lock:
                return Reply(None, rollback_patch_text(self.device.running, target))
        self.device.faults.on_commit()
        with self.device.lock:
            previous = self.device.running.copy()
        patch = self.device.replace_running(target)
        kind = "Config replace with commit-timeout" if timeout else "Config replace"
        self.last = {"operation": kind, "status": "Success", "started": time.ctime()}
        if timeout:
            timer = threading.Timer(timeout, self._expire)
            timer.daemon = True
            with self._lock:
                self.pending = _Pending(previous, time.time(), timeout, timer)
            timer.start()
        text = "Version match between user file and running configuration.\n"
        if option == "verbose":
            text += patch
        text += "Configure replace completed successfully. Please run 'show config-replace log details' for details.\n"
        if timeout:
            text += f"Please run 'configure replace commit' within {timeout} seconds to commit.\n"
        return Reply(None, text)

    def _commit(self, m: re.Match[str], s: ExecSession) -> Reply:

        self.device.faults.on_commit()
        with self._lock:
            pending, self.pending = self.pending, None
        if pending is None:
            raise NxosCliError(m.group(0), "No configure replace with commit-timeout is pending\n")
        pending.timer.cancel()
        self.last["commit"] = "Committed"
        return Reply(None, "Configure replace commit successful.\n")

    def _status(self, m: re.Match[str], s: ExecSession) -> Reply:

        if not self.last:
            return Reply(None, "No config-replace operation has been performed.\n")
        lines = [f"Last operation            : {self.last['operation']}", "Details:"]
        lines.append(f"  Operation Status        : {self.last['status']}")
        if "started" in self.last:
            lines.append(f"  Start Time              : {self.last['started']}")
        with self._lock:
            pending = self.pending
        if pending is not None:
            left = max(0, int(pending.started + pending.timeout - time.time()))
            lines.append(f"  Commit-timeout          : {pending.timeout} seconds")
            lines.append(f"  Commit Status           : Pending ({left} seconds left)")
        elif "commit" in self.last:
            lines.append(f"  Commit Status           : {self.last['commit']}")
        text = "\n".join(lines) + "\n"
        return Reply(None, text)

    # -- timer ------------------------------------------------------------------------------------------------
    def _expire(self) -> None:
        with self._lock:
            pending, self.pending = self.pending, None
        if pending is None:
            return
        self.device.replace_running(pending.previous)
        self.last["commit"] = "Commit-timeout expired: previous configuration restored"
        self.device.faults.changed()  # the view changed after every request (shards)

    def cancel(self) -> None:
        """Stop a pending timer (device shutdown)."""
        with self._lock:
            pending, self.pending = self.pending, None
        if pending is not None:
            pending.timer.cancel()
