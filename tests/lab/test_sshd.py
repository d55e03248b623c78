"""The generic lab SSH server, driven by real clients (paramiko, netmiko, the scp package, OpenSSH scp)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest
import scp
from netmiko import ConnectHandler

from fabconf_lab.faults import Faults
from fabconf_lab.sshd import CloseSession, SessionContext, ShellSession, SshService

ADDR = "127.12.1.1"
USER, PASSWORD = "admin", "lab-pass"


class EchoDevice:
    """A tiny device: `say X` prints X, `fail` exits 3, `commit` honours drop-on-commit."""

    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self.files: dict[str, bytes] = {}

    def handle(self, command: str) -> tuple[str, int]:
        if command.startswith("say "):
            return command[4:] + "\n", 0
        if command == "fail":
            return "failed\n", 3
        if command == "commit":
            self.faults.on_commit()
            return "committed\n", 0
        if command == "boom":
            raise RuntimeError("a bug in the simulator")
        if command == "lines":
            return "".join(f"line {i}\n" for i in range(2000)), 0
        return f"unknown: {command}\n", 127

    def sink(self, path: str, data: bytes) -> str | None:
        if not path.startswith("bootflash:"):
            return f"{path}: No such file or directory"
        self.files[path] = data
        return None


@pytest.fixture
def device(tmp_path: Path) -> Iterator[tuple[SshService, EchoDevice]]:
    faults = Faults()
    dev = EchoDevice(faults)
    svc = SshService(
        "sw1",
        ADDR,
        0,
        username=USER,
        password=PASSWORD,
        handler=dev.handle,
        prompt="sw1# ",
        faults=faults,
        state_dir=tmp_path,
        scp_sink=dev.sink,
    )
    svc.start()
    try:
        yield svc, dev
    finally:
        svc.stop()


def _client(svc: SshService, password: str = PASSWORD, timeout: float = 5) -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect(
        svc.address,
        svc.port,
        USER,
        password,
        look_for_keys=False,
        allow_agent=False,
        timeout=timeout,
        auth_timeout=timeout,
        banner_timeout=timeout,
    )
    return client


def _exec(client: paramiko.SSHClient, command: str, timeout: float = 5) -> tuple[str, int]:
    _stdin, stdout, _stderr = client.exec_command(command, timeout=timeout)
    out = stdout.read().decode()
    return out, stdout.channel.recv_exit_status()


def _shell(client: paramiko.SSHClient, timeout: float = 5) -> tuple[paramiko.Channel, bytes]:
    """An interactive shell channel, read up to its first prompt (banner and prompt returned)."""
    chan = client.invoke_shell()
    chan.settimeout(timeout)
    buf = b""
    while not buf.endswith(b"sw1# "):
        buf += chan.recv(1024)
    return chan, buf


def test_exec_output_and_exit_status(device: tuple[SshService, EchoDevice]) -> None:
    svc, _ = device
    with _client(svc) as client:
        assert _exec(client, "say hello") == ("hello\n", 0)
        assert _exec(client, "fail") == ("failed\n", 3)
        out, rc = _exec(client, "lines")
        assert rc == 0 and out.count("\n") == 2000 and out.endswith("line 1999\n")
    assert ("exec", "say hello") in svc.commands


def test_host_key_persists_across_restarts(tmp_path: Path) -> None:
    def make() -> SshService:
        return SshService(
            "k1", ADDR, 0, username=USER, password=PASSWORD, handler=lambda c: ("", 0), state_dir=tmp_path
        )

    first, second = make(), make()
    assert first.host_key.get_fingerprint() == second.host_key.get_fingerprint()
    assert (tmp_path / "ssh" / "k1_host_ecdsa_key").exists()
    svc = make()
    svc.start()
    try:
        with _client(svc) as client:
            assert client.get_transport().get_remote_server_key() == first.host_key
    finally:
        svc.stop()


def test_wrong_password_and_auth_refuse_fault(device: tuple[SshService, EchoDevice]) -> None:
    svc, _ = device
    with pytest.raises(paramiko.AuthenticationException):
        _client(svc, password="nope")
    svc.faults.set("auth-refuse")
    with pytest.raises(paramiko.AuthenticationException):
        _client(svc)
    svc.faults.clear()
    with _client(svc) as client:
        assert _exec(client, "say back")[0] == "back\n"


def test_a_simulator_bug_ends_its_channel_at_once_and_is_reported(
    device: tuple[SshService, EchoDevice], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A handler that raises (a lab bug) ends its channel with no exit status, as a killed command's ends, instead of
    leaving the client to wait out its timeout; the error goes to the thread's exception hook (``lab.log``), and the
    connection serves the next command."""
    svc, _ = device
    seen: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.exc_value))
    with _client(svc) as client:
        t0 = time.monotonic()
        assert _exec(client, "boom", timeout=30) == ("", -1)
        assert time.monotonic() - t0 < 10, "the client waited for a channel the crash left open"
        assert _exec(client, "say after") == ("after\n", 0)
        chan, buf = _shell(client, timeout=30)
        chan.sendall(b"boom\n")
        while chunk := chan.recv(1024):  # b"" once the channel is closed
            buf += chunk
        assert chan.closed or chan.eof_received
    deadline = time.monotonic() + 5
    while len(seen) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [type(e) for e in seen] == [RuntimeError, RuntimeError]


