"""The ``nv`` CLI over SSH, for the one thing NVUE's REST API does not document: commit-confirm.

``nv config apply REV --confirm Ns``, ``nv config apply --confirm-yes`` and ``nv config apply
--confirm-status`` exist on the CLI only (reference §1.4 and §8). One paramiko connection per driver,
opened on first use; each command is an ``exec`` request with its own exit status.

Host keys: the switch's key must be listed in ``known_hosts`` or the user's ``~/.ssh/known_hosts``; an unknown
or changed key is refused. Only with ``strict=False`` (``--insecure``) is an unknown key accepted, with a warning
in the log.
"""

from __future__ import annotations

import logging
import time

import paramiko

from fabconf.drivers.sshlogin import ssh_login
from fabconf.platform.cumulus.client import NvueConnectionLost

log = logging.getLogger(__name__)


class NvSsh:
    """Runs ``nv`` command lines on one switch."""

    def __init__(
        self,
        host: str,
        port: int,
        username: str,
        password: str,
        *,
        timeout: float,
        known_hosts: str | None = None,
        strict: bool = True,
    ) -> None:
        self.host = host
        self.port = port
        self.username = username
        self._password = password
        self.timeout = timeout
        self.known_hosts = known_hosts
        self.strict = strict
        self._client: paramiko.SSHClient | None = None

    @property
    def where(self) -> str:
        return f"ssh://{self.username}@{self.host}:{self.port}"

    def _scrub(self, text: str) -> str:
        return text.replace(self._password, "****") if self._password else text

    def connect(self) -> None:
        self.close()
        client = ssh_login(
            self.host,
            self.port,
            self.username,
            self._password,
            timeout=self.timeout,
            known_hosts=self.known_hosts,
            strict=self.strict,
            where=self.where,
        )
        self._client = client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def run(self, command: str) -> tuple[str, int]:
        """(output with stderr merged, exit status). A connection that closes before the command's exit
        status arrives raises ``NvueConnectionLost``: whether the command took effect is unknown."""
        if self._client is None or not self._active():
            self.connect()
        assert self._client is not None
        transport = self._client.get_transport()
        assert transport is not None
        try:
            channel = transport.open_session(timeout=self.timeout)
            channel.settimeout(self.timeout)
            channel.set_combine_stderr(True)
            log.debug("%s: %s", self.where, command)
            channel.exec_command(command)
            chunks: list[bytes] = []
            deadline = time.monotonic() + self.timeout
            while True:
                data = channel.recv(65536)
                if not data:
                    break
                chunks.append(data)
                if time.monotonic() > deadline:
                    raise TimeoutError
            if not channel.status_event.wait(max(0.0, deadline - time.monotonic())):
                raise TimeoutError
            status = channel.recv_exit_status()
        except TimeoutError:
            self.close()
            raise NvueConnectionLost(f"{self.where}: no answer to '{command}' within {self.timeout:g}s") from None
        except (paramiko.SSHException, OSError, EOFError) as exc:
            self.close()
            raise NvueConnectionLost(
                self._scrub(f"{self.where}: the session broke during '{command}': {exc}")
            ) from None
        output = b"".join(chunks).decode(errors="replace")
        if status == -1 or not self._active():  # closed without an exit status (e.g. dropped mid-commit)
            self.close()
            raise NvueConnectionLost(f"{self.where}: the connection closed during '{command}' without an answer")
        return output, status

    def _active(self) -> bool:
        transport = self._client.get_transport() if self._client is not None else None
        return transport is not None and transport.is_active()
