"""Every recipe of README.md and docs/ marked ``run`` (tests/docrecipes.py), run as a reader runs it: each block in a
scratch directory holding copies of the repository's inventories and runbooks, with fabconf on PATH, a loopback range
of its own for the lab, and nothing of this test's environment (credentials, lab settings). ``--lab`` commands start
their lab as the docs say; ``lab-up`` blocks get `fabconf lab up` first; in ``devices`` blocks the lab stands in for the
real devices (the inventory is the lab's copy, lab.env's credentials are set, as the lab's own docs say). Each command
exits 0 or 2 (changes pending, drift found) unless the mark names it as one that fails, never with a traceback; each
lab is stopped at the end."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from docrecipes import Block, blocks
from network import free_network
from pristine import EXAMPLE

ROOT = Path(__file__).resolve().parents[2]
COPIED = ("inventory", "examples", "tasks")  # what the recipes name, relative to the repository
STATE = ".fabconf-lab"
RUNNABLE = [b for b in blocks() if b.runs]
TIMEOUT = 300


def _environment(tmp_path: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith("FABCONF_") or k == "FABCONF_CACHE_DIR"}
    home = tmp_path / "home"
    home.mkdir()
    return {
        **keep,
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "FABCONF_LAB_NETWORK": free_network(),
        "FABCONF_AUDIT_LOG": str(tmp_path / "audit.jsonl"),
        "FABCONF_LOCK_DIR": str(tmp_path / "locks"),
    }


def _run(command: str, work: Path, env: dict[str, str], answer: str | None) -> subprocess.CompletedProcess[str]:
    """One command under bash (pipefail); with ``answer``, on a terminal where it is typed to every question."""
    argv = ["bash", "-o", "pipefail", "-c", command]
    if answer is None:
        return subprocess.run(
            argv, cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT
        )
    controller, terminal = pty.openpty()
    try:
        os.write(controller, f"{answer}\n".encode() * 16)
        return subprocess.run(argv, cwd=work, env=env, stdin=terminal, capture_output=True, text=True, timeout=TIMEOUT)
    finally:
        os.close(terminal)
        os.close(controller)


def _prepare(block: Block, work: Path, env: dict[str, str]) -> str:
    """Starts the lab the mark asks for; returns the prefix each command runs after (lab.env's credentials)."""
    options = block.options()
    if "lab-up" in options:
        done = _run("fabconf lab up", work, env, None)
        assert done.returncode == 0, done.stdout + done.stderr
    if "devices" in options:
        inventory = options["devices"] or "inventory"
        done = _run(f"fabconf lab up -i {inventory}", work, env, None)
        assert done.returncode == 0, done.stdout + done.stderr
        shutil.rmtree(work / inventory)
        shutil.copytree(work / STATE / "inventory", work / inventory)  # the lab's addresses, ports and trust
        return f"set -a; . {STATE}/lab.env; set +a; "
    return ""


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.where for b in RUNNABLE])
def test_recipe(block: Block, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for name in COPIED:
        shutil.copytree(EXAMPLE if name == "inventory" else ROOT / name, work / name)
    env = _environment(tmp_path)
    try:
        prefix = _prepare(block, work, env)
        if block.language == "python":
            (work / "recipe.py").write_text(block.text)
            done = subprocess.run(
                [sys.executable, "recipe.py"], cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT
            )
            assert done.returncode == 0, f"{block.where}: the Python recipe failed:\n{done.stdout}{done.stderr}"
            return
        for n, command in enumerate(block.commands(), 1):
            done = _run(prefix + command, work, env, block.options().get("answer"))
            text = done.stdout + done.stderr
            allowed = {1} if n in block.failing() else {0, 2}
            assert done.returncode in allowed, f"{block.where}: `{command}` exited {done.returncode}:\n{text[-6000:]}"
            assert "Traceback" not in text, f"{block.where}: `{command}`:\n{text[-6000:]}"
    finally:
        subprocess.run(["fabconf", "lab", "down", "--state", STATE], cwd=work, env=env, capture_output=True, timeout=60)