def test_interactive_shell_prompt_echo_and_exit(device: tuple[SshService, EchoDevice]) -> None:
    svc, _ = device
    with _client(svc) as client:
        chan, buf = _shell(client)
        chan.sendall(b"say wor\x7fld\r\n")
        while buf.count(b"sw1# ") < 2:
            buf += chan.recv(1024)
        text = buf.decode()
        assert "say wor\x08 \x08ld\r\n" in text  # echo, with the backspace edited on screen
        assert "\r\nwold\r\nsw1# " in text.replace("say wor\x08 \x08ld", "")
        chan.sendall(b"exit\n")
        while not chan.exit_status_ready():
            chan.recv(1024)
        assert chan.recv_exit_status() == 0


def test_session_factory_keeps_state_per_channel_and_heredoc_continuation() -> None:
    class ModeSession(ShellSession):
        def __init__(self, ctx: SessionContext) -> None:
            self.ctx = ctx
            self.config = False

        def prompt(self) -> str:
            return "sw2(config)# " if self.config else "sw2# "

        def needs_more(self, text: str) -> bool:
            return text.startswith("block") and not text.endswith("\nend")

        def handle(self, command: str) -> tuple[str, int]:
            if command == "configure terminal":
                self.config = True
                return "", 0
            if command == "end":
                self.config = False
                return "", 0
            if command == "exit":
                raise CloseSession("", 0)
            if command.startswith("block"):
                return f"{len(command.splitlines())} lines\n", 0
            return f"pty={self.ctx.pty} interactive={self.ctx.interactive}\n", 0

    svc = SshService("sw2", ADDR, 0, username=USER, password=PASSWORD, session_factory=ModeSession)
    svc.start()
    try:
        conn = ConnectHandler(
            device_type="cisco_nxos", host=ADDR, port=svc.port, username=USER, password=PASSWORD, fast_cli=False
        )
        try:
            assert conn.find_prompt() == "sw2#"
            conn.write_channel("configure terminal\n")
            assert "sw2(config)#" in conn.read_until_pattern(r"\(config\)#")
            conn.write_channel("end\n")
            conn.read_until_pattern(r"sw2# ")
            assert "pty=True interactive=True" in conn.send_command("whoami")
            out = conn.send_command_timing("block\nx\ny\nend", strip_command=False)
            assert "> " in out and "4 lines" in out
        finally:
            conn.disconnect()
        with _client(svc) as client:
            assert _exec(client, "who") == ("pty=False interactive=False\n", 0)
    finally:
        svc.stop()


def test_netmiko_linux_send_command() -> None:
    # a non-root "$" prompt: with "#" netmiko's linux cleanup waits for a prompt after "exit" (as on a real root shell)
    dev = EchoDevice(Faults())
    svc = SshService("h1", ADDR, 0, username=USER, password=PASSWORD, handler=dev.handle, prompt="admin@h1:~$ ")
    svc.start()
    try:
        start = time.monotonic()
        conn = ConnectHandler(device_type="linux", host=ADDR, port=svc.port, username=USER, password=PASSWORD)
        try:
            assert conn.find_prompt() == "admin@h1:~$"
            assert str(conn.send_command("say via netmiko")).strip() == "via netmiko"
            out = str(conn.send_command("lines", read_timeout=20))
            assert out.count("line ") == 2000
        finally:
            conn.disconnect()
        assert time.monotonic() - start < 5
    finally:
        svc.stop()


