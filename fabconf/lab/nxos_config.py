"""NX-OS configuration semantics for the lab simulator, on top of ``fabconf.lab.cliconf``.

What this adds to cliconf's ``NXOS`` dialect (extended here, cliconf itself is not edited):

- more commands fabconf renders or brownfield configs carry, NX-OS style ``no`` forms (``no feature bgp``
  and ``no ip route`` remove lines, they are not stored), and range checks for QoS values;
- line normalisation the NX-OS parser does: interface names (``eth1/1`` -> ``Ethernet1/1``), ``switchname``
  -> ``hostname``, ``neighbor A remote-as N`` -> ``neighbor A`` + ``remote-as N``, ``vlan 10,20`` expanded,
  ``ip address A M`` -> ``ip address A/len``;
- checks the whitelist cannot express: interfaces that do not exist, feature gating (``router bgp`` needs
  ``feature bgp``), one BGP instance, address/ASN syntax. Errors carry NX-OS wording (``% Invalid command at
  '^' marker.``);
- ``show running-config`` rendering in NX-OS order, the ``all`` variant with a few defaults made explicit,
  the ``show diff rollback-patch`` text, and the ``DeviceView`` the lab world reads.

Physical interfaces always exist: every port has an ``interface X`` stanza, possibly empty.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import replace

from fabconf.lab import cliconf
from fabconf.lab.cliconf import CliError, Editor, Node
from fabconf.lab.world import DeviceView, NeighborView, PortView

NXOS_VERSION = "10.3(4a)"

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
            "interface": (r"switchport trunk native vlan \d+", r"switchport trunk allowed vlan .+", r"fec .+"),
            "pmap-class": (r"pause buffer-size .+",),
        },
        ranges=(
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


def _valid_ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _valid_prefix(text: str, strict: bool) -> bool:
    try:
        if strict:
            ipaddress.IPv4Network(text)
        else:
            ipaddress.IPv4Interface(text)
    except ValueError:
        return False
    return "/" in text


class ConfigSession:
    """Applies NX-OS configuration lines to a tree like ``configure terminal`` does.

    Lines may carry indentation (napalm merge) or not: like the NX-OS parser, indentation is ignored and a
    line that is not valid in the current sub-mode falls back to the parent modes. ``ports`` are the
    physical Ethernet ports that exist.
    """

    def __init__(self, root: Node, ports: list[str], *, check_references: bool = True) -> None:
        self.root = root
        self.ports = ports
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
        if self.check_references:
            self._check_qos_references(line, neg, body)
        if neg:
            return
        mode = self.mode
        if body[0] == "remote-as" and len(body) == 2 and mode in ("bgp-neighbor", "neighbor-af"):
            self._check_asn(line, body[1])
        if body[0] == "router-id" and len(body) == 2 and not _valid_ipv4(body[1]):
            raise NxosCliError(line, INVALID_IP)
        if body[:2] == ["ip", "address"] and len(body) >= 3 and not _valid_prefix(body[2], strict=False):
            raise NxosCliError(line, INVALID_IP)
        in_af = mode in ("address-family", "neighbor-af", "bgp-vrf")
        if body[0] == "network" and len(body) >= 2 and in_af and not _valid_prefix(body[1], strict=True):
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
# system-defined class names of the 8-queue templates ([V] c-8q-nq3 / c-out-8q-q3 in roce-lossless.md §3)
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


def apply_lines(root: Node, ports: list[str], lines: list[str]) -> None:
    session = ConfigSession(root, ports)
    for line in lines:
        session.apply(line)


def load(text: str, ports: list[str]) -> Node:
    """A whole configuration file (checkpoint, rollback target, startup-config), validated.

    Files are read like the device's rollback reads them: by indentation (a file is a hierarchy, not typed
    input), with ``version`` and ``!`` comment lines skipped. Raises ``NxosCliError``.
    """
    root = Node("")
    session = ConfigSession(root, ports, check_references=False)
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


# ---------------------------------------------------------------------------------------------------------
# rendering

_TOP_ORDER = (
    ("hostname ", 1),
    ("feature ", 2),
    ("username ", 3),
    ("ip domain", 4),
    ("no ip domain", 4),
    ("ip name-server", 4),
    ("class-map ", 20),
    ("policy-map ", 21),
    ("system qos", 22),
    ("ip access-list", 23),
    ("ip prefix-list", 24),
    ("route-map ", 25),
    ("ip route ", 26),
    ("vlan ", 27),
    ("vrf context", 28),
    ("interface ", 30),
    ("line ", 31),
    ("boot ", 32),
    ("router bgp", 40),
)


def _top_rank(node: Node) -> tuple:
    rank = 10
    for prefix, r in _TOP_ORDER:
        if node.text.startswith(prefix):
            rank = r
            break
    if rank == 27:
        return (rank, int(node.text.split()[1]) if node.text.split()[1].isdigit() else 0)
    if rank == 30:
        return (rank, interface_sort_key(node.text.split(" ", 1)[1]))
    return (rank, ())


def _child_rank(node: Node, parent: Node) -> int:
    if parent.text.startswith("interface "):
        return 9 if node.text in ("shutdown", "no shutdown") else 0
    if parent.text.startswith("router bgp") or parent.text.startswith("vrf "):
        if node.text.startswith("neighbor ") or node.text.startswith("template "):
            return 3
        if node.text.startswith("vrf "):
            return 4
        return 2 if node.children else 0
    if parent.text.startswith("neighbor ") or parent.text.startswith("template peer"):
        return 2 if node.children else 0
    return 0


def ordered(root: Node) -> Node:
    """A copy in NX-OS ``show running-config`` order (stable within a rank)."""

    def order(node: Node, top: bool) -> Node:
        kids = [order(c, False) for c in node.children]
        if top:
            kids = [k for _, k in sorted(enumerate(kids), key=lambda p: (_top_rank(p[1]), p[0]))]
        else:
            kids = [k for _, k in sorted(enumerate(kids), key=lambda p: (_child_rank(p[1], node), p[0]))]
        return Node(node.text, kids)

    return order(root, True)


def _with_defaults(root: Node) -> Node:
    """``show running-config all``: a few defaults made explicit ([U] the real output lists far more)."""
    out = root.copy()
    for node in out.children:
        if node.text.startswith("interface ") and not node.text.startswith("interface Vlan"):
            texts = [c.text for c in node.children]
            if not any(t.startswith("mtu ") for t in texts):
                node.children.insert(0, Node("mtu 1500"))
            if "shutdown" not in texts and "no shutdown" not in texts:
                node.children.append(Node("no shutdown"))
    return out


def render_config(root: Node, *, defaults: bool = False) -> str:
    """Config body in NX-OS order, starting with the generated ``version`` line."""
    tree = ordered(_with_defaults(root) if defaults else root)
    out = [f"version {NXOS_VERSION} Bios:version 01.08", ""]
    prev: Node | None = None
    for depth, node in tree.walk():
        if depth == 0:
            section = bool(node.children) or node.text.startswith("interface ")
            if (section or (prev is not None and prev.children)) and out[-1] != "":
                out.append("")
            prev = node
        out.append("  " * depth + node.text)
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------------------
# rollback patch


def _negate(text: str) -> str:
    return text[3:] if text.startswith("no ") else "no " + text


def rollback_patch(current: Node, target: Node) -> list[str]:
    """The commands that turn ``current`` into ``target``, NX-OS rollback-patch style (2-space indent)."""
    out: list[str] = []

    def subtree(node: Node, depth: int) -> None:
        out.append("  " * depth + node.text)
        for c in node.children:
            subtree(c, depth + 1)

    def walk(a: Node, b: Node, depth: int, mode: str | None) -> None:
        b_texts = {c.text for c in b.children}
        a_texts = {c.text for c in a.children}
        b_keys = {DIALECT.single_key(mode, c.text) for c in b.children} if mode else set()
        for c in a.children:
            if c.text in b_texts:
                continue
            key = DIALECT.single_key(mode, c.text) if mode else None
            if key is not None and key in b_keys:
                continue  # replaced by the target's value below
            if _negate(c.text) in b_texts:
                continue  # 'shutdown' <-> 'no shutdown': the target's line says it
            if c.text.startswith("interface ") and not c.text.startswith(("interface loopback", "interface Vlan")):
                continue  # physical interfaces cannot be removed; their stanza is always present
            out.append("  " * depth + _negate(c.text))
        for c in b.children:
            if c.text not in a_texts:
                subtree(c, depth)
                continue
            before = a.find(c.text)
            assert before is not None
            mark = len(out)
            out.append("  " * depth + c.text)
            child_mode = DIALECT.opens(mode, c.text) if mode else None
            walk(before, c, depth + 1, child_mode)
            if len(out) == mark + 1:
                out.pop()

    walk(current, target, 0, "root")
    return out


def rollback_patch_text(current: Node, target: Node) -> str:
    """``show diff rollback-patch`` output ([U] framing lines as recalled from NX-OS 9.x/10.x)."""
    patch = rollback_patch(ordered(current), ordered(target))
    head = "Collecting Running-Config\n#Generating Rollback Patch\n"
    if not patch:
        return head + "Rollback Patch is Empty\n"
    return head + "!!\n" + "\n".join(patch) + "\n"


# ---------------------------------------------------------------------------------------------------------
# what the lab world sees


def lab_view(root: Node, ports: list[str], fallback_hostname: str) -> DeviceView:
    hostname = fallback_hostname
    for text in root.leaves():
        if text.startswith("hostname "):
            hostname = text.split()[1]
    port_views: dict[str, PortView] = {}
    for port in ports:
        node = root.find(f"interface {port}")
        texts = [c.text for c in node.children] if node else []
        mtu = 1500
        address = None
        enabled = "shutdown" not in texts
        for t in texts:
            if t.startswith("mtu "):
                mtu = int(t.split()[1])
            elif t.startswith("ip address ") and not t.endswith(" secondary"):
                address = t.split()[2]
        port_views[port] = PortView(port, enabled, mtu, address)
    asn: int | None = None
    router_id = None
    neighbors: list[NeighborView] = []
    networks: list[str] = []
    max_paths = 1
    bgp = next((c for c in root.children if c.text.startswith("router bgp ")), None)
    if bgp is not None:
        asn = _asn_int(bgp.text.split()[2])
        for c in bgp.children:
            words = c.text.split()
            if words[0] == "router-id":
                router_id = words[1]
            elif words[0] == "neighbor":
                remote = next((g.text.split()[1] for g in c.children if g.text.startswith("remote-as ")), None)
                shut = any(g.text == "shutdown" for g in c.children)
                if remote is not None and not shut:
                    neighbors.append(NeighborView(words[1], _asn_int(remote)))
            elif c.text == "address-family ipv4 unicast":
                for g in c.children:
                    gw = g.text.split()
                    if gw[0] == "network":
                        networks.append(gw[1])
                    elif gw[0] == "maximum-paths" and gw[1].isdigit():
                        max_paths = int(gw[1])
    return DeviceView(
        hostname=hostname,
        ports=port_views,
        asn=asn,
        router_id=router_id,
        neighbors=tuple(neighbors),
        networks=tuple(networks),
        maximum_paths=max_paths,
    )


def _asn_int(text: str) -> int:
    if "." in text:
        hi, lo = text.split(".", 1)
        return int(hi) * 65536 + int(lo)
    return int(text)


def hostname_of(root: Node, fallback: str) -> str:
    for text in root.leaves():
        if text.startswith("hostname "):
            return text.split()[1]
    return fallback


# ---------------------------------------------------------------------------------------------------------
# brownfield default


def default_startup_config(hostname: str, ports: list[str]) -> str:
    """A plausible brownfield NX-OS startup-config: factory defaults plus some pre-existing config."""
    lines = [
        f"hostname {hostname}",
        "feature nxapi",
        "feature scp-server",
        "feature lldp",
        "feature interface-vlan",
        "username admin password 5 $5$LABLAB$Qm9ndXNIYXNoRm9yTGFiT25seQ role network-admin",
        "no ip domain-lookup",
        "system jumbomtu 9000",
        "policy-map type network-qos jumbo-legacy",
        "  class type network-qos class-default",
        "    mtu 9000",
        "vlan 1",
        "vlan 99",
        "  name OLD-STORAGE",
        "vrf context management",
        "  ip route 0.0.0.0/0 192.0.2.1",
    ]
    for i, port in enumerate(ports):
        lines.append(f"interface {port}")
        if i == 0:
            lines += ["  description old-uplink-do-not-use", "  mtu 9000"]
        elif i == 1:
            lines += ["  description spare"]
    lines += [
        "interface mgmt0",
        "  vrf member management",
        "  ip address 192.0.2.10/24",
        "line console",
        "line vty",
        f"boot nxos bootflash:/nxos64-cs.{NXOS_VERSION.replace('(', '.').replace(')', '')}.M.bin",
    ]
    return "\n".join(lines) + "\n"
