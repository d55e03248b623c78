"""What NX-OS refuses beyond the lab's grammar (``fabconf_lab.nxos.config.DIALECT``), in the sections fabconf owns.

- ``feature X`` names a feature NX-OS has.
- A policy-map's class takes only the actions of its policy type: ``set qos-group|cos|dscp`` in type qos;
  ``bandwidth``, ``priority``, ``random-detect``, ``shape``, ``queue-limit`` in type queuing; ``mtu`` and
  ``pause`` in type network-qos ([V] docs/reference/roce-lossless.md §3 shows each action under its type).
- The queuing classes' ``bandwidth remaining percent`` add up to at most 100; ``priority level`` is 1-8;
  ``random-detect`` thresholds are in bytes/kbytes/mbytes with min <= max and a drop probability 0-100.
- ``match dscp`` values are 0-63; global and interface PFC commands are the known forms
  (``priority-flow-control mode on|off|auto``, the watchdog interval 100-1000 ms and shutdown multiplier
  1-10 [U: recalled from the Nexus 9000 QoS guide]).

Errors use NX-OS wording (``% Invalid command at '^' marker.``, ``% Invalid value``); texts of the value checks
are [U].
"""

from __future__ import annotations

import re

from fabconf.platforms import platform as platform_spec
from fabconf_lab.cliconf import Dialect, Editor

INVALID = "% Invalid command at '^' marker."
INVALID_VALUE = "% Invalid number, range is ({lo}:{hi}) at '^' marker."

# [U] the NX-OS 10.x feature names a Nexus 9000 accepts that fabconf or brownfield configs use
FEATURES = frozenset(
    {
        "bgp",
        "interface-vlan",
        "lldp",
        "nxapi",
        "ospf",
        "ospfv3",
        "pim",
        "lacp",
        "vpc",
        "hsrp",
        "vrrp",
        "bfd",
        "scp-server",
        "sftp-server",
        "ssh",
        "telnet",
        "tacacs+",
        "udld",
        "vn-segment-vlan-based",
        "netconf",
        "restconf",
        "grpc",
        "dhcp",
        "isis",
        "ptp",
        "sla",
        "sflow",
        "evmed",
        "private-vlan",
        "fabric",
        "forwarding",
        "macsec",
        "ngoam",
        "nat",
    }
)
_ACTIONS = {
    "qos": (r"set (qos-group|cos|dscp) \d+",),
    "queuing": (
        r"bandwidth( remaining)? percent \d+",
        r"priority( level \d+)?",
        r"random-detect .+",
        r"shape .+",
        r"queue-limit .+",
        r"congestion-control .+",
    ),
    "network-qos": (r"mtu \d+", r"pause pfc-cos [\d,]+", r"pause buffer-size .+", r"congestion-control .+"),
}
_RED = re.compile(
    r"random-detect minimum-threshold (\d+) (bytes|kbytes|mbytes) maximum-threshold (\d+) (bytes|kbytes|mbytes)"
    r" drop-probability (\d+) weight (\d+)( ecn)?"
)
_UNITS = {"bytes": 1, "kbytes": 1000, "mbytes": 1000_000}
_ROOT_PFC = (
    (re.compile(r"priority-flow-control watch-dog-interval (on|off)"), None),
    (re.compile(r"priority-flow-control watch-dog interval (\d+)"), (100, 1000)),
    (re.compile(r"priority-flow-control watch-dog shutdown-multiplier (\d+)"), (1, 10)),
    (re.compile(r"priority-flow-control auto-restore multiplier (\d+)"), (0, 100)),
    (re.compile(r"priority-flow-control fixed-restore multiplier (\d+)"), (0, 100)),
)
_IF_PFC = re.compile(r"priority-flow-control (mode (auto|on|off)( send-tlv)?|watch-dog-interval (on|off))")


def _ranged(value: str, bounds: tuple[int, int] | None) -> str | None:
    if bounds is not None and not bounds[0] <= int(value) <= bounds[1]:
        return INVALID_VALUE.format(lo=bounds[0], hi=bounds[1])
    return None


def _pfc(line: str, mode: str) -> str | None:
    if not line.startswith("priority-flow-control "):
        return None
    if mode == "interface":
        return None if _IF_PFC.fullmatch(line) else INVALID
    for pattern, bounds in _ROOT_PFC:
        m = pattern.fullmatch(line)
        if m:
            return _ranged(m.group(1), bounds) if bounds else None
    return INVALID


