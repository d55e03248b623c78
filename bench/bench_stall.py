"""The switch worker's stall (issue 42), at a size a 2-core machine holds: one lab process of HTTPS devices with the
lab's own certificates, some of its threads computing (as handler threads do while fabconf's 100 workers are
served), and clients in another process that open a TLS connection per request, as pyeapi and napalm's NX-API
client do. Prints the requests served per second, the lab process's CPU per request, and the time to the end of
the TLS handshake and to the end of the reply (median, 99th percentile, slowest).

    python bench/bench_stall.py --devices 200 --clients 40 --busy 30 --seconds 15 [--switch-interval 0.005]

``--switch-interval`` sets the lab process's GIL switch interval (default: the lab's own, ``SWITCH_INTERVAL``).
Run it from an export of another commit (``PYTHONPATH=that/export``) to compare the two.
"""

from __future__ import annotations

import argparse
import base64
import json
import multiprocessing as mp
import os
import socket
import ssl
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

USER, PASSWORD = "admin", "bench-pass"
BODY = json.dumps({"jsonrpc": "2.0", "method": "runCmds", "id": 1, "params": {"cmds": ["show version"]}}).encode()


def _lab(net: str, devices: int, busy: int, interval: float | None, state: str, ready: Any, stop: Any) -> None:
    from fabconf_lab import acceptor
    from fabconf_lab.faults import Faults
    from fabconf_lab.httpd import HttpDevice, HttpReply, HttpRequest, HttpsService
    from fabconf_lab.tls import LabCA

    if hasattr(acceptor, "favour_connections"):
        acceptor.favour_connections()
    if interval is not None:
        sys.setswitchinterval(interval)

    class Device(HttpDevice):
        username, password = USER, PASSWORD

        def __init__(self, name: str) -> None:
            self.name = name
            self.faults = Faults()

        def handle_http(self, request: HttpRequest) -> HttpReply:
            return HttpReply.json({"jsonrpc": "2.0", "id": 1, "result": [{"version": "4.33.1F"}]})

    ca = LabCA(Path(state))
    served = []
    for i in range(devices):
        address = f"{net}{1 + i // 250}.{1 + i % 250}"
        service = HttpsService(Device(f"sw{i}"), address, 0, ca.server_context(f"sw{i}", address))
        service.start()
        served.append((address, service.port))

    def compute() -> None:
        while True:
            sum(range(1000))

    for _ in range(busy):
        threading.Thread(target=compute, daemon=True).start()
    ready.put(served)
    stop.wait()


def _clients(served: list[tuple[str, int]], cafile: str, clients: int, seconds: float, out: Any) -> None:
    ctx = ssl.create_default_context(cafile=cafile)
    auth = base64.b64encode(f"{USER}:{PASSWORD}".encode())
    head = b"POST /command-api HTTP/1.1\r\nHost: lab\r\nAuthorization: Basic " + auth
    request = head + b"\r\nConnection: close\r\nContent-Length: " + str(len(BODY)).encode() + b"\r\n\r\n" + BODY
    handshakes: list[float] = []
    replies: list[float] = []
    errors: list[str] = []
    end = time.monotonic() + seconds

    def run(k: int) -> None:
        i = k
        while time.monotonic() < end:
            address, port = served[i % len(served)]
            i += clients
            started = time.monotonic()
            try:
                with ctx.wrap_socket(
                    socket.create_connection((address, port), timeout=60), server_hostname=address
                ) as tls:
                    shaken = time.monotonic()
                    tls.sendall(request)
                    while tls.recv(65536):
                        pass
                handshakes.append(shaken - started)
                replies.append(time.monotonic() - started)
            except OSError as exc:
                errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=run, args=(k,)) for k in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.put((handshakes, replies, errors))


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _spread(values: list[float]) -> str:
    ordered = sorted(values) or [float("nan")]
    p99 = ordered[int(0.99 * (len(ordered) - 1))]
    return f"median {ordered[len(ordered) // 2]:.2f} s, p99 {p99:.2f} s, slowest {ordered[-1]:.2f} s"


def main() -> None:
    from network import free_network

    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, default=200)
    ap.add_argument("--clients", type=int, default=40)
    ap.add_argument("--busy", type=int, default=30, help="threads computing in the lab process")
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--switch-interval", type=float, default=None)
    a = ap.parse_args()
    net = free_network().removesuffix("0.0/16")
    ctx = mp.get_context("spawn")
    ready, stop, out = ctx.Queue(), ctx.Event(), ctx.Queue()
    with tempfile.TemporaryDirectory() as state:
        lab = ctx.Process(
            target=_lab, args=(net, a.devices, a.busy, a.switch_interval, state, ready, stop), daemon=True
        )
        lab.start()
        served = ready.get(timeout=300)
        assert lab.pid is not None
        before = _cpu(lab.pid)
        client = ctx.Process(target=_clients, args=(served, f"{state}/ca.pem", a.clients, a.seconds, out))
        client.start()
        handshakes, replies, errors = out.get()
        client.join()
        used = _cpu(lab.pid) - before
        stop.set()
        lab.join(timeout=10)
        if lab.is_alive():
            lab.terminate()
    print(
        f"{len(replies)} requests ({len(replies) / a.seconds:.1f}/s), {len(errors)} failed; lab CPU "
        f"{1000 * used / max(1, len(replies)):.0f} ms per request; load average {os.getloadavg()[0]:.1f}"
    )
    print(f"  TLS handshake done: {_spread(handshakes)}")
    print(f"  reply done:         {_spread(replies)}")
    for error in errors[:3]:
        print(f"  {error}")


if __name__ == "__main__":
    main()
