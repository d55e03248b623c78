"""Which errors are tried again (fabconf.deploy.transient): timeouts and dropped connections, as the libraries
raise them, and never a refusal or anything the device said on purpose."""

from __future__ import annotations

import http.client

import paramiko
import pytest
from napalm.base.exceptions import CommitError, ConnectionClosedException, ConnectionException
from pyeapi.eapilib import CommandError
from pyeapi.eapilib import ConnectionError as EapiConnectionError

from fabconf.deploy.transient import transient


def _wrapped(outer: Exception, inner: Exception) -> Exception:
    try:
        try:
            raise inner
        except Exception as exc:
            raise outer from exc
    except Exception as exc:
        return exc


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (TimeoutError("timed out"), True),
        (ConnectionResetError(104, "Connection reset by peer"), True),
        (http.client.RemoteDisconnected("Remote end closed connection without response"), True),
        (EapiConnectionError("leaf3", "Socket error during eAPI connection: timed out"), True),
        (ConnectionClosedException("gpu01: connection lost running `mlnx_qos -i x`"), True),
        (paramiko.SSHException("Channel closed."), True),
        (_wrapped(ConnectionException("leaf4: NX-API request failed"), TimeoutError("read")), True),
        (EapiConnectionError("leaf3", "Unauthorized. Authentication failed"), False),
        (paramiko.AuthenticationException("Authentication failed."), False),
        (ConnectionRefusedError(111, "Connection refused"), False),
        (CommitError("% Invalid input (at token 1: 'flibble')"), False),
        (CommandError(1002, "CLI command 3 of 4 'bgp flibble' failed: invalid command"), False),
        (_wrapped(ConnectionException("login failed"), ConnectionRefusedError(111, "Connection refused")), False),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, Exception) else str(v),
)
def test_transient(error: Exception, expected: bool) -> None:
    assert transient(error) is expected
