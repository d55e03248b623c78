"""What a killed push leaves on an EOS or NX-OS switch, named so that a later run can tell it as fabconf's, and
how that later run cleans it (the ``Leftovers`` capability of ``StagedCliDriver``; ``fabconf.deploy.leftovers``
finds what killed runs recorded).

- EOS: a push's config session is named ``fabconf_<run id>`` (NAPALM names its own ``napalm_<microseconds>``,
  which nobody can tell apart from another tool's). A kill after staging leaves it ``pending``; a kill after the
  timed commit leaves it ``pendingCommitTimer`` until the timer restores the previous configuration. Either way
  the next run aborts it (``configure session NAME abort``): a pending one is dropped, a timed one is undone at
  once, as its timer would undo it later ([3P] NAPALM's EOS ``rollback()`` undoes its own commit waiting on a timer
  with exactly this command, napalm/eos/eos.py; the lab models it). A pending session the audit does not name
  stops the push, named.
- NX-OS: the commit is ``configure replace bootflash:fabconf_<run id>_candidate.txt commit-timeout N`` after a
  checkpoint to ``bootflash:fabconf_<run id>_checkpoint.txt`` (``fabconf.platform.nxos.nxos_replace``). A kill after
  it leaves the replace pending; the next run ends the timer and rolls back to the recorded checkpoint, as
  ``rollback()`` does. A pending replace with no unfinished fabconf commit recorded for the switch stops the push.
  The files are the run's own (``nxos_files``, named in ``NxosTimerDriver.own_run``): NAPALM's fixed names
  (``candidate_config.txt``, ``rollback_config.txt``) let two runs at once overwrite each other's upload, which then
  failed its MD5 check, and roll back to each other's checkpoint. A run deletes its two files once its replace is
  confirmed or rolled back (``nxos_replace``), and the run that cleans a killed run's replace deletes that run's files.
"""

from __future__ import annotations

from typing import Any

from napalm.base.exceptions import SessionLockedException

from fabconf.drivers.contract import CommitConflict

OPEN_STATES = ("pending", "pendingCommitTimer")  # an EOS session that is staged, or committed and unconfirmed


def session_name(run: str) -> str:
    """The config session a fabconf run stages in (EOS accepts letters, digits and ``_``)."""
    return f"fabconf_{''.join(c for c in run if c.isalnum())}"


NXOS_FILES = ("_candidate.txt", "_checkpoint.txt")  # after a run's session name: its candidate, its checkpoint


def nxos_files(run: str) -> tuple[str, str]:
    """The bootflash files a fabconf run's NX-OS replace uses: (candidate, checkpoint), its own."""
    base = session_name(run)
    return base + NXOS_FILES[0], base + NXOS_FILES[1]


def own_file(name: str) -> bool:
    """A bootflash file a fabconf run named (``nxos_files``), never NAPALM's shared names or anyone else's."""
    return name.startswith(session_name("")) and name.endswith(NXOS_FILES) and "/" not in name


def open_sessions(napalm: Any) -> dict[str, str]:
    """EOS: name -> state of every session that is staged or waiting for its confirmation."""
    sessions = napalm._run_commands(["show configuration sessions"])[0].get("sessions") or {}
    return {str(n): str(s.get("state")) for n, s in sessions.items() if s.get("state") in OPEN_STATES}


def named_lock(napalm: Any, exc: SessionLockedException) -> SessionLockedException:
    """NAPALM's "Session is already in use", with the sessions that are pending on the device named."""
    try:
        names = sorted(n for n, state in open_sessions(napalm).items() if state == "pending")
    except Exception:
        return exc
    shown = ", ".join(names) if names else "unnamed"
    return SessionLockedException(f"another configuration session is pending on the device: {shown}")


def clean_eos(napalm: Any, recorded: list[dict[str, str]]) -> list[str]:
    """Abort the sessions killed runs recorded that are still open; refuse another changer's open session."""
    ours = {r["session"]: r.get("run", "?") for r in recorded if r.get("session")}
    done: list[str] = []
    others: list[str] = []
    for name, state in sorted(open_sessions(napalm).items()):
        if name not in ours:
            others.append(f"{name} ({state})")
            continue
        napalm._run_commands([f"configure session {name} abort"], encoding="text")
        timed = state == "pendingCommitTimer"
        what = "its commit waiting for confirmation undone" if timed else "staged, never committed"
        done.append(f"aborted config session {name} left by killed run {ours[name]} ({what})")
    if others:
        raise CommitConflict(
            "another configuration session is open on the device, not recorded by fabconf: " + ", ".join(others)
        )
    return done


def clean_nxos(driver: Any, recorded: list[dict[str, str]]) -> list[str]:
    """Undo a timed configure replace a killed run left pending (back to its recorded checkpoint), and delete
    the bootflash files killed runs left."""
    if not hasattr(driver, "has_pending_commit"):
        return []
    ours = [r for r in recorded if r.get("checkpoint")]
    files = [r.get(key, "") for r in ours for key in ("candidate", "checkpoint")]
    forget = getattr(driver, "forget_files", lambda names: None)  # NxosTimerDriver's
    if not driver.has_pending_commit():
        forget(files)
        return []
    if not ours:
        raise CommitConflict(
            "a configure replace with commit-timeout is pending on the device, not recorded by fabconf (another "
            "changer?)"
        )
    last = ours[-1]
    napalm = driver.napalm
    own = napalm.candidate_cfg, napalm.rollback_cfg
    napalm.candidate_cfg, napalm.rollback_cfg = last.get("candidate", own[0]), last["checkpoint"]
    try:
        driver.rollback()  # ends the timer, rolls back to the killed run's checkpoint, deletes its two files
    finally:
        napalm.candidate_cfg, napalm.rollback_cfg = own
    forget(f for f in files if f not in (last.get("candidate"), last["checkpoint"]))
    run = last.get("run", "?")
    return [f"undid the configure replace killed run {run} left pending (rolled back to its checkpoint)"]
