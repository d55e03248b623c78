"""What the EOS CLI refuses beyond its grammar (``fabconf_lab.cliconf.dialects.EOS``): per hardware family and
per value, checked before a configuration line is applied.

- The egress queue command depends on the switching silicon (platform table ``hardware_families``, [3P]):
  ``uc-tx-queue``/``mc-tx-queue`` on Strata-based switches, ``tx-queue`` on Sand-based ones; the other form is
  ``% Invalid input``.
- Addresses are real IPv4 addresses and prefixes (``ip address``, ``network``, ``router-id``, a neighbor).
- In one QoS profile (or interface) the tx-queues' ``bandwidth percent`` add up to at most 100, and an ECN
  minimum threshold lies below its maximum (in the same units).
- ``maximum-paths N ecmp M`` needs M >= N.

Error texts: the grammar's ``% Invalid input (at token N: 'X')`` where EOS would stop parsing; for the value
checks the wording is [U] (EOS's own text was not available here).
"""

from __future__ import annotations

import re

from fabconf_lab.cliconf import Editor, Node
from fabconf_lab.cliconf.addresses import valid_ipv4, valid_prefix

_QUEUE = re.compile(r"(uc-|mc-)?tx-queue (\d+)")
_UNITS = {"bytes": 1, "kbytes": 1000, "mbytes": 1000_000, "segments": 208}  # [U] segment size for comparison


def family_error(cmd: str, family: str) -> str | None:
    """The queue command of the other hardware family."""
    m = _QUEUE.fullmatch(cmd)
    if m is None:
        return None
    unicast_form = m.group(1) is not None
    if family == "strata" and not unicast_form:
        return "Invalid input (at token 0: 'tx-queue')"
    if family == "sand" and unicast_form:
        return f"Invalid input (at token 0: '{m.group(1)}tx-queue')"
    return None


def _ipv4(text: str, prefix: bool) -> bool:
    return valid_prefix(text, strict=False) if prefix else valid_ipv4(text)


def value_error(cmd: str) -> str | None:
    words = cmd.split()
    if words[:2] == ["ip", "address"] and len(words) >= 3 and "/" in words[2] and not _ipv4(words[2], True):
        return f"Invalid input (at token 2: '{words[2]}')"
    if words[0] == "network" and len(words) >= 2 and not _ipv4(words[1], True):
        return f"Invalid input (at token 1: '{words[1]}')"
    if words[0] == "router-id" and len(words) == 2 and not _ipv4(words[1], False):
        return f"Invalid input (at token 1: '{words[1]}')"
    peer = words[1] if words[0] == "neighbor" and len(words) >= 3 and words[1] != "interface" else None
    if peer and not _ipv4(peer, False) and not re.fullmatch(r"[A-Za-z][\w-]*", peer):
        return f"Invalid input (at token 1: '{peer}')"
    m = re.fullmatch(r"maximum-paths (\d+) ecmp (\d+)", cmd)
    if m and int(m.group(2)) < int(m.group(1)):
        return "% maximum-paths must not exceed the ecmp limit"  # [U] wording
    m = re.fullmatch(r"random-detect ecn minimum-threshold (\d+) (\S+) maximum-threshold (\d+) (\S+).*", cmd)
    if m and int(m.group(1)) * _UNITS.get(m.group(2), 1) >= int(m.group(3)) * _UNITS.get(m.group(4), 1):
        return "% Minimum threshold must be less than maximum threshold"  # [U] wording
    return None


def _bandwidth(queue: Node) -> int:
    for line in queue.leaves():
        m = re.fullmatch(r"bandwidth percent (\d+)", line)
        if m:
            return int(m.group(1))
    return 0


def bandwidth_error(cmd: str, editor: Editor) -> str | None:
    """``bandwidth percent N`` inside a tx-queue: the profile's (or interface's) queues stay within 100 %."""
    m = re.fullmatch(r"bandwidth percent (\d+)", cmd)
    stack = editor.stack
    if m is None or len(stack) < 3 or stack[-1].mode != "tx-queue":
        return None
    queue, owner = stack[-1].node, stack[-2].node
    others = sum(_bandwidth(q) for q in owner.children if q is not queue and _QUEUE.fullmatch(q.text))
    if others + int(m.group(1)) > 100:
        return f"% Total bandwidth percent of the queues would be {others + int(m.group(1))} (at most 100)"  # [U]
    return None


def check(cmd: str, editor: Editor, family: str) -> str | None:
    """The device's error for ``cmd`` entered at the editor's current position, or None."""
    if not cmd or cmd.startswith(("no ", "default ")):
        return None
    return family_error(cmd, family) or value_error(cmd) or bandwidth_error(cmd, editor)
