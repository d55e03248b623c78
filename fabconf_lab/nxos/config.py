"""NX-OS configuration semantics for the lab simulator, on top of ``fabconf_lab.cliconf``.

What this adds to cliconf's ``NXOS`` dialect (extended here, cliconf itself is not edited):

- more commands fabconf renders or brownfield configs carry, NX-OS style ``no`` forms (``no feature bgp``
  and ``no ip route`` remove lines, they are not stored), and range checks for QoS values;
- line normalisation the NX-OS parser does: interface names (``eth1/1`` -> ``Ethernet1/1``), ``switchname``
  -> ``hostname``, ``neighbor A remote-as N`` -> ``neighbor A`` + ``remote-as N``, ``vlan 10,20`` expanded,
  ``ip address A M`` -> ``ip address A/len``;
- checks the whitelist cannot express: interfaces that do not exist, feature gating (``router bgp`` needs
  ``feature bgp``), one BGP instance, address/ASN syntax, QoS references (a ``service-policy`` names an
  existing ``policy-map``, a ``class`` an existing ``class-map`` or a system class; a policy in use cannot be
  removed). Errors carry NX-OS wording (``% Invalid command at '^' marker.``);
- ``load``: a whole config file (checkpoint, rollback target) validated as one state.

Rendering, the rollback patch and the lab view live in ``fabconf_lab.nxos.render``.

Physical interfaces always exist: every port has an ``interface X`` stanza, possibly empty.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from fabconf.platforms import version_key
from fabconf_lab import cliconf
from fabconf_lab.cliconf import CliError, Editor, Node
from fabconf_lab.cliconf.addresses import host_address_error, network_error, valid_ipv4, valid_prefix
from fabconf_lab.nxos import strict

NXOS_VERSION = "10.3(4a)"
DLB_SINCE = (10, 5, 1)  # [3P] `hardware profile dlb` first in NX-OS 10.5(1)F; older releases refuse it

DIALECT = replace(
    cliconf.NXOS.extend(
        commands={
            "root": (
                r"ip domain-lookup",
                r"password strength-check",
                r"lldp .+",
                r"errdisable .+",
                r"evpn .+",
                r"key chain .+",
                r"track .+",
            ),
            "interface": (
                r"ip redirects",
                r"ipv6 redirects",
                r"flowcontrol (receive|send) (on|off)",
                r"storm-control .+",
                r"ip router .+",
                r"ip ospf .+",
                r"ip pim .+",
                r"mac-address \S+",
                r"negotiate auto",
            ),
            "address-family": (r"aggregate-address .+", r"advertise l2vpn evpn", r"additional-paths .+"),
            "bgp-neighbor": (r"local-as .+", r"timers .+", r"capability .+", r"transport .+", r"remove-private-as.*"),
            "neighbor-af": (
                r"soft-reconfiguration inbound.*",
                r"weight \d+",
                r"maximum-prefix .+",
                r"default-originate.*",
                r"disable-peer-as-check",
                r"as-override",
                r"route-reflector-client",
                r"prefix-list \S+ (in|out)",
            ),
        },
        single_valued={
            "root": (r"grpc port \d+", r"grpc certificate \S+"),
            "dlb": (r"dlb-interface .+", r"mode .+", r"mac-address \S+", r"flowlet-aging \d+"),
            "interface": (r"switchport trunk native vlan \d+", r"switchport trunk allowed vlan .+", r"fec .+"),
            "pmap-class": (r"pause buffer-size .+",),
        },
        ranges=(
            (r"^grpc port (\d+)$", 1024, 65535),  # [U] the range NX-OS takes
            (r"^random-detect .*drop-probability (\d+)", 0, 100),
            (r"^random-detect .* weight (\d+)", 0, 15),
            (r"^priority level (\d+)$", 1, 8),
            (r"^pause pfc-cos (\d+)$", 0, 7),
            (r"^switchport access vlan (\d+)$", 1, 4094),
        ),
    ),
    # NX-OS keeps only a few negations as config lines; `no feature X`, `no ip route ...` remove lines.
    stored_negations={
        "root": (r"no ip domain-lookup", r"no password strength-check", r"no system default switchport( shutdown)?"),
        "interface": (r"no shutdown", r"no switchport", r"no ip redirects", r"no ipv6 redirects", r"no lldp .+"),
        "bgp-neighbor": (r"no shutdown",),
    },
)


class NxosCliError(Exception):
    """A command NX-OS refuses; ``message`` is the device's own text."""

    def __init__(self, line: str, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


INVALID = "% Invalid command at '^' marker."
INCOMPLETE = "% Incomplete command at '^' marker."
# [U] exact NX-OS wording for these two is assumed, not checked against a device.
INVALID_RANGE = "% Invalid range at '^' marker."
INVALID_IP = "% Invalid ip address at '^' marker."


def from_cli_error(err: CliError) -> NxosCliError:
    if err.message.startswith("Incomplete"):
        return NxosCliError(err.line, INCOMPLETE)
    if DIALECT.check_ranges(err.line) is not None:
        return NxosCliError(err.line, INVALID_RANGE)  # a known command with a value out of range
    return NxosCliError(err.line, INVALID)


# ---------------------------------------------------------------------------------------------------------
# interface names

_IF_PREFIXES = (
    ("ethernet", "Ethernet"),
    ("eth", "Ethernet"),
    ("e", "Ethernet"),
    ("loopback", "loopback"),
    ("lo", "loopback"),
    ("port-channel", "port-channel"),
    ("po", "port-channel"),
    ("vlan", "Vlan"),
    ("mgmt", "mgmt"),
    ("nve", "nve"),
)
_IF_RE = re.compile(r"([A-Za-z-]+)\s*(\d+(?:/\d+)*(?:\.\d+)?)")


def canonical_interface(name: str) -> str | None:
    m = _IF_RE.fullmatch(name.strip())
    if not m:
        return None
    prefix = m.group(1).lower()
    for short, full in _IF_PREFIXES:
        if full.lower().startswith(prefix) and prefix.startswith(short):
            return full + m.group(2)
    return None


@lru_cache(maxsize=1 << 14)  # the same names sorted on every show: remembered, as it depends on the name alone
def interface_sort_key(name: str) -> tuple:
    kind_rank = {"Vlan": 0, "port-channel": 1, "Ethernet": 2, "mgmt": 3, "loopback": 4, "nve": 5}
    m = _IF_RE.fullmatch(name)
    if not m:
        return (9, name)
    nums = tuple(int(x) for x in re.split(r"[/.]", m.group(2)))
    return (kind_rank.get(m.group(1), 8), nums)


# ---------------------------------------------------------------------------------------------------------
# applying lines


def _valid_asn(text: str) -> bool:
    if re.fullmatch(r"\d+", text):
        return 1 <= int(text) <= 4294967295
    m = re.fullmatch(r"(\d+)\.(\d+)", text)
    return bool(m) and int(m.group(1)) <= 65535 and int(m.group(2)) <= 65535


class ConfigSession:
    """Applies NX-OS configuration lines to a tree like ``configure terminal`` does.

    Lines may carry indentation (napalm merge) or not: like the NX-OS parser, indentation is ignored and a
    line that is not valid in the current sub-mode falls back to the parent modes. ``ports`` are the
    physical Ethernet ports that exist.
    """

    def __init__(
        self, root: Node, ports: list[str], *, check_references: bool = True, version: str = NXOS_VERSION
    ) -> None:
        self.root = root
        self.ports = ports
        self.version = version
        self.check_references = check_references
        self.editor = Editor(root, DIALECT)
        self._range: list[str] = []

    @property
    def mode(self) -> str:
        return self.editor.mode

    def reset(self) -> None:
        del self.editor.stack[1:]

    def apply(self, raw: str, indent: int | None = None) -> None:
        text = " ".join(raw.split())
        if not text or text.startswith("!"):
            return
        if text.startswith("version ") and self.mode == "root":
            return  # [U] accepted and ignored: the version line of show running-config is generated
        for line in self._expand(text):
            self._apply_one(line, indent)
        ensure_ports(self.root, self.ports)

    # -- internals --------------------------------------------------------------------------------------
    def _expand(self, text: str) -> list[str]:
        words = text.split()
        neg = words[0] == "no"
        body = words[1:] if neg else words
        if not body:
            raise NxosCliError(text, INCOMPLETE)
        prefix = ["no"] if neg else []
        head = body[0]
        if head == "switchname" and len(body) == 2:
            return [" ".join([*prefix, "hostname", body[1]])]
        if head == "interface" and len(body) >= 2:
            return [" ".join([*prefix, "interface", name]) for name in self._interfaces(text, " ".join(body[1:]))]
        if head == "vlan" and len(body) == 2 and re.fullmatch(r"[\d,\-]+", body[1]) and self.mode == "root":
            return [" ".join([*prefix, "vlan", str(v)]) for v in _vlan_list(text, body[1])]
        if head == "neighbor" and len(body) == 4 and body[2] == "remote-as" and not neg:
            self._check_asn(text, body[3])
            return [f"neighbor {body[1]}", f"remote-as {body[3]}"]
        if head == "ip" and len(body) == 4 and body[1] == "address" and not neg and "/" not in body[2]:
            try:
                iface = ipaddress.IPv4Interface(f"{body[2]}/{body[3]}")
            except ValueError as exc:
                raise NxosCliError(text, INVALID_IP) from exc
            return [f"ip address {body[2]}/{iface.network.prefixlen}"]
        return [text]

    def _interfaces(self, text: str, spec: str) -> list[str]:
        names = []
        for part in spec.split(","):
            part = part.strip()
            m = re.fullmatch(r"(.*?)(\d+)-(\d+)", part)
            if m and canonical_interface(m.group(1) + m.group(2)):
                base = m.group(1)
                names += [base + str(i) for i in range(int(m.group(2)), int(m.group(3)) + 1)]
            else:
                names.append(part)
        out = []
        for name in names:
            canon = canonical_interface(name)
            if canon is None:
                raise NxosCliError(text, INVALID)
            if canon.startswith("Ethernet") and canon.split(".")[0] not in self.ports:
                raise NxosCliError(text, INVALID_RANGE)
            if canon.startswith("mgmt") and canon != "mgmt0":
                raise NxosCliError(text, INVALID_RANGE)
            if canon.startswith("Vlan") and "feature interface-vlan" not in self.root.leaves():
                raise NxosCliError(text, INVALID)
            out.append(canon)
        # an interface range: sub-mode lines that follow apply to every member (see _apply_one)
        self._range = out if len(out) > 1 and not text.startswith("no ") else []
        return out

    def _check_asn(self, text: str, asn: str) -> None:
        if not _valid_asn(asn):
            raise NxosCliError(text, INVALID)

    def _check(self, line: str) -> None:
        words = line.split()
        neg = words[0] == "no"
        body = words[1:] if neg else words
        if body[:2] == ["router", "bgp"]:
            if "feature bgp" not in self.root.leaves():
                raise NxosCliError(line, INVALID)
            if len(body) == 3:
                self._check_asn(line, body[2])
                current = [c.text for c in self.root.children if c.text.startswith("router bgp ")]
                if not neg and current and current[0] != f"router bgp {body[2]}":
                    raise NxosCliError(line, f"% BGP is already running; AS is {current[0].split()[2]}")
        if body[0] == "grpc" and "feature grpc" not in self.root.leaves():
            raise NxosCliError(line, INVALID)  # the gRPC commands exist once the feature is on
        if self.check_references:
            self._check_qos_references(line, neg, body)
        if neg:
            return
        if line == "hardware profile dlb" and version_key(self.version) < DLB_SINCE:
            raise NxosCliError(line, INVALID)
        if body[0] == "dlb-interface" and self.mode == "dlb":
            for name in re.split(r"\s*,\s*", " ".join(body[1:])):
                if canonical_interface(name) not in self.ports:
                    raise NxosCliError(line, "% Invalid interface " + name)  # [U] wording
        refused = strict.check(line, self.editor, DIALECT)
        if refused is not None:
            raise NxosCliError(line, refused)
        mode = self.mode
        if body[0] == "remote-as" and len(body) == 2 and mode in ("bgp-neighbor", "neighbor-af"):
            self._check_asn(line, body[1])
        if body[0] == "router-id" and len(body) == 2 and not valid_ipv4(body[1]):
            raise NxosCliError(line, INVALID_IP)
        address = body[1] if body[0] in ("router-id", "neighbor") and len(body) >= 2 else None
        if body[:2] == ["ip", "address"] and len(body) >= 3:
            address = body[2]
        usable = address is not None and valid_ipv4(address.split("/")[0])
        if usable and (mode != "root" or body[0] != "neighbor") and host_address_error(str(address)):
            raise NxosCliError(line, INVALID_IP)  # [U] that NX-OS answers a multicast/class E address so
        if body[0] == "neighbor" and len(body) >= 2 and mode in ("router-bgp", "bgp-vrf"):
            peer = body[1].split("/")[0]
            if re.fullmatch(r"[\d.]+", peer) and not valid_ipv4(peer):
                raise NxosCliError(line, INVALID_IP)
        if body[:2] == ["ip", "address"] and len(body) >= 3 and not valid_prefix(body[2], strict=False):
            raise NxosCliError(line, INVALID_IP)
        in_af = mode in ("address-family", "neighbor-af", "bgp-vrf")
        if body[0] == "network" and len(body) >= 2 and in_af and not valid_prefix(body[1], strict=True):
            raise NxosCliError(line, INVALID_IP)
        if body[0] == "network" and len(body) >= 2 and in_af and network_error(body[1]):
            raise NxosCliError(line, INVALID_IP)

    def _check_qos_references(self, line: str, neg: bool, body: list[str]) -> None:
        """Policies and classes must exist before they are used, and cannot be removed while in use.

        [U] the NX-OS error wording for these cases is assumed.
        """
        text = " ".join(body)
        m = _SERVICE_POLICY.fullmatch(text)
        if m and not neg and self.mode in ("interface", "system-qos", "root"):
            if self.root.find(f"policy-map type {m.group(1)} {m.group(2)}") is None:
                raise NxosCliError(line, f"ERROR: policy-map {m.group(2)} does not exist")
            return
        m = _POLICY_MAP.fullmatch(text)
        if m and neg:
            for _depth, node in self.root.walk():
                sp = _SERVICE_POLICY.fullmatch(node.text)
                if sp and sp.group(1) == m.group(1) and sp.group(2) == m.group(2):
                    raise NxosCliError(line, f"ERROR: policy-map {m.group(2)} is in use, cannot delete")
            return
        m = _CLASS.fullmatch(text)
        pmap = next((f.node.text for f in reversed(self.editor.stack) if f.mode == "policy-map"), None)
        if m and not neg and pmap is not None:
            kind = pmap.split()[2]
            name = m.group(2)
            if name == "class-default" or re.fullmatch(_SYSTEM_CLASSES.get(kind, "$^"), name):
                return
            if not any(
                c.text.startswith(f"class-map type {kind} ") and c.text.split()[-1] == name for c in self.root.children
            ):
                raise NxosCliError(line, f"ERROR: class-map {name} does not exist")

    def _apply_one(self, line: str, indent: int | None) -> None:
        self._check(line)
        try:
            self.editor.apply(line, indent=indent)
            self._apply_to_range(line, indent)
        except CliError as err:
            raise from_cli_error(err) from err
        if line.startswith("no feature "):
            _cascade_feature(self.root, line.split()[2])

    def _apply_to_range(self, line: str, indent: int | None) -> None:
        stack = self.editor.stack
        if not self._range or len(stack) != 2 or stack[1].mode != "interface":
            return
        if line.startswith("interface "):
            return
        frame = stack[1]
        if frame.node.text != f"interface {self._range[-1]}":
            self._range = []  # another section was entered since the range
            return
        last = frame.node
        try:
            for name in self._range[:-1]:
                node = self.root.find(f"interface {name}")
                if node is not None:
                    frame.node = node
                    self.editor.apply(line, indent=indent)
                    del stack[2:]
        finally:
            frame.node = last
            del stack[2:]
            stack[1] = frame


def check_references(root: Node) -> None:
    """A whole configuration's QoS references resolve (a file is a state: its order does not matter)."""
    for _depth, node in root.walk():
        m = _SERVICE_POLICY.fullmatch(node.text)
        if m and root.find(f"policy-map type {m.group(1)} {m.group(2)}") is None:
            raise NxosCliError(node.text, f"ERROR: policy-map {m.group(2)} does not exist")
    for pmap in root.children:
        pm = _POLICY_MAP.fullmatch(pmap.text)
        if pm is None:
            continue
        for cls in pmap.children:
            cm = _CLASS.fullmatch(cls.text)
            name = cm.group(2) if cm else ""
            if not cm or name == "class-default" or re.fullmatch(_SYSTEM_CLASSES.get(pm.group(1), "$^"), name):
                continue
            if not any(
                c.text.startswith(f"class-map type {pm.group(1)} ") and c.text.split()[-1] == name
                for c in root.children
            ):
                raise NxosCliError(cls.text, f"ERROR: class-map {name} does not exist")


_SERVICE_POLICY = re.compile(r"service-policy type (qos|queuing|network-qos) (?:(?:input|output) )?(\S+)")
_POLICY_MAP = re.compile(r"policy-map type (qos|queuing|network-qos) (\S+)")
_CLASS = re.compile(r"class(?: type (qos|queuing|network-qos))? (\S+)")
# system-defined class names of the 8-queue templates ([V] c-8q-nq3 / c-out-8q-q3 in docs/reference/roce-lossless.md §3)
_SYSTEM_CLASSES = {
    "network-qos": r"c-8q-nq([0-7]|-default)|c-nq([0-7]|-default)",
    "queuing": r"c-(out|in)-8q-q([0-7]|-default)|c-(out|in)-q([0-7]|-default)",
}


def _vlan_list(text: str, spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        if not part:
            raise NxosCliError(text, INVALID)
        lo, _, hi = part.partition("-")
        a, b = int(lo), int(hi or lo)
        if not 1 <= a <= b <= 4094:
            raise NxosCliError(text, INVALID_RANGE)
        out += range(a, b + 1)
    return out


_FEATURE_SECTIONS = {"bgp": ("router bgp ",), "interface-vlan": ("interface Vlan",)}


def _cascade_feature(root: Node, feature: str) -> None:
    """``no feature X`` removes the configuration that needs X, as NX-OS does."""
    prefixes = _FEATURE_SECTIONS.get(feature, ())
    if prefixes:
        root.children = [c for c in root.children if not c.text.startswith(prefixes)]


def ensure_ports(root: Node, ports: list[str]) -> None:
    """Every physical interface has a stanza (show running-config lists them even when empty)."""
    have = {c.text for c in root.children}
    for port in [*ports, "mgmt0"]:
        if f"interface {port}" not in have:
            root.children.append(Node(f"interface {port}"))


def apply_lines(root: Node, ports: list[str], lines: list[str], version: str = NXOS_VERSION) -> None:
    session = ConfigSession(root, ports, version=version)
    for line in lines:
        session.apply(line)


def load(text: str, ports: list[str], version: str = NXOS_VERSION) -> Node:
    """A whole configuration file (checkpoint, rollback target, startup-config), validated.

    Files are read like the device's rollback reads them: by indentation (a file is a hierarchy, not typed
    input), with ``version`` and ``!`` comment lines skipped. Raises ``NxosCliError``.
    """
    root = Node("")
    session = ConfigSession(root, ports, check_references=False, version=version)
    frames = session.editor.stack
    for raw in text.expandtabs(8).splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("!") or stripped.startswith("version "):
            continue
        width = len(raw) - len(raw.lstrip(" "))
        while len(frames) > 1 and frames[-1].indent >= width:
            frames.pop()
        session.apply(stripped, indent=width)
    check_references(root)
    ensure_ports(root, ports)
    return root


# -- what an exec command answers, and a connection's CLI state (shared by nxos_cli and nxos_replace) -----------
NO_SUCH_FILE = "No such file or directory"


@dataclass
class Reply:
    body: Any = None  # structured output (NX-API ``cli``); None for config lines
    text: str = ""  # the CLI text (NX-API ``cli_ascii``, SSH)


@dataclass
class ExecSession:
    """Per-connection CLI state: config context, ``terminal dont-ask``, whether config needs ``conf t``."""

    nxapi: bool
    config: ConfigSession | None = None
    dont_ask: bool = False
    committed: bool = False  # a config line was applied in this session/request
    generation: int = -1  # the device's config generation the config context belongs to
