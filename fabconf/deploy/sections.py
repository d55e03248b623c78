"""Which owned sections a drift touches: every changed line of a device's diff, with the ancestors the diff shows
it under, is matched against its candidate form's rules (first match wins).

The input is what the dry run produced (``Outcome.diff`` / ``Outcome.commands``), never a second comparison:
- CLI text (EOS, NX-OS) and the host NIC-state document: the unified diff. Each changed line is read with its
  ancestors by indentation, as far as the hunk shows them (``interface Ethernet1/1 > mtu 9214``), so a root
  outside the hunk's context falls back to the line's own keywords (``neighbor …`` is BGP wherever it is).
- the NVUE tree: its ``nv set``/``nv unset`` commands, whose paths are complete (a YAML hunk may start deep
  inside the tree, where ``default-global`` alone does not say whether it is PFC or the DSCP map).

Section names are fixed (``SECTIONS``): they label Prometheus series and JUnit output.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fabconf.platforms import Candidate

SECTIONS: tuple[str, ...] = ("qos", "pfc", "interfaces", "vlans", "bgp", "nic", "nccl", "firmware", "other")

Rules = tuple[tuple[str, re.Pattern[str]], ...]


def _rules(*pairs: tuple[str, str]) -> Rules:
    return tuple((name, re.compile(pattern)) for name, pattern in pairs)


# Matched against "ancestor > … > line" (``no `` negations dropped), first match wins: the specific sections
# (PFC inside a QoS policy, VLAN membership of an interface) before the general ones.
CLI_RULES = _rules(
    ("pfc", r"priority-flow-control|\bpfc\b|pfc-cos|watch-?dog"),
    ("vlans", r"(^|> )vlan \d+|(^|> )interface [Vv]lan\d+|switchport (access|trunk)|\bvlan\b"),
    (
        "qos",
        r"\bqos\b|class-map|policy-map|tx-queue|random-detect|bandwidth|service-profile|service-policy"
        r"|traffic-class|priority (strict|level)|network-qos|queuing|\bdscp\b|\becn\b",
    ),
    ("bgp", r"router bgp|\bneighbor\b|remote-as|maximum-paths|bestpath|router-id|address-family|^network "),
    ("interfaces", r"(^|> )interface |\bmtu\b|jumbomtu|ip address|switchport|description|shutdown|\bspeed\b"),
)
NVUE_RULES = _rules(
    ("pfc", r"\bpfc\b|pfc-watchdog"),
    ("vlans", r"^bridge domain \S+ (vlan|untagged)|bridge domain \S+ access|^interface vlan\d+|\bvlan \d+"),
    ("qos", r"\bqos\b"),
    ("bgp", r"\bbgp\b"),
    ("interfaces", r"^interface\b"),
)
HOST_RULES = _rules(
    ("nccl", r"NCCL_|(^|> )nccl_conf"),
    ("pfc", r"\bpfc\b"),
    ("firmware", r"(^|> )mlxconfig|(^|> )[A-Z][A-Z0-9_]*_P\d+:|^[A-Z][A-Z0-9_]+:"),
    ("qos", r"(^|> )(qos|ecn|roce_tos)\b|trust|dscp2prio|roce_(np|rp)_enable|cnp_|\btos\b"),
    ("nic", r"(^|> )(nics|routing|sysctl)\b|\bmtu\b|address|netdev|rdma|\bvia\b|lookup|arp_|rp_filter"),
)
# SONiC: the lines of the staged JSON Patch as compare_config reads it (``+ PORT_QOS_MAP|Ethernet0 pfc_enable: …``)
CONFIG_DB_RULES = _rules(
    ("pfc", r"^(PFC_WD|BUFFER_PG|MAP_PFC_PRIORITY_TO_QUEUE)\b|\bpfc_enable\b"),
    ("vlans", r"^VLAN"),
    ("qos", r"^(DSCP_TO_TC_MAP|TC_TO_QUEUE_MAP|TC_TO_PRIORITY_GROUP_MAP|WRED_PROFILE|SCHEDULER|QUEUE|PORT_QOS_MAP)\b"),
    ("bgp", r"^(BGP_NEIGHBOR|LOOPBACK_INTERFACE)\b|\bbgp_asn\b"),
    ("interfaces", r"^(PORT|INTERFACE)\b"),
)
RULES: dict[Candidate, Rules] = {
    Candidate.CLI: CLI_RULES,
    Candidate.NVUE_TREE: NVUE_RULES,
    Candidate.HOST_STATE: HOST_RULES,
    Candidate.CONFIG_DB: CONFIG_DB_RULES,
}


def section_of(path: str, candidate: Candidate) -> str:
    """The section of one changed line, given as ``ancestor > … > line``."""
    text = re.sub(r"(^|> )no ", r"\1", path)
    for name, pattern in RULES[candidate]:
        if pattern.search(text):
            return name
    return "other"


def classify(diff: str, commands: str, candidate: Candidate) -> list[str]:
    """The drifted sections of one device, in ``SECTIONS`` order ([] when nothing drifted)."""
    if candidate is Candidate.NVUE_TREE:
        paths: Iterator[str] | list[str] = nv_paths(commands)
    elif candidate is Candidate.CONFIG_DB:  # one line a value: "+ TABLE|KEY field: …", "- …"
        paths = [line[2:] for line in diff.splitlines() if line[:2] in ("+ ", "- ")]
    else:
        paths = changed_paths(diff)
    found = {section_of(p, candidate) for p in paths}
    return [s for s in SECTIONS if s in found]


def nv_paths(commands: str) -> Iterator[str]:
    """``nv set interface swp1 link mtu 9216`` -> ``interface swp1 link mtu 9216``."""
    for line in commands.splitlines():
        match = re.match(r"^\s*nv (?:un)?set\s+(.+)$", line)
        if match:
            yield match.group(1).strip()


def _depth(content: str) -> int:
    """Indentation, a YAML list item counting one deeper than its key (``nics:`` / ``- netdev: …``)."""
    stripped = content.lstrip(" ")
    return len(content) - len(stripped) + (1 if stripped.startswith("- ") else 0)


def _skip(content: str) -> bool:
    text = content.strip()
    return not text or text.startswith(("!", "#")) or text == "end"


def changed_paths(diff: str) -> Iterator[str]:
    """Every added or removed line of a unified diff as ``ancestor > … > line``, with the ancestors (by
    indentation) its side of the hunk shows: context and removed lines for a removal, context and added lines
    for an addition."""
    old: list[tuple[int, str]] = []  # the ancestor stacks of each side of the current hunk
    new: list[tuple[int, str]] = []
    for line in diff.splitlines():
        if line.startswith(("--- ", "+++ ")):
            continue
        if line.startswith("@@"):
            old, new = [], []
            continue
        sign, content = line[:1], line[1:]
        if sign not in (" ", "-", "+") or _skip(content):
            continue
        sides = {" ": (old, new), "-": (old,), "+": (new,)}[sign]
        for stack in sides:
            depth = _depth(content)
            while stack and stack[-1][0] >= depth:
                stack.pop()
            if sign != " ":
                yield " > ".join([text for _d, text in stack] + [content.strip()])
            stack.append((depth, content.strip()))
