"""Commit a backup directory to git: initialised on first use, one commit per run that changed something."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from fabconf.errors import FabconfError

IDENTITY = ("-c", "user.name=fabconf", "-c", "user.email=fabconf@localhost")


class GitError(FabconfError):
    pass


def _git(directory: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(["git", *args], cwd=directory, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {args[0]} in {directory}: {exc}") from None
    if check and proc.returncode != 0:
        raise GitError(f"git {args[0]} in {directory} failed: {(proc.stderr or proc.stdout).strip()}")
    return proc


def require_git() -> None:
    if shutil.which("git") is None:
        raise GitError("--git needs the git command, which is not installed")


def commit(directory: Path, message: str) -> str | None:
    """Stage everything in ``directory`` (a repository of its own, created if needed) and commit it with
    ``message``; the new commit's id, or None when nothing changed (no empty commits)."""
    require_git()
    directory.mkdir(parents=True, exist_ok=True)
    if not (directory / ".git").exists():
        _git(directory, "init", "-q")
    _git(directory, "add", "-A", ".")
    if _git(directory, "diff", "--cached", "--quiet", check=False).returncode == 0:
        return None
    configured = _git(directory, "config", "user.email", check=False).stdout.strip()
    identity: tuple[str, ...] = () if configured else IDENTITY
    _git(directory, *identity, "commit", "-q", "-m", message)
    return _git(directory, "rev-parse", "HEAD").stdout.strip()
