"""known_hosts files read once per process, not once per connection.

paramiko's ``SSHClient.load_host_keys`` parses a whole known_hosts file (every key decoded) for every client, and
its lookup scans every entry: with one line per device, each connection costs O(devices) and a run over a fabric
O(devices²) (a 2,000-device run spent most of its CPU there). ``trust_host`` parses each file once (again when it
changes on disk), indexes its plain host names, and hands a client only the keys listed for the host it is about
to connect to; hashed entries (``|1|salt|hash``) are matched the way OpenSSH does, one by one. A client that
loads whole files itself (netmiko, which napalm's NX-OS driver uses for SCP) is given ``narrowed_file``: a file
of only the keys listed for its host, so it too parses a line or two instead of the fabric's.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field

import paramiko

SYSTEM_FILE = "~/.ssh/known_hosts"


@dataclass
class _Parsed:
    stamp: tuple[int, int, int]  # (inode, size, mtime_ns): the file changed when this does
    plain: dict[str, list[tuple[str, paramiko.PKey]]] = field(default_factory=dict)
    hashed: list[paramiko.hostkeys.HostKeyEntry] = field(default_factory=list)


_lock = threading.Lock()
_files: dict[str, _Parsed] = {}


def _parse(path: str, stamp: tuple[int, int, int]) -> _Parsed:
    parsed = _Parsed(stamp)
    for entry in paramiko.HostKeys(path)._entries:  # paramiko's own parser: same grammar, same key types
        if entry.key is None:
            continue
        for name in entry.hostnames:
            if name.startswith("|1|"):
                parsed.hashed.append(entry)
            else:
                parsed.plain.setdefault(name, []).append((entry.key.get_name(), entry.key))
    return parsed


def _load(path: str) -> _Parsed:
    """The parsed file (OSError when it cannot be read)."""
    st = os.stat(path)
    stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
    with _lock:  # held while parsing: a hundred threads connecting at once parse the file once, not a hundred times
        cached = _files.get(path)
        if cached is None or cached.stamp != stamp:
            cached = _files[path] = _parse(path, stamp)
        return cached


def keys_for(path: str, name: str) -> list[tuple[str, paramiko.PKey]]:
    """The (key type, key) pairs a known_hosts file lists for ``name`` (``host`` or ``[host]:port``)."""
    parsed = _load(os.path.expanduser(path))
    found = list(parsed.plain.get(name, ()))
    if parsed.hashed:
        matcher = paramiko.HostKeys()
        found += [(e.key.get_name(), e.key) for e in parsed.hashed if matcher._hostname_matches(name, e)]
    return found


def host_port_name(host: str, port: int) -> str:
    """How known_hosts names ``host:port`` (OpenSSH: the bare host on port 22)."""
    return host if port == 22 else f"[{host}]:{port}"


def _listed(name: str, known_hosts: str | None) -> list[tuple[str, paramiko.PKey]]:
    """The keys the user's ``~/.ssh/known_hosts`` (a missing one is no error) and ``known_hosts`` (OSError when it
    cannot be read) list for ``name``."""
    try:
        found = keys_for(SYSTEM_FILE, name)
    except OSError:
        found = []
    if known_hosts:
        found += keys_for(known_hosts, name)
    return found


def trust_host(client: paramiko.SSHClient, host: str, port: int, known_hosts: str | None) -> None:
    """Give ``client`` the keys the user's ``~/.ssh/known_hosts`` and ``known_hosts`` list for ``host:port``.
    A missing user file is no error; an unreadable ``known_hosts`` raises OSError."""
    name = host_port_name(host, port)
    keys = client.get_host_keys()
    for keytype, key in _listed(name, known_hosts):
        keys.add(name, keytype, key)


_narrowed: list[str] = []  # the process's private directory of narrowed files, once made


def narrowed_file(host: str, port: int, known_hosts: str | None) -> str:
    """A known_hosts file that lists only the keys the user's file and ``known_hosts`` list for ``host:port``, in a
    private directory of this process (removed at exit); files of the same content are written once. A
    ``known_hosts`` that cannot be read lists nothing here, as netmiko skips a missing ``alt_key_file``: the host's
    key is then unknown and refused."""
    name = host_port_name(host, port)
    try:
        keys = _listed(name, known_hosts)
    except OSError:
        keys = []
    return _private_file("".join(f"{name} {keytype} {key.get_base64()}\n" for keytype, key in keys))


def ssh_port_config(host: str, port: int) -> str:
    """An ssh_config file that sends SSH to ``host`` to ``port``, in the same private directory: netmiko reads
    ``Port`` from its ``ssh_config_file`` when it was asked for port 22 ([V] netmiko 4.x
    ``BaseConnection._use_ssh_config``), which is how NX-OS's SCP reaches a device whose SSH is not on 22 (napalm
    5.2's ``nxos.py`` sets netmiko's port to 22 whatever it is given)."""
    return _private_file(f"Host {host}\n    HostName {host}\n    Port {int(port)}\n")


def _private_file(text: str) -> str:
    """A file of ``text`` in this process's private directory (0700, removed at exit), written once per content."""
    with _lock:
        if not _narrowed:
            where = tempfile.mkdtemp(prefix="fabconf-known-hosts-")  # 0700
            atexit.register(shutil.rmtree, where, True)
            _narrowed.append(where)
        path = os.path.join(_narrowed[0], hashlib.sha256(text.encode()).hexdigest()[:32])
        if not os.path.exists(path):
            with tempfile.NamedTemporaryFile("w", dir=_narrowed[0], delete=False) as out:
                out.write(text)
            os.replace(out.name, path)
    return path
