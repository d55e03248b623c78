"""scripts/nautobot-dev refuses a state directory it did not create, before it starts or installs anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def dev(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "nautobot-dev"), *args], capture_output=True, text=True, check=False
    )


def test_up_refuses_a_directory_it_did_not_create(tmp_path: Path) -> None:
    (tmp_path / "precious.txt").write_text("someone else's data\n")
    done = dev("up", "--state", str(tmp_path))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "not created by nautobot-dev" in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["precious.txt"]


def test_down_refuses_a_directory_it_did_not_create(tmp_path: Path) -> None:
    done = dev("down", "--state", str(tmp_path))
    assert done.returncode == 1 and "not a nautobot-dev state directory" in done.stderr
    assert dev("status", "--state", str(tmp_path)).returncode == 1
