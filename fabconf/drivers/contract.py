"""The driver contract: what fabconf's deploy steps may call on any device, whatever its platform.

``Driver`` is NAPALM's configuration lifecycle plus the getters fabconf uses, returning NAPALM's typed
dicts (``napalm.base.models``). Every driver the factory hands out satisfies it: our own (``cumulus``,
``linux``) directly, NAPALM's ``eos``/``nxos`` behind ``StagedCliDriver`` (hier_config staging).

Candidate semantics: ``load_merge_candidate(config=RENDERED)`` takes the FULL rendered configuration of the
device and stages only what fabconf owns (CLI platforms: the remediation of the owned sections; NVUE: the
owned paths; hosts: the settings named). ``load_replace_candidate(config=RENDERED)`` stages the whole
document as the device's complete configuration. ``compare_config()`` returns "" when nothing would change.

Optional capabilities are explicit, never ``getattr`` probes:
- ``RevertTimer`` (a marker base class): ``commit_config(revert_in=N)`` is enforced BY THE DEVICE — it
  reverts by itself unless ``confirm_commit()`` follows. Drivers without it commit for good and are rolled
  back by fabconf from a checkpoint.
- ``Preflight``: read-only checks that must pass before anything is changed (GPU hosts).
- ``PendingFirmware``: settings committed but effective only after a firmware reset (GPU hosts).
- ``IntentDiff``: what would still change, computed without staging anything (CLI platforms: EOS cannot
  open a second config session while a commit timer is pending).
- ``Reattach``: a fresh connection takes over what a lost one left pending (EOS config sessions).
- ``ConfigDiff``: the staged change as people read it — a unified diff of the device's own configuration
  text (running -> candidate) for what fabconf owns.
- ``CommandPreview``: exactly what a commit would send, where ``compare_config()`` is not that (GPU hosts
  compare one line per setting; their commands are shell lines). Elsewhere ``compare_config()`` is what is
  sent: EOS/NX-OS remediation, ``nv set``/``nv unset``. Shown with ``--commands``.
- ``RouteLookup``: the ECMP next hops installed for a prefix (verify's ECMP width check; switches).
- ``AdaptiveRouting``: the ports adaptive routing / dynamic load balancing is on (verify; switches).
- ``RestoreLimits``: what of a difference no restore can undo (a sysfs value that can be set but never unset;
  GPU hosts), so a failed rollback is reported for what it is.
- ``GuardedCommit``: the commit itself checks, under the device's own lock, that the running configuration is
  still the one the change was computed from, and raises ``CommitConflict`` otherwise (a second changer).
- ``Unfinished``: a commit a killed or lost run left half-applied on the device is found
  (``interrupted_commit``) and restored (``finish_interrupted``) before anything else is done (GPU hosts).
- ``Leftovers``: what a run leaves on the device between staging and the end of its push (an EOS config session,
  a commit waiting for its confirmation) carries the run's id or is named in the audit's ``committing`` record, so
  that a later run can clean what a killed one left (``fabconf.deploy.leftovers``).

Every driver is built with NAPALM's constructor, ``(hostname, username, password, timeout, optional_args)``;
fabconf's own drivers read their settings in ``DriverBase.setup`` (``fabconf.drivers.base``).
"""

from __future__ import annotations

from abc import ABC
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # types only: importing NAPALM costs ~0.7 s, which `fabconf validate` need not pay
    from napalm.base import models

__all__ = [
    "CommandPreview",
    "ConfigDiff",
    "Driver",
    "IntentDiff",
    "Leftovers",
    "PendingFirmware",
    "Preflight",
    "Reattach",
    "RevertTimer",
]


@runtime_checkable
class Driver(Protocol):
    """NAPALM's lifecycle and the getters fabconf uses. One connection per device from open() to close()."""

    hostname: str

    def open(self) -> None: ...
    def close(self) -> None: ...

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None: ...
    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None: ...
    def compare_config(self) -> str: ...
    def commit_config(self, message: str = "", revert_in: int | None = None) -> None: ...
    def discard_config(self) -> None: ...
    def rollback(self) -> None: ...

    def get_facts(self) -> models.FactsDict: ...
    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False) -> models.ConfigDict: ...
    def get_interfaces(self) -> dict[str, models.InterfaceDict]: ...
    def get_lldp_neighbors(self) -> dict[str, list[models.LLDPNeighborDict]]: ...
    def get_bgp_neighbors(self) -> dict[str, models.BGPStateNeighborsPerVRFDict]: ...


