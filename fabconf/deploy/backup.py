"""Backups of running configurations: one deterministic file per device, secrets masked, volatile lines out.

The same device state always gives the same bytes, so a directory of backups committed to git is a history
of the fabric in which every commit is a real change:
- volatile lines are dropped: timestamps (``!Time:``, NX-OS's ``!Running configuration last done at``, EOS's
  ``! Last configuration change``, any comment carrying a date or a time of day), ``generated`` comments,
  ``uptime`` lines;
- secrets are masked: every password fabconf handed out (``REDACTOR``) and the values of ``secret``,
  ``password``, ``key`` settings (hashes included) on the CLI and in YAML documents;
- YAML documents (the NVUE tree, the host NIC state) are written in block style with sorted keys, one setting
  per line; CLI text keeps the device's own order (the order it prints its configuration in).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

import yaml

from fabconf.deploy.credentials import REDACTOR
from fabconf.platforms import Candidate
from fabconf.private import private_dir, write_private

MASK = "***"
VOLATILE = re.compile(
    r"^\s*(?:[!#].*\b(?:time:|last done at|last configuration change|last updated|config saved|generated|uptime)"
    r"|[!#].*(?:\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\b\d\d:\d\d:\d\d\b)"  # a comment carrying a date or a time
    r"|uptime\b|last-?(?:change|modified)\b)",
    re.IGNORECASE,
)
# CLI: `username admin secret sha512 $6$...`, `enable password 5 $5$...`, `snmp-server community X`, `key 7 X`,
# `ip ospf message-digest-key 1 md5 7 X` (key id, algorithm and encryption type before the key itself)
CLI_SECRET = re.compile(
    r"(?P<head>\b(?:secret|password|community|key(?:-string)?)\s+(?:(?:sha\d*|md5|[0-9]{1,3})\s+){0,3})"
    r"(?P<value>\S+)",
    re.IGNORECASE,
)
# SNMPv3 users: `snmp-server user U [G v3 [localized ID]] auth {md5|sha...} KEY [priv [{des|aes...}] KEY]`
# ([3P] Cisco Nexus 5000 NX-OS configuration guide, "Configuring SNMP Users": auth {md5 | sha} passphrase
# [priv [aes-128] passphrase] [localizedkey]; [U] the EOS form, auth ALGORITHM KEY priv {des|aes|aes192|aes256}
# KEY, from the EOS manual's SNMP chapter, not checked against a device's running-config)
SNMP_SECRET = re.compile(
    r"(?P<head>\b(?:auth\s+(?:md5|sha[\w-]*)|priv(?:\s+(?:3?des|aes)[\w-]*)?)\s+)(?P<value>\S+)", re.IGNORECASE
)
YAML_SECRET = re.compile(
    r"(?P<head>^\s*(?:-\s+)?['\"]?[\w-]*(?:password|secret|passphrase|token|key)['\"]?:\s+)(?P<value>\S.*)$"
)


def volatile(line: str) -> bool:
    return bool(VOLATILE.search(line))


def mask(text: str, candidate: Candidate) -> str:
    """Every known password, and the values of secret settings, as ``***``."""
    text = REDACTOR(text)
    pattern = CLI_SECRET if candidate is Candidate.CLI else YAML_SECRET
    out = []
    for line in text.splitlines():
        line = pattern.sub(lambda m: m.group("head") + MASK, line)
        if candidate is Candidate.CLI and re.match(r"\s*snmp-server\s+user\b", line, re.IGNORECASE):
            line = SNMP_SECRET.sub(lambda m: m.group("head") + MASK, line)
        out.append(line)
    return "\n".join(out)


def strip_volatile(text: str) -> str:
    kept = [line.rstrip() for line in text.splitlines() if not volatile(line)]
    return "\n".join(kept) + "\n" if kept else ""


class _Dumper(yaml.SafeDumper):
    """Block style; multi-line strings (the NCCL file) as literal blocks, one line of the file per line."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _str)


def canonical(text: str, candidate: Candidate) -> str:
    """The backup form of a running configuration (see the module's docstring)."""
    text = strip_volatile(text)
    if candidate is not Candidate.CLI:
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError:
            doc = None
        if isinstance(doc, (dict, list)):
            head = [line for line in text.splitlines() if line.startswith("#")]
            body = yaml.dump(doc, Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=1000)
            text = "\n".join([*head, body.rstrip("\n")])
    text = mask(text, candidate).strip("\n")
    return text + "\n" if text else ""


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory and a rename: a reader sees
    the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def write_backup(path: Path, text: str) -> bool:
    """Write the backup unless the file already holds exactly ``text``; True when the file changed. Backups are
    the operator's alone: the directory 0700 (refused when another user's or writable by others), each file
    0600 from its creation (``fabconf.private.write_private``); an older backup others could read is narrowed."""
    private_dir(path.parent, tighten=True)
    if path.is_file() and not path.is_symlink() and path.read_text(encoding="utf-8") == text:
        if stat.S_IMODE(path.stat().st_mode) & 0o077:
            os.chmod(path, 0o600)
        return False
    write_private(path, text)
    return True


def read_previous(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None


def load_yaml(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None
