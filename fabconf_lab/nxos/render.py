"""NX-OS configuration as the device shows it, for the lab simulator: ``show running-config`` text in NX-OS
order (and the ``all`` variant), the ``show diff rollback-patch`` text, the ``DeviceView`` the lab world
reads, and the default brownfield startup-config. Trees come from ``fabconf_lab.nxos.config``.
"""

from __future__ import annotations

from fabconf_lab.cliconf import Node
from fabconf_lab.nxos.config import DIALECT, NXOS_VERSION, interface_sort_key
from fabconf_lab.world import DeviceView, NeighborView, PortView

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
        "snmp-server community lab-ro group network-operator",  # the operator's SNMP agent (the lab's metrics)
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
