"""The background process behind ``fabconf lab up``: runs a Lab until told to stop.

Control channel: a TCP socket on 127.0.0.1 (port and a random token in ``STATE/control.json``, mode
0600); one JSON object per line in each direction: ``{"token", "cmd": "status"|"fault"|"down", ...}``. Each
connection is served in its own thread with a short deadline, so one client holding the port open (another local
user can) delays nobody.

Liveness never rests on the channel alone: ``STATE/daemon.json`` records the daemon's pid and its start time as
the kernel counts it (``/proc/PID/stat`` field 22), written before anything binds. A recorded process that still
runs with that start time is the lab, busy or not: a second daemon is never started over it, and ``lab down``
stops it (SIGTERM, then SIGKILL of its process group, which holds its workers) even when the channel is held.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
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
DAEMON = "daemon.json"
READY_TIMEOUT = 180.0
CONNECTION_DEADLINE = 2.0  # seconds a control connection may take to send its request line
LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))


def loopback_network(network: str) -> str:
    """``network`` when it lies within 127.0.0.0/8 (or is ::1); a ValueError in one line otherwise: the lab
    binds every address of it and must never bind an address of a real network."""
    try:
        net = ipaddress.ip_network(network, strict=False)
    except ValueError:
        raise ValueError(f"--network {network}: not an address range (expected e.g. 127.77.0.0/16)") from None
    if not any(net.version == lo.version and net.subnet_of(lo) for lo in LOOPBACK):  # type: ignore[arg-type]
        raise ValueError(f"--network {network}: the lab binds only loopback addresses (127.0.0.0/8)")
    return network


def _started(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (``/proc/PID/stat`` field 22); None where /proc is not
    available or the process does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])  # fields after "(comm)" start at field 3


def record_daemon(state: Path) -> None:
    """Who the lab is: this process's pid and start time, before anything binds (``STATE/daemon.json``)."""
    path = Path(state) / DAEMON
    path.write_text(json.dumps({"pid": os.getpid(), "started": _started(os.getpid())}))
    os.chmod(path, 0o600)


def recorded_daemon(state: Path) -> int | None:
    """The pid of the lab daemon recorded for ``state`` when that very process still runs (same pid, same start
    time); None otherwise (never started, exited, or its pid reused by another process)."""
    try:
        info = json.loads((Path(state) / DAEMON).read_text())
        pid = int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if pid <= 0 or _gone(pid):
        return None
    started = _started(pid)
    if info.get("started") is not None and started is not None and started != info["started"]:
        return None  # the pid was reused
    return pid


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


def answers(state: Path, timeout: float = 2.0) -> bool:
    """The control channel answers a ping."""
    try:
        return request(state, {"cmd": "ping"}, timeout=timeout).get("ok") is True
    except ConnectionError:
        return False


def is_running(state: Path) -> bool:
    """A lab runs for ``state``: its recorded daemon is alive (busy or not), or, for a daemon that recorded no
    process (an older one), its channel answers."""
    if recorded_daemon(state) is not None:
        return True
    return not (Path(state) / DAEMON).exists() and answers(state)


