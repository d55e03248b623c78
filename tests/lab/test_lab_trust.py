"""What the lab trusts from its state directory, tried as another local user could (issue #43): the control token
(``control.json``), ``lab.env``, the CA's key and ``daemon.json`` never exist with a mode wider than 0600, in a state
directory that is 0700; a state directory another user made, or one others can write, is refused; a ``daemon.json``
that names a process other than this user's lab daemon is not believed (``lab down`` used to kill it, root's too);
a ``sync`` view made of another user's symlinks is refused before anything is written through them."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from network import free_network

from fabconf_lab import daemon

ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534


def fabconf(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fabconf", *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout, check=False
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


def _as_nobody() -> list[str]:
    if os.geteuid() != 0:
        pytest.skip("another user's process needs root to start (as CI runs)")
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is missing: cannot start a process as another user")
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    state, network = tmp_path / "lab", free_network()
    up = fabconf("lab", "up", "-i", str(ROOT / "inventory"), "--state", str(state), "--network", network)
    assert up.returncode == 0, up.stderr
    try:
        yield state, network
    finally:
        fabconf("lab", "down", "--state", str(state))


@pytest.mark.parametrize("owner", ["mine", "another user's"])
def test_a_forged_daemon_json_is_not_believed(tmp_path: Path, owner: str) -> None:
    """daemon.json naming a live process with its true start time: one of this user's that is not a lab daemon,
    or another user's (as root: ``lab down`` killed root's own process group when a forged file named it)."""
    prefix = _as_nobody() if owner != "mine" else []
    victim = subprocess.Popen([*prefix, "sleep", "120"], start_new_session=True)
    try:
        time.sleep(0.2)
        state = tmp_path / "lab"
        state.mkdir(mode=0o700)
        (state / "daemon.json").write_text(json.dumps({"pid": victim.pid, "started": daemon._started(victim.pid)}))
        (state / "daemon.json").chmod(0o600)
        assert daemon.recorded_daemon(state) is None
        assert not daemon.is_running(state)
        down = fabconf("lab", "down", "--state", str(state), timeout=60)
        assert down.returncode == 0 and "no lab is running" in down.stdout, down.stdout + down.stderr
        time.sleep(0.2)
        assert _alive(victim.pid), "lab down signalled a process that is not the lab"
    finally:
        victim.kill()
        victim.wait()


def test_a_state_directory_others_can_write_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "lab"
    state.mkdir()
    state.chmod(0o777)  # pre-created by someone else's script, for instance
    up = fabconf("lab", "up", "-i", str(ROOT / "inventory"), "--state", str(state), "--network", free_network())
    try:
        assert up.returncode == 1, up.stdout
        assert up.stderr.count("\n") == 1 and "writable by others (mode 0777)" in up.stderr, up.stderr
        assert "Traceback" not in up.stderr
        assert list(state.iterdir()) == [], "refused before anything was written"
    finally:
        fabconf("lab", "down", "--state", str(state))


def test_a_state_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    _as_nobody()
    state = tmp_path / "lab"
    state.mkdir(mode=0o700)
    os.chown(state, NOBODY, NOBODY)
    up = fabconf("lab", "up", "-i", str(ROOT / "inventory"), "--state", str(state), "--network", free_network())
    try:
        assert up.returncode == 1, up.stdout
        assert f"{state}: owned by uid {NOBODY}, not by you" in up.stderr and up.stderr.count("\n") == 1, up.stderr
        assert list(state.iterdir()) == []
    finally:
        fabconf("lab", "down", "--state", str(state))


# Runs the lab daemon in a process of its own with umask 0 (every file created with the default mode would be
# world-readable) and an audit hook that, at every open, chmod and rename the daemon makes under the state
# directory, looks at the mode of the directory and of each secret file in it. Then asks the lab to go down.
_WATCH = textwrap.dedent(
    """
    import json, os, stat, sys, threading, time
    from pathlib import Path
    state, inventory, network, out = Path(sys.argv[1]), sys.argv[2], sys.argv[3], Path(sys.argv[4])
    seen, busy = [], threading.local()
    SECRET = ("control.json", "daemon.json", "lab.env")

    def look():
        for top, dirs, files in os.walk(state):
            mode = stat.S_IMODE(os.lstat(top).st_mode)
            if top == str(state) and mode & 0o077:
                seen.append(f"{top} {mode:04o}")
            for name in files:
                if name in SECRET or name.endswith(".key") or "/ssh" in top[len(str(state)):]:
                    try:
                        mode = stat.S_IMODE(os.lstat(os.path.join(top, name)).st_mode)
                    except FileNotFoundError:
                        continue
                    if mode & 0o077:
                        seen.append(f"{os.path.join(top, name)} {mode:04o}")

    def hook(event, args):
        if getattr(busy, "on", False) or event not in ("open", "os.chmod", "os.rename"):
            return
        if event != "os.chmod" and not str(args[0]).startswith(str(state)):
            return
        busy.on = True
        try:
            look()
        except OSError:
            pass
        finally:
            busy.on = False

    os.umask(0)
    sys.addaudithook(hook)
    from fabconf_lab import daemon

    def down():
        deadline = time.monotonic() + 200
        while time.monotonic() < deadline and not daemon.answers(state):
            time.sleep(0.2)
        daemon.request(state, {"cmd": "down"})

    threading.Thread(target=down, daemon=True).start()
    code = daemon.main(["--inventory", inventory, "--state", str(state), "--network", network, "--workers", "1"])
    out.write_text(json.dumps({"code": code, "seen": sorted(set(seen))}))
    """
)


def test_secret_files_never_exist_with_a_wider_mode(tmp_path: Path) -> None:
    state, out = tmp_path / "lab", tmp_path / "seen.json"
    state.mkdir(mode=0o700)  # as `fabconf lab up` leaves it for the daemon
    args = [str(state), str(ROOT / "inventory"), free_network(), str(out)]
    run = subprocess.run([sys.executable, "-c", _WATCH, *args], capture_output=True, text=True, timeout=300)
    assert out.exists(), run.stdout + run.stderr
    result = json.loads(out.read_text())
    assert result["code"] == 0, run.stdout + run.stderr
    assert result["seen"] == [], "files the lab's secrets were in, or its state directory, seen with a wider mode"


def test_a_symlinked_state_file_is_not_followed(tmp_path: Path) -> None:
    """A symlink planted where the lab writes a state file (lab.env) is replaced, never written through."""
    target = tmp_path / "authorized_keys"
    target.write_text("ssh-ed25519 AAAA operator\n")
    state = tmp_path / "lab"
    state.mkdir(mode=0o700)
    (state / "lab.env").symlink_to(target)
    (state / "daemon.json").symlink_to(target)
    assert daemon.recorded_daemon(state) is None  # read through no symlink either
    daemon.record_daemon(state)
    assert target.read_text() == "ssh-ed25519 AAAA operator\n"
    assert not (state / "daemon.json").is_symlink()
    assert (state / "daemon.json").stat().st_mode & 0o777 == 0o600


def test_a_sync_view_of_another_users_symlinks_is_refused(lab: tuple[Path, str], tmp_path: Path) -> None:
    """The attack: a view (a directory of symlinks) sent on the control channel, into which the daemon wrote
    lab.env, known_hosts and the inventory: through the symlinks, over the operator's files."""
    state, _ = lab
    victim = tmp_path / "home"
    victim.mkdir(mode=0o700)
    (victim / "known_hosts").write_text("precious\n")
    attacker = tmp_path / "shared"
    attacker.mkdir()
    attacker.chmod(0o1777 ^ 0o1000)  # writable by everyone, not sticky: anyone may swap its entries
    view = attacker / "view"
    view.symlink_to(victim)
    inventory = ROOT / "inventory"
    reply = daemon.request(state, {"cmd": "sync", "inventory": str(inventory), "view": str(view)}, timeout=300)
    assert reply.get("ok") is False and "symbolic link" in reply["error"], reply
    real = attacker / "real-view"
    real.mkdir()
    (real / "known_hosts").symlink_to(victim / "known_hosts")
    reply = daemon.request(state, {"cmd": "sync", "inventory": str(inventory), "view": str(real)}, timeout=300)
    assert reply.get("ok") is False and "writable by others" in reply["error"], reply
    assert (victim / "known_hosts").read_text() == "precious\n"
    assert sorted(p.name for p in victim.iterdir()) == ["known_hosts"]


