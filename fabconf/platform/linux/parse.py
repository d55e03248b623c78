"""Parsers for the real output formats of the tools fabconf's linux driver runs on a GPU host.

Formats are those of docs/reference/roce-lossless.md §4 (mlnx_qos ``pretty_print``, iproute2 ``ip -j link``,
``rdma link``, ``ibstat``, ``ibdev2netdev``, ``mlxconfig q`` with ``-e``, ``cma_roce_tos``, OFED sysfs files) and §5
(``/etc/nccl.conf``). Every parser is strict: output that does not have the expected shape raises
``ParseError`` (the driver turns it into a per-host error naming the command and an excerpt) instead of
yielding a guessed value -- a garbled console must never read as "all good".
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

PRIOS = 8
DSCPS = 64


class ParseError(ValueError):
    """The output of a tool does not have the shape its parser expects."""


# -- common checks ------------------------------------------------------------------------------------

_BAD_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffd]")


def check_clean(text: str) -> None:
    """Reject output with NUL, other control characters or U+FFFD (undecodable bytes): a damaged stream."""
    match = _BAD_CHARS.search(text)
    if match:
        raise ParseError(f"output contains a control or undecodable character at offset {match.start()}")


def excerpt(text: str, limit: int = 120) -> str:
    """A short, printable excerpt of tool output for error messages (control characters escaped)."""
    cut = text[:limit]
    shown = cut.encode("unicode_escape").decode("ascii", "replace")
    return shown + ("..." if len(text) > limit else "")


def parse_int(text: str, what: str, low: int = 0, high: int = 1 << 31) -> int:
    word = text.strip()
    if not re.fullmatch(r"-?\d+", word):
        raise ParseError(f"{what}: expected an integer, got {word[:40]!r}")
    value = int(word)
    if not low <= value <= high:
        raise ParseError(f"{what}: {value} outside {low}..{high}")
    return value


def parse_int_lines(text: str, count: int, what: str, low: int = 0, high: int = 1 << 31) -> list[int]:
    """``cat f1 f2 ...`` of sysfs files printing ``"%u\\n"``: exactly ``count`` integer lines."""
    check_clean(text)
    lines = text.splitlines()
    if len(lines) != count:
        raise ParseError(f"{what}: expected {count} lines, got {len(lines)}")
    return [parse_int(line, what, low, high) for line in lines]


# -- mlnx_qos -------------------------------------------------------------------------------------------


@dataclass
class QosReport:
    """What ``mlnx_qos -i IF`` reports that the driver manages or checks."""

    dcbx: str
    trust: str
    pfc: list[int]
    dscp2prio: list[int] | None  # 64 entries, DSCP -> priority; None when not shown (trust pcp)
    lldpad_warning: bool


_PRIO_ROW = re.compile(r"prio:(\d) dscp:((?:\d{1,2},)*)$")


def parse_mlnx_qos(text: str) -> QosReport:
    """Parse the tool's report (§4.1). Older OFED builds omit the buffer lines; those are not required.

    [U] TC print order is not relied upon (the TC section is not parsed)."""
    check_clean(text)
    lines = text.splitlines()
    lldpad = any(line.startswith("******") and "lldpad" in line for line in lines)
    dcbx = trust = None
    pfc: list[int] | None = None
    table: list[int | None] | None = None
    in_map = False
    for raw in lines:
        line = raw.strip()
        row = _PRIO_ROW.match(line) if in_map else None
        if in_map and row:
            prio = int(row.group(1))
            for item in filter(None, row.group(2).split(",")):
                dscp = int(item)
                if dscp >= DSCPS or table is None or table[dscp] is not None:
                    raise ParseError(f"dscp2prio mapping: DSCP {dscp} out of range or listed twice")
                table[dscp] = prio
            continue
        in_map = False
        if line.startswith("DCBX mode:"):
            dcbx = line.partition(":")[2].strip()
        elif line.startswith("Priority trust state:"):
            trust = line.partition(":")[2].strip()
        elif line == "dscp2prio mapping:":
            in_map, table = True, [None] * DSCPS
        elif line.startswith("enabled") and pfc is None:
            values = line.split()[1:]
            if len(values) != PRIOS or any(v not in ("0", "1") for v in values):
                raise ParseError(f"PFC 'enabled' row: expected {PRIOS} values of 0/1, got {values}")
            pfc = [int(v) for v in values]
    if trust not in ("pcp", "dscp"):
        raise ParseError(f"no valid 'Priority trust state:' line (got {trust!r})")
    if pfc is None or "PFC configuration:" not in text:
        raise ParseError("no 'PFC configuration:' block with an 'enabled' row")
    dscp2prio: list[int] | None = None
    if trust == "dscp":
        if table is None or any(p is None for p in table):
            missing = DSCPS if table is None else sum(p is None for p in table)
            raise ParseError(f"trust is dscp but the dscp2prio mapping is incomplete ({missing} DSCP values missing)")
        dscp2prio = [int(p) for p in table if p is not None]
    return QosReport(dcbx=dcbx or "", trust=trust, pfc=pfc, dscp2prio=dscp2prio, lldpad_warning=lldpad)


# -- ip -j link -------------------------------------------------------------------------------------------


@dataclass
class Link:
    ifname: str
    mtu: int
    admin_up: bool
    oper_up: bool
    mac: str
    altnames: tuple[str, ...] = ()  # udev's other names for it (``ip link property add ... altname``)


def _link(item: object) -> Link:
    if not isinstance(item, dict) or not isinstance(item.get("ifname"), str) or not isinstance(item.get("mtu"), int):
        raise ParseError("an interface object without 'ifname'/'mtu'")
    flags = item.get("flags") or []
    if not isinstance(flags, list):
        raise ParseError("'flags' is not a list")
    oper = item.get("operstate")
    up = "LOWER_UP" in flags and oper in ("UP", "UNKNOWN")
    altnames = item.get("altnames") or []
    names = tuple(str(n) for n in altnames) if isinstance(altnames, list) else ()
    return Link(item["ifname"], item["mtu"], "UP" in flags, up, str(item.get("address", "")), names)


def parse_ip_links(text: str) -> list[Link]:
    """``ip -j link show [dev IF]``: a JSON array of interface objects."""
    check_clean(text)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"not valid JSON ({exc.msg} at offset {exc.pos})") from None
    if not isinstance(data, list):
        raise ParseError("expected a JSON array of interfaces")
    return [_link(item) for item in data]


def parse_ip_link(text: str, ifname: str) -> Link:
    every = parse_ip_links(text)
    links = [link for link in every if link.ifname == ifname]
    if len(links) != 1:
        owner = next((link.ifname for link in every if ifname in link.altnames), None)
        if owner is not None:  # ip resolves an altname; sysfs and the RDMA tools know the port by its name only
            raise ParseError(f"{ifname} is an alternative name of {owner}: name the port {owner} in the inventory")
        raise ParseError(f"expected exactly one interface named {ifname}")
    return links[0]


def parse_bus_info(text: str) -> str:
    """``ethtool -i IF`` (the driver information, printed by ethtool's ``dump_drvinfo`` [V: ethtool source]): the
    ``bus-info`` line, the port's PCI address (``0000:17:00.0``)."""
    check_clean(text)
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "bus-info" and re.fullmatch(
            r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]", value.strip()
        ):
            return value.strip()
    raise ParseError("ethtool -i: no PCI bus-info line")