def stop(state: Path, timeout: float = 30.0) -> None:
    """Stop the lab and wait until its process has gone (every device closed): asked on the channel, then by
    SIGTERM to the recorded daemon, then SIGKILL of its process group (its workers too), so that a held channel
    never keeps a lab running."""
    pid = recorded_daemon(state)
    with contextlib.suppress(ConnectionError):
        request(state, {"cmd": "down"}, timeout=CONNECTION_DEADLINE)
    if pid is None:
        return
    for sig, wait in ((None, timeout / 2), (signal.SIGTERM, timeout / 2), (signal.SIGKILL, 5.0)):
        if sig is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if sig is signal.SIGKILL:
                    os.killpg(pid, sig)  # the daemon leads its own process group: its workers go with it
                else:
                    os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if _gone(pid):
                for name in (CONTROL, DAEMON):
                    (Path(state) / name).unlink(missing_ok=True)
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
    from fabconf import InputError, compile_inventory
    from fabconf_lab.orchestrator import Lab

    _quiet_libraries()
    try:
        loopback_network(network)
    except ValueError as exc:
        print(f"fabconf lab: {exc}", file=sys.stderr)
        return 1
    record_daemon(state)
    try:
        compiled = compile_inventory(inventory)
    except InputError as exc:
        for p in exc.problems:
            print(p, file=sys.stderr)
        return 1
    from fabconf_lab.shards import ShardedLab, default_workers

    workers = workers or default_workers(len(compiled.model.devices))

    def started(layout: str | None) -> Lab:
        lab = (
            ShardedLab(compiled, inventory, state, network=network, workers=workers, layout=layout)
            if workers > 1
            else Lab(compiled, inventory, state, network=network, layout=layout)
        )
        lab.start()
        return lab

    try:
        try:
            lab = started(None)
        except PermissionError:  # a privileged port the probe let through (fabconf_lab.ports.choose)
            if os.environ.get("FABCONF_LAB_PORTS"):
                raise
            print("fabconf lab: no privilege to bind ports below 1024: using high ports", file=sys.stderr)
            lab = started("high")
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"fabconf lab: cannot start the lab on {network}: {exc}", file=sys.stderr)
        return 1
    token = secrets.token_hex(16)
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.5)  # the accept loop looks at `stop` twice a second
    stop = threading.Event()
    busy = threading.Lock()

    def shutdown(*_: Any) -> None:
        stop.set()

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(CONNECTION_DEADLINE)  # a client that sends nothing is dropped, and delays no one else
            try:
                line = conn.makefile("rb").readline(1 << 20)
                req = json.loads(line or b"{}")
            except (OSError, ValueError):
                return
            if req.get("cmd") in ("ping", "down"):  # answered at once, even while a sync runs
                reply = _handle(lab, req, token, stop)
            else:
                with busy:  # a sync changes the set of devices: one request at a time sees it
                    reply = _handle(lab, req, token, stop)
            with contextlib.suppress(OSError):
                conn.settimeout(30)
                conn.sendall((json.dumps(reply) + "\n").encode())

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    path = control_path(state)
    path.write_text(json.dumps({"port": server.getsockname()[1], "token": token, "pid": os.getpid()}))
    os.chmod(path, 0o600)
    print(f"lab ready: {len(lab.addresses)} devices in {workers} process(es), {lab.layout} ports", flush=True)
    try:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                if stop.is_set():
                    break
                raise
            threading.Thread(target=serve, args=(conn,), name="lab-control", daemon=True).start()
    finally:
        path.unlink(missing_ok=True)
        server.close()
        lab.stop()
        (Path(state) / DAEMON).unlink(missing_ok=True)
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
    if cmd == "sync":
        return _sync(lab, req)
    if cmd == "drop_view":
        return {"ok": True, "removed": lab.drop_view(Path(req["view"]))}
    if cmd == "down":
        stop.set()
        return {"ok": True}
    return {"ok": False, "error": f"unknown command {cmd!r}"}


def _sync(lab: Any, req: dict[str, Any]) -> dict[str, Any]:
    """``fabconf lab sync``: the lab follows the inventory ``req["inventory"]`` (with ``req["view"]``: in a scratch
    view of the lab; ``fabconf_lab.orchestrator.Lab.sync``)."""
    from fabconf import InputError, compile_inventory

    try:
        compiled = compile_inventory(Path(req["inventory"]))
    except InputError as exc:
        return {"ok": False, "error": "; ".join(str(p) for p in exc.problems.errors)}
    view = Path(req["view"]) if req.get("view") else None
    try:
        changes = lab.sync(compiled, Path(req["inventory"]), view)
    except (OSError, ValueError, RuntimeError) as exc:
        return {"ok": False, "error": f"the lab cannot follow {req['inventory']}: {exc}"}
    if view is not None:
        (view / VIEW).write_text(json.dumps({"lab": str(lab.state_dir)}))
    return {"ok": True, **changes, "devices": lab.status()}


VIEW = "view.json"


def viewed_lab(state: Path) -> Path | None:
    """The state directory of the lab that ``state`` is a scratch view of (``fabconf lab sync`` with a view), or
    None when ``state`` is not a view."""
    try:
        return Path(json.loads((Path(state) / VIEW).read_text())["lab"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fabconf_lab.daemon")
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
        if control_path(state).exists() and answers(state):
            return True
        time.sleep(0.1)
    return False


if __name__ == "__main__":
    sys.exit(main())
