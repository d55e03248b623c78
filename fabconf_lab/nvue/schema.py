"""Validation of NVUE object trees, as the Cumulus simulator does on PATCH and on apply.

Two layers:

1. **Schema** (unknown keys, types, enums, ranges). When the PyPI package ``nvueschema`` is importable
   the simulator uses its Pydantic models of NVIDIA's published OpenAPI spec for the target release
   (default 5.12, spec 1.8.0.82): ``NvueConfig.model_validate`` checks types and ranges, and a walk of
   the model classes refuses keys the model does not know (the generated models themselves ignore
   extra keys). Without the package, a hand-written schema of just the keys fabconf renders is used,
   and every other key is refused.
2. **Semantics** checked at apply time that a schema cannot express: reserved internal VLANs
   3725-3999 (the CL default range; a configured ``system global reserved vlan internal range`` is
   honoured), swp interfaces that do not exist on the box, BGP neighbors without a remote-as or with
   an unknown peer-group, neighbors without a local ASN, unnumbered neighbors on unknown interfaces,
   traffic pools above 100 %, ECN min >= max, bridge VLANs outside 1-4094, an interface naming a QoS profile
   (``qos pfc profile P``) that ``qos`` does not define; and the rules between objects (``cross_object_errors``): an
   access VLAN or SVI whose VLAN is not in the bridge, an address on a bridge member, one address on two
   interfaces, an address that is malformed, lacks a prefix length or is no host address, link-pause with
   PFC on a port, a BGP neighbor key that is neither an address nor an interface name, two lossless pools.

Messages imitate NVUE's tone; their exact wording is [U] (not checked against a real switch).
"""

from __future__ import annotations

import importlib
import importlib.util
import ipaddress
import re
import types
import typing
from typing import Any

from fabconf_lab.cliconf.addresses import host_address_error
from fabconf_lab.nvue.tree import Tree, as_int

try:  # optional dependency: Pydantic models of the NVUE OpenAPI spec
    import pydantic

    _HAVE_NVUESCHEMA = importlib.util.find_spec("nvueschema") is not None
except ImportError:  # pragma: no cover - pydantic ships with nvueschema
    _HAVE_NVUESCHEMA = False

DEFAULT_RELEASE = "5.12"
RESERVED_VLANS = (3725, 3999)


def have_nvueschema() -> bool:
    return _HAVE_NVUESCHEMA


# --------------------------------------------------------------------------------------------------
# Layer 1a: nvueschema (Pydantic) models
# --------------------------------------------------------------------------------------------------
class _ModelSchema:
    def __init__(self, release: str) -> None:
        module = importlib.import_module(f"nvueschema.models.v{release.replace('.', '_')}")
        self.root: type[pydantic.BaseModel] = module.NvueConfig
        self.release = release
        self._fields: dict[type, dict[str, Any]] = {}
        self._shapes: dict[type, dict[str, tuple[str, Any]]] = {}  # model -> key -> ``_shape`` of its annotation

    def errors(self, tree: Tree) -> list[str]:
        out: list[str] = []
        self._unknown(self.root, tree, [], out)
        try:
            self.root.model_validate(tree)
        except pydantic.ValidationError as exc:
            for err in exc.errors():
                where = " ".join(str(p) for p in err["loc"] if not _is_union_tag(p))
                out.append(f"Invalid value {err.get('input')!r} for '{where}': {err['msg']}")
        return out

    def child(self, node: Any, token: str) -> tuple[str, Any] | None:
        """Navigate one CLI token: ('container'|'map'|'open'|'leaf', next node) or None if unknown."""
        if node is None:
            node = self.root
        if not (isinstance(node, type) and issubclass(node, pydantic.BaseModel)):
            return None
        annotation = self._field_map(node).get(token)
        if annotation is None:
            return None
        kind, sub = _shape(annotation)
        if kind == "model":
            return "container", sub
        if kind == "map":
            return "map", sub
        origin = typing.get_origin(annotation)
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if origin is dict or any(typing.get_origin(a) is dict for a in args):
            return "open", None
        return "leaf", None

    # -- the unknown-key walk ------------------------------------------------------------------
    def _field_map(self, model: type) -> dict[str, Any]:
        cached = self._fields.get(model)
        if cached is None:
            cached = {(f.alias or name): f.annotation for name, f in model.model_fields.items()}
            self._fields[model] = cached
        return cached

    def _shape_map(self, model: type) -> dict[str, tuple[str, Any]]:
        """``_shape`` of each field of ``model``, made once: the walk of every PATCH's whole tree asked it again
        for every key (a twentieth of a Cumulus switch's CPU in a diff)."""
        cached = self._shapes.get(model)
        if cached is None:
            cached = {key: _shape(annotation) for key, annotation in self._field_map(model).items()}
            self._shapes[model] = cached
        return cached

    def _unknown(self, model: type, node: Any, parts: list[str], out: list[str]) -> None:
        if not isinstance(node, dict):
            return
        shapes = self._shape_map(model)
        for key, value in node.items():
            shape = shapes.get(key)
            if shape is None:
                out.append(f"Unknown key '{key}' at '{' '.join(parts) or '/'}'")
                continue
            kind, sub = shape
            if kind == "model":
                self._unknown(sub, value, [*parts, key], out)
            elif kind == "map" and isinstance(value, dict):
                for child_key, child in value.items():
                    self._unknown(sub, child, [*parts, key, str(child_key)], out)