# -- ToS / traffic class -------------------------------------------------------------------------------------


def parse_cma_roce_tos(text: str) -> int:
    """``cma_roce_tos -d DEV`` prints the current default RoCE ToS as one number (§4.2)."""
    check_clean(text)
    return parse_int(text, "cma_roce_tos", 0, 255)


def parse_traffic_class(text: str) -> int | None:
    """OFED ``/sys/class/infiniband/DEV/tc/1/traffic_class``.

    [U] the read-back format is reported as ``Global tclass=N`` (docs/reference/roce-lossless.md §4.2, unverified); a
    bare number is accepted too, and an empty file is taken to mean "never set" (None)."""
    check_clean(text)
    word = text.strip()
    if not word:
        return None
    match = re.fullmatch(r"(?:Global tclass=)?(\d+)", word)
    if not match:
        raise ParseError(f"traffic_class: unexpected content {word[:40]!r}")
    return parse_int(match.group(1), "traffic_class", 0, 255)


# -- mlxconfig ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MlxValue:
    default: str | None
    current: str | None  # None when the query did not show the Current column
    next_boot: str

    @property
    def pending(self) -> bool:
        # the same text is the same value (mlx_same(a, a) always holds): most rows, and no regex for them
        return (
            self.current is not None and self.current != self.next_boot and not mlx_same(self.next_boot, self.current)
        )


# A parameter name: upper-case words, but not only: real ConnectX-5/6 dumps carry ``EXP_ROM_UEFI_x86_ENABLE``
# [3P: published dumps in tests/captures/mlxconfig-query, listed in docs/reference/captures.md; V: the name is in
# mstflint's parameter database, mlxconfig/mlxconfig_dbs/mlxconfig_host.db, at b9d9e84].
_MLX_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def parse_mlxconfig_query(text: str) -> dict[str, MlxValue]:
    """``mlxconfig -d DEV [-e] q`` (§4.4): the rows under ``Configurations:``.

    With ``-e`` the header names Default, Current and Next Boot columns and a leading ``*`` marks changed
    parameters; without it only Next Boot is shown. [U] values are assumed to contain no spaces (all the
    documented ones -- numbers, ``NAME(n)``, ``Array[0..N]``, ``N/A`` -- do not)."""
    check_clean(text)
    lines = text.splitlines()
    header = next((i for i, line in enumerate(lines) if line.startswith("Configurations:")), None)
    if header is None or not any(line.startswith("Device #") for line in lines[:header]):
        raise ParseError("no 'Device #N:' block with a 'Configurations:' table")
    return dict(_mlxconfig_table(tuple(lines[header:]), header + 1))


