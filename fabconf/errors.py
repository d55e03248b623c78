"""fabconf's one root exception. Everything fabconf raises on purpose for a user-facing problem derives from
``FabconfError``; the CLI turns any of them into a message and a non-zero exit, never a traceback.

Device failures are not exceptions here: a device that fails becomes an Outcome with its end state
(``fabconf.deploy.job``). Driver-level errors keep NAPALM's hierarchy (``napalm.base.exceptions``).
"""

from __future__ import annotations


class FabconfError(Exception):
    """Root of every error fabconf reports to the user (bad input, usage, locks, credentials)."""


class UsageError(FabconfError):
    """The command line asks for something that cannot be done as asked."""