def _is_union_tag(part: Any) -> bool:
    # Pydantic adds union member tags such as "int" or "literal['auto']" to error locations.
    text = str(part)
    return text in {"int", "str", "float", "bool", "none"} or "[" in text or text.startswith(("function-", "lax-"))


def _shape(annotation: Any) -> tuple[str, Any]:
    """('model', cls) | ('map', value-model) | ('leaf', None) for a field annotation."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _shape(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            kind, sub = _shape(arg)
            if kind != "leaf":
                return kind, sub
        return "leaf", None
    if origin is dict:
        args = typing.get_args(annotation)
        value = args[1] if len(args) == 2 else Any
        kind, sub = _shape(value)
        return ("map", sub) if kind == "model" else ("leaf", None)
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return "model", annotation
    return "leaf", None


# --------------------------------------------------------------------------------------------------
# Layer 1b: hand-written fallback covering the keys fabconf renders (CL 5.12 shapes)
# --------------------------------------------------------------------------------------------------
ON_OFF = ("enum", "on", "off")
EN_DIS = ("enum", "enable", "disable")
ANY = ("any",)
EMPTY = ("empty",)


def _int(lo: int, hi: int) -> tuple[str, int, int]:
    return ("int", lo, hi)


_VLAN_ID = ("vlan",)
_NEIGHBOR = {
    "type": ("enum", "numbered", "unnumbered"),
    "remote-as": ("asn-or", "auto", "internal", "external"),
    "peer-group": ("str",),
    "description": ("str",),
    "address-family": ANY,
}
_SPEC: dict[str, Any] = {
    "header": ANY,
    "system": {
        "hostname": ("str",),
        "timezone": ("str",),
        "global": ANY,
        "config": ANY,
        "api": ANY,
        "message": ANY,
        # the operator's SNMP agent (the lab's brownfield switches run one) [V: nvueschema 5.12 and 5.15
        # NvueConfigSystemSnmpServer: state enabled|disabled, listening-address, readonly-community]
        "snmp-server": {
            "state": ("enum", "enabled", "disabled"),
            "listening-address": {"*": ANY},
            "readonly-community": {"*": ANY},
        },
    },
    "interface": {
        "*": {
            "type": ("enum", "swp", "eth", "bond", "loopback", "svi", "sub", "peerlink", "tunnel", "bridge", "vrf"),
            "description": ("str",),
            "link": {"mtu": _int(552, 9216), "state": {"up": EMPTY, "down": EMPTY}, "speed": ("str",)},
            "ip": {"address": {"*": EMPTY}, "vrf": ("str",), "gateway": ANY},
            "bridge": {"domain": {"*": {"access": _VLAN_ID, "untagged": _VLAN_ID, "vlan": {"*": EMPTY}}}},
            "lldp": ANY,
            "qos": {
                "pfc": {"profile": ("str",)},
                "congestion-control": {"profile": ("str",)},
                "pfc-watchdog": {"state": EN_DIS},
                "mapping": {"profile": ("str",)},
                "egress-scheduler": {"profile": ("str",)},
            },
            "vlan": _int(1, 4094),
            "router": {"adaptive-routing": {"enable": ON_OFF, "link-utilization-threshold": _int(1, 100)}},
        }
    },
    "bridge": {"domain": {"*": {"vlan": {"*": ANY}, "untagged": _VLAN_ID, "type": ("enum", "vlan-aware")}}},
    "qos": {
        "roce": {"enable": ON_OFF, "mode": ("enum", "lossy", "lossless", "lossless-single-ipool")},
        "pfc": {
            "*": {
                "switch-priority": {"*": EMPTY},
                "tx": EN_DIS,
                "rx": EN_DIS,
                "cable-length": _int(1, 100000),
                "xoff-threshold": _int(1, 2**31),
                "xon-threshold": _int(1, 2**31),
                "port-buffer": _int(1, 2**31),
            }
        },
        "congestion-control": {
            "*": {
                "traffic-class": {
                    "*": {
                        "min-threshold": _int(1, 2**31),
                        "max-threshold": _int(1, 2**31),
                        "probability": _int(0, 100),
                        "ecn": EN_DIS,
                        "red": EN_DIS,
                    }
                }
            }
        },
        "mapping": {
            "*": {
                "trust": ("enum", "l2", "l3", "port", "both"),
                "dscp": {"*": {"switch-priority": _int(0, 7)}},
                "pcp": {"*": {"switch-priority": _int(0, 7)}},
                "port-default-sp": _int(0, 7),
            }
        },
        "egress-queue-mapping": {"*": {"switch-priority": {"*": {"traffic-class": _int(0, 7)}}}},
        "egress-scheduler": {
            "*": {"traffic-class": {"*": {"mode": ("enum", "dwrr", "strict"), "bw-percent": _int(0, 100)}}}
        },
        "traffic-pool": {"*": {"memory-percent": _int(1, 100), "switch-priority": {"*": EMPTY}}},
        "pfc-watchdog": {"polling-interval": _int(100, 5000), "robustness": _int(1, 1000)},
    },
    "router": {
        "bgp": {"autonomous-system": _int(1, 4294967295), "router-id": ("str",), "enable": ON_OFF},
        "adaptive-routing": {"enable": ON_OFF, "link-utilization-threshold": ON_OFF},
    },
    "vrf": {
        "*": {
            "router": {
                "bgp": {
                    "autonomous-system": _int(1, 4294967295),
                    "router-id": ("str",),
                    "enable": ON_OFF,
                    "neighbor": {"*": _NEIGHBOR},
                    "peer-group": {"*": {k: v for k, v in _NEIGHBOR.items() if k not in ("type", "peer-group")}},
                    "address-family": {
                        "ipv4-unicast": {
                            "enable": ON_OFF,
                            "network": {"*": ANY},
                            "multipaths": {"ebgp": _int(1, 128), "ibgp": _int(1, 128)},
                            "redistribute": ANY,
                        }
                    },
                    "path-selection": {"multipath": {"aspath-ignore": ON_OFF}},
                }
            },
            "loopback": ANY,
        }
    },
}


def _leaf_error(spec: tuple, value: Any, where: str) -> str | None:
    kind = spec[0]
    if kind == "any":
        return None
    if kind == "empty":
        return None if value in ({}, None) else f"Invalid value {value!r} for '{where}': expected an empty object"
    if isinstance(value, dict):
        return f"Invalid value {value!r} for '{where}': expected a scalar"
    if kind == "int":
        n = as_int(value)
        if n is None or not spec[1] <= n <= spec[2]:
            return f"Invalid value {value!r} for '{where}': Valid range is {spec[1]}-{spec[2]}"
    elif kind == "enum":
        if value not in spec[1:]:
            return f"Invalid value {value!r} for '{where}': Valid values are {', '.join(spec[1:])}"
    elif kind == "vlan":
        n = as_int(value)
        if (n is None or not 1 <= n <= 4094) and value not in ("none", "auto"):
            return f"Invalid value {value!r} for '{where}': Valid range is 1-4094"
    elif kind == "asn-or":
        n = as_int(value)
        if (n is None or not 1 <= n <= 4294967295) and value not in spec[1:]:
            return f"Invalid value {value!r} for '{where}': a number 1-4294967295 or {', '.join(spec[1:])}"
    elif kind == "str" and not isinstance(value, str | int):
        return f"Invalid value {value!r} for '{where}': expected a string"
    return None


def _walk_spec(spec: Any, node: Any, parts: list[str], out: list[str]) -> None:
    where = " ".join(parts)
    if isinstance(spec, tuple):
        err = _leaf_error(spec, node, where)
        if err:
            out.append(err)
        return
    if not isinstance(node, dict):
        out.append(f"Invalid value {node!r} for '{where}': expected an object")
        return
    for key, value in node.items():
        sub = spec.get(key, spec.get("*"))
        if sub is None:
            out.append(f"Unknown key '{key}' at '{where or '/'}'")
            continue
        _walk_spec(sub, value, [*parts, str(key)], out)


class _HandSchema:
    release = DEFAULT_RELEASE

    def child(self, node: Any, token: str) -> tuple[str, Any] | None:
        """Navigate one CLI token: ('container'|'map'|'open'|'leaf', next node) or None if unknown."""
        spec = _SPEC if node is None else node
        if not isinstance(spec, dict) or token not in spec:
            return None
        sub = spec[token]
        if isinstance(sub, tuple):
            return ("open", None) if sub in (ANY, EMPTY) else ("leaf", None)
        if set(sub) == {"*"}:
            value = sub["*"]
            return ("map", value) if isinstance(value, dict) else ("open", None)
        return "container", sub

    def errors(self, tree: Tree) -> list[str]:
        out: list[str] = []
        _walk_spec(_SPEC, tree, [], out)
        return out


# --------------------------------------------------------------------------------------------------
# Layer 2: semantics
# --------------------------------------------------------------------------------------------------
def _vlan_ids(key: Any) -> list[int]:
    out: list[int] = []
    for part in str(key).split(","):
        lo, _, hi = part.strip().partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def _reserved(tree: Tree) -> tuple[int, int]:
    rng = tree.get("system", {}).get("global", {}).get("reserved", {}).get("vlan", {}).get("internal", {})
    lo, hi = as_int(rng.get("range-start") if isinstance(rng, dict) else None), None
    if isinstance(rng, dict):
        hi = as_int(rng.get("range-end"))
    return (lo or RESERVED_VLANS[0], hi or RESERVED_VLANS[1])


VLAN_RANGE = (1, 4094)  # [V] IEEE 802.1Q VLAN IDs; 0 and 4095 are reserved by the standard
# interface qos sections that name a profile defined under the same key of `qos` (`nv set interface swp1 qos pfc
# profile P` with `nv set qos pfc P ...` [V: Cumulus Linux QoS page]); a profile that is not defined is refused on
# apply [U: NVUE's wording]
PROFILE_KINDS = ("pfc", "link-pause", "congestion-control", "egress-scheduler", "egress-shaper", "mapping", "remark")


def _profile_errors(qos: Tree, interfaces: Tree) -> list[str]:
    out: list[str] = []
    for ifname, iface in interfaces.items():
        iqos = (iface or {}).get("qos") if isinstance(iface, dict) else None
        for kind in PROFILE_KINDS:
            section = (iqos or {}).get(kind) if isinstance(iqos, dict) else None
            name = section.get("profile") if isinstance(section, dict) else None
            defined = qos.get(kind) or {}
            if name is not None and str(name) not in (defined if isinstance(defined, dict) else {}):
                out.append(f"interface {ifname} qos {kind} profile {name}: no such profile under qos {kind}")
    return out


def semantic_errors(tree: Tree, ports: list[str]) -> list[str]:
    out: list[str] = []
    lo, hi = _reserved(tree)
    for dname, dom in (tree.get("bridge", {}).get("domain", {}) or {}).items():
        for key in (dom or {}).get("vlan", {}) or {}:
            outside = [v for v in _vlan_ids(key) if not VLAN_RANGE[0] <= v <= VLAN_RANGE[1]]
            if outside:
                out.append(f"bridge domain {dname} vlan {key}: VLAN {outside[0]} is out of range 1-4094")
                continue
            bad = [v for v in _vlan_ids(key) if lo <= v <= hi]
            if bad:
                out.append(f"bridge domain {dname} vlan {key}: VLAN {bad[0]} is in the reserved range {lo}-{hi}")
    interfaces = tree.get("interface", {}) or {}
    for ifname, iface in interfaces.items():
        if not isinstance(iface, dict):
            continue
        if ifname.startswith("swp") and ports and ifname not in ports:
            out.append(f"interface {ifname}: no such interface on this platform")
        ar = ((iface.get("router") or {}) if isinstance(iface.get("router"), dict) else {}).get("adaptive-routing")
        # [V] NVUE reference "Adaptive Routing": not on subinterfaces, SVIs, bonds or bond members [U: wording]
        if ar and (not re.fullmatch(r"swp\d+(s\d+)?", str(ifname)) or "bond" in iface):
            out.append(f"interface {ifname} router adaptive-routing: only physical swp ports take adaptive routing")
        for dname, dom in (iface.get("bridge", {}).get("domain", {}) or {}).items():
            for leaf in ("access", "untagged"):
                v = as_int((dom or {}).get(leaf))
                if v is not None and lo <= v <= hi:
                    out.append(f"interface {ifname} bridge domain {dname} {leaf} {v}: VLAN is reserved ({lo}-{hi})")
    asn = as_int(tree.get("router", {}).get("bgp", {}).get("autonomous-system"))
    for vname, vrf in (tree.get("vrf", {}) or {}).items():
        bgp = (vrf or {}).get("router", {}).get("bgp", {}) or {}
        groups = bgp.get("peer-group", {}) or {}
        neighbors = bgp.get("neighbor", {}) or {}
        if neighbors and asn is None and as_int(bgp.get("autonomous-system")) is None:
            out.append(f"vrf {vname} router bgp: neighbors are configured but no autonomous-system is set")
        for nname, nb in neighbors.items():
            nb = nb or {}
            group = nb.get("peer-group")
            if group not in (None, "none") and group not in groups:
                out.append(f"vrf {vname} router bgp neighbor {nname}: peer-group {group} does not exist")
            remote = nb.get("remote-as")
            if remote is None and group:
                remote = (groups.get(group) or {}).get("remote-as")
            if remote is None:
                out.append(f"vrf {vname} router bgp neighbor {nname}: remote-as is required")
            if nb.get("type") == "unnumbered" and nname not in interfaces and nname not in ports:
                out.append(f"vrf {vname} router bgp neighbor {nname}: unnumbered neighbor needs an existing interface")
    out += cross_object_errors(tree)
    # [V] Cumulus Linux 5.13-5.19 "gNMI Streaming": dial-in needs the gNMI server's listening address; the
    # message wording is the lab's [U]
    gnmi = (tree.get("system", {}) or {}).get("gnmi-server")
    if isinstance(gnmi, dict) and gnmi.get("state") == "enabled" and not gnmi.get("listening-address"):
        out.append("system gnmi-server: a listening-address is required to enable the gNMI server")
    qos = tree.get("qos", {}) or {}
    total = sum(as_int((p or {}).get("memory-percent")) or 0 for p in (qos.get("traffic-pool", {}) or {}).values())
    if total > 100:
        out.append(f"qos traffic-pool: memory-percent adds up to {total}, more than 100")
    out += _qos_semantics(qos, interfaces)
    out += _profile_errors(qos, interfaces)
    for pname, prof in (qos.get("congestion-control", {}) or {}).items():
        for tc, ecn in ((prof or {}).get("traffic-class", {}) or {}).items():
            lo_t, hi_t = as_int((ecn or {}).get("min-threshold")), as_int((ecn or {}).get("max-threshold"))
            if lo_t is not None and hi_t is not None and lo_t >= hi_t:
                out.append(f"qos congestion-control {pname} traffic-class {tc}: min-threshold must be below max")
    return out


# The traffic pools NVUE knows: default-lossy and default-lossless [U], and roce-lossless, the lossless pool of
# NVIDIA's RoCE page example (``nv set qos traffic-pool roce-lossless memory-percent 60``) [V: Cumulus Linux 5.14
# "RDMA over Converged Ethernet" page]. Only one lossless pool at a time [V: same page, via
# docs/reference/roce-lossless.md 1.2]. Another name is refused.
KNOWN_POOLS = ("default-lossless", "default-lossy", "roce-lossless")
LOSSLESS_POOLS = ("default-lossless", "roce-lossless")


def _keys(where: str, table: Any, high: int, what: str) -> list[str]:
    """Keys of a map that are numbers ``0..high`` (traffic classes, switch priorities, DSCPs): the schema types
    them as strings, the device refuses any other."""
    bad = [k for k in (table or {}) if not str(k).isdigit() or int(k) > high]
    return [f"{where}: {what} {k} is not in 0-{high}" for k in bad]


# (qos section, map under each profile, highest key, what the key is)
_QOS_KEY_MAPS = (
    ("egress-scheduler", "traffic-class", 7),
    ("congestion-control", "traffic-class", 7),
    ("pfc", "switch-priority", 7),
    ("traffic-pool", "switch-priority", 7),
    ("egress-queue-mapping", "switch-priority", 7),
    ("mapping", "dscp", 63),
    ("mapping", "pcp", 7),
)


def _qos_keys(qos: Tree) -> list[str]:
    out: list[str] = []
    for section, table, high in _QOS_KEY_MAPS:
        for pname, prof in (qos.get(section, {}) or {}).items():
            out += _keys(f"qos {section} {pname}", (prof or {}).get(table), high, table)
    return out


def _scheduler_errors(pname: str, classes: Tree) -> list[str]:
    """A DWRR class needs a share of 1-100 % (in ``qos_features.conf`` 0 means strict priority) [V: Cumulus Linux
    5.x "Quality of Service" page], and the shares the profile sets add up to at most 100 %. Classes the profile
    leaves out are not counted: NVIDIA's own QoS page example sets only traffic class 3 (DWRR 50 %) and 6
    (strict), which the device takes [V: same page]; how it schedules the classes left out is [U]."""
    out: list[str] = []
    total = 0
    for tc, entry in sorted(classes.items(), key=lambda kv: str(kv[0])):
        entry = entry or {}
        if entry.get("mode", "dwrr") != "dwrr":
            continue
        bw = as_int(entry.get("bw-percent"))
        if bw is None or bw < 1:
            out.append(f"qos egress-scheduler {pname} traffic-class {tc}: dwrr mode needs a bw-percent of 1-100")
        total += bw or 0
    if total > 100:
        out.append(f"qos egress-scheduler {pname}: DWRR bw-percent adds up to {total}, more than 100")
    return out


def _qos_semantics(qos: Tree, interfaces: Tree) -> list[str]:
    """Map keys in range, scheduler shares, pools, and the watchdog's ports."""
    out: list[str] = _qos_keys(qos)
    for pname, prof in (qos.get("egress-scheduler", {}) or {}).items():
        out += _scheduler_errors(pname, (prof or {}).get("traffic-class", {}) or {})
    pools = qos.get("traffic-pool", {}) or {}
    owner: dict[str, str] = {}
    for pname, pool in pools.items():
        if pname not in KNOWN_POOLS:
            out.append(f"qos traffic-pool {pname}: unknown traffic pool (known: {', '.join(KNOWN_POOLS)})")
        for sp in (pool or {}).get("switch-priority", {}) or {}:
            if str(sp) in owner:
                out.append(f"qos traffic-pool {pname}: switch-priority {sp} is already in pool {owner[str(sp)]}")
            owner.setdefault(str(sp), pname)
    lossless = [p for p in pools if p in LOSSLESS_POOLS]
    if len(lossless) > 1:
        out.append(f"qos traffic-pool: only one lossless pool at a time ({', '.join(lossless)})")
    for ifname, iface in interfaces.items():
        wd = ((iface or {}).get("qos", {}) or {}).get("pfc-watchdog") if isinstance(iface, dict) else None
        if wd and not str(ifname).startswith("swp"):
            out.append(f"interface {ifname} qos pfc-watchdog: only swp ports have a PFC watchdog")
    return out


