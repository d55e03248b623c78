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
"""

from __future__ import annotations

import re

from napalm.base.exceptions import CommitError

from fabconf.drivers.cli.remediation import future_config
from fabconf.drivers.cli.staging import StagedCliDriver
from fabconf.drivers.contract import RevertTimer

MAX_TIMEOUT = 3600  # [V] configure replace commit-timeout range 30-3600 s


class NxosTimerDriver(StagedCliDriver, RevertTimer):
    """A staged NX-OS driver whose unconfirmed commits the switch reverts by itself."""

    def _target(self) -> str:
        if self._replace:
            assert self._intended is not None
            return self._intended
        assert self._staged is not None
        return future_config(self.spec.name, self._running_config(), self._staged.config)

    def _exec(self, command: str) -> str:
        return str(self.napalm.device.show(command, raw_text=True))

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        if revert_in is None:
            super().commit_config(message=message)
            return
        target = self._target()
        # NX-OS takes 30-3600 s: a shorter --confirm-timeout is refused by the switch (and the commit with it)
        timeout = min(MAX_TIMEOUT, int(revert_in))
        self.napalm.load_replace_candidate(config=target)  # uploads bootflash:candidate_config.txt
        self.napalm.device.checkpoint(self.napalm.rollback_cfg)  # what rollback() returns to
        self._running = None
        out = self._exec(f"configure replace bootflash:{self.napalm.candidate_cfg} commit-timeout {timeout}")
        self._staged, self._replace = None, False
        if "completed successfully" not in out:
            raise CommitError(f"{self.hostname}: configure replace failed: {out.strip()}")

    def has_pending_commit(self) -> bool:
        return bool(re.search(r"Commit Status\s*:\s*Pending", self._exec("show config-replace status")))

    def confirm_commit(self) -> None:
        out = self._exec("configure replace commit")
        if "successful" not in out:
            raise CommitError(f"{self.hostname}: configure replace commit failed: {out.strip()}")
        self.napalm.device.save()  # copy running-config startup-config, as NAPALM's commit does

    def rollback(self) -> None:
        if self.has_pending_commit():
            self._exec("configure replace commit")  # end the timer; the checkpoint below is the rollback
        super().rollback()
