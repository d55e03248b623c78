"""How fabconf authenticates the devices it talks to: TLS certificates (eAPI, NX-API, NVUE REST) and SSH host
keys (GPU hosts, NVUE's ``nv`` CLI, NX-OS's SCP). Verification is ON by default; turning it off is explicit.

- **TLS**: the device certificate must chain to ``ca_file`` (a PEM bundle) or, without one, to the system's
  trust store, and name the address fabconf connects to. Per device, ``connection_options.<section>.extras.
  ca_file`` wins over ``FABCONF_CA_FILE`` only with ``--allow-inventory-transport`` (``inventory_transport``).
- **SSH**: the host key must be listed in ``known_hosts`` (``extras.known_hosts`` where allowed, else
  ``FABCONF_KNOWN_HOSTS``, else ``~/.ssh/known_hosts`` and the system file); an unknown or changed key is
  refused. Record keys with ``ssh-keyscan`` after checking their fingerprints, as with any SSH client (the lab
  writes its own file: ``STATE/known_hosts``).
- ``insecure`` (``--insecure``, ``FABCONF_INSECURE=1``) skips both checks: for a first contact in a lab only.
  The CLI warns on stderr whenever it is on.

What each driver is given: napalm's EOS driver an ``ssl.SSLContext`` (pyeapi's ``context``; without one pyeapi
does not verify at all); napalm's NX-OS driver ``ssl_verify`` (requests' ``verify``: the CA bundle or True) and
netmiko's ``ssh_strict``/``alt_key_file`` for its SCP (and ``ssh_config_file`` for its port); fabconf's Cumulus
driver ``ca_file``/``verify`` and ``ssh_known_hosts``; fabconf's Linux driver ``ssh_strict`` and ``known_hosts``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ssl  # imported when a context is made: the parsers and `validate` need only the settings (issue 42)

INSECURE_WARNING = (
    "warning: --insecure: TLS certificates and SSH host keys are NOT verified; anyone on the path can "
    "impersonate a device and read its credentials"
)


@dataclass(frozen=True)
class Trust:
    insecure: bool = False
    ca_file: str | None = None  # PEM bundle; None: the system trust store
    known_hosts: str | None = None  # None: ~/.ssh/known_hosts (and the system file)
    # --allow-inventory-transport (command line only, never the environment): the inventory's weakening
    # connection settings are honoured (fabconf.drivers.inventory_transport)
    inventory_transport: bool = False

    @classmethod
    def from_env(cls, insecure: bool = False, inventory_transport: bool = False) -> Trust:
        return cls(
            insecure=insecure or os.environ.get("FABCONF_INSECURE", "") not in ("", "0"),
            ca_file=os.environ.get("FABCONF_CA_FILE") or None,
            known_hosts=os.environ.get("FABCONF_KNOWN_HOSTS") or None,
            inventory_transport=inventory_transport,
        )

    def for_device(self, extras: dict[str, Any]) -> Trust:
        """A device's own ``ca_file`` / ``known_hosts`` (connection_options extras) win."""
        return replace(
            self,
            ca_file=extras.get("ca_file") or self.ca_file,
            known_hosts=extras.get("known_hosts") or extras.get("ssh_known_hosts") or self.known_hosts,
        )

    def ssl_context(self) -> ssl.SSLContext:
        """The run's context for these settings, made once (``shared_context``)."""
        return shared_context("napalm", self.ca_file, not self.insecure, _napalm_context)

    def napalm_args(self, driver: str, host: str, ssh_port: int = 22) -> dict[str, Any]:
        """optional_args for napalm's ``eos`` or ``nxos`` driver. netmiko (NX-OS's SCP) parses every known_hosts
        file it is given on each connection: it is given one that lists only ``host:ssh_port``'s keys from the
        user's file and ``known_hosts`` (``fabconf.drivers.known_hosts.narrowed_file``). [V] napalm 5.2's
        ``nxos.py`` sets netmiko's port to 22 whatever it is given; an ``ssh_port`` other than 22 reaches netmiko
        as an ``ssh_config_file`` naming the port (``known_hosts.ssh_port_config``)."""
        if driver == "eos":
            return {"context": self.ssl_context()}
        ssh: dict[str, Any] = {"ssh_strict": not self.insecure, "system_host_keys": False}
        if not self.insecure or ssh_port != 22:
            from fabconf.drivers import known_hosts  # imports paramiko: only device commands pay

            if not self.insecure:
                ssh.update(alt_host_keys=True, alt_key_file=known_hosts.narrowed_file(host, ssh_port, self.known_hosts))
            if ssh_port != 22:
                ssh["ssh_config_file"] = known_hosts.ssh_port_config(host, ssh_port)
        return {"ssl_verify": False if self.insecure else (self.ca_file or True), **ssh}

    def own_args(self) -> dict[str, Any]:
        """optional_args for fabconf's own drivers (Cumulus, Linux)."""
        args: dict[str, Any] = {"verify": not self.insecure, "ssh_strict": not self.insecure}
        if self.ca_file:
            args["ca_file"] = self.ca_file
        if self.known_hosts:
            args["known_hosts"] = args["ssh_known_hosts"] = self.known_hosts
        return args


_CONTEXTS: dict[tuple[Any, ...], ssl.SSLContext] = {}
_CONTEXTS_LOCK = threading.Lock()


def shared_context(
    kind: str, ca_file: str | None, verify: bool, make: Callable[[str | None, bool], ssl.SSLContext]
) -> ssl.SSLContext:
    """One TLS client context per kind (how ``make`` sets it up), CA bundle and verification, shared by every
    connection of the process that uses the same settings (issue 42): OpenSSL contexts are made for sharing
    between connections and threads, and making one is not free -- loading the system trust store takes about
    20 ms of CPU, once per device before. Nothing is weakened: each connection still verifies the chain and the
    name against the same bundle. A CA file that changed since (another inode, size or modification time) gets
    a new context."""
    stamp: tuple[int, ...] = ()
    if ca_file:
        try:
            st = os.stat(ca_file)
            stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError:
            return make(ca_file, verify)  # let loading it say what is wrong, as before
    key = (kind, ca_file, verify, stamp)
    with _CONTEXTS_LOCK:
        context = _CONTEXTS.get(key)
        if context is None:
            context = _CONTEXTS[key] = make(ca_file, verify)
        return context


def _napalm_context(ca_file: str | None, verify: bool) -> ssl.SSLContext:
    import ssl

    if not verify:
        return ssl._create_unverified_context()
    return ssl.create_default_context(cafile=ca_file)