def test_slow_control_clients_neither_hold_the_daemon_nor_stop_it(lab: tuple[Path, str]) -> None:
    """Clients that dribble a byte a second (each read within the old per-read limit) and a flood of idle ones:
    each is dropped when its whole request takes too long, the lab answers meanwhile and keeps running."""
    state, _ = lab
    pid = daemon.recorded_daemon(state)
    assert pid is not None
    port = json.loads((state / "control.json").read_text())["port"]
    stop = threading.Event()
    dropped: list[float] = []

    def dribble() -> None:
        with socket.create_connection(("127.0.0.1", port)) as sock:
            started = time.monotonic()
            try:
                while not stop.is_set():
                    sock.sendall(b" ")
                    time.sleep(1.0)
            except OSError:
                dropped.append(time.monotonic() - started)

    slow = [threading.Thread(target=dribble, daemon=True) for _ in range(4)]
    for thread in slow:
        thread.start()
    flood = []
    try:
        for _ in range(300):
            with contextlib.suppress(OSError):  # turned away at once: what a bounded daemon does
                flood.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        time.sleep(daemon.CONNECTION_DEADLINE + 1.5)  # every connection that sent no request has been dropped
        started = time.monotonic()
        while time.monotonic() - started < 8:
            assert daemon.answers(state, timeout=5.0), "the lab stopped answering"
            time.sleep(1.0)
        assert daemon.recorded_daemon(state) == pid and _alive(pid)
        threads = int(
            next(
                line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("Threads:")
            ).split()[1]
        )
        assert threads < 200, f"{threads} threads in the daemon"
    finally:
        stop.set()
        for sock in flood:
            sock.close()
        for thread in slow:
            thread.join(timeout=10)
    assert len(dropped) == len(slow), "a client that never finishes its request was kept"
    assert max(dropped) < daemon.CONNECTION_DEADLINE + 6, dropped  # dropped at 2 s; seen at the next send or two
    assert daemon.answers(state)
