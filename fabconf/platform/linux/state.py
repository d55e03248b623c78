"""The data model of fabconf's linux driver: a GPU host's desired and observed NIC state.

- ``HostTarget``: what should be true. Built from the desired-state YAML fabconf renders
  (``templates/linux/*.j2``) by ``target_from_document``, or from a captured snapshot (see ``linux_plan``) to
  restore it. A field that is None is not managed (the driver only touches settings in the document).
- ``HostObserved``: what the host reports (filled by the driver from the real tools).
- ``running_document``: an observed state as YAML in the desired document's shape, so a drift check can
  compare documents.

Document semantics (assumptions stated where the template leaves room):

- ``qos``, ``ecn``, ``roce_tos`` and ``mlxconfig`` are host-wide: they apply to every NIC / RDMA device.
- ``qos.dscp2prio`` is the DSCP -> priority map; a DSCP it leaves out must be on its mlx5 default priority
  (d >> 3; ``[]`` = the default map). fabconf renders all 64 entries (the fabric's one explicit map), and the
  running document lists all 64 as read.
- ``ecn.roce_np_enable`` / ``roce_rp_enable`` list exactly the priorities where ECN is enabled.
- ``roce_tos`` is both the RDMA-CM default ToS (``cma_roce_tos``) and the OFED ``tc/1/traffic_class``.
- ``mlxconfig`` values are compared with the Next Boot column; a Next Boot value that is right but not yet
  Current is pending (not a diff; see the driver's ``pending_firmware``).
- ``nccl_conf`` is the whole ``/etc/nccl.conf``; it is compared by its KEY=VALUE settings.
- ``routing`` (rules and routes as ``ip`` arguments), ``sysctl`` and each NIC's ``address``: per-NIC policy
  routing (``linux_routing``). A NIC entry's own ``mlxconfig`` adds keys for that port of its card (``_P2``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import yaml

from fabconf.compile.yamlc import SAFE_DUMPER, SAFE_LOADER
from fabconf.platform.linux import fastyaml, routing
from fabconf.platform.linux.fastyaml import block_dump
from fabconf.platform.linux.parse import DSCPS, PRIOS, MlxValue
from fabconf.platform.linux.routing import Route, RoutingError, RoutingObserved, RoutingTarget, Rule

NCCL_CONF = "/etc/nccl.conf"
UNIT_NAME = "fabconf-roce.service"
UNIT_PATH = f"/etc/systemd/system/{UNIT_NAME}"
SCRIPT_PATH = "/usr/local/sbin/fabconf-roce.sh"
CHECKPOINT_PATH = "/var/lib/fabconf/linux-rollback.json"  # the capture of the last commit, kept on the host
# written after the checkpoint in the same exec: its SHA-256 and "applying" flag (``LinuxDriver._checkpoint_applying``)
CHECKPOINT_RECORD = "/var/lib/fabconf/linux-rollback.sha256"


class DocumentError(ValueError):
    """The candidate document is not a valid desired-state document."""


# -- targets -------------------------------------------------------------------------------------------


@dataclass
class NicTarget:
    netdev: str
    rdma: str
    speed_gbps: int | None = None
    mtu: int | None = None
    trust: str | None = None
    pfc: list[int] | None = None
    dscp2prio: list[int] | None = None  # the full 64-entry table
    ecn_np: list[int] | None = None  # 8 flags
    ecn_rp: list[int] | None = None
    cnp_dscp: int | None = None
    cnp_802p_prio: int | None = None
    cma_tos: int | None = None
    traffic_class: int | None = None
    mlxconfig: dict[str, str] = field(default_factory=dict)  # compared with Next Boot
    adapter: str | None = None  # the card (PCI bus:device) when the document names it; ports of one card share firmware


@dataclass
class FileTarget:
    content: str | None  # None: the file must not exist


@dataclass
class BootTarget:
    unit: str | None  # None: no unit file
    script: str | None
    enabled: bool


@dataclass
class HostTarget:
    hostname: str
    nics: list[NicTarget]
    nccl: FileTarget | None = None
    boot: BootTarget | None = None
    activate_firmware: bool = False  # run mlxfwreset so that Next Boot becomes Current now
    routing: RoutingTarget | None = None  # None: addresses, routes, rules and sysctls not managed


# -- observed state ----------------------------------------------------------------------------------------


@dataclass
class NicObserved:
    netdev: str
    rdma: str
    present: bool = True
    pci: str = ""  # the port's PCI address (``ethtool -i``): what mlxconfig and mlxfwreset are given with -d
    mtu: int = 0
    oper_up: bool = False
    trust: str = ""
    pfc: list[int] = field(default_factory=list)
    dscp2prio: list[int] | None = None  # None: not shown by mlnx_qos (trust pcp)
    lldpad_warning: bool = False
    ecn_np: list[int] = field(default_factory=list)
    ecn_rp: list[int] = field(default_factory=list)
    cnp_dscp: int = 0
    cnp_802p_prio: int = 0
    cma_tos: int = 0
    traffic_class: int | None = None
    traffic_class_file: bool = True  # False: no OFED tc/1/traffic_class file on this host
    mlx: dict[str, MlxValue] = field(default_factory=dict)


@dataclass
class HostObserved:
    hostname: str
    nics: dict[str, NicObserved]
    nccl: str | None = None
    unit: str | None = None
    script: str | None = None
    enabled: bool = False
    routing: RoutingObserved = field(default_factory=RoutingObserved)


def _routing_parts(data: dict[str, Any]) -> dict[str, Any]:
    """Route and Rule objects back from their JSON (asdict) form."""
    out = dict(data)
    for key, cls in (("routes", Route), ("rules", Rule)):
        if out.get(key) is not None:
            out[key] = [cls(**item) for item in out[key]]
    return out


@dataclass
class Snapshot:
    """The host before a commit, the target that commit applied, and whether it reset firmware. Stored on
    the host (``CHECKPOINT_PATH``) before anything changes, so a later session can still roll back."""

    observed: HostObserved
    managed: HostTarget
    fw_reset: bool = False
    # True from before the first change until the commit ended (applied, or restored): a checkpoint still
    # "applying" with no live run holding the host's commit lock is an interrupted, half-applied commit
    applying: bool = False

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Snapshot:
        """Raises ValueError (or a KeyError/TypeError subclass of it via the caller) on a damaged file."""
        data = json.loads(text)
        obs, man = data["observed"], data["managed"]
        nics = {}
        for name, nic in obs["nics"].items():
            mlx = {key: MlxValue(**value) for key, value in nic.pop("mlx").items()}
            nics[name] = NicObserved(**nic, mlx=mlx)
        observed = HostObserved(
            **{**obs, "nics": nics, "routing": RoutingObserved(**_routing_parts(obs.get("routing") or {}))}
        )
        managed_routing = man.get("routing")
        managed = HostTarget(
            hostname=man["hostname"],
            nics=[NicTarget(**nic) for nic in man["nics"]],
            nccl=FileTarget(**man["nccl"]) if man.get("nccl") else None,
            boot=BootTarget(**man["boot"]) if man.get("boot") else None,
            activate_firmware=bool(man.get("activate_firmware")),
            routing=RoutingTarget(**_routing_parts(managed_routing)) if managed_routing else None,
        )
        return cls(observed, managed, bool(data.get("fw_reset")), bool(data.get("applying")))


# -- the document ----------------------------------------------------------------------------------------------


def default_dscp2prio() -> list[int]:
    return [d >> 3 for d in range(DSCPS)]


def _int(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise DocumentError(f"{where}: expected an integer {low}..{high}, got {value!r}")
    return value


def _flags(prios: Any, where: str) -> list[int]:
    if not isinstance(prios, list):
        raise DocumentError(f"{where}: expected a list of priorities 0-7")
    flags = [0] * PRIOS
    for prio in prios:
        flags[_int(prio, where, 0, PRIOS - 1)] = 1
    return flags


def _pfc(value: Any) -> list[int]:
    items = [x.strip() for x in str(value).split(",")]
    if len(items) != PRIOS or any(x not in ("0", "1") for x in items):
        raise DocumentError(f"qos.pfc: expected {PRIOS} comma-separated 0/1 values, got {value!r}")
    return [int(x) for x in items]


def _dscp2prio(value: Any) -> list[int]:
    table = default_dscp2prio()
    for entry in value or []:
        if not isinstance(entry, list | tuple) or len(entry) != 2:
            raise DocumentError(f"qos.dscp2prio: expected [dscp, prio] pairs, got {entry!r}")
        table[_int(entry[0], "qos.dscp2prio dscp", 0, DSCPS - 1)] = _int(entry[1], "qos.dscp2prio prio", 0, 7)
    return table


def _section(doc: dict[str, Any], name: str) -> dict[str, Any]:
    value = doc.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DocumentError(f"{name}: expected a mapping")
    return value


def _nic(item: Any, index: int, host: NicTarget) -> NicTarget:
    if not isinstance(item, dict) or not isinstance(item.get("netdev"), str) or not isinstance(item.get("rdma"), str):
        raise DocumentError(f"nics[{index}]: expected a mapping with 'netdev' and 'rdma' strings")
    nic = replace(host, netdev=item["netdev"], rdma=item["rdma"], mlxconfig=dict(host.mlxconfig))
    if item.get("mtu") is not None:
        nic.mtu = _int(item["mtu"], f"nics[{index}].mtu", 68, 65535)
    if item.get("speed_gbps") is not None:
        nic.speed_gbps = _int(item["speed_gbps"], f"nics[{index}].speed_gbps", 1, 10_000)
    if item.get("adapter") is not None:
        nic.adapter = str(item["adapter"])
    for key, value in _section(item, "mlxconfig").items():
        nic.mlxconfig[_mlx_key(key, value)] = str(value)
    return nic


def _mlx_key(key: Any, value: Any) -> str:
    if not isinstance(key, str) or not key.replace("_", "").isalnum() or value is None or " " in str(value):
        raise DocumentError(f"mlxconfig: bad entry {key!r}: {value!r}")
    return key


def load_document(text: str) -> Any:
    """The desired-state YAML as data (a safe loader: libyaml's when PyYAML is built with it; fabconf's own
    rendered documents without PyYAML, the same data: ``fastyaml.load``); raises DocumentError when it is not
    YAML."""
    try:
        return fastyaml.load(text, SAFE_LOADER)
    except yaml.YAMLError as exc:
        raise DocumentError(f"not valid YAML: {exc}") from None


def target_from_document(text: str) -> HostTarget:
    """Parse the rendered desired-state YAML; raises DocumentError with the offending path."""
    return target_from_data(load_document(text))


def target_from_data(doc: Any) -> HostTarget:
    """``target_from_document`` of a document already parsed (``load_document``); ``doc`` is not changed."""
    if not isinstance(doc, dict) or not isinstance(doc.get("hostname"), str):
        raise DocumentError("expected a mapping with a 'hostname'")
    if not isinstance(doc.get("nics"), list) or not doc["nics"]:
        raise DocumentError("nics: expected a non-empty list")
    qos, ecn = _section(doc, "qos"), _section(doc, "ecn")
    host = NicTarget(netdev="", rdma="")
    if qos.get("trust") is not None:
        if qos["trust"] not in ("pcp", "dscp"):
            raise DocumentError(f"qos.trust: expected pcp or dscp, got {qos['trust']!r}")
        host.trust = qos["trust"]
    host.pfc = _pfc(qos["pfc"]) if qos.get("pfc") is not None else None
    host.dscp2prio = _dscp2prio(qos["dscp2prio"]) if "dscp2prio" in qos else None
    host.ecn_np = _flags(ecn["roce_np_enable"], "ecn.roce_np_enable") if "roce_np_enable" in ecn else None
    host.ecn_rp = _flags(ecn["roce_rp_enable"], "ecn.roce_rp_enable") if "roce_rp_enable" in ecn else None
    if ecn.get("cnp_dscp") is not None:
        host.cnp_dscp = _int(ecn["cnp_dscp"], "ecn.cnp_dscp", 0, 63)
    if ecn.get("cnp_802p_prio") is not None:
        host.cnp_802p_prio = _int(ecn["cnp_802p_prio"], "ecn.cnp_802p_prio", 0, 7)
    if doc.get("roce_tos") is not None:
        host.cma_tos = host.traffic_class = _int(doc["roce_tos"], "roce_tos", 0, 255)
    for key, value in _section(doc, "mlxconfig").items():
        host.mlxconfig[_mlx_key(key, value)] = str(value)
    nics = [_nic(item, i, host) for i, item in enumerate(doc["nics"])]
    target = HostTarget(hostname=doc["hostname"], nics=nics)
    try:
        target.routing = routing.target_from_document(doc, doc["nics"])
    except RoutingError as exc:
        raise DocumentError(str(exc)) from None
    if doc.get("nccl_conf") is not None:
        if not isinstance(doc["nccl_conf"], str):
            raise DocumentError("nccl_conf: expected text")
        target.nccl = FileTarget(_text(doc["nccl_conf"]))
    return target


def _text(content: str) -> str:
    return content.rstrip("\n") + "\n"


def bits(values: list[int]) -> str:
    return ",".join(map(str, values))


# -- the running document --------------------------------------------------------------------------------------------


class _Dumper(SAFE_DUMPER):
    """Multi-line text (nccl_conf) as a literal block, like the template writes it."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _str)