# The same table is read again and again (every NIC of a fleet's hosts at every diff and verify: 143 rows each, a
# tenth of a host's read in fabconf, issue 42): kept by its text, its rows parsed once. A table that does not parse
# raises each time; the values are frozen and each caller gets a dict of its own.
@functools.lru_cache(maxsize=256)
def _mlxconfig_table(lines: tuple[str, ...], first: int) -> dict[str, MlxValue]:
    """The rows of a ``Configurations:`` table: ``lines`` from that line, line ``first`` of the output, on."""
    columns = lines[0].split(":", 1)[1].split()
    verbose = "Current" in columns and "Default" in columns
    if not verbose and columns != ["Next", "Boot"]:
        raise ParseError(f"unexpected Configurations header {lines[0]!r}")
    out: dict[str, MlxValue] = {}
    for number, raw in enumerate(lines[1:], start=first + 1):
        line = raw.strip()
        if not line:
            if out:
                break
            continue
        if line.startswith("The '*'"):
            break
        words = line.lstrip("*").split()
        if len(words) != (4 if verbose else 2) or not _MLX_KEY.fullmatch(words[0]):
            raise ParseError(f"mlxconfig query: line {number}: unexpected configuration row {line[:60]!r}")
        if verbose:
            out[words[0]] = MlxValue(words[1], words[2], words[3])
        else:
            out[words[0]] = MlxValue(None, None, words[1])
    if not out:
        raise ParseError("the Configurations table is empty")
    return out


_ENUM = re.compile(r"(.*)\((\d+)\)")


def _mlx_key(value: str) -> tuple[str | None, int | None]:
    """(name, number) of a value as mlxconfig prints or accepts it: ``ETH(2)``, ``ETH``, ``2``, ``True(1)``."""
    text = value.strip()
    match = _ENUM.fullmatch(text)
    if match:
        return match.group(1).upper(), int(match.group(2))
    try:
        return None, int(text, 0)
    except ValueError:
        return text.upper(), None


def mlx_same(a: str, b: str) -> bool:
    """Whether two mlxconfig values mean the same: by number when both carry one, else by enum name."""
    name_a, num_a = _mlx_key(a)
    name_b, num_b = _mlx_key(b)
    if num_a is not None and num_b is not None:
        return num_a == num_b
    return name_a is not None and name_a == name_b


def mlx_set_value(value: str) -> str:
    """What to pass to ``mlxconfig set KEY=...``: the number of a ``NAME(n)`` value, else the value itself."""
    _name, number = _mlx_key(value)
    return str(number) if number is not None else value.strip()


# -- NCCL --------------------------------------------------------------------------------------------------------


