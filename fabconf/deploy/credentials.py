"""Credentials: from the environment, the OS keyring or a credentials command, never from inventory files.

Resolution for a device, first match wins:
1. ``FABCONF_CREDENTIALS_COMMAND``: run (no shell) with ``FABCONF_DEVICE``, ``FABCONF_PLATFORM`` and
   ``FABCONF_GROUPS`` in its environment; it prints ``{"username": ..., "password": ...}`` as JSON.
   Use it to fetch from a vault or a password manager.
2. Per-group variables ``FABCONF_<GROUP>_USERNAME`` / ``FABCONF_<GROUP>_PASSWORD`` for the device's groups
   in inventory order (group name upper-cased, other characters as ``_``: ``n9k-9364d`` -> ``N9K_9364D``).
3. The OS keyring, when ``FABCONF_KEYRING`` names a keyring service (e.g. ``fabconf``): for each group in
   inventory order with a username (``FABCONF_<GROUP>_USERNAME``), the password stored as
   ``(service, "<group>:<username>")``; then ``(service, FABCONF_USERNAME)``. Store one with
   ``keyring set fabconf leaves:netops`` (the ``keyring`` library's CLI; any backend it supports: Secret
   Service, macOS Keychain, Windows Credential Locker...).
4. ``FABCONF_USERNAME`` / ``FABCONF_PASSWORD``.

Every password handed out is registered with the process-wide ``REDACTOR`` so that diffs, logs, reports
and error messages can be scrubbed of it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabconf.errors import FabconfError

if TYPE_CHECKING:  # for the annotations only: the audit log (and so every command's start) needs no model
    from fabconf.compile.model import Device


class CredentialsError(FabconfError):
    pass


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str

    def __repr__(self) -> str:
        return f"Credentials(username={self.username!r}, password='***')"


class Redactor:
    """Replaces every known secret in text with ``***``."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._lock = threading.Lock()

    def add(self, secret: str) -> None:
        if secret and len(secret) >= 3:
            with self._lock:
                self._secrets.add(secret)

    def __call__(self, text: str) -> str:
        with self._lock:
            secrets = sorted(self._secrets, key=len, reverse=True)
        for s in secrets:
            text = text.replace(s, "***")
        return text


REDACTOR = Redactor()


def _env_name(group: str) -> str:
    return re.sub(r"[^A-Z0-9]", "_", group.upper())


def resolve(device: Device, environ: dict[str, str] | None = None) -> Credentials:
    env = os.environ if environ is None else environ
    command = env.get("FABCONF_CREDENTIALS_COMMAND")
    creds = _from_command(command, device, env) if command else _from_environment(device, env)
    REDACTOR.add(creds.password)
    return creds


def _from_environment(device: Device, env: os._Environ[str] | dict[str, str]) -> Credentials:
    """Per-group variables in inventory order, the keyring, then FABCONF_USERNAME / FABCONF_PASSWORD."""
    for group in device.groups:
        user = env.get(f"FABCONF_{_env_name(group)}_USERNAME")
        pw = env.get(f"FABCONF_{_env_name(group)}_PASSWORD")
        if user and pw:
            return Credentials(user, pw)
    service = env.get("FABCONF_KEYRING")
    if service:
        found = _from_keyring(service, device, env)
        if found is not None:
            return found
    user, pw = env.get("FABCONF_USERNAME"), env.get("FABCONF_PASSWORD")
    if not user or not pw:
        raise CredentialsError(
            f"{device.name}: no credentials: set FABCONF_USERNAME and FABCONF_PASSWORD "
            "(or FABCONF_<GROUP>_USERNAME/_PASSWORD, FABCONF_KEYRING, or FABCONF_CREDENTIALS_COMMAND)"
        )
    return Credentials(user, pw)


def _from_keyring(service: str, device: Device, env: os._Environ[str] | dict[str, str]) -> Credentials | None:
    """The first password the keyring holds: per group ``"<group>:<username>"``, then the default username."""
    import keyring  # here: only a run that asks for the keyring pays for loading its backends
    from keyring.errors import KeyringError

    wanted = [
        (user, f"{group}:{user}")
        for group in device.groups
        if (user := env.get(f"FABCONF_{_env_name(group)}_USERNAME"))
    ]
    if env.get("FABCONF_USERNAME"):
        wanted.append((env["FABCONF_USERNAME"], env["FABCONF_USERNAME"]))
    for user, entry in wanted:
        try:
            password = keyring.get_password(service, entry)
        except KeyringError as exc:
            raise CredentialsError(f"{device.name}: the keyring could not be read: {exc}") from None
        if password:
            return Credentials(user, password)
    return None


def _from_command(command: str, device: Device, env: os._Environ[str] | dict[str, str]) -> Credentials:
    child_env = dict(env)
    child_env.update(
        FABCONF_DEVICE=device.name, FABCONF_PLATFORM=device.platform, FABCONF_GROUPS=",".join(device.groups)
    )
    try:
        proc = subprocess.run(
            shlex.split(command), capture_output=True, text=True, env=child_env, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CredentialsError(f"{device.name}: credentials command failed: {exc}") from None
    if proc.returncode != 0:
        raise CredentialsError(f"{device.name}: credentials command exited {proc.returncode}")
    try:
        data = json.loads(proc.stdout)
        return Credentials(str(data["username"]), str(data["password"]))
    except (ValueError, KeyError, TypeError):
        raise CredentialsError(
            f"{device.name}: credentials command must print JSON with username and password"
        ) from None
