"""The nightly drift job as installed, run against the lab: the docs' install block makes a system user in a scratch
root, the lab's inventory and credentials go where the docs put them (the inventory, ``drift.env`` group-readable),
and the shipped unit's own command — its ExecStart, with its EnvironmentFile, User, HOME and WorkingDirectory —
runs as that user, as systemd would run it (systemd itself does not run here). The run checks every device, writes
the Prometheus file and the git backups, exits with a status the unit counts as success, and writes nothing outside
the unit's ReadWritePaths. Skipped, saying why, where the test is not root or no interpreter of this Python's
version can be run by another user."""

from __future__ import annotations

import os
import shlex
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest
from labkit import inv
from nightlykit import (
    as_user,
    into_scratch,
    run_install_block,
    unit_settings,
)

from fabconf_lab.orchestrator import Lab


def _interpreter(user: str) -> str:
    """A Python of this one's version that ``user`` can run (this one may live under root's private home)."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    for candidate in (sys.executable, shutil.which(f"python{version}"), f"/usr/bin/python{version}"):
        probe = f"import sys; assert sys.version_info[:2] == ({version.replace('.', ', ')})"
        if candidate and Path(candidate).exists() and as_user(user, candidate, "-c", probe) == 0:
            return candidate
    pytest.skip(f"no python{version} that user {user} can run (the test's interpreter is {sys.executable})")


def _install_fabconf(scratch: Path, user: str) -> Path:
    """fabconf where the unit runs it, /usr/local/bin/fabconf, as pip writes the entry point: a virtual environment
    (root's, read-only to the user) whose interpreter the user can run, seeing this checkout's installed packages."""
    venv = scratch / "opt" / "fabconf"
    subprocess.run([_interpreter(user), "-m", "venv", "--without-pip", str(venv)], check=True)
    paths = [p for p in site.getsitepackages() if Path(p).is_dir()]
    pth = next((venv / "lib").glob("python3*/site-packages")) / "fabconf-checkout.pth"
    pth.write_text("".join(f"import site; site.addsitedir({p!r})\n" for p in paths))
    entry = scratch / "usr" / "local" / "bin" / "fabconf"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text(f"#!{venv}/bin/python\nimport sys\nfrom fabconf.cli import main\nsys.exit(main())\n")
    entry.chmod(0o755)
    if as_user(user, f"{venv}/bin/python", "-c", "import fabconf.cli") != 0:
        pytest.skip(
            f"user {user} cannot read this checkout's packages ({', '.join(paths)}): the clone lies under a directory "
            "only its owner may enter (a 0700 home); the installed job is tested where the checkout is readable"
        )
    return entry


def _owned_by(root: Path, uid: int) -> list[Path]:
    return [p for p in root.rglob("*") if p.lstat().st_uid == uid]


def test_the_installed_nightly_job_runs_as_its_service_user_against_the_lab(
    lab: Lab, scratch_dir: Path, service_user: str
) -> None:
    scratch = scratch_dir / "root"
    scratch.mkdir(mode=0o755)
    etc = scratch / "etc" / "fabconf"
    env = lab.env()
    trust = {
        env[key]: str(etc / name)
        for key, name in (("FABCONF_CA_FILE", "ca.pem"), ("FABCONF_KNOWN_HOSTS", "known_hosts"))
    }
    inventory = scratch_dir / "inventory"
    shutil.copytree(inv(lab), inventory)  # the lab's devices, addresses, ports and trust (its CA, its known_hosts)
    for path in inventory.glob("*.yaml"):  # the trust files where the operator keeps them, beside drift.env
        text = path.read_text()
        for old, new in trust.items():
            text = text.replace(old, new)
        path.write_text(text)
    run_install_block(scratch_dir, scratch, service_user)
    _install_fabconf(scratch, service_user)
    for old, new in trust.items():  # root's, readable by the service group only, as drift.env
        shutil.copy(old, new)
        shutil.chown(new, "root", service_user)
        Path(new).chmod(0o640)
    env = {key: trust.get(value, value) for key, value in env.items()}
    env["FABCONF_INVENTORY"] = str(etc / "inventory")
    (etc / "drift.env").write_text("".join(f"{k}={v}\n" for k, v in sorted(env.items())))  # root writes it

    unit = unit_settings()
    [user], [group] = unit["User"], unit["Group"]
    assert (user, group) == ("fabconf", "fabconf")
    [envfile] = [into_scratch(f, scratch) for f in unit["EnvironmentFile"]]
    [home] = [into_scratch(e.split("=", 1)[1], scratch) for e in unit["Environment"] if e.startswith("HOME=")]
    [workdir] = [into_scratch(d, scratch) for d in unit["WorkingDirectory"]]
    [state] = unit["StateDirectory"]
    writable = [Path(into_scratch(p, scratch)) for p in " ".join(unit["ReadWritePaths"]).split()]
    [command] = [into_scratch(c, scratch) for c in unit["ExecStart"]]
    assert command.startswith(f"{scratch}/usr/local/bin/fabconf drift -i ${{FABCONF_INVENTORY}} "), command
    # systemd makes StateDirectory= under /var/lib, owned by the unit's user, before it starts the command
    subprocess.run(["install", "-d", "-o", service_user, "-g", service_user, f"{scratch}/var/lib/{state}"], check=True)
    before = set(_owned_by(scratch, 0))

    # the unit's environment: nothing of this test's own, then the EnvironmentFile (sourced as the user: it must be
    # readable to them), then the command with ${FABCONF_INVENTORY} expanded as systemd expands it
    script = f"set -a; . {shlex.quote(envfile)}; set +a; cd {shlex.quote(workdir)}; exec {command}"
    done = subprocess.run(
        ["runuser", "-u", service_user, "--", "env", "-i", f"HOME={home}", "PATH=/usr/bin:/bin", "bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    prom_file = scratch / "var" / "lib" / "prometheus" / "node-exporter" / "fabconf_drift.prom"
    prom = prom_file.read_text() if prom_file.exists() else "(no metrics file)"
    success = {0, *map(int, " ".join(unit.get("SuccessExitStatus", [])).split())}
    assert done.returncode in success, done.stdout + done.stderr + prom
    assert done.returncode == 2  # the brownfield lab has drifted from the intent: the metrics say so
    assert "Traceback" not in done.stderr and "ermission denied" not in done.stderr, done.stderr
    assert env["FABCONF_PASSWORD"] not in done.stdout + done.stderr + prom

    assert "fabconf_drift_exit_code 2.0" in prom, prom
    reachable = [line for line in prom.splitlines() if line.startswith("fabconf_drift_reachable{")]
    assert len(reachable) == len(lab.devices) and all(line.endswith(" 1.0") for line in reachable), prom
    backups = scratch / "var" / "lib" / state / "backups"
    assert {p.stem for p in backups.glob("*.*") if p.is_file()} >= set(lab.devices)
    log = subprocess.run(  # as its owner: git refuses another user's repository
        ["runuser", "-u", service_user, "--", "env", f"HOME={home}", "git", "-C", str(backups), "log", "--format=%s"],
        capture_output=True,
        text=True,
    )
    assert log.returncode == 0 and log.stdout.strip(), log.stderr

    uid = int(subprocess.run(["id", "-u", service_user], capture_output=True, text=True, check=True).stdout)
    outside = [p for p in _owned_by(scratch, uid) if not any(p == w or w in p.parents for w in writable)]
    assert outside == [], f"the service user wrote outside ReadWritePaths: {outside}"
    assert set(_owned_by(scratch, 0)) == before  # and changed nothing of root's (no file root owns came or went)
    assert os.stat(etc / "drift.env").st_mode & 0o777 == 0o640
