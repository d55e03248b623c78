"""The nightly drift job for one user, without root (issue #40: every install step needed root, and the unit ran
/usr/local/bin/fabconf, which no step installed): the docs' per-user block, run in a scratch home, leaves the
units where `systemctl --user` finds them and a secrets file only the user reads; the user unit passes `systemd-analyze
verify --user` there; and the system install says how /usr/local/bin/fabconf gets there."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from nightlykit import unit_settings

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "jobs" / "nightly-drift.md"
USER_UNIT = ROOT / "contrib" / "systemd" / "user" / "fabconf-drift.service"
VENV_FABCONF = ".local/share/fabconf/venv/bin/fabconf"


def _block_after(marker: str) -> str:
    return PAGE.read_text().split(marker, 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]


def _user_block() -> str:
    return _block_after("### For one user, without root")


def test_the_per_user_install_needs_no_root() -> None:
    for block in (_user_block(), _block_after("then enable the timer")):
        assert not re.search(r"\bsudo\b|(?<![\w.~])/(etc|usr|var|opt)/", block), block
    assert "systemctl --user enable --now fabconf-drift.timer" in _block_after("then enable the timer")
    assert "crontab -e" in PAGE.read_text()


def test_the_system_install_puts_the_binary_where_the_unit_runs_it() -> None:
    binary = unit_settings()["ExecStart"][0].split()[0]
    assert binary == "/usr/local/bin/fabconf"
    install = _block_after("install fabconf there first")
    assert re.search(rf"^ln -sf \S+/bin/fabconf {re.escape(binary)}$", install, re.M), install


def test_the_per_user_block_in_a_scratch_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    first, rest = _user_block().split("\n", 1)
    assert first.startswith("python3 -m venv ~/.local/share/fabconf/venv && ~/.local/share/fabconf/venv/bin/pip")
    # the install itself (pip from the index) stands in as the entry point already installed here
    (home / VENV_FABCONF).parent.mkdir(parents=True)
    shutil.copy(shutil.which("fabconf") or "/bin/true", home / VENV_FABCONF)
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")} | {"HOME": str(home)}
    done = subprocess.run(["bash", "-euc", rest], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    secrets = home / ".config" / "fabconf" / "drift.env"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert (home / ".config" / "fabconf" / "inventory" / "fabric.yaml").is_file()
    units = home / ".config" / "systemd" / "user"
    assert sorted(p.name for p in units.iterdir()) == ["fabconf-drift.service", "fabconf-drift.timer"]
    (home / ".local" / "state" / "fabconf").mkdir(parents=True, exist_ok=True)
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze is not installed")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    verify = subprocess.run(
        [
            "systemd-analyze",
            "verify",
            "--user",
            *(str(units / n) for n in ("fabconf-drift.service", "fabconf-drift.timer")),
        ],
        env=env | {"XDG_RUNTIME_DIR": str(runtime)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert (verify.returncode, verify.stdout + verify.stderr) == (0, ""), verify.stderr


def test_the_user_unit_runs_the_system_unit_s_command() -> None:
    """The same drift command and exit-status rule as the system unit, with the user's paths, and no User=."""
    system, user = unit_settings(), unit_settings(USER_UNIT)
    assert "User" not in user and user["SuccessExitStatus"] == system["SuccessExitStatus"] == ["2"]
    words = [w for w in user["ExecStart"][0].split() if not w.startswith("%h/")]
    assert words == [w for w in system["ExecStart"][0].split() if not w.startswith("/")]
    assert user["ExecStart"][0].startswith(f"%h/{VENV_FABCONF} drift")
