"""NX-OS with a device-side commit timer: ``configure replace bootflash:FILE commit-timeout N``.

NAPALM's ``nxos`` driver has no commit-confirm: it checkpoints and, when fabconf decides so, rolls back itself.
If fabconf dies between commit and confirm, nothing reverts. NX-OS (9.3(1) and later) can do what EOS's commit
timer does: ``configure replace FILE commit-timeout N`` replaces the running configuration with FILE and puts
the previous one back by itself after N seconds (30-3600) unless ``configure replace commit`` arrives first
([V] Cisco Nexus 9000 System Management guide, "Configure Replace"; the lab models it in
``fabconf_lab.nxos.replace``).

So a commit with ``revert_in`` writes the whole target configuration to bootflash (through NAPALM's own replace
upload), checkpoints the running configuration (for an explicit rollback), and runs the timed replace. The
target is the intended file in replace mode, and in merge mode the running configuration with the staged
remediation applied (``remediation.future_config``), so the device ends exactly where the merge would.
``confirm_commit`` commits the replace and saves the startup configuration; ``rollback`` first ends a pending
timer, then rolls back to the checkpoint. Without ``revert_in`` the plain NAPALM path runs.

A replace puts the WHOLE target on the switch, so a change someone else made after fabconf read the running
configuration would be overwritten without a trace (issue #43: a lost update reported ``applied``). The driver
is therefore a ``GuardedCommit``: ``expect_running`` names the running configuration the change was computed
from, and the commit checks it against the switch's own, read in the very NX-API request that checkpoints and
replaces (``checkpoint file``, ``show running-config``, ``configure replace``, executed in that order by the
switch: no round trip between the read and the replace). When they differ, the base moved: the timed replace is
still pending, so it is ended and the checkpoint taken just before it is rolled back to -- the other change
stays, fabconf's does not -- and ``CommitConflict`` names what changed. NX-OS offers no configuration lock that
covers this (its Session Manager takes only ACL commands: [3P] Cisco Nexus 9000 System Management guide,
"Configuring Session Manager", guidelines), so the check rides on the commit itself. A replace already pending
its timer (a second fabconf between its commit and its confirm) is a ``CommitConflict`` too, found before the
commit or once the switch refused ours; so is a refusal after which the base has moved (the other replace was
confirmed between the switch's refusal and our look at its status). Two runs at once never share a file: each
uploads and checkpoints to names of its own (``own_run``; ``fabconf.drivers.cli.leftovers.nxos_files``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from contextlib import suppress
from typing import Any

from napalm.base.exceptions import CommitError
from napalm.nxapi_plumbing.errors import NXAPICommandError

from fabconf.drivers.cli.base_check import refuse_moved, undo_if_moved
from fabconf.drivers.cli.leftovers import nxos_files, own_file
from fabconf.drivers.cli.remediation import future_config
from fabconf.drivers.cli.staging import StagedCliDriver
from fabconf.drivers.contract import CommitConflict, RevertTimer

MAX_TIMEOUT = 3600  # [V] configure replace commit-timeout range 30-3600 s


class NxosTimerDriver(StagedCliDriver, RevertTimer):
    """A staged NX-OS driver whose unconfirmed commits the switch reverts by itself, and whose commit checks its
    base (``GuardedCommit``)."""

    _expected: str | None = None  # the running configuration the next commit must find (``expect_running``)

    def expect_running(self, running: str) -> None:
        self._expected = running

    def own_run(self, run: str) -> dict[str, str]:
        """Also names the run's own bootflash files (NAPALM's are fixed): two runs at once never share one."""
        self.napalm.candidate_cfg, self.napalm.rollback_cfg = nxos_files(run)
        return super().own_run(run)

    def reattach(self, lost: Any) -> None:
        """A reopened driver takes over the lost one's files: its checkpoint is what recovery rolls back to."""
        super().reattach(lost)
        if isinstance(lost, NxosTimerDriver):
            self.napalm.candidate_cfg, self.napalm.rollback_cfg = lost.napalm.candidate_cfg, lost.napalm.rollback_cfg

    def _target(self) -> str:
        if self._replace:
            assert self._intended is not None
            return self._intended
        assert self._staged is not None
        return future_config(self.spec.name, self._running_config(), self._staged.config)

    def _exec(self, command: str) -> str:
        return str(self.napalm.device.show(command, raw_text=True))

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        expected, self._expected = self._expected, None
        if revert_in is None:
            if expected is not None:  # NAPALM's own commit: checked one round trip before it
                refuse_moved(self.hostname, expected, self._running_now())
            super().commit_config(message=message)
            return
        target = self._target()
        # NX-OS takes 30-3600 s: a shorter --confirm-timeout is refused by the switch (and the commit with it)
        timeout = min(MAX_TIMEOUT, int(revert_in))
        self._refuse_pending_elsewhere()
        self.napalm.load_replace_candidate(config=target)  # uploads bootflash:<this run's candidate file>
        self._running = None
        try:
            found, out = self._checkpoint_and_replace(timeout)
        except NXAPICommandError:  # the switch refused (ours did not run): another replace, or a real error
            try:
                self._refuse_pending_elsewhere()  # still pending
                if expected is not None:  # or done by now, its change confirmed: the base moved
                    refuse_moved(self.hostname, expected, self._running_now())
            except CommitConflict:
                self.forget_files([self.napalm.rollback_cfg])  # ours never ran (its candidate goes with discard)
                raise
            raise
        self._staged, self._replace = None, False
        if "completed successfully" not in out:
            raise CommitError(f"{self.hostname}: configure replace failed: {out.strip()}")
        if expected is not None:
            undo_if_moved(self.hostname, expected, found, self.rollback, self._running_now)

    def _running_now(self) -> str:
        return str(self.napalm.get_config(retrieve="running")["running"])

    def _checkpoint_and_replace(self, timeout: int) -> tuple[str, str]:
        """One NX-API request: checkpoint (what ``rollback`` returns to), the running configuration as the replace
        finds it, the timed replace. Returns (that running configuration, the replace's output)."""
        replies = self.napalm.device.show_list(
            [
                "terminal dont-ask",
                f"checkpoint file {self.napalm.rollback_cfg}",
                "show running-config",
                f"configure replace bootflash:{self.napalm.candidate_cfg} commit-timeout {timeout}",
            ],
            raw_text=True,
        )
        return str(replies[2].get("result") or ""), str(replies[3].get("result") or "")

    def _refuse_pending_elsewhere(self) -> None:
        """Before our replace runs (or once the switch refused it), a pending replace is someone else's: another
        changer between its commit and its confirm. ``CommitConflict``: nothing of ours committed."""
        if self.has_pending_commit():
            raise CommitConflict(
                f"{self.hostname}: another configure replace is pending its commit-timeout on the device (another "
                "changer?)"
            )

    def has_pending_commit(self) -> bool:
        return bool(re.search(r"Commit Status\s*:\s*Pending", self._exec("show config-replace status")))

    def confirm_commit(self) -> None:
        out = self._exec("configure replace commit")
        if "successful" not in out:
            raise CommitError(f"{self.hostname}: configure replace commit failed: {out.strip()}")
        self.napalm.device.save()  # copy running-config startup-config, as NAPALM's commit does
        self.forget_files([self.napalm.candidate_cfg, self.napalm.rollback_cfg])

    def rollback(self) -> None:
        if self.has_pending_commit():
            self._exec("configure replace commit")  # end the timer; the checkpoint below is the rollback
        super().rollback()
        self.forget_files([self.napalm.candidate_cfg, self.napalm.rollback_cfg])

    def forget_files(self, names: Iterable[str]) -> None:
        """Delete a run's own bootflash files (``leftovers.nxos_files``) once nothing needs them: never NAPALM's
        shared names or a file fabconf did not name. In one request, as NAPALM deletes its candidate
        (``terminal dont-ask``, ``delete NAME``: [3P] napalm/nxos/nxos.py ``_delete_file``). Best effort: a file
        already gone, or a failed request, leaves at most a small file on bootflash."""
        ours = [name for name in dict.fromkeys(names) if own_file(name)]
        if ours:
            with suppress(Exception):
                self.napalm.device.config_list(
                    ["terminal dont-ask", *(f"delete {name}" for name in ours), "no terminal dont-ask"]
                )