def _uniform(values: dict[str, Any]) -> Any:
    """One value when every NIC agrees, else {NIC: value} (a drift check then sees the disagreement)."""
    distinct = {repr(v) for v in values.values()}
    if len(distinct) == 1:
        return next(iter(values.values()))
    return values


def _tos(nic: NicObserved) -> Any:
    if nic.traffic_class is None or nic.traffic_class == nic.cma_tos:
        return nic.cma_tos
    return {"cma_roce_tos": nic.cma_tos, "traffic_class": nic.traffic_class}


def running_document(observed: HostObserved) -> str:
    """The host's current state as YAML in the desired document's shape, independent of any candidate (so two
    reads of an unchanged host compare equal). Host-wide sections collapse to one value when all NICs agree;
    ``mlxconfig`` lists every key with its Next Boot value as the tool prints it, pending ones noted in a
    comment. A drift check compares the keys the desired document has."""
    head, doc = running_data(observed)
    body = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=120)
    return "\n".join(head) + "\n" + body


def running_data(observed: HostObserved) -> tuple[list[str], dict[str, Any]]:
    """``running_document`` before it is printed: its comment lines and its data (plain dicts, lists, strings,
    numbers and None, which the YAML prints and reads back as they are), for ``comparable_documents`` without
    printing and parsing the YAML again (issue 42: that was a tenth of fabconf's CPU in a GPU host's diff)."""
    present = [n for n in observed.nics.values() if n.present]
    doc: dict[str, Any] = {"hostname": observed.hostname, "nics": []}
    for nic in observed.nics.values():
        entry: dict[str, Any] = {"netdev": nic.netdev, "rdma": nic.rdma}
        entry.update({"mtu": nic.mtu} if nic.present else {"missing": True})
        if nic.present:
            addresses = observed.routing.addresses.get(nic.netdev, [])
            entry["address"] = addresses[0] if len(addresses) == 1 else addresses or None
        doc["nics"].append(entry)
    if present:

        def each(fn: Any) -> Any:
            return _uniform({n.netdev: fn(n) for n in present})

        doc["qos"] = {
            "trust": each(lambda n: n.trust),
            "pfc": each(lambda n: bits(n.pfc)),
            "dscp2prio": each(lambda n: None if n.dscp2prio is None else [[d, p] for d, p in enumerate(n.dscp2prio)]),
        }
        doc["ecn"] = {
            "roce_np_enable": each(lambda n: [p for p, v in enumerate(n.ecn_np) if v]),
            "roce_rp_enable": each(lambda n: [p for p, v in enumerate(n.ecn_rp) if v]),
            "cnp_dscp": each(lambda n: n.cnp_dscp),
            "cnp_802p_prio": each(lambda n: n.cnp_802p_prio),
        }
        doc["roce_tos"] = _uniform({n.rdma: _tos(n) for n in present})
        doc["mlxconfig"] = _mlx_section(present)
    doc["nccl_conf"] = observed.nccl
    doc.update(routing.document_sections(observed.routing))
    head = [f"# {observed.hostname} -- current RoCE NIC state, read by fabconf's linux driver"]
    for nic in present:
        for key, value in sorted(nic.mlx.items()):
            if value.pending:
                head.append(
                    f"# pending until firmware reset or reboot: {nic.rdma} {key} {value.current} -> {value.next_boot}"
                )
    boot = "enabled" if observed.enabled else "present, disabled" if observed.unit else "absent"
    head.append(f"# boot unit {UNIT_NAME}: {boot}")
    return head, doc


