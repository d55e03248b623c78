"""EOS with the commit-time base check (issue #43).

A configuration session starts from a copy of the running configuration, and its commit copies the session's
configuration over the running one, "overwriting any other configuration changes made since the session was
created" ([V] Arista EOS User Manual, "Configure Session"). A change made in plain ``configure`` mode after
fabconf's last read would be lost and the push reported ``applied``. So the timed commit reads the running
configuration in the same eAPI request, right before ``configure session X commit timer`` (eAPI runs a request's
commands in order); when it is not the configuration the change was computed from (``expect_running``), the
session, still pending its timer, is aborted at once (NAPALM's ``rollback``: ``configure session X abort``, which
puts back the configuration the commit found: the other change stays) and ``CommitConflict`` names what changed.
"""

from __future__ import annotations

import time

from pyeapi.eapilib import CommandError

from fabconf.drivers.cli.base_check import refuse_moved, undo_if_moved
from fabconf.drivers.cli.staging import StagedTimerDriver
from fabconf.drivers.contract import CommitConflict


class EosTimerDriver(StagedTimerDriver):
    """NAPALM's EOS driver, staged, whose timed commit checks its base (``GuardedCommit``)."""

    _expected: str | None = None  # the running configuration the next commit must find (``expect_running``)

    def expect_running(self, running: str) -> None:
        self._expected = running

    def _refuse_pending_elsewhere(self, session: str) -> None:
        """Another configuration session's commit timer is pending (another changer between its commit and its
        confirm): ``CommitConflict``, nothing of ours committed. NAPALM reads the pending sessions
        (``show configuration sessions detail``)."""
        others = sorted(set(self.napalm._get_pending_commits()) - {session})
        if others:
            raise CommitConflict(
                f"{self.hostname}: configuration session {', '.join(others)} is pending its commit timer on the device "
                "(another changer?)"
            )

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        expected, self._expected = self._expected, None
        session = getattr(self.napalm, "config_session", None)
        if expected is None or revert_in is None or message or not session:
            if expected is not None:  # checked one round trip before NAPALM's own commit
                refuse_moved(self.hostname, expected, self._running_now())
            super().commit_config(message=message, revert_in=revert_in)
            return
        # NAPALM's timed commit (napalm/eos/eos.py commit_config), with the running configuration read first
        self._refuse_pending_elsewhere(session)
        self._running = None
        try:
            replies = self.napalm._run_commands(
                [
                    "show running-config",
                    "copy startup-config flash:rollback-0",
                    f"configure session {session} commit timer {time.strftime('%H:%M:%S', time.gmtime(revert_in))}",
                ],
                encoding="text",
            )
        except CommandError:  # the switch refused the commit (nothing of it ran): another timer, or a real error
            self._refuse_pending_elsewhere(session)
            raise
        self._staged, self._replace = None, False
        # the session is pending its timer: NAPALM's rollback aborts it and the configuration it found comes back
        found = str(replies[0].get("output") or "")
        undo_if_moved(self.hostname, expected, found, self.rollback, self._running_now)

    def _running_now(self) -> str:
        return str(self.napalm.get_config(retrieve="running")["running"])
