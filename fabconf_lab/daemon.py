"""The background process behind ``fabconf lab up``: runs a Lab until told to stop.

Control channel: a TCP socket on 127.0.0.1 (port and a random token in ``STATE/control.json``, 0600 from its
creation, in a state directory that is 0700 and this user's: ``state_dir``); one JSON object per line in each
direction: ``{"token", "cmd": "status"|"fault"|"down", ...}``. Each connection is served in its own thread, at
most ``MAX_CONNECTIONS`` at once, with one deadline for its whole request, so clients holding the port open or
sending a byte at a time (another local user can) delay nobody and never exhaust the daemon.

Liveness never rests on the channel alone: ``STATE/daemon.json`` records the daemon's pid and its start time as
the kernel counts it (``/proc/PID/stat`` field 22), written before anything binds. A recorded process that still
runs with that start time is the lab, busy or not: a second daemon is never started over it, and ``lab down``
stops it (SIGTERM, then SIGKILL of its process group, which holds its workers) even when the channel is held.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import ipaddress
import json
import os
import resource
import secrets
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from fabconf.private import UnsafePath, private_dir, read_private, trusted_chain, write_private

CONTROL = "control.json"
DAEMON = "daemon.json"
READY_TIMEOUT = 180.0
READY_PER_DEVICE = 0.05  # seconds more per device of the inventory (``ready_timeout``)
CONNECTION_DEADLINE = 2.0  # seconds a control connection may take to send its whole request line
REPLY_DEADLINE = 10.0  # seconds a client may take to read the whole reply
MAX_CONNECTIONS = 16  # control connections served at once; more are closed at once, unanswered
REQUEST_LIMIT = 1 << 20  # bytes of a request line
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
    if net.version == 4 and net.prefixlen > 30:  # a /31 or /32: no address left for a device
        raise ValueError(
            f"--network {network}: a /{net.prefixlen} has no room for lab devices (expected a range of /30 or wider, "
            "e.g. 127.77.0.0/16)"
        )
    return network


def _started(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (``/proc/PID/stat`` field 22); None where /proc is not
    available or the process does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])  # fields after "(comm)" start at field 3


def state_dir(state: Path) -> Path:
    """The lab's state directory, created 0700 if missing; an existing one of this user's that others may read
    becomes 0700. UnsafePath (one line) when another user owns it, group or others may write it, or it is a
    symbolic link: whoever can write there could plant the files the lab trusts (``daemon.json``)."""
    return private_dir(Path(state), tighten=True, symlink=False)


def record_daemon(state: Path) -> None:
    """Who the lab is: this process's pid and start time, before anything binds (``STATE/daemon.json``, 0600
    from its creation)."""
    write_private(Path(state) / DAEMON, json.dumps({"pid": os.getpid(), "started": _started(os.getpid())}))


def _read_json(path: Path) -> Any:
    """The JSON of a state file this user wrote (``fabconf.private.read_private``: never through a symbolic link,
    never a file of another user's or one others can write); ValueError otherwise."""
    try:
        return json.loads(read_private(path))
    except UnsafePath as exc:
        raise ValueError(str(exc)) from None


def lab_daemon(pid: int, state: Path) -> bool:
    """``pid`` is a fabconf lab daemon of this user's serving ``state``: its real uid is ours (``/proc/PID/status``)
    and its command line is ``... -m fabconf_lab.daemon ... --state STATE`` (``/proc/PID/cmdline``). A
    ``daemon.json`` that names any other process (another user's, or one of ours that is not this lab) is not
    believed: ``lab down`` would signal it."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    uid = next((line.split()[1] for line in status.splitlines() if line.startswith("Uid:")), None)
    if uid != str(os.getuid()):
        return False
    args = [a.decode(errors="replace") for a in argv]
    if "fabconf_lab.daemon" not in args or "--state" not in args:
        return False
    given = args[args.index("--state") + 1] if args.index("--state") + 1 < len(args) else ""
    return os.path.realpath(given) == os.path.realpath(state)


def recorded_daemon(state: Path) -> int | None:
    """The pid of the lab daemon recorded for ``state`` when that very process still runs (same pid, same start
    time) and is this user's lab daemon of ``state`` (``lab_daemon``); None otherwise (never started, exited, its
    pid reused by another process, or a record that is not to be trusted)."""
    try:
        info = _read_json(Path(state) / DAEMON)
        pid = int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if pid <= 0 or _gone(pid):
        return None
    started = _started(pid)
    if info.get("started") is not None and started is not None and started != info["started"]:
        return None  # the pid was reused
    if Path("/proc/self").exists() and not lab_daemon(pid, state):
        return None
    return pid


def control_path(state: Path) -> Path:
    return Path(state) / CONTROL


def request(state: Path, payload: dict[str, Any], timeout: float = 120.0) -> dict[str, Any]:
    """Send one command to a running lab; raises ConnectionError when none answers."""
    try:
        info = _read_json(control_path(state))
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
                    if os.getpgid(pid) != pid or not lab_daemon(pid, state):
                        break  # not the lab's own group (any more): nothing else is signalled
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


# Open files a lab process needs: each device's listening sockets (HTTPS and/or SSH, and its metrics endpoint:
# measured 2.0 per GPU host and 2.7 per switch at 704 devices), and room for the connections being served (fabconf's
# 100 switch and 100 host workers at once), the log, the pipes to the daemon and the libraries.
OPEN_FILES_PER_DEVICE = 3
OPEN_FILES_SPARE = 1024


def open_files_limit(devices: int, soft: int, hard: int) -> int:
    """The soft limit of open files (``RLIMIT_NOFILE``) for a lab process that runs ``devices`` devices: the current
    one when it is enough, else what they need, up to the hard limit. A ValueError, saying what to do, when the hard
    limit cannot even hold the devices' own sockets: a lab of thousands of devices under a ``ulimit -n`` of 1,024
    would otherwise fail part-way through starting, with EMFILE from whichever device came next."""
    need = OPEN_FILES_PER_DEVICE * devices + OPEN_FILES_SPARE
    if soft == resource.RLIM_INFINITY or soft >= need:
        return soft
    if hard != resource.RLIM_INFINITY and hard < OPEN_FILES_PER_DEVICE * devices + 64:
        raise ValueError(
            f"{devices} lab devices in one process need about {need} open files, and this process may open at most "
            f"{hard} (ulimit -Hn): raise that limit, or spread the lab over more processes (--workers)"
        )
    return need if hard == resource.RLIM_INFINITY else min(hard, need)


def raise_open_files(devices: int) -> None:
    """Raise this process's soft limit of open files to what ``devices`` devices need (its workers inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = open_files_limit(devices, soft, hard)
    if wanted != soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def _serve(inventory: Path, state: Path, network: str, workers: int = 0) -> int:
    from fabconf import InputError, compile_inventory
    from fabconf_lab import heap
    from fabconf_lab.acceptor import favour_connections
    from fabconf_lab.orchestrator import Lab

    _quiet_libraries()
    favour_connections()  # a lab in one process serves in this one
    try:
        loopback_network(network)
        state_dir(state)
    except (ValueError, UnsafePath) as exc:
        print(f"fabconf lab: {exc}", file=sys.stderr)
        return 1
    record_daemon(state)
    try:
        compiled = compile_inventory(inventory)
    except InputError as exc:
        for p in exc.problems:
            print(p, file=sys.stderr)
        return 1
    from fabconf_lab.shards import ShardedLab, default_workers, shares

    names = sorted(compiled.model.devices)
    hosts = {n for n, d in compiled.model.devices.items() if d.is_host}
    workers = workers or default_workers(len(names), len(names) - len(hosts))
    try:  # the most devices one process runs
        raise_open_files(max(len(share) for share in shares(names, hosts, workers)) if workers > 1 else len(names))
    except ValueError as exc:
        print(f"fabconf lab: cannot start the lab on {network}: {exc}", file=sys.stderr)
        return 1

    def started(layout: str | None) -> Lab:
        lab = (
            ShardedLab(compiled, inventory, state, network=network, workers=workers, layout=layout)
            if workers > 1
            else Lab(compiled, inventory, state, network=network, layout=layout)
        )
        lab.start()
        heap.settle()  # this process runs the lab and nothing else: its devices stay out of every full collection
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
    stop = threading.Event()

    def shutdown(*_: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    path = control_path(state)
    write_private(path, json.dumps({"port": server.getsockname()[1], "token": token, "pid": os.getpid()}))
    print(f"lab ready: {len(lab.addresses)} devices in {workers} process(es), {lab.layout} ports", flush=True)
    try:
        control_loop(server, token, lab, stop)
    finally:
        path.unlink(missing_ok=True)
        server.close()
        lab.stop()
        (Path(state) / DAEMON).unlink(missing_ok=True)
    return 0


def _read_request(conn: socket.socket, deadline: float) -> bytes:
    """One request line, read before ``deadline`` (``time.monotonic``) in all: a client that sends nothing, or a
    byte at a time, is dropped when it is reached (TimeoutError), not after each read's own timeout."""
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request took too long")
        conn.settimeout(left)
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > REQUEST_LIMIT:
            raise ValueError("the request is too long")
    return data


def control_loop(server: socket.socket, token: str, lab: Any, stop: threading.Event) -> None:
    """Serve the control channel on ``server`` until ``stop`` is set: each connection in a thread of its own, at
    most ``MAX_CONNECTIONS`` at once (one more is closed unanswered: a client flood never exhausts the daemon's
    threads), each with ``CONNECTION_DEADLINE`` for its whole request and ``REPLY_DEADLINE`` for the whole reply."""
    server.settimeout(0.5)  # the accept loop looks at `stop` twice a second
    slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
    busy = threading.Lock()

    def serve(conn: socket.socket) -> None:
        try:
            with conn:
                try:
                    req = json.loads(_read_request(conn, time.monotonic() + CONNECTION_DEADLINE) or b"{}")
                except (OSError, ValueError):
                    return
                if not isinstance(req, dict):
                    return
                if req.get("cmd") in ("ping", "down"):  # answered at once, even while a sync runs
                    reply = _handle(lab, req, token, stop)
                else:
                    with busy:  # a sync changes the set of devices: one request at a time sees it
                        reply = _handle(lab, req, token, stop)
                with contextlib.suppress(OSError):
                    conn.settimeout(REPLY_DEADLINE)  # for the whole sendall ([V] Python docs: socket timeouts)
                    conn.sendall((json.dumps(reply) + "\n").encode())
        finally:
            slots.release()

    while not stop.is_set():
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        except OSError as exc:
            if stop.is_set():
                break
            if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM, errno.ECONNABORTED):
                time.sleep(0.1)  # out of descriptors for now: the connections being served free them
                continue
            raise
        if not slots.acquire(blocking=False):
            conn.close()  # every slot taken: this one is turned away, the lab keeps running
            continue
        try:
            threading.Thread(target=serve, args=(conn,), name="lab-control", daemon=True).start()
        except RuntimeError:  # no thread to be had: turned away too
            slots.release()
            conn.close()


