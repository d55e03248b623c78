"""The SSH side of fabconf's linux driver: ONE paramiko connection per host, commands as exec channels on it.

``HostShell.run(command)`` runs one command (stdout, stderr and exit status kept apart). ``HostShell.batch``
runs many read-only commands in ONE exec channel, each framed by marker lines carrying its exit status, so
that reading a host's whole state costs one round trip instead of twenty; ``HostShell.run_all`` does the same
for changing commands and stops at the first that fails (a commit's dozens of writes in one channel: each
channel costs CPU on both ends, paramiko being pure Python above the ciphers). Errors are napalm exceptions that
name the host, the command and an excerpt of what came back.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import paramiko
from napalm.base.exceptions import (
    CommandErrorException,
    CommandTimeoutException,
    ConnectAuthError,
    ConnectionClosedException,
    ConnectionException,
)

from fabconf.drivers.known_hosts import trust_host
from fabconf.platform.linux.parse import ParseError, check_clean, excerpt

T = TypeVar("T")
_FRAME_END = re.compile(r"@@[0-9a-f]+:\d+:(\d+)\n")  # a framed command's last line: @@NONCE:I:STATUS


class LinuxHostError(CommandErrorException):
    """A command on the host failed or printed something the driver cannot read."""

    def __init__(self, host: str, command: str, problem: str, output: str = "") -> None:
        self.host, self.command, self.problem = host, command.split("\n", 1)[0], problem
        self.excerpt = excerpt(output) if output else ""
        tail = f"; output: {self.excerpt}" if self.excerpt else ""
        super().__init__(f"{host}: `{self.command}` {problem}{tail}")


class HostCommandError(LinuxHostError):
    """The command exited non-zero (a tool missing, no sudo, a refused setting)."""


class HostOutputError(LinuxHostError):
    """The command's output is garbled or not in the tool's format."""


@dataclass
class Output:
    stdout: str
    stderr: str  # in a batch, stderr is merged into stdout and this is the same text
    status: int


class HostShell:
    def __init__(
        self,
        address: str,
        port: int,
        username: str,
        password: str,
        timeout: int,
        *,
        strict: bool = True,
        known_hosts: str | None = None,
    ) -> None:
        self.address, self.port, self.username, self.password = address, port, username, password
        self.timeout, self.strict, self.known_hosts = timeout, strict, known_hosts
        self.label = address  # how errors name the host; the driver sets "name (address)" once it knows the name
        self._client: paramiko.SSHClient | None = None

    # -- connection ----------------------------------------------------------------------------------
    def open(self) -> None:
        client = paramiko.SSHClient()
        try:  # the user's ~/.ssh/known_hosts and ours, each parsed once per process (fabconf.drivers.known_hosts)
            trust_host(client, self.address, self.port, self.known_hosts)
        except OSError as exc:
            raise ConnectionException(f"{self.label}: cannot read known_hosts {self.known_hosts}: {exc}") from None
        # strict: an unknown host key is refused (paramiko's RejectPolicy); a changed one always is
        client.set_missing_host_key_policy(paramiko.RejectPolicy() if self.strict else paramiko.AutoAddPolicy())
        lost = False
        try:
            client.connect(
                self.address,
                self.port,
                self.username,
                self.password,
                timeout=self.timeout,
                auth_timeout=self.timeout,
                banner_timeout=self.timeout,
                look_for_keys=False,
                allow_agent=False,
            )
        except paramiko.AuthenticationException as exc:
            client.close()
            if not _lost_while_logging_in(exc):
                raise ConnectAuthError(f"{self.label}: SSH authentication failed for {self.username}: {exc}") from None
            lost = True
        except paramiko.BadHostKeyException as exc:
            client.close()
            raise ConnectionException(f"{self.label}: the SSH host key does not match known_hosts ({exc})") from None
        except (OSError, paramiko.SSHException, EOFError) as exc:
            client.close()
            hint = " (check its key and add it to known_hosts)" if "known_hosts" in str(exc) else ""
            raise ConnectionException(f"{self.label}:{self.port}: SSH connection failed: {exc}{hint}") from None
        if lost:  # outside the except: the chain must not carry paramiko's "Authentication..." (not a refusal)
            raise ConnectionClosedException(
                f"{self.label}:{self.port}: the SSH connection was lost while logging in (closed, or no answer "
                f"within {self.timeout}s)"
            )
        self._client = client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    @property
    def transport(self) -> paramiko.Transport | None:
        return self._client.get_transport() if self._client is not None else None

    @property
    def alive(self) -> bool:
        transport = self.transport
        return bool(transport and transport.is_active())

    # -- commands ------------------------------------------------------------------------------------------
    def _exec(self, command: str) -> Output:
        if self._client is None or not self.alive:
            raise ConnectionClosedException(f"{self.label}: not connected (open() first, or the host rebooted)")
        shown = command.split("\n", 1)[0]
        try:
            _stdin, stdout, stderr = self._client.exec_command(command, timeout=self.timeout)
            out = stdout.read().decode("utf-8", "replace")
            err = stderr.read().decode("utf-8", "replace")
            status = stdout.channel.recv_exit_status()
        except TimeoutError:
            raise CommandTimeoutException(f"{self.label}: `{shown}` timed out after {self.timeout}s") from None
        except (OSError, EOFError, paramiko.SSHException) as exc:
            raise ConnectionClosedException(f"{self.label}: connection lost running `{shown}`: {exc}") from None
        if status == -1:  # paramiko's "no exit status": the channel closed before the command ended
            raise ConnectionClosedException(f"{self.label}: connection lost running `{shown}` (no exit status)")
        return Output(out, err, status)

    def run(self, command: str, *, check: bool = True) -> Output:
        result = self._exec(command)
        if check and result.status != 0:
            raise self.failure(command, result)
        return result

    def batch(self, commands: list[str]) -> list[Output]:
        """Run read-only, single-line commands in one exec; each result has stderr merged into stdout.

        [U] the login shell is assumed to be POSIX (bash/dash): ``2>&1``, ``$?`` and ``;`` lists."""
        return self._framed(commands, stop=False)

    def run_all(self, commands: list[str]) -> list[Output]:
        """Run changing, single-line commands in order in ONE exec, stopping at the first that fails, as ``run``
        one after the other would; each result has stderr merged into stdout. Returns the results of the
        commands that ran: all of them, or up to and including the first that failed (``check_all``). A lost
        connection raises, and then any of the commands may have run. [U] POSIX login shell, as ``batch``."""
        return self._framed(commands, stop=True) if commands else []

    def _framed(self, commands: list[str], *, stop: bool) -> list[Output]:
        nonce = secrets.token_hex(6)
        text = self._exec(_script(nonce, commands, stop=stop)).stdout
        out: list[Output] = []
        at = 0
        for i, command in enumerate(commands):
            begin = text.find(f"@@{nonce}:{i}\n", at)
            end = text.find(f"\n@@{nonce}:{i}:", begin) if begin >= 0 else -1
            status = _FRAME_END.match(text, end + 1) if end >= 0 else None
            if status is None:
                if stop and out and out[-1].status != 0:
                    break  # stopped at the command that failed
                what = "run" if stop else "read"
                raise HostOutputError(self.label, command, f"printed no complete result in a batched {what}", text)
            body = text[begin + len(f"@@{nonce}:{i}\n") : end]
            out.append(Output(body, body, int(status.group(1))))
            at = status.end()
        return out

    def check_all(self, commands: list[str], results: list[Output]) -> None:
        """Raise what ``run`` would have for the command ``run_all`` stopped at, if it stopped at one."""
        if results and results[-1].status != 0:
            raise self.failure(commands[len(results) - 1], results[-1])

    # -- checking results ----------------------------------------------------------------------------------
    def failure(self, command: str, result: Output) -> HostCommandError:
        text = result.stderr or result.stdout
        if result.status == 127 or "command not found" in text:
            problem = "failed: tool not found on the host (MLNX_OFED/DOCA, MFT and mlnx-tools are required)"
        elif "password is required" in text or "a terminal is required" in text:
            problem = f"failed: {self.username} needs passwordless sudo for this command"
        else:
            problem = f"failed with exit status {result.status}"
        return HostCommandError(self.label, command, problem, text)

    def parse(self, command: str, result: Output, parser: Callable[[str], T]) -> T:
        """``parser(stdout)`` of a command that must have succeeded; errors name the command."""
        if result.status != 0:
            raise self.failure(command, result)
        try:
            return parser(result.stdout)
        except ParseError as exc:
            raise HostOutputError(self.label, command, f"printed unreadable output ({exc})", result.stdout) from None

    def file(self, command: str, result: Output) -> str | None:
        """The result of ``cat FILE``: its content, or None when the file does not exist."""
        if result.status != 0 and "No such file" in result.stderr:
            return None
        return self.parse(command, result, _clean)

    def read(self, command: str, parser: Callable[[str], T]) -> T:
        return self.parse(command, self.run(command, check=False), parser)


def _script(nonce: str, commands: list[str], *, stop: bool) -> str:
    """The shell script of a batch: each command's output framed by a line ``@@NONCE:I`` before it and a line
    ``@@NONCE:I:STATUS`` after it (on a line of its own: a newline is printed first). One ``printf`` prints a
    command's end line and the next one's start line (issue 42: five commands of framing per command cost the lab's
    shell more than the reads; on a host, a process or builtin each). With ``stop`` the script exits with the
    status of the first command that fails (the next start line is printed, its end line never is)."""
    if not commands:
        return ""
    parts = [f"echo @@{nonce}:0"]
    for i, command in enumerate(commands):
        start = f"\\n@@{nonce}:{i + 1}" if i + 1 < len(commands) else ""
        if stop:
            parts.append(f"{command} 2>&1; rc=$?; printf '\\n@@{nonce}:{i}:%s{start}\\n' $rc")
            parts.append("if [ $rc -ne 0 ]; then exit $rc; fi")
        else:
            parts.append(f"{command} 2>&1; printf '\\n@@{nonce}:{i}:%s{start}\\n' $?")
    return "; ".join(parts)


def _lost_while_logging_in(exc: paramiko.AuthenticationException) -> bool:
    """paramiko reports a connection closed or silent during authentication as an authentication failure."""
    text = str(exc).lower()
    return "transport shut down" in text or "saw eof" in text or "authentication timeout" in text


def _clean(text: str) -> str:
    check_clean(text)
    return text
