"""Issue #43, reproduced: an inventory that gives leaf3 (eAPI) plain HTTP, pointed at an impostor listening on
127.0.0.1, "validated" and ``fabconf diff --limit leaf3`` sent the fabric's credentials there. Now the run is
refused before anything is contacted (``file: path: message``, exit 1) unless the operator passes
``--allow-inventory-transport``, and then each affected device is announced on stderr."""

from __future__ import annotations

import contextlib
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from fabconf.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
PASSWORD = "s3cret-fabric-pw"
SETTING = "leaf3.connection_options.napalm.extras.optional_args.transport"


class Impostor:
    """A TCP listener that counts connections and keeps what they sent (the credentials, in plain HTTP)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.received = b""
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    self.received += conn.recv(65536)

    def close(self) -> None:
        with contextlib.suppress(OSError):  # wakes the blocked accept(): the thread ends, as a forking test needs
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(5)


@pytest.fixture
def impostor() -> Iterator[Impostor]:
    server = Impostor()
    yield server
    server.close()


def _inventory(tmp_path: Path, port: int) -> Path:
    target = tmp_path / "inventory"
    shutil.copytree(ROOT / "inventory", target)
    hosts = yaml.safe_load((target / "hosts.yaml").read_text())
    hosts["leaf3"]["hostname"] = "127.0.0.1"
    hosts["leaf3"]["connection_options"] = {
        "napalm": {"port": port, "extras": {"optional_args": {"transport": "http", "port": port}}}
    }
    (target / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    return target


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABCONF_USERNAME", "netops")
    monkeypatch.setenv("FABCONF_PASSWORD", PASSWORD)
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    monkeypatch.setenv("FABCONF_LOCK_DIR", str(tmp_path / "locks"))
    for name in ("FABCONF_INSECURE", "FABCONF_CA_FILE", "FABCONF_KNOWN_HOSTS"):
        monkeypatch.delenv(name, raising=False)


def _diff(capsys: pytest.CaptureFixture[str], inventory: Path, *extra: str) -> tuple[int, str]:
    code = main(["diff", "-i", str(inventory), "--limit", "leaf3", "--retries", "0", "--timeout", "3", *extra])
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.usefixtures("env")
def test_plain_http_from_the_inventory_is_refused_before_any_connection(
    tmp_path: Path, impostor: Impostor, capsys: pytest.CaptureFixture[str]
) -> None:
    inventory = _inventory(tmp_path, impostor.port)
    code, text = _diff(capsys, inventory)
    assert code == 1
    assert f"{inventory / 'hosts.yaml'}: {SETTING}: transport 'http'" in text
    assert "--allow-inventory-transport" in text and "Traceback" not in text
    assert impostor.connections == 0 and PASSWORD.encode() not in impostor.received


@pytest.mark.usefixtures("env")
def test_validate_says_device_commands_refuse_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inventory = _inventory(tmp_path, 1)
    assert main(["validate", "-i", str(inventory)]) == 0
    err = capsys.readouterr().err
    assert f"hosts.yaml: {SETTING}: warning: transport 'http'" in err and "device commands refuse it" in err


@pytest.mark.usefixtures("env")
def test_the_operators_flag_allows_it_and_every_run_announces_it(
    tmp_path: Path, impostor: Impostor, capsys: pytest.CaptureFixture[str]
) -> None:
    inventory = _inventory(tmp_path, impostor.port)
    for _ in range(2):
        _code, text = _diff(capsys, inventory, "--allow-inventory-transport")
        announced = [line for line in text.splitlines() if "--allow-inventory-transport: leaf3 " in line]
        assert len(announced) == 1 and "transport 'http'" in announced[0]
    assert impostor.connections >= 2  # what the operator asked for: plain HTTP