def test_delay_and_hang_faults(device: tuple[SshService, EchoDevice]) -> None:
    svc, _ = device
    with _client(svc) as client:
        svc.faults.set("delay", "0.6")
        start = time.monotonic()
        assert _exec(client, "say slow")[0] == "slow\n"
        assert time.monotonic() - start >= 0.6
        svc.faults.clear()
        svc.faults.set("hang")
        _stdin, stdout, _ = client.exec_command("say stuck", timeout=5)
        stdout.channel.settimeout(0.8)
        with pytest.raises(socket.timeout):
            stdout.channel.recv(10)
        threading.Timer(0.2, svc.faults.clear).start()
        stdout.channel.settimeout(5)
        assert stdout.read() == b"stuck\n"


def test_drop_connection_on_commit(device: tuple[SshService, EchoDevice]) -> None:
    svc, _ = device
    svc.faults.set("drop-on-commit")
    with _client(svc) as client:
        _stdin, stdout, _ = client.exec_command("commit", timeout=5)
        assert stdout.read() == b""
        deadline = time.monotonic() + 5
        while client.get_transport().is_active() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not client.get_transport().is_active()
    svc.faults.clear()
    with _client(svc) as client:
        assert _exec(client, "commit") == ("committed\n", 0)


def test_scp_sink_with_scp_package(device: tuple[SshService, EchoDevice], tmp_path: Path) -> None:
    svc, dev = device
    src = tmp_path / "candidate_config.txt"
    payload = b"hostname sw1\n" + os.urandom(200_000)
    src.write_bytes(payload)
    with _client(svc) as client:
        with scp.SCPClient(client.get_transport()) as conn:
            conn.put(str(src), "bootflash:/candidate_config.txt")
        assert dev.files["bootflash:/candidate_config.txt"] == payload
        with scp.SCPClient(client.get_transport()) as conn:
            conn.put(str(src), "bootflash:")
        assert dev.files["bootflash:candidate_config.txt"] == payload
        with pytest.raises(scp.SCPException, match="No such file"), scp.SCPClient(client.get_transport()) as conn:
            conn.put(str(src), "volatile:/x.txt")
    assert ("scp", "scp -t bootflash:/candidate_config.txt") in svc.commands


@pytest.mark.skipif(shutil.which("scp") is None, reason="OpenSSH scp client not installed")
def test_scp_sink_with_openssh_client(device: tuple[SshService, EchoDevice], tmp_path: Path) -> None:
    svc, dev = device
    src = tmp_path / "cfg.txt"
    src.write_bytes(b"feature nxapi\n")
    askpass = tmp_path / "askpass.sh"
    askpass.write_text(f"#!/bin/sh\necho {PASSWORD}\n")
    askpass.chmod(0o700)
    env = dict(os.environ, SSH_ASKPASS=str(askpass), SSH_ASKPASS_REQUIRE="force", DISPLAY=":0")
    cmd = [
        "scp",
        "-O",
        "-P",
        str(svc.port),
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        f"UserKnownHostsFile={tmp_path / 'known_hosts'}",
        "-o",
        "PubkeyAuthentication=no",
        "-o",
        "BatchMode=no",
        str(src),
        f"{USER}@{ADDR}:bootflash:/cfg.txt",
    ]
    done = subprocess.run(cmd, env=env, capture_output=True, timeout=30, stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert dev.files["bootflash:/cfg.txt"] == b"feature nxapi\n"


def test_disconnect_all_keeps_listening(device: tuple[SshService, EchoDevice]) -> None:
    svc, _ = device
    client = _client(svc)
    shell = client.invoke_shell()
    svc.disconnect_all()
    deadline = time.monotonic() + 5
    while client.get_transport().is_active() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not client.get_transport().is_active()
    assert shell.closed or shell.exit_status_ready() or shell.eof_received
    client.close()
    with _client(svc) as again:
        assert _exec(again, "say up") == ("up\n", 0)