def _handle(lab: Any, req: dict[str, Any], token: str, stop: threading.Event) -> dict[str, Any]:
    given = req.get("token")
    if not isinstance(given, str) or not secrets.compare_digest(given.encode(), token.encode()):
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
    view = None
    if req.get("view"):
        try:
            view = checked_view(Path(req["view"]))
        except UnsafePath as exc:
            return {"ok": False, "error": f"the scratch view {req['view']}: {exc}"}
    try:
        changes = lab.sync(compiled, Path(req["inventory"]), view)
    except (OSError, ValueError, RuntimeError) as exc:
        return {"ok": False, "error": f"the lab cannot follow {req['inventory']}: {exc}"}
    if view is not None:
        write_private(view / VIEW, json.dumps({"lab": str(lab.state_dir)}))
    return {"ok": True, **changes, "devices": lab.status()}


VIEW = "view.json"


def checked_view(view: Path) -> Path:
    """A scratch view the daemon may write into (its inventory, lab.env, known_hosts, devices' state): this
    user's directory (0700 when created here), writable by no one else, not a symbolic link, and under directories
    no other user can replace (``fabconf.private.trusted_chain``); UnsafePath otherwise. A view of another user's
    making (her symlinks to this user's files) is refused before anything is written."""
    real = trusted_chain(view)
    private_dir(real, tighten=True, symlink=False)
    return real


def viewed_lab(state: Path) -> Path | None:
    """The state directory of the lab that ``state`` is a scratch view of (``fabconf lab sync`` with a view), or
    None when ``state`` is not a view."""
    try:
        return Path(_read_json(Path(state) / VIEW)["lab"])
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


def ready_timeout(inventory: Path) -> float:
    """How long ``lab up`` waits for the lab of ``inventory`` to answer: ``READY_TIMEOUT``, and
    ``READY_PER_DEVICE`` more for every device ``hosts.yaml`` names at its first column (a 704-device lab took 12.5 s
    to start on a loaded 2-core machine; a 5,632-device one, 8 times as many, would not fit in 180 s there)."""
    try:
        with (Path(inventory) / "hosts.yaml").open(encoding="utf-8", errors="replace") as f:
            devices = sum(1 for line in f if line[:1] not in ("", " ", "\t", "#", "-", "\n") and ":" in line)
    except OSError:
        devices = 0
    return READY_TIMEOUT + READY_PER_DEVICE * devices


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