def _mlx_section(present: list[NicObserved]) -> dict[str, Any]:
    """Every key any NIC has, sorted, with its Next Boot value: one value when every NIC has it the same, else
    ``{rdma: value}`` (None where a NIC lacks the key)."""
    nexts = [{key: value.next_boot for key, value in n.mlx.items()} for n in present]
    if all(other == nexts[0] for other in nexts[1:]):  # the usual host: one firmware configuration on every NIC
        return {key: nexts[0][key] for key in sorted(nexts[0])}  # (issue 42: 143 keys x 8 NICs one by one)
    keys = sorted({key for n in present for key in n.mlx})
    return {key: _uniform({n.rdma: _mlx_next(n, key) for n in present}) for key in keys}


def _mlx_next(nic: NicObserved, key: str) -> str | None:
    value = nic.mlx.get(key)
    return None if value is None else value.next_boot


class _BlockDumper(SAFE_DUMPER):
    """YAML for people: multi-line strings (the NCCL file) as literal blocks, so a changed line is one line."""


def _str_block(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _list_flow(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.Node:
    # [3, 4] on one line; NICs, routes and rules one per line
    flow = all(not isinstance(v, (dict, list)) and " " not in str(v) for v in value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


_BlockDumper.add_representer(str, _str_block)
_BlockDumper.add_representer(list, _list_flow)


def _project(running: Any, desired: Any) -> tuple[Any, Any]:
    """The parts of both documents that the other has too: the settings the driver manages and the
    document names. NICs are matched by netdev."""
    if isinstance(running, dict) and isinstance(desired, dict):
        before, after = {}, {}
        for key, want in desired.items():
            if key in running:
                before[key], after[key] = _project(running[key], want)
        return before, after
    if isinstance(running, list) and isinstance(desired, list) and all(isinstance(x, dict) for x in running + desired):
        by_name = {item.get("netdev"): item for item in running}
        pairs = [_project(by_name.get(item.get("netdev"), {}), item) for item in desired]
        return [b for b, _ in pairs], [a for _, a in pairs]
    return running, desired


def comparable_documents(running_text: str | dict[str, Any], desired_text: str | Any) -> tuple[str, str]:
    """The running document and the desired one, cut to what both hold and printed the same way, for a
    unified diff that shows one -/+ pair per changed setting. Either may be given as text or as data already
    parsed (``running_data``, ``load_document``); neither is changed."""
    before, after = comparable_data(running_text, desired_text)
    return block_dump(before, block_yaml), block_dump(after, block_yaml)


def comparable_data(running_text: str | dict[str, Any], desired_text: str | Any) -> tuple[Any, Any]:
    """``comparable_documents`` before they are printed: when the two are ``same``, so are their texts."""
    running = (yaml.load(running_text, Loader=SAFE_LOADER) if isinstance(running_text, str) else running_text) or {}
    desired = (yaml.load(desired_text, Loader=SAFE_LOADER) if isinstance(desired_text, str) else desired_text) or {}
    return _project(running, desired)


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types, mappings in the same key order: the same YAML text (``1 == True`` is not)."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return len(a) == len(b) and all(
            same(ka, kb) and same(va, vb) for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True)
        )
    if type(a) is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def block_yaml(doc: Any) -> str:
    """A comparable document as PyYAML prints it (``block_dump`` prints the same, faster, for their shapes)."""
    return yaml.dump(doc, Dumper=_BlockDumper, sort_keys=False, default_flow_style=False, width=120)