# --------------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------------
class Validator:
    """Schema + semantic checks for one target release."""

    def __init__(self, release: str = DEFAULT_RELEASE, *, use_nvueschema: bool | None = None) -> None:
        use = _HAVE_NVUESCHEMA if use_nvueschema is None else use_nvueschema
        self.schema: _ModelSchema | _HandSchema = _ModelSchema(release) if use else _HandSchema()
        self.source = f"nvueschema {release}" if use else "hand-written fabconf subset"

    def schema_errors(self, tree: Tree) -> list[str]:
        return self.schema.errors(tree)

    def child(self, node: Any, token: str) -> tuple[str, Any] | None:
        """One step of a ``nv set`` path; ``node`` None is the root. See ``nvue_setcmd``."""
        return self.schema.child(node, token)

    def apply_errors(self, tree: Tree, ports: list[str]) -> list[str]:
        return self.schema.errors(tree) + semantic_errors(tree, ports)


# --------------------------------------------------------------------------------------------------
# Rules between objects, checked on apply [U: NVUE's wording; the rules themselves as listed]
# --------------------------------------------------------------------------------------------------
def _bridge_vlans(tree: Tree) -> dict[str, set[int]]:
    """Each bridge domain's VLANs; a domain that lists none has VLAN 1 (the NVUE default) [U]."""
    out: dict[str, set[int]] = {}
    for dname, dom in (tree.get("bridge", {}).get("domain", {}) or {}).items():
        ids = {v for key in ((dom or {}).get("vlan", {}) or {}) for v in _vlan_ids(key)}
        out[str(dname)] = ids or {1}
    return out