class RevertTimer(ABC):  # noqa: B024 - a marker: the methods are the Driver's, the promise is the device's
    """Marker: this driver's ``commit_config(revert_in=N)`` is enforced by the device itself, and
    ``confirm_commit()`` / ``has_pending_commit()`` work."""

    def confirm_commit(self) -> None:
        raise NotImplementedError

    def has_pending_commit(self) -> bool:
        raise NotImplementedError


@runtime_checkable
class Preflight(Protocol):
    def preflight(self, config: str | None = None) -> list[str]:
        """Problems that forbid touching the device (empty: go ahead). Read only."""
        ...


@runtime_checkable
class PendingFirmware(Protocol):
    def pending_firmware(self) -> dict[str, dict[str, dict[str, str]]]:
        """Values set but not yet in effect: {device: {KEY: {"current": ..., "next_boot": ...}}}."""
        ...


@runtime_checkable
class Identity(Protocol):
    def identity(self) -> dict[str, str]:
        """``get_facts()``'s ``model`` and ``os_version`` alone, read with fewer requests than all of its facts: what
        the release-line and hardware-family check before staging needs (``fabconf.deploy.steps.check_identity``)."""
        ...


@runtime_checkable
class IntentDiff(Protocol):
    def intent_diff(self, config: str) -> str:
        """What would still change to reach ``config`` (the full rendered configuration), staging nothing."""
        ...


@runtime_checkable
class RouteLookup(Protocol):
    def route_paths(self, prefix: str) -> list[str]:
        """The next-hop addresses installed for exactly ``prefix`` (its ECMP paths); [] when there is no route."""
        ...


@runtime_checkable
class AdaptiveRouting(Protocol):
    def adaptive_ports(self) -> list[str]:
        """The ports adaptive routing (Cumulus) or dynamic load balancing (NX-OS) is on, as the switch's running
        configuration says, sorted; [] when it is off or the platform has no form of it."""
        ...


@runtime_checkable
class Reattach(Protocol):
    def reattach(self, lost: Any) -> None:
        """Take over what the lost driver ``lost`` left pending on the device, so recovery can clean it up."""
        ...


@runtime_checkable
class RestoreLimits(Protocol):
    def unrestorable(self, before: str, now: str) -> list[str] | None:
        """Two running configurations that differ: what of the difference a restore cannot undo, named for
        people, when that is all of it (e.g. a sysfs value that can be set but never unset); None when any of
        the difference could have been restored."""
        ...


@runtime_checkable
class ConfigDiff(Protocol):
    def config_diff(self) -> str:
        """After a load: the owned configuration, running -> candidate, as a unified diff ("" if equal)."""
        ...


@runtime_checkable
class CommandPreview(Protocol):
    def commands_preview(self) -> str:
        """After a load: every command a commit would run, one per line, in order ("" when nothing)."""
        ...


class CommitConflict(Exception):
    """Nothing was committed: the device's configuration (or NIC state) is no longer the one the change was
    computed from, or another run is committing on it right now. The message says what changed."""


@runtime_checkable
class GuardedCommit(Protocol):
    def expect_running(self, running: str) -> None:
        """The next ``commit_config`` commits only if the device's running configuration (``get_config``'s
        ``running``, as compared without blank lines and trailing spaces) is still ``running``, checked inside the
        commit itself (under the device's own lock), and raises ``CommitConflict`` otherwise."""
        ...


@runtime_checkable
class Unfinished(Protocol):
    def interrupted_commit(self) -> str:
        """Read only: a commit that started on the device and never finished (its run was killed or lost the
        device mid-apply), described for people; "" when there is none."""
        ...

    def finish_interrupted(self) -> str:
        """Finish an interrupted commit by restoring the state saved before it; what was done ("" if nothing).
        Raises ``CommitConflict`` while another live run holds the device."""
        ...


@runtime_checkable
class Leftovers(Protocol):
    def own_run(self, run: str) -> dict[str, str]:
        """Before staging: name what this push's staging will leave on the device after ``run`` and return those
        names (EOS: its config session; {} where staging leaves nothing a later run could not tell apart)."""
        ...

    def leftovers(self) -> dict[str, str]:
        """Just before the commit: the names of what a kill from now on would leave on the device (recorded in the
        audit's ``committing`` record)."""
        ...

    def clean_leftovers(self, recorded: list[dict[str, str]]) -> list[str]:
        """Remove what killed runs left, given what each recorded (``leftovers()`` plus ``run``): a staged session
        is aborted, a commit still waiting for its confirmation is undone or finished. Returns what was done, for
        people ([] when nothing was left). Raises ``CommitConflict`` naming what is pending on the device and was
        not recorded by fabconf (someone else's change)."""
        ...