def _reserved_vlan(line: str) -> str | None:
    """``vlan N`` or an access / trunk VLAN inside the reserved block (fabconf.platforms cites Cisco's Layer 2
    guide for 3968-4094)."""
    forms = r"vlan|switchport access vlan|switchport trunk (?:native|allowed) vlan(?: add)?"
    m = re.fullmatch(rf"(?:{forms}) ([\d,\-]+)", line)
    if m is None:
        return None
    values: list[int] = []
    for part in m.group(1).split(","):
        lo, _, hi = part.partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            values += range(int(lo), int(hi or lo) + 1)
    for lo_r, hi_r in platform_spec("nxos").reserved_vlans:
        bad = [v for v in values if lo_r <= v <= hi_r]
        if bad:
            return f"ERROR: VLAN {bad[0]} is in the reserved range {lo_r}-{hi_r}"  # [U] wording
    return None


def _landing(line: str, editor: Editor, dialect: Dialect) -> int | None:
    """The stack depth whose mode takes ``line`` (NX-OS falls back to the parent modes), or None."""
    for depth in range(len(editor.stack) - 1, -1, -1):
        mode = editor.stack[depth].mode
        if dialect.is_command(mode, line) or dialect.opens(mode, line):
            return depth
    return None


def _policy_type(editor: Editor, depth: int) -> str | None:
    for frame in reversed(editor.stack[: depth + 1]):
        if frame.mode == "policy-map":
            return frame.node.text.split()[2]
    return None


def _action(line: str, editor: Editor, depth: int) -> str | None:
    if editor.stack[depth].mode != "pmap-class":
        return None
    kind = _policy_type(editor, depth)
    if kind is None:
        return None
    if not any(re.fullmatch(p, line) for p in _ACTIONS.get(kind, ())):
        return INVALID
    m = _RED.fullmatch(line) if line.startswith("random-detect ") else None
    if line.startswith("random-detect ") and m is None:
        return INVALID
    if m is not None:
        # equal thresholds are allowed: Microsoft's Azure Local TOR reference configures 300/300 kbytes
        # [V: docs/reference/roce-lossless.md section 3]
        if int(m.group(1)) * _UNITS[m.group(2)] > int(m.group(3)) * _UNITS[m.group(4)]:
            return "% minimum-threshold must not exceed maximum-threshold"  # [U] wording
        return _ranged(m.group(5), (0, 100)) or _ranged(m.group(6), (0, 15))
    m = re.fullmatch(r"bandwidth remaining percent (\d+)", line)
    if m is not None and kind == "queuing":
        policy = next(f.node for f in reversed(editor.stack[: depth + 1]) if f.mode == "policy-map")
        current = editor.stack[depth].node
        others = 0
        for cls in policy.children:
            if cls is current:
                continue
            for leaf in cls.leaves():
                share = re.fullmatch(r"bandwidth remaining percent (\d+)", leaf)
                others += int(share.group(1)) if share else 0
        if others + int(m.group(1)) > 100:
            return f"% Total bandwidth remaining percent exceeds 100 ({others + int(m.group(1))})"  # [U] wording
    return None


def check(line: str, editor: Editor, dialect: Dialect) -> str | None:
    """The device's error for ``line`` (not a ``no`` form) entered at the editor's position, or None (the
    grammar itself refuses what no mode takes)."""
    depth = _landing(line, editor, dialect)
    if depth is None:
        return None
    mode = editor.stack[depth].mode
    words = line.split()
    if words[0] == "feature" and mode == "root":
        name = " ".join(words[1:])
        return None if name in FEATURES or name == "nv overlay" else INVALID
    if line in ("match dscp", "match cos", "match qos-group", "match precedence"):
        return "% Incomplete command at '^' marker."
    reserved = _reserved_vlan(line)
    if reserved is not None:
        return reserved
    if line.startswith("match dscp "):
        named = r"(af[1-4][1-3]|cs[0-7]|ef|default)"
        if not re.fullmatch(rf"match dscp ((\d+|{named})([,-]|, | - )?)+", line):
            return INVALID
    m = re.fullmatch(r"match dscp ([\d,\- ]+)", line)
    if m is not None:
        values = [int(v) for v in re.findall(r"\d+", m.group(1))]
        return INVALID_VALUE.format(lo=0, hi=63) if any(v > 63 for v in values) else None
    return _pfc(line, mode) or _action(line, editor, depth)
