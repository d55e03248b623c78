"""One SSH login for the NAPALM-shaped drivers of ours that speak SSH (Cumulus's ``nv`` CLI, SONiC): the host key
checked against ``known_hosts`` and the user's ``~/.ssh/known_hosts`` (``fabconf.drivers.known_hosts``), an unknown
or changed key refused, and only with ``strict=False`` (``--insecure``) an unknown key accepted with a warning in
the log; password only, never a key or an agent of the operator's; every failure one ``ConnectionException`` line
without the password."""

from __future__ import annotations

import logging

import paramiko
from napalm.base.exceptions import ConnectionException

from fabconf.drivers.known_hosts import trust_host

log = logging.getLogger(__name__)


class WarnUnknownHost(paramiko.MissingHostKeyPolicy):
    """``--insecure``: an unknown host key is accepted, and said in the log."""

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        log.warning("accepting the unknown SSH host key of %s (%s)", hostname, key.get_name())


def ssh_login(
    host: str,
    port: int,
    username: str,
    password: str,
    *,
    timeout: float,
    known_hosts: str | None,
    strict: bool,
    where: str,
) -> paramiko.SSHClient:
    """A logged-in client, or ``ConnectionException`` naming ``where`` (``ssh://user@host:port``)."""

    def scrub(text: str) -> str:
        return text.replace(password, "****") if password else text

    client = paramiko.SSHClient()
    try:  # the user's ~/.ssh/known_hosts and ours, each parsed once per process
        trust_host(client, host, port, known_hosts)
    except OSError as exc:
        raise ConnectionException(f"{where}: cannot read ssh_known_hosts: {exc}") from None
    client.set_missing_host_key_policy(paramiko.RejectPolicy() if strict else WarnUnknownHost())
    try:
        client.connect(
            host,
            port,
            username=username,
            password=password,
            timeout=timeout,
            banner_timeout=timeout,
            auth_timeout=timeout,
            look_for_keys=False,
            allow_agent=False,
        )
    except paramiko.AuthenticationException:
        client.close()
        raise ConnectionException(f"{where}: the switch refused the credentials of {username!r}") from None
    except paramiko.BadHostKeyException as exc:
        client.close()
        raise ConnectionException(f"{where}: the SSH host key does not match known_hosts ({exc})") from None
    except (paramiko.SSHException, OSError, EOFError) as exc:
        client.close()
        reason = "timed out" if isinstance(exc, TimeoutError) else str(exc) or type(exc).__name__
        raise ConnectionException(scrub(f"{where}: cannot open an SSH session: {reason}")) from None
    return client
