"""What the EOS CLI refuses beyond its grammar (``fabconf_lab.cliconf.dialects.EOS``): per hardware family and
per value, checked before a configuration line is applied.

- The egress queue command depends on the switching silicon (platform table ``hardware_families``, [3P]):
  ``uc-tx-queue``/``mc-tx-queue`` on Strata-based switches, ``tx-queue`` on Sand-based ones; the other form is
  ``% Invalid input``.
- Addresses are real IPv4 addresses and prefixes (``ip address``, ``network``, ``router-id``, a neighbor).
- In one QoS profile (or interface) the tx-queues' ``bandwidth percent`` add up to at most 100, and an ECN
  minimum threshold lies below its maximum (in the same units).
- ``maximum-paths N ecmp M`` needs M >= N.
- An own or peer address is a unicast host address (not multicast, class E, 0.0.0.0 or loopback), and a
  ``network`` is unicast space (``fabconf_lab.cliconf.addresses``).
- One BGP instance: ``router bgp N`` while another ASN runs is refused with EOS's "% BGP is already running
  with AS number N" [3P: the message as quoted in Arista community threads].
- ``interface EthernetX`` names a port the switch has (the simulator's ports); another is ``% Invalid input``
  as a fixed-configuration switch's parser stops there [U].
- A BGP neighbor joins only a peer group that exists [U: wording].

Error texts: the grammar's ``% Invalid input (at token N: 'X')`` where EOS would stop parsing; for the value
checks the wording is [U] (EOS's own text was not available here).
"""

from __future__ import annotations

import re
from functools import lru_cache

from fabconf_lab.cliconf import Editor, Node
from fabconf_lab.cliconf.addresses import host_address_error, network_error, valid_ipv4, valid_prefix

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


@lru_cache(maxsize=1 << 15)
def value_error(cmd: str) -> str | None:
    """The error for a value in ``cmd`` (an address, a threshold pair), or None: the line alone decides it, so the
    answer is remembered (every diff and push enters each switch's whole configuration again)."""
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
    bad = address_error(words)
    if bad:
        return bad
    m = re.fullmatch(r"maximum-paths (\d+) ecmp (\d+)", cmd)
    if m and int(m.group(2)) < int(m.group(1)):
        return "% maximum-paths must not exceed the ecmp limit"  # [U] wording
    m = re.fullmatch(r"random-detect ecn minimum-threshold (\d+) (\S+) maximum-threshold (\d+) (\S+).*", cmd)
    if m and int(m.group(1)) * _UNITS.get(m.group(2), 1) >= int(m.group(3)) * _UNITS.get(m.group(4), 1):
        return "% Minimum threshold must be less than maximum threshold"  # [U] wording
    return None


def address_error(words: list[str]) -> str | None:
    """A well-formed address that is no unicast host address (or a network outside unicast space)."""
    if words[:2] == ["ip", "address"] and len(words) >= 3 and "/" in words[2]:
        why = host_address_error(words[2])
        return f"% Invalid address {words[2]}: {why}" if why else None  # [U] wording
    if words[0] == "router-id" and len(words) == 2:
        why = host_address_error(words[1])
        return f"% Invalid router-id {words[1]}: {why}" if why else None  # [U] wording
    if words[0] == "neighbor" and len(words) >= 3 and valid_ipv4(words[1]):
        why = host_address_error(words[1])
        return f"% Invalid neighbor address {words[1]}: {why}" if why else None  # [U] wording
    if words[0] == "network" and len(words) >= 2:
        why = network_error(words[1])
        return f"% Invalid network {words[1]}: {why}" if why else None  # [U] wording
    return None


def context_error(cmd: str, editor: Editor, ports: list[str] | None) -> str | None:
    """What the rest of the configuration makes wrong: a second BGP instance, a port the switch does not have,
    a peer group that does not exist."""
    root = editor.stack[0].node
    words = cmd.split()
    m = re.fullmatch(r"router bgp (\S+)", cmd)
    if m:
        running = next((c.text.split()[2] for c in root.children if c.text.startswith("router bgp ")), None)
        if running is not None and running != m.group(1):
            return f"% BGP is already running with AS number {running}"
    m = re.fullmatch(r"interface (Ethernet[\d/]+)(\.\d+)?", cmd)
    if m and ports is not None and m.group(1) not in ports:
        return f"Invalid input (at token 1: '{m.group(1)}')"
    group = None
    if words[0] == "neighbor" and len(words) == 5 and words[2:4] == ["peer", "group"]:
        group = words[4]
    elif words[0] == "neighbor" and len(words) == 4 and words[2] == "peer-group":
        group = words[3]
    if group is not None:
        bgp = next((f.node for f in reversed(editor.stack) if f.mode in ("router-bgp", "bgp-vrf")), None)
        declared = {f"neighbor {group} peer group", f"neighbor {group} peer-group"}
        if bgp is not None and not declared & set(bgp.leaves()):
            return f"% Peer group {group} does not exist"  # [U] wording
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


def check(cmd: str, editor: Editor, family: str, ports: list[str] | None = None) -> str | None:
    """The device's error for ``cmd`` entered at the editor's current position, or None. ``ports``: the
    Ethernet ports the switch has (None: not checked)."""
    if not cmd or cmd.startswith(("no ", "default ")):
        return None
    return (
        family_error(cmd, family)
        or value_error(cmd)
        or bandwidth_error(cmd, editor)
        or context_error(cmd, editor, ports)
    )
