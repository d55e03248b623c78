"""The nightly drift job as installed: the shipped units pass `systemd-analyze verify`, and the docs' install
block, run in a scratch root with a real system user, gives that user read access to the inventory and to the
secrets file (through its group) and nothing more. The unit runs as `User=fabconf` and the cron line sources
`drift.env` as that user: with the old root-only 0750/0600 files neither could read them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from nightlykit import as_user, run_install_block
from pristine import EXAMPLE

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "jobs" / "nightly-drift.md"
UNITS = sorted((ROOT / "contrib" / "systemd").glob("fabconf-drift.*"))


def _verify(root: Path, units: list[Path]) -> subprocess.CompletedProcess[str]:
    """`systemd-analyze verify` in a scratch root holding the system's unit directory, fabconf where the unit
    runs it from, and ``units``; systemd reports a unit's problems as lines, so any output is a failure."""
    if not (root / "usr" / "lib" / "systemd").exists():
        shutil.copytree("/usr/lib/systemd", root / "usr" / "lib" / "systemd", symlinks=True)
    binary = root / "usr" / "local" / "bin" / "fabconf"
    binary.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(shutil.which("fabconf") or "/bin/true", binary)  # the installed entry point, as pip writes it
    target = root / "etc" / "systemd" / "system"
    target.mkdir(parents=True, exist_ok=True)
    for unit in units:
        shutil.copy(unit, target / unit.name)
    names = [unit.name for unit in units]
    return subprocess.run(
        ["systemd-analyze", "verify", f"--root={root}", *names], capture_output=True, text=True, check=False
    )


@pytest.mark.skipif(
    not shutil.which("systemd-analyze") or not Path("/usr/lib/systemd/system").is_dir(),
    reason="systemd-analyze and the system's unit directory are needed",
)
def test_the_shipped_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    assert [u.name for u in UNITS] == ["fabconf-drift.service", "fabconf-drift.timer"]
    done = _verify(tmp_path / "root", UNITS)
    assert (done.returncode, done.stdout + done.stderr) == (0, "")
    broken = tmp_path / "broken" / "fabconf-drift.service"
    broken.parent.mkdir()
    broken.write_text(UNITS[0].read_text().replace("SuccessExitStatus=2", "SuccessExitStatuss=2"))
    done = _verify(tmp_path / "root", [broken, UNITS[1]])
    assert "Unknown key 'SuccessExitStatuss'" in done.stdout + done.stderr  # the check can fail


def test_the_install_block_gives_the_service_user_read_access_and_nothing_more(
    scratch_dir: Path, service_user: str
) -> None:
    tmp_path = scratch_dir
    scratch = tmp_path / "root"
    scratch.mkdir()
    scratch.chmod(0o755)
    shutil.copytree(EXAMPLE, tmp_path / "inventory")
    run_install_block(tmp_path, scratch, service_user)
    etc = scratch / "etc" / "fabconf"
    env, inventory = etc / "drift.env", etc / "inventory"
    env.write_text("FABCONF_INVENTORY=/etc/fabconf/inventory\n")  # root writes the secrets
    files = [env, *sorted(p for p in inventory.rglob("*") if p.is_file())]
    assert len(files) >= 6
    for path in files:
        assert as_user(service_user, "test", "-r", str(path)) == 0, f"{service_user} cannot read {path}"
        assert as_user(service_user, "test", "-w", str(path)) != 0, f"{service_user} may write {path}"
        assert as_user("nobody", "test", "-r", str(path)) != 0, f"anybody may read {path}"
    assert as_user(service_user, "sh", "-c", f'set -a; . {env}; test -n "$FABCONF_INVENTORY"') == 0  # the cron line
    assert as_user(service_user, "test", "-w", str(etc)) != 0
    assert as_user(service_user, "test", "-w", str(scratch / "var" / "lib" / "prometheus" / "node-exporter")) == 0
