"""Shared by the nightly-job tests: the docs' install block, rewritten into a scratch root for a throw-away system
user, and the shipped service unit read as systemd reads it."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "jobs" / "nightly-drift.md"
SERVICE = ROOT / "contrib" / "systemd" / "fabconf-drift.service"


def install_block() -> str:
    """The sh block after "To install:" on the nightly-drift page, as written."""
    page = PAGE.read_text()
    block = page.split("To install:", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    assert block.startswith("useradd --system --user-group"), block
    return block


def into_scratch(text: str, scratch: Path, user: str | None = None) -> str:
    """``text`` with every absolute /etc, /var and /usr/local path moved under ``scratch``, and the user and group
    ``fabconf`` (not the command or a path) renamed ``user``."""
    text = re.sub(r"(?<![\w/])/(etc|var|usr/local)/", rf"{scratch}/\1/", text)
    if user is not None:
        text = re.sub(r"(?<![/\w-])fabconf(?=[ :]|$)", user, text, flags=re.M)
    return text


def unit_settings(path: Path = SERVICE) -> dict[str, list[str]]:
    """A unit file's settings (key -> values in order), continuation lines joined and comments dropped."""
    settings: dict[str, list[str]] = {}
    for line in re.sub(r"\\\n\s*", " ", path.read_text()).splitlines():
        if "=" in line and not line.startswith(("#", ";", "[")):
            key, value = line.split("=", 1)
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def need_root_tools() -> None:
    if os.geteuid() != 0 or not shutil.which("useradd") or not shutil.which("runuser"):
        pytest.skip("creating a system user needs root, useradd and runuser (run as root, as .ci/run does)")


@pytest.fixture
def service_user() -> Iterator[str]:
    """A user name for the install block to create; the user and its group are removed afterwards (a fixture of
    every test: tests/conftest.py imports it)."""
    need_root_tools()
    name = f"fabtest{secrets.token_hex(3)}"
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], capture_output=True, check=False)
        subprocess.run(["groupdel", name], capture_output=True, check=False)


@pytest.fixture
def scratch_dir() -> Iterator[Path]:
    """A directory the service user can reach (pytest's own temporary directories are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="fabconf-install-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def as_user(user: str, *command: str) -> int:
    return subprocess.run(["runuser", "-u", user, "--", *command], capture_output=True, check=False).returncode


def run_install_block(workdir: Path, scratch: Path, user: str) -> None:
    """Runs the install block from ``workdir`` (which holds ``inventory``) into the scratch root, as root."""
    block = into_scratch(install_block(), scratch, user)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=workdir, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