def parse_nccl_conf(text: str) -> dict[str, str]:
    """``KEY=VALUE`` lines of ``/etc/nccl.conf`` as NCCL reads them: a line starting with ``#`` and a line without
    ``=`` are skipped, the first ``=`` splits (``NCCL_IB_HCA==mlx5_0:1`` has the value ``=mlx5_0:1``), and nothing
    is stripped: ``KEY = VAL`` sets the variable ``KEY `` to `` VAL``, which NCCL never reads as ``KEY``, so it is
    not in sync with ``KEY=VAL`` [V: NVIDIA/nccl ``src/misc/param.cc``, ``setEnvFile``]. A later line for the same
    key wins here [U: NCCL's ``setenv(..., 0)`` keeps the first; the intent renders each key once]."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        key, eq, value = line.partition("=")
        if eq:
            out[key] = value
    return out


# -- link status tools ---------------------------------------------------------------------------------------


@dataclass
class RdmaLink:
    dev: str
    port: int
    state: str
    physical_state: str
    netdev: str


_RDMA_LINK = re.compile(
    r"(?:\d+/\d+: )?link (\S+)/(\d+):? .*?state (\S+) physical_state (\S+)(?: netdev (\S+))?"
    r"|(?:\d+/\d+: )(\S+)/(\d+): .*?state (\S+) physical_state (\S+)(?: netdev (\S+))?"
)


def parse_rdma_link(text: str) -> list[RdmaLink]:
    """``rdma link show``: current iproute2 (``link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev X``)
    or the older form (``1/1: mlx5_0/1: state ACTIVE physical_state LINK_UP netdev X``), §4.5."""
    check_clean(text)
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        match = _RDMA_LINK.match(line)
        if not match:
            raise ParseError(f"unexpected rdma link line {line[:60]!r}")
        groups = match.groups()
        dev, port, state, phys, netdev = groups[:5] if groups[0] else groups[5:]
        out.append(RdmaLink(str(dev), int(str(port)), str(state), str(phys), netdev or ""))
    return out


@dataclass
class IbPort:
    state: str
    physical_state: str
    rate: (
        float  # Gb/s; ibstat prints 2.5 for a 1x SDR rate (a ConnectX-3 port that is down) [3P: tests/captures/ibstat]
    )


def parse_ibstat(text: str) -> dict[str, dict[int, IbPort]]:
    """``ibstat``: ``CA 'mlx5_0'`` blocks with ``Port N:`` sub-blocks (State, Physical state, Rate), §4.5."""
    check_clean(text)
    out: dict[str, dict[int, IbPort]] = {}
    ca: str | None = None
    port: int | None = None
    fields: dict[tuple[str, int], dict[str, str]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        match = re.fullmatch(r"CA '([^']+)'", line)
        if match:
            ca, port = match.group(1), None
            out[ca] = {}
            continue
        match = re.fullmatch(r"Port (\d+):", line)
        if match and ca is not None:
            port = int(match.group(1))
            fields[(ca, port)] = {}
            continue
        if ca is not None and port is not None and ":" in line:
            key, _, value = line.partition(":")
            fields[(ca, port)][key.strip()] = value.strip()
    if not out:
        raise ParseError("no \"CA 'NAME'\" block")
    for (name, number), values in fields.items():
        missing = [k for k in ("State", "Physical state", "Rate") if k not in values]
        if missing:
            raise ParseError(f"{name} port {number}: missing {', '.join(missing)}")
        out[name][number] = IbPort(values["State"], values["Physical state"], _rate(values["Rate"], name, number))
    return out


def _rate(text: str, name: str, port: int) -> float:
    """ibstat's ``Rate:``, a number of Gb/s: ``400``, ``56``, ``2.5``; anything else is refused."""
    if not re.fullmatch(r"\d+(?:\.\d+)?", text.strip()):
        raise ParseError(f"ibstat: {name} port {port}: Rate is not a number ({text.strip()[:30]!r})")
    rate = float(text)
    return int(rate) if rate.is_integer() else rate


def parse_ibdev2netdev(text: str) -> dict[str, tuple[str, str]]:
    """``ibdev2netdev [-v]``: RDMA device -> (netdev, "Up"/"Down"), e.g. ``mlx5_0 port 1 ==> ens1f0np0 (Up)``.

    One RDMA port per device, as on ConnectX-4 and later (mlx5: each port its own device). A device listed for
    two ports (ConnectX-3, mlx4: ``mlx4_0 port 2 ==> ens817d1``) is refused rather than read as its last port
    [3P: tests/captures/ibdev2netdev]. Two devices may name one netdev (a RoCE LAG on ``bond0``)."""
    check_clean(text)
    out: dict[str, tuple[str, str]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        match = re.search(r"(?:^|\s)(\S+)(?: \([^)]*\).*)? port (\d+)(?: \(\w+\))? ==> (\S+) \((\w+)\)$", line)
        if not match:
            raise ParseError(f"ibdev2netdev: line {number}: unexpected line {line[:60]!r}")
        if match.group(1) in out:
            raise ParseError(
                f"ibdev2netdev: line {number}: {match.group(1)} is listed again (port {match.group(2)}); fabconf "
                "reads one RDMA port per device"
            )
        out[match.group(1)] = (match.group(3), match.group(4))
    return out


def parse_os_release(text: str) -> dict[str, str]:
    out = {}
    for raw in text.splitlines():
        key, eq, value = raw.strip().partition("=")
        if eq:
            out[key] = value.strip().strip('"')
    return out


def parse_lldpctl(text: str) -> dict[str, list[dict[str, str]]]:
    """``lldpctl -f json`` -> {local port: [{"hostname", "port"}]}. lldpd prints ``interface`` as a list, or as
    one mapping when there is a single neighbour [3P: lldpd's own integration test, ``test_lldpcli.py``
    ``test_json_output``; tests/captures/lldpctl-f-json]; both are read."""
    check_clean(text)
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"not JSON ({exc})") from None
    interfaces = (doc.get("lldp") or {}).get("interface") or [] if isinstance(doc, dict) else []
    items = interfaces if isinstance(interfaces, list) else [{k: v} for k, v in interfaces.items()]
    out: dict[str, list[dict[str, str]]] = {}
    for item in items:
        for port, entry in (item or {}).items():
            chassis = next(iter((entry.get("chassis") or {}).keys()), "")
            remote = ((entry.get("port") or {}).get("id") or {}).get("value", "")
            out.setdefault(str(port), []).append({"hostname": str(chassis), "port": str(remote)})
    return out
