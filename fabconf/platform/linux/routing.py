"""Per-NIC addressing and policy routing of a multi-NIC RoCE host: the target, what the host shows, and the
commands between them.

A host's RoCE NICs live in different subnets (one per leaf). Without per-NIC routing, traffic to another rail
or another leaf leaves through whichever NIC the main table picks, or through the management default route,
and replies leave a different NIC than the one they came in on. fabconf gives NIC *i* its own table with the
NIC's subnet and the fabric's RoCE prefixes via its gateway, a rule ``from <address> lookup <table>``, a
main-table route to each prefix through the NIC that lives in it, and the ARP/rp_filter sysctls multi-NIC hosts
need (docs/reference/roce-lossless.md §9, [U: common practice]).

Ownership, so fabconf never touches the host's own routing: routes fabconf installs carry protocol
``ROUTE_PROTO`` (``ip route ... proto 250``; [U] 250 is unassigned in iproute2's rt_protos, our choice); rules
at priorities ``RULE_PRIORITIES`` are fabconf's; the IPv4 addresses of the managed NICs are fabconf's. All of it
is runtime state: the boot unit re-applies it.

Text forms (the desired document and the running one use the same): a route is
``DST [via GW] dev IF [scope link src ADDR] [table N]`` (no ``table``: the main table); a rule is
``PRIO: from ADDR lookup N``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fabconf.compile.design.hostnet import (  # the design writes what this module applies: one set of names
    MAIN,
    NIC_SYSCTLS,
    ROUTE_PROTO,
    RULE_BASE,
    RULE_PRIORITIES,
)
from fabconf.platform.linux.parse import ParseError, check_clean

_TABLE_NAMES = {"main": MAIN, "local": 255, "default": 253}


class RoutingError(ParseError):
    """A route, rule, address or sysctl the document or the host gives in a form fabconf cannot read."""


@dataclass(frozen=True)
class Route:
    table: int
    destination: str
    gateway: str | None
    device: str
    source: str | None

    def __str__(self) -> str:
        text = self.destination
        if self.gateway:
            text += f" via {self.gateway}"
        text += f" dev {self.device}"
        if self.source:
            text += f" scope link src {self.source}"
        if self.table != MAIN:
            text += f" table {self.table}"
        return text

    def key(self) -> tuple[int, tuple[int, ...], str, str, str]:
        """Sort order: by table (main last), then destination address and length, gateway, device, source."""
        dst = self.destination.replace("default", "0.0.0.0/0")
        address, _, length = dst.partition("/")
        parts = (*(int(x) for x in address.split(".") if x.isdigit()), int(length or 32))
        return (self.table, parts, self.gateway or "", self.device, self.source or "")

    def args(self) -> list[str]:
        """``ip route`` arguments after the verb."""
        out = [self.destination]
        if self.gateway:
            out += ["via", self.gateway]
        out += ["dev", self.device]
        if self.source:
            out += ["scope", "link", "src", self.source]
        return [*out, "table", str(self.table), "proto", str(ROUTE_PROTO)]


@dataclass(frozen=True, order=True)
class Rule:  # ordered by priority
    priority: int
    source: str
    table: int

    def __str__(self) -> str:
        return f"{self.priority}: from {self.source} lookup {self.table}"

    def args(self) -> list[str]:
        return ["from", self.source, "lookup", str(self.table), "pref", str(self.priority)]


@dataclass
class RoutingTarget:
    """What fabconf wants; ``None`` parts are not managed."""

    addresses: dict[str, list[str]] = field(default_factory=dict)  # netdev -> ["A/P"]
    routes: list[Route] | None = None
    rules: list[Rule] | None = None
    sysctl: dict[str, int] = field(default_factory=dict)


@dataclass
class RoutingObserved:
    addresses: dict[str, list[str]] = field(default_factory=dict)  # every interface's global IPv4 addresses
    routes: list[Route] = field(default_factory=list)  # fabconf's (protocol ROUTE_PROTO)
    rules: list[Rule] = field(default_factory=list)  # fabconf's (priority in RULE_PRIORITIES)
    sysctl: dict[str, int] = field(default_factory=dict)


# -- the document's text forms -------------------------------------------------------------------------------


def _table(word: str) -> int:
    if word in _TABLE_NAMES:
        return _TABLE_NAMES[word]
    if not word.isdigit() or not 0 < int(word) < 2**32:
        raise RoutingError(f"table {word!r} is not a table number")
    return int(word)


def parse_route(text: str) -> Route:
    words = str(text).split()
    if not words:
        raise RoutingError("empty route")
    destination, rest = words[0], words[1:]
    values: dict[str, str] = {}
    while rest:
        key = rest.pop(0)
        if key == "scope" and rest and rest[0] == "link":
            rest.pop(0)
            continue
        if key not in ("via", "dev", "src", "table") or not rest or key in values:
            raise RoutingError(f"route {text!r}: unexpected {key!r}")
        values[key] = rest.pop(0)
    if "dev" not in values:
        raise RoutingError(f"route {text!r}: no dev")
    table = _table(values.get("table", "main"))
    return Route(table, destination, values.get("via"), values["dev"], values.get("src"))


def parse_rule(text: str) -> Rule:
    head, _, body = str(text).partition(":")
    words = body.split()
    if not head.strip().isdigit() or len(words) != 4 or words[0] != "from" or words[2] not in ("lookup", "table"):
        raise RoutingError(f"rule {text!r}: expected 'PRIO: from ADDR lookup TABLE'")
    return Rule(int(head), words[1], _table(words[3]))


def target_from_document(doc: dict[str, Any], nics: list[dict[str, Any]]) -> RoutingTarget | None:
    """The routing part of a desired-state document (``routing``, ``sysctl``, each NIC's ``address``); None when
    the document has no ``routing`` section (an older document: routing is then not managed)."""
    section = doc.get("routing")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise RoutingError("routing: expected a mapping with rules and routes")
    target = RoutingTarget()
    target.routes = sorted((parse_route(r) for r in section.get("routes") or []), key=Route.key)
    target.rules = sorted(parse_rule(r) for r in section.get("rules") or [])
    for rule in target.rules:
        if rule.priority not in RULE_PRIORITIES:
            raise RoutingError(f"rule {rule}: priority outside fabconf's {RULE_BASE}..{RULE_PRIORITIES[-1]}")
    for nic in nics:
        if nic.get("address"):
            target.addresses[str(nic["netdev"])] = [str(nic["address"])]
    sysctl = doc.get("sysctl") or {}
    if not isinstance(sysctl, dict):
        raise RoutingError("sysctl: expected a mapping")
    for key, value in sysctl.items():
        if (
            not isinstance(key, str)
            or not key.startswith("net.")
            or isinstance(value, bool)
            or not isinstance(value, int)
        ):
            raise RoutingError(f"sysctl: bad entry {key!r}: {value!r}")
        target.sysctl[key] = value
    return target


def document_sections(observed: RoutingObserved) -> dict[str, Any]:
    """The running document's ``routing`` and ``sysctl`` sections."""
    return {
        "routing": {
            "rules": [str(r) for r in sorted(observed.rules)],
            "routes": [str(r) for r in sorted(observed.routes, key=Route.key)],
        },
        "sysctl": dict(sorted(observed.sysctl.items())),
    }


# -- reading the host ---------------------------------------------------------------------------------------------


def reads(netdevs: list[str]) -> list[str]:
    """The commands whose outputs ``observe`` reads, in order."""
    keys = [f"net.ipv4.conf.{n}.{k}" for n in netdevs for k in sorted(NIC_SYSCTLS)]
    # -e: a NIC that is missing has no keys; its absence is reported by the NIC reads, not as a sysctl failure
    return ["ip -j -4 addr show", "ip -j route show table all", "ip -j rule show", "sysctl -e " + " ".join(keys)]


def _json(text: str, what: str) -> list[dict[str, Any]]:
    try:
        value = json.loads(text or "[]")
    except ValueError as exc:
        raise RoutingError(f"{what}: not JSON ({exc})") from None
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise RoutingError(f"{what}: expected a JSON list of objects")
    return value


def parse_addresses(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for link in _json(text, "ip -j addr"):
        name = str(link.get("ifname", ""))
        for info in link.get("addr_info") or []:
            if info.get("family") == "inet" and info.get("scope") == "global":
                out.setdefault(name, []).append(f"{info['local']}/{info['prefixlen']}")
    return out


def parse_routes(text: str) -> list[Route]:
    """fabconf's routes (protocol ROUTE_PROTO) from ``ip -j route show table all``."""
    out = []
    for item in _json(text, "ip -j route"):
        if str(item.get("protocol", "")) != str(ROUTE_PROTO):
            continue
        table = _table(str(item.get("table", "main")))
        source = item.get("prefsrc") if item.get("scope") == "link" else None
        out.append(Route(table, str(item["dst"]), item.get("gateway"), str(item.get("dev", "")), source))
    return sorted(out, key=Route.key)


def parse_rules(text: str) -> list[Rule]:
    out = []
    for item in _json(text, "ip -j rule"):
        priority = int(item.get("priority", -1))
        if priority not in RULE_PRIORITIES or "src" not in item:
            continue
        source = str(item["src"]) + (f"/{item['srclen']}" if "srclen" in item else "")
        out.append(Rule(priority, source, _table(str(item.get("table", "main")))))
    return sorted(out)


def parse_sysctl(text: str) -> dict[str, int]:
    check_clean(text)
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(" = ")
        if not sep or not value.strip().lstrip("-").isdigit():
            raise RoutingError(f"sysctl: unexpected line {line!r}")
        out[key.strip()] = int(value)
    return out


# -- planning ---------------------------------------------------------------------------------------------------


@dataclass
class Step:
    line: str
    commands: list[str]


def plan(target: RoutingTarget, observed: RoutingObserved, sh: Any, sudo: str) -> list[Step]:
    """Readable lines and commands that turn ``observed`` into ``target``: sysctls, then addresses in, routes
    in, rules in; then rules out, routes out, addresses out (so nothing points at a missing address)."""
    ip = sudo + "ip"
    steps: list[Step] = []
    wrong = {k: v for k, v in sorted(target.sysctl.items()) if observed.sysctl.get(k) != v}
    if wrong:
        lines = [f"sysctl {k} {observed.sysctl.get(k, '(unset)')} -> {v}" for k, v in wrong.items()]
        steps.append(Step("\n".join(lines), [sudo + sh("sysctl", "-q", "-w", *(f"{k}={v}" for k, v in wrong.items()))]))
    removals: list[Step] = []
    for netdev, want in sorted(target.addresses.items()):
        have = observed.addresses.get(netdev, [])
        for address in want:
            if address not in have:
                steps.append(
                    Step(f"{netdev}: address {address} missing", [f"{ip} {sh('addr', 'add', address, 'dev', netdev)}"])
                )
        for address in have:
            if address not in want:
                removals.append(
                    Step(
                        f"{netdev}: address {address} -> removed", [f"{ip} {sh('addr', 'del', address, 'dev', netdev)}"]
                    )
                )
    if target.routes is not None:
        have_routes = set(observed.routes)
        for route in target.routes:
            if route not in have_routes:
                replaced = next(
                    (r for r in observed.routes if (r.table, r.destination) == (route.table, route.destination)), None
                )
                was = f"was {replaced}" if replaced else "missing"
                steps.append(Step(f"route {route}: {was}", [f"{ip} {sh('route', 'replace', *route.args())}"]))
        keys = {(r.table, r.destination) for r in target.routes}
        for route in observed.routes:
            if (route.table, route.destination) not in keys:
                args = ["route", "del", route.destination, "dev", route.device, "table", str(route.table)]
                removals.insert(0, Step(f"route {route} -> removed", [f"{ip} {sh(*args)}"]))
    if target.rules is not None:
        want_rules = set(target.rules)
        for rule in observed.rules:
            if rule not in want_rules:
                removals.insert(0, Step(f"rule {rule} -> removed", [f"{ip} {sh('rule', 'del', *rule.args())}"]))
        for rule in target.rules:
            if rule not in set(observed.rules):
                steps.append(Step(f"rule {rule}: missing", [f"{ip} {sh('rule', 'add', *rule.args())}"]))
    return steps + removals


def boot_commands(target: RoutingTarget, sh: Any) -> list[str]:
    """Commands (as root) that put the routing back after a boot; each may be re-run safely."""
    out = []
    if target.sysctl:
        out.append(sh("sysctl", "-q", "-w", *(f"{k}={v}" for k, v in sorted(target.sysctl.items()))))
    for netdev, addresses in sorted(target.addresses.items()):
        # the NIC's addresses are fabconf's: whatever else configured one at boot, only the intended stays
        # [U] a network manager that runs later (netplan/networkd) may add its own again: point it elsewhere
        out.append(sh("ip", "-4", "addr", "flush", "dev", netdev, "scope", "global"))
        out += [sh("ip", "addr", "add", address, "dev", netdev) for address in addresses]
    out += [sh("ip", "route", "replace", *route.args()) for route in target.routes or []]
    for rule in target.rules or []:
        out.append(f"{sh('ip', 'rule', 'del', 'pref', rule.priority)} 2>/dev/null || true")
        out.append(sh("ip", "rule", "add", *rule.args()))
    return out


def from_observed(observed: RoutingObserved, managed: RoutingTarget) -> RoutingTarget:
    """A target that puts back, from a capture taken before a commit, everything ``managed`` touches."""
    return RoutingTarget(
        addresses={netdev: list(observed.addresses.get(netdev, [])) for netdev in managed.addresses},
        routes=list(observed.routes) if managed.routes is not None else None,
        rules=list(observed.rules) if managed.rules is not None else None,
        sysctl={k: observed.sysctl[k] for k in managed.sysctl if k in observed.sysctl},
    )
