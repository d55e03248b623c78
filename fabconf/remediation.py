"""Owned sections and remediation for the CLI platforms (EOS, NX-OS), with hier_config.

fabconf owns the sections it renders and nothing else (see OWNED). In merge mode the running config
is cut down to the owned sections, compared with the intended config as trees, and the remediation
(negate what runs but is not intended, add what is missing) is what gets loaded as a merge candidate.
Drift is the same computation: a device has drifted when its remediation is not empty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hier_config import HConfig, Platform, WorkflowRemediation, get_hconfig

PLATFORM = {"eos": Platform.ARISTA_EOS, "nxos": Platform.CISCO_NXOS}

# Root lines whose whole section fabconf owns, per platform. VLAN 1 is the default VLAN and never owned.
_COMMON = [
    r"hostname \S+",
    r"vlan (?!1$)\d+",
    r"interface [Vv]lan\d+",
    r"router bgp \d+",
]
OWNED: dict[str, list[str]] = {
    "eos": [
        *_COMMON,
        r"qos map .*",
        r"qos profile FABCONF_\S+",
        r"priority-flow-control .*",
        r"ip routing",
        r"interface Loopback0",
    ],
    "nxos": [
        *_COMMON,
        r"feature (bgp|interface-vlan|lldp)",
        r"system jumbomtu \d+",
        r"class-map type qos match-\S+ FABCONF_\S+",
        r"policy-map type \S+ FABCONF_\S+",
        r"system qos",
        r"priority-flow-control .*",
        r"interface loopback0",
    ],
}


@dataclass(frozen=True)
class Remediation:
    """What to send (``config``), what it would undo (``rollback``), both as indented text."""

    config: str
    rollback: str

    @property
    def empty(self) -> bool:
        return not self.config.strip()


def _owned_pattern(platform: str, interfaces: list[str]) -> re.Pattern[str]:
    parts = list(OWNED[platform]) + [rf"interface {re.escape(i)}" for i in interfaces]
    return re.compile(r"^(?:" + "|".join(parts) + r")$")


def _strip_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("!") and line.strip() != "end")


def owned_tree(platform: str, text: str, interfaces: list[str]) -> HConfig:
    """The part of ``text`` fabconf owns, as a hier_config tree."""
    tree = get_hconfig(PLATFORM[platform], _strip_comments(text))
    pattern = _owned_pattern(platform, interfaces)
    for child in list(tree.children):
        if not pattern.match(child.text):
            child.delete()
    return tree


def remediate(platform: str, running: str, intended: str, interfaces: list[str]) -> Remediation:
    """Remediation that turns the owned part of ``running`` into ``intended``."""
    run_tree = owned_tree(platform, running, interfaces)
    want_tree = owned_tree(platform, intended, interfaces)
    workflow = WorkflowRemediation(run_tree, want_tree)
    return Remediation(_text(workflow.remediation_config), _text(workflow.rollback_config))


def _text(tree: HConfig) -> str:
    lines = [line for line in tree.dump_simple() if line.strip()]
    return "\n".join(lines) + ("\n" if lines else "")