def _address_error(key: str) -> str | None:
    if key == "dhcp":
        return None
    try:
        iface = ipaddress.ip_interface(key)
    except ValueError:
        return "not a valid address with a prefix length"
    if "/" not in key:
        return "a prefix length is required"
    return host_address_error(key) if iface.version == 4 else None


def _neighbor_key_error(key: str, interfaces: Tree) -> str | None:
    try:
        ipaddress.ip_address(key)
        return None
    except ValueError:
        pass
    if key in interfaces or (re.fullmatch(r"(swp|eth|bond|vlan|peerlink)\S*", key) and not re.search(r"[/.]", key)):
        return None
    return "not an IP address or an interface name"


def _addresses(iface: Tree) -> dict[str, Any]:
    """An interface's addresses: under ``ip`` (5.x) or ``ipv4`` / ``ipv6`` (5.15 renamed them [V: nvueschema])."""
    out: dict[str, Any] = {}
    for key in ("ip", "ipv4", "ipv6"):
        section = iface.get(key)
        if isinstance(section, dict) and isinstance(section.get("address"), dict):
            out.update(section["address"])
    return out


def _interface_cross_errors(tree: Tree, interfaces: Tree) -> list[str]:
    out: list[str] = []
    vlans = _bridge_vlans(tree)
    owner: dict[str, str] = {}
    qos = tree.get("qos", {}) or {}
    global_pfc = bool((qos.get("pfc") or {}).get("default-global"))
    global_lp = bool((qos.get("link-pause") or {}).get("default-global"))
    if global_pfc and global_lp:
        out.append("qos: link-pause and PFC cannot both be enabled on a port (default-global of both)")
    for ifname, iface in interfaces.items():
        if not isinstance(iface, dict):
            continue
        domains = (iface.get("bridge", {}) or {}).get("domain", {}) or {}
        for dname, dom in domains.items():
            if str(dname) not in vlans and dname != "br_default":
                out.append(f"interface {ifname} bridge domain {dname}: no such bridge domain")
                continue
            have = vlans.get(str(dname), {1})
            for leaf in ("access",):
                v = as_int((dom or {}).get(leaf))
                if v is not None and v not in have:
                    out.append(f"interface {ifname} bridge domain {dname} {leaf} {v}: VLAN {v} is not in the bridge")
        addresses = _addresses(iface)
        if domains and addresses:
            out.append(f"interface {ifname}: an IP address cannot be set on a bridge member")
        for key in addresses:
            why = _address_error(str(key))
            if why:
                out.append(f"interface {ifname} ip address {key}: {why}")
                continue
            ip = str(key).split("/")[0]
            if ip in owner and key != "dhcp":
                out.append(f"interface {ifname} ip address {key}: address already in use on {owner[ip]}")
            owner.setdefault(ip, str(ifname))
        svi = as_int(iface.get("vlan")) if iface.get("type") == "svi" or str(ifname).startswith("vlan") else None
        if svi is not None and not any(svi in ids for ids in vlans.values()) and not (svi == 1 and not vlans):
            out.append(f"interface {ifname}: VLAN {svi} is not in any bridge domain")
        iqos = iface.get("qos", {}) or {}
        if iqos.get("link-pause") and (iqos.get("pfc") or global_pfc):
            out.append(f"interface {ifname} qos: link-pause and PFC cannot both be enabled on a port")
    return out


def cross_object_errors(tree: Tree) -> list[str]:
    """Access VLANs and SVIs need their VLAN in the bridge; no address on a bridge member nor the same
    address on two interfaces; addresses are real host addresses with a prefix; link-pause and PFC are
    exclusive on a port [V: docs/reference/roce-lossless.md 1.2, from the Cumulus QoS page]; a BGP neighbor
    key is an IP address or an interface name."""
    interfaces = tree.get("interface", {}) or {}
    out = _interface_cross_errors(tree, interfaces)
    for vname, vrf in (tree.get("vrf", {}) or {}).items():
        bgp = ((vrf or {}).get("router", {}) or {}).get("bgp", {}) or {}
        for nname in bgp.get("neighbor", {}) or {}:
            why = _neighbor_key_error(str(nname), interfaces)
            if why:
                out.append(f"vrf {vname} router bgp neighbor {nname}: {why}")
    return out
