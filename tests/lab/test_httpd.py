"""The lab's HTTP(S) service: a client that hangs up in the middle of a reply is routine for a lab (a
dropped commit, a killed fabconf) and leaves no traceback on stderr."""

from __future__ import annotations

import base64
import socket
import struct
import time

import pytest
from network import free_network

from fabconf_lab.faults import Faults
from fabconf_lab.httpd import HttpDevice, HttpReply, HttpRequest, HttpsService


class Big(HttpDevice):
    name, username, password = "big", "u", "p"

    def __init__(self) -> None:
        self.faults = Faults()
        self.served = 0

    def handle_http(self, request: HttpRequest) -> HttpReply:
        self.served += 1
        return HttpReply(200, b"x" * 20_000_000, "text/plain")


def test_a_client_hanging_up_mid_reply_prints_no_traceback(capfd: pytest.CaptureFixture[str]) -> None:
    device = Big()
    address = free_network().replace("0.0/16", "0.1")
    service = HttpsService(device, address, 0, None)
    service.start()
    try:
        auth = base64.b64encode(b"u:p").decode()
        for _ in range(3):
            sock = socket.create_connection((address, service.port))
            sock.sendall(f"GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {auth}\r\n\r\n".encode())
            sock.recv(1024)  # the reply has started
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()  # reset: the server's next write fails
        deadline = time.monotonic() + 5
        while device.served < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
    finally:
        service.stop()
    assert device.served == 3
    assert "Traceback" not in capfd.readouterr().err
