"""The background process behind ``fabconf lab up``: runs a Lab until told to stop.

Control channel: a TCP socket on 127.0.0.1 (port and a random token in ``STATE/control.json``, mode
0600); one JSON object per line in each direction: ``{"token", "cmd": "status"|"fault"|"down", ...}``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

CONTROL = "control.json"
READY_TIMEOUT = 180.0


def control_path(state: Path) -> Path:
    return Path(state) / CONTROL


def request(state: Path, payload: dict[str, Any], timeout: float = 120.0) -> dict[str, Any]:
    """Send one command to a running lab; raises ConnectionError when none answers."""
    try:
        info = json.loads(control_path(state).read_text())
    except (OSError, ValueError) as exc:
        raise ConnectionError(f"no lab running for state directory {state}") from exc
    try:
        with socket.create_connection(("127.0.0.1", int(info["port"])), timeout=timeout) as sock:
            sock.sendall((json.dumps({**payload, "token": info["token"]}) + "\n").encode())
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError as exc:
        raise ConnectionError(f"the lab of {state} does not answer: {exc}") from exc
    return json.loads(data or b"{}")


def is_running(state: Path) -> bool:
    try:
        return request(state, {"cmd": "ping"}, timeout=2.0).get("ok") is True
    except ConnectionError:
        return False


def stop(state: Path, timeout: float = 30.0) -> None:
    """Ask the lab to stop and wait until its process has gone (every device closed)."""
    pid = int(json.loads(control_path(state).read_text()).get("pid", 0)) if control_path(state).exists() else 0
    request(state, {"cmd": "down"})
    deadline = time.monotonic() + timeout
    while pid and time.monotonic() < deadline:
        if _gone(pid):
            return
        time.sleep(0.05)


def _gone(pid: int) -> bool:
    """The process has exited. When it is our own child (``start_lab`` in this process), it stays a zombie until
    reaped, and ``kill(pid, 0)`` still succeeds: reap it."""
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _quiet_libraries() -> None:
    """Clients that hang up are routine for a lab (every fabconf run does, NAPALM's SSH does on close):
    paramiko's 'Socket exception: Connection reset by peer' and its tracebacks are not news. They go to the
    log only at DEBUG (``FABCONF_LAB_DEBUG=1``)."""
    import logging

    level = logging.DEBUG if os.environ.get("FABCONF_LAB_DEBUG") else logging.CRITICAL
    for name in ("paramiko", "paramiko.transport"):
        logging.getLogger(name).setLevel(level)


def _serve(inventory: Path, state: Path, network: str, workers: int = 0) -> int:
    from fabconf.lab.orchestrator import Lab
    from fabconf.pipeline import compile_inventory
    from fabconf.problems import InputError

    _quiet_libraries()
    try:
        compiled = compile_inventory(inventory)
    except InputError as exc:
        for p in exc.problems:
            print(p, file=sys.stderr)
        return 1
    from fabconf.lab.shards import ShardedLab, default_workers

    workers = workers or default_workers(len(compiled.model.devices))
    lab = (
        ShardedLab(compiled, inventory, state, network=network, workers=workers)
        if workers > 1
        else Lab(compiled, inventory, state, network=network)
    )
    lab.start()
    token = secrets.token_hex(16)
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def shutdown(*_: Any) -> None:
        stop.set()
        with contextlib.suppress(OSError):
            socket.create_connection(server.getsockname(), timeout=1).close()

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    path = control_path(state)
    path.write_text(json.dumps({"port": server.getsockname()[1], "token": token, "pid": os.getpid()}))
    os.chmod(path, 0o600)
    print(f"lab ready: {len(lab.addresses)} devices in {workers} process(es)", flush=True)
    try:
        while not stop.is_set():
            conn, _ = server.accept()
            with conn:
                conn.settimeout(10)
                try:
                    line = conn.makefile("rb").readline()
                    req = json.loads(line or b"{}")
                except (OSError, ValueError):
                    continue
                reply = _handle(lab, req, token, stop)
                with contextlib.suppress(OSError):
                    conn.sendall((json.dumps(reply) + "\n").encode())
    finally:
        path.unlink(missing_ok=True)
        server.close()
        lab.stop()
    return 0


def _handle(lab: Any, req: dict[str, Any], token: str, stop: threading.Event) -> dict[str, Any]:
    if req.get("token") != token:
        return {"ok": False, "error": "bad token"}
    cmd = req.get("cmd")
    if cmd == "ping":
        return {"ok": True}
    if cmd == "status":
        return {
            "ok": True,
            "devices": lab.status(),
            "inventory": str(lab.state_dir / "inventory"),
            "pids": [os.getpid(), *(lab.pids() if hasattr(lab, "pids") else [])],
        }
    if cmd == "fault":
        try:
            active = lab.fault(
                req["device"],
                req["kind"],
                req.get("arg"),
                at=req.get("at"),
                after=int(req.get("after") or 1),
                every=bool(req.get("every")),
            )
        except (KeyError, ValueError) as exc:
            return {"ok": False, "error": exc.args[0] if exc.args else str(exc)}
        return {"ok": True, "faults": active}
    if cmd == "down":
        stop.set()
        return {"ok": True}
    return {"ok": False, "error": f"unknown command {cmd!r}"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fabconf.lab.daemon")
    ap.add_argument("--inventory", required=True, type=Path)
    ap.add_argument("--state", required=True, type=Path)
    ap.add_argument("--network", default="127.77.0.0/16")
    ap.add_argument("--workers", type=int, default=0, help="simulator processes (0: sized to the machine)")
    a = ap.parse_args(argv)
    return _serve(a.inventory, a.state, a.network, a.workers)


def wait_ready(state: Path, proc: Any, timeout: float = READY_TIMEOUT) -> bool:
    """Wait for the daemon of ``proc`` to answer; False when it died or timed out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if control_path(state).exists() and is_running(state):
            return True
        time.sleep(0.1)
    return False


if __name__ == "__main__":
    sys.exit(main())
