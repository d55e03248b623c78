"""A small stand-in for Nautobot's REST API on 127.0.0.1, in a thread, for ``fabconf sot import``: it serves the
records of an inventory as Nautobot would (built with ``fabconf.sot.desired``, the export's own view), and it can be
told to misbehave as a hostile or broken server does (``answers``: a path's answer replaced)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fabconf.compile.pipeline import compile_inventory
from fabconf.sot.desired import desired

TOKEN = "0123456789abcdef0123456789abcdef01234567"  # a Nautobot-shaped token (40 hex digits)
# A replacement answer: (status, body) or a function that writes the whole answer itself.
Answer = tuple[int, Any] | Callable[[BaseHTTPRequestHandler], None]


def page(results: list[Any], next_link: str | None = None) -> dict[str, Any]:
    return {"count": len(results), "next": next_link, "previous": None, "results": results}


def records(inventory: Path) -> dict[str, list[dict[str, Any]]]:
    """The Location, devices, interfaces and cables of ``inventory`` as Nautobot's API lists them (depth 1)."""
    want = desired(compile_inventory(inventory), inventory)
    devices, ids = [], {}
    for n, dev in enumerate(want.devices.values(), 1):
        ids[dev.name] = f"dev-{n}"
        rack = {"name": dev.rack, "rack_group": {"name": dev.pod} if dev.pod else None} if dev.rack else None
        devices.append(
            {
                "id": ids[dev.name],
                "name": dev.name,
                "role": {"name": dev.role},
                "platform": {"name": dev.platform},
                "primary_ip4": {"address": dev.mgmt},
                "device_type": {"model": dev.model},
                "rack": rack,
                "custom_fields": {
                    "fabconf_id": dev.id,
                    "fabconf_groups": dev.groups,
                    "fabconf_extra": dev.extra,
                    "fabconf_pod": dev.pod,
                },
            }
        )
    interfaces, by_end = [], {}
    for n, (device, name) in enumerate(want.interfaces, 1):
        by_end[(device, name)] = f"if-{n}"
        interfaces.append({"id": f"if-{n}", "name": name, "device": {"id": ids[device]}})
    cables = [
        {
            "id": f"cable-{n}",
            "label": None,
            "termination_a_type": "dcim.interface",
            "termination_a_id": by_end[a],
            "termination_b_type": "dcim.interface",
            "termination_b_id": by_end[b],
        }
        for n, (a, b) in enumerate(want.cables, 1)
    ]
    return {
        "/api/dcim/locations/": [{"id": "loc-1", "name": want.location}],
        "/api/dcim/devices/": devices,
        "/api/dcim/interfaces/": interfaces,
        "/api/dcim/cables/": cables,
    }


class FakeNautobot:
    """``url``; ``answers[path]`` replaces a path's answer; ``seen`` lists (path, Authorization header) received."""

    def __init__(self, inventory: Path | None = None) -> None:
        self.lists = records(inventory) if inventory is not None else {}
        self.answers: dict[str, Answer] = {}
        self.seen: list[tuple[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                pass

            def do_GET(self) -> None:
                fake.seen.append((self.path, self.headers.get("Authorization", "")))
                path = urlsplit(self.path).path
                answer = fake.answers.get(path)
                if callable(answer):
                    answer(self)
                    return
                if answer is None:
                    answer = (200, {"nautobot-version": "2.3.0"} if path == "/api/status/" else None)
                    if path in fake.lists:
                        answer = (200, page(fake.lists[path]))
                    elif path != "/api/status/":
                        answer = (404, {"detail": "Not found."})
                reply(self, answer[0], answer[1], Content_Type="application/json")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def reply(handler: BaseHTTPRequestHandler, status: int, body: Any = b"", **headers: str) -> None:
    """Write one whole answer: ``body`` as JSON unless bytes; Content-Length unless ``headers`` give one."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    handler.send_response(status)
    for name, value in {"Content_Length": str(len(data)), **headers}.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(data)


def endless(handler: BaseHTTPRequestHandler) -> None:
    """An answer that never ends: JSON's start, then spaces for as long as the client reads."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.end_headers()
    handler.wfile.write(b'{"count": 1, "next": null, "results": [')
    chunk = b" " * 65536
    try:
        while True:
            handler.wfile.write(chunk)
    except OSError:
        return


def stalled(seconds: float) -> Callable[[BaseHTTPRequestHandler], None]:
    """An answer whose headers come after ``seconds`` (the client has given up by then)."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        time.sleep(seconds)
        try:
            handler.send_response(200)
            handler.end_headers()
        except OSError:
            return

    return answer
