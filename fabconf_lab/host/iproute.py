"""IP configuration of a lab GPU host: ``ip addr add|del|replace|flush``, ``ip route``, ``ip rule`` and ``sysctl``,
with iproute2 5.15 / procps output formats and error texts, on the state in ``HostState`` (``addresses``,
``routes``, ``rules``, ``sysctls``). All of it is runtime state: ``HostState.reset_network`` is what a boot leaves.

Modelled: tables by number (main 254, local 255, default 253 by name), routes with gateway / on-link, preferred
source, scope link and protocol (a name or a number; ``boot`` is the default and is not printed, as iproute2 does
without ``-d``); the connected ``proto kernel`` route of each address in table main; rules ``from A[/L] lookup T
pref P``. A gateway must lie in a subnet of the route's device (``Error: Nexthop has invalid gateway.``). Deleting an
address removes the routes that use it as preferred source, as the kernel does.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any

from fabconf_lab.host.nicstate import HostState
from fabconf_lab.host.shtypes import Invocation, Result

TABLE_NAMES = {255: "local", 254: "main", 253: "default"}
TABLE_IDS = {v: k for k, v in TABLE_NAMES.items()}
PROTOCOLS = {"kernel": 2, "boot": 3, "static": 4, "dhcp": 16}
PROTOCOL_NAMES = {v: k for k, v in PROTOCOLS.items()}
SYSCTL_RANGES = {"arp_announce": (0, 2), "arp_ignore": (0, 8), "rp_filter": (0, 2), "ip_forward": (0, 1)}
NOT_PERMITTED = Result(err="RTNETLINK answers: Operation not permitted\n", status=2)


def _table_id(word: str) -> int | None:
    if word in TABLE_IDS:
        return TABLE_IDS[word]
    return int(word) if word.isdigit() and 0 < int(word) < 2**32 else None


def _table_name(table: int) -> str:
    return TABLE_NAMES.get(table, str(table))


def _interfaces(state: HostState) -> set[str]:
    return {"lo", state.mgmt_if, *(nic.netdev for nic in state.nics)}


# -- addresses -------------------------------------------------------------------------------------------------


def addr_change(state: HostState, inv: Invocation, rest: list[str]) -> Result:
    verb, args = rest[0], rest[1:]
    if verb == "flush":
        if args[:1] == ["dev"]:
            args = args[1:]
        if not args:
            return Result(err='Not enough information: "dev" argument is required.\n', status=255)
        dev = args[0]
        if dev not in _interfaces(state):
            return Result(err=f'Device "{dev}" does not exist.\n', status=1)
        if not inv.root:
            return NOT_PERMITTED
        for address in list(state.addresses.get(dev, [])):
            _remove_address(state, dev, address)
        return Result()
    address, dev = None, None
    while args:
        word = args.pop(0)
        if word == "dev" and args:
            dev = args.pop(0)
        elif address is None and word not in ("local",):
            address = word
        elif word == "local" and args:
            address = args.pop(0)
        else:
            return Result(err=f'Error: either "local" is duplicate, or "{word}" is a garbage.\n', status=255)
    if address is None:
        return Result(err="Not enough information: address is required.\n", status=255)
    try:
        iface = ipaddress.IPv4Interface(address)
    except ValueError:
        return Result(err=f'Error: any valid prefix is expected rather than "{address}".\n', status=1)
    if dev is None:
        return Result(err='Not enough information: "dev" argument is required.\n', status=255)
    if dev not in _interfaces(state):
        return Result(err=f'Cannot find device "{dev}"\n', status=1)
    if not inv.root:
        return NOT_PERMITTED
    text = f"{iface.ip}/{iface.network.prefixlen}"
    have = state.addresses.setdefault(dev, [])
    if verb == "add":
        if any(a.split("/")[0] == str(iface.ip) for a in have):
            return Result(err="RTNETLINK answers: File exists\n", status=2)
        have.append(text)
    elif verb in ("replace", "change"):
        for old in [a for a in have if a.split("/")[0] == str(iface.ip)]:
            have.remove(old)
        have.append(text)
    else:
        if text not in have:
            return Result(err="RTNETLINK answers: Cannot assign requested address\n", status=2)
        _remove_address(state, dev, text)
    return Result()


def _remove_address(state: HostState, dev: str, address: str) -> None:
    state.addresses[dev].remove(address)
    ip = address.split("/")[0]
    state.routes = [r for r in state.routes if r.get("prefsrc") != ip]


def _connected(state: HostState) -> list[dict[str, Any]]:
    """The kernel's ``proto kernel scope link`` route of every address (table main)."""
    out = []
    for dev, addresses in sorted(state.addresses.items()):
        if dev == "lo":
            continue
        for address in addresses:
            iface = ipaddress.IPv4Interface(address)
            if iface.network.prefixlen < 32:
                out.append(
                    {
                        "table": 254,
                        "dst": str(iface.network),
                        "gateway": None,
                        "dev": dev,
                        "protocol": 2,
                        "scope": "link",
                        "prefsrc": str(iface.ip),
                    }
                )
    return out


# -- routes ----------------------------------------------------------------------------------------------------


def _sort_key(route: dict[str, Any]) -> tuple[int, int, int]:
    if route["dst"] == "default":
        return (route["table"], -1, 0)
    net = ipaddress.IPv4Network(route["dst"])
    return (route["table"], int(net.network_address), net.prefixlen)


def _route_text(route: dict[str, Any], show_table: bool) -> str:
    text = route["dst"]
    if route.get("gateway"):
        text += f" via {route['gateway']}"
    text += f" dev {route['dev']}"
    if show_table and route["table"] != 254:
        text += f" table {_table_name(route['table'])}"
    if route.get("protocol", 3) != 3:
        text += f" proto {PROTOCOL_NAMES.get(route['protocol'], route['protocol'])}"
    if route.get("scope"):
        text += f" scope {route['scope']}"
    if route.get("prefsrc"):
        text += f" src {route['prefsrc']}"
    return text + " \n"


def _route_json(route: dict[str, Any], show_table: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"dst": route["dst"]}
    if route.get("gateway"):
        out["gateway"] = route["gateway"]
    out["dev"] = route["dev"]
    if show_table and route["table"] != 254:
        out["table"] = _table_name(route["table"])
    if route.get("protocol", 3) != 3:
        out["protocol"] = PROTOCOL_NAMES.get(route["protocol"], str(route["protocol"]))
    if route.get("scope"):
        out["scope"] = route["scope"]
    if route.get("prefsrc"):
        out["prefsrc"] = route["prefsrc"]
    out["flags"] = []
    return out


def route(state: HostState, inv: Invocation, rest: list[str], as_json: bool) -> Result:
    verb = rest[0] if rest else "show"
    if verb in ("show", "list", "ls", "sh") or verb == "table":
        return _route_show(state, rest[1:] if verb != "table" else rest, as_json)
    if verb == "flush":
        return _route_flush(state, inv, rest[1:])
    if verb in ("add", "replace", "del", "delete", "change", "append"):
        return _route_change(state, inv, verb, rest[1:])
    return Result(err=f'Command "{verb}" is unknown, try "ip route help".\n', status=255)


def _route_show(state: HostState, args: list[str], as_json: bool) -> Result:
    table: int | None = 254
    if args[:1] == ["table"] and len(args) > 1:
        if args[1] == "all":
            table = None
        else:
            table = _table_id(args[1])
            if table is None:
                return Result(err=f'Error: argument "{args[1]}" is wrong: table id value is invalid\n\n', status=255)
    elif args:
        return Result(err=f'Error: either "to" is duplicate, or "{args[0]}" is a garbage.\n', status=255)
    routes = [r for r in [*state.routes, *_connected(state)] if table is None or r["table"] == table]
    routes.sort(key=_sort_key)
    if as_json:
        return Result(json.dumps([_route_json(r, table is None) for r in routes], separators=(",", ":")) + "\n")
    return Result("".join(_route_text(r, table is None) for r in routes))


def _route_flush(state: HostState, inv: Invocation, args: list[str]) -> Result:
    if args[:1] != ["table"] or len(args) < 2 or _table_id(args[1]) is None:
        return Result(err='"ip route flush" requires arguments.\n', status=255)
    if not inv.root:
        return Result(err="Failed to send flush request: Operation not permitted\n", status=254)
    table = _table_id(args[1])
    state.routes = [r for r in state.routes if r["table"] != table]
    return Result()


def _parse_route(args: list[str]) -> dict[str, Any] | Result:
    if not args:
        return Result(err="Error: Invalid argument.\n", status=2)
    dst = args.pop(0)
    if dst != "default":
        try:
            dst = str(ipaddress.IPv4Network(dst, strict=True))
        except ValueError:
            return Result(err=f'Error: any valid prefix is expected rather than "{dst}".\n', status=1)
    route: dict[str, Any] = {"table": 254, "dst": dst, "gateway": None, "dev": None, "protocol": 3}
    route.update(scope=None, prefsrc=None)
    while args:
        word = args.pop(0)
        if not args and word not in ("onlink",):
            return Result(err=f'Error: either "to" is duplicate, or "{word}" is a garbage.\n', status=255)
        if word == "onlink":
            route["onlink"] = True
            continue
        value = args.pop(0)
        if word == "via":
            try:
                route["gateway"] = str(ipaddress.IPv4Address(value))
            except ValueError:
                return Result(err=f'Error: inet address is expected rather than "{value}".\n', status=1)
        elif word == "dev":
            route["dev"] = value
        elif word == "src":
            route["prefsrc"] = value
        elif word == "scope":
            route["scope"] = value
        elif word in ("table", "lookup"):
            table = _table_id(value)
            if table is None:
                return Result(err=f'Error: argument "{value}" is wrong: "table" value is invalid\n\n', status=255)
            route["table"] = table
        elif word in ("proto", "protocol"):
            number = PROTOCOLS.get(value, int(value) if value.isdigit() and int(value) < 256 else None)
            if number is None:
                return Result(err=f'Error: argument "{value}" is wrong: "protocol" value is invalid\n\n', status=255)
            route["protocol"] = number
        elif word == "metric":
            continue
        else:
            return Result(err=f'Error: either "to" is duplicate, or "{word}" is a garbage.\n', status=255)
    return route


def _route_change(state: HostState, inv: Invocation, verb: str, args: list[str]) -> Result:
    parsed = _parse_route(list(args))
    if isinstance(parsed, Result):
        return parsed
    new = parsed
    same = [r for r in state.routes if (r["table"], r["dst"]) == (new["table"], new["dst"])]
    if verb in ("del", "delete"):
        if not inv.root:
            return NOT_PERMITTED
        match = [r for r in same if new["dev"] in (None, r["dev"]) and new["gateway"] in (None, r["gateway"])]
        if not match:
            return Result(err="RTNETLINK answers: No such process\n", status=2)
        state.routes.remove(match[0])
        return Result()
    if new["dev"] is None and new["gateway"] is None:
        return Result(err="Error: Device for nexthop is not up.\n", status=2)
    if new["dev"] is not None and new["dev"] not in _interfaces(state):
        return Result(err=f'Cannot find device "{new["dev"]}"\n', status=1)
    if not inv.root:
        return NOT_PERMITTED
    onlink = new.pop("onlink", False)
    if new["gateway"] is not None and not onlink:
        gateway = ipaddress.IPv4Address(new["gateway"])
        owners = [d for d in _interfaces(state) if new["dev"] in (None, d)]
        reachable = [
            d for d in owners for a in state.addresses.get(d, []) if gateway in ipaddress.IPv4Interface(a).network
        ]
        if not reachable:
            return Result(err="Error: Nexthop has invalid gateway.\n", status=2)
        new["dev"] = new["dev"] or reachable[0]
    if new["prefsrc"] is not None and not any(
        a.split("/")[0] == new["prefsrc"] for addresses in state.addresses.values() for a in addresses
    ):
        return Result(err="Error: Invalid prefsrc address.\n", status=2)
    if verb == "add" and same:
        return Result(err="RTNETLINK answers: File exists\n", status=2)
    if verb == "change" and not same:
        return Result(err="RTNETLINK answers: No such file or directory\n", status=2)
    for old in same:
        state.routes.remove(old)
    state.routes.append(new)
    return Result()


# -- rules -----------------------------------------------------------------------------------------------------


def _rule_text(rule: dict[str, Any]) -> str:
    src = rule["src"] if rule["srclen"] in (0, 32) else f"{rule['src']}/{rule['srclen']}"
    return f"{rule['priority']}:\tfrom {src} lookup {_table_name(rule['table'])}\n"


def _rule_json(rule: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"priority": rule["priority"], "src": rule["src"]}
    if rule["srclen"] not in (0, 32):
        out["srclen"] = rule["srclen"]
    out["table"] = _table_name(rule["table"])
    return out


def rule(state: HostState, inv: Invocation, rest: list[str], as_json: bool) -> Result:
    verb = rest[0] if rest else "show"
    rules = sorted(state.rules, key=lambda r: (r["priority"], r["src"]))
    if verb in ("show", "list", "ls"):
        if as_json:
            return Result(json.dumps([_rule_json(r) for r in rules], separators=(",", ":")) + "\n")
        return Result("".join(_rule_text(r) for r in rules))
    if verb not in ("add", "del", "delete"):
        return Result(err=f'Command "{verb}" is unknown, try "ip rule help".\n', status=255)
    args = rest[1:]
    spec: dict[str, Any] = {}
    while args:
        word = args.pop(0)
        if not args:
            return Result(err=f'Error: argument "{word}" is wrong: Failed to parse rule type\n', status=255)
        value = args.pop(0)
        if word == "from":
            if value == "all":
                spec["src"], spec["srclen"] = "all", 0
            else:
                try:
                    net = ipaddress.IPv4Network(value, strict=False)
                except ValueError:
                    return Result(err=f'Error: an inet prefix is expected rather than "{value}".\n', status=1)
                spec["src"], spec["srclen"] = str(net.network_address), net.prefixlen
        elif word in ("lookup", "table"):
            table = _table_id(value)
            if table is None:
                return Result(err=f'Error: argument "{value}" is wrong: invalid table ID\n\n', status=255)
            spec["table"] = table
        elif word in ("pref", "priority", "order"):
            if not value.isdigit():
                return Result(err=f'Error: argument "{value}" is wrong: preference value is invalid\n\n', status=255)
            spec["priority"] = int(value)
        else:
            return Result(err=f'Error: argument "{word}" is wrong: Failed to parse rule type\n', status=255)
    if not inv.root:
        return NOT_PERMITTED
    if verb == "add":
        new = {"priority": spec.get("priority", 32765), "src": "all", "srclen": 0, "table": 254, **spec}
        if new in state.rules:
            return Result(err="RTNETLINK answers: File exists\n", status=2)
        state.rules.append(new)
        return Result()
    match = [r for r in rules if all(r[k] == v for k, v in spec.items())]
    if not match:
        return Result(err="RTNETLINK answers: No such file or directory\n", status=2)
    state.rules.remove(match[0])
    return Result()


# -- sysctl ------------------------------------------------------------------------------------------------------


def _proc_path(key: str) -> str:
    return "/proc/sys/" + key.replace(".", "/")


def sysctl(state: HostState, inv: Invocation) -> Result:
    args = inv.argv[1:]
    names_only = quiet = write = ignore = False
    while args and args[0].startswith("-") and len(args[0]) > 1:
        for flag in args.pop(0)[1:]:
            if flag == "n":
                names_only = True
            elif flag == "q":
                quiet = True
            elif flag == "w":
                write = True
            elif flag == "e":
                ignore = True
            else:
                return Result(err=f"sysctl: invalid option -- '{flag}'\n", status=255)
    out, err, status = [], [], 0
    for arg in args:
        key, sep, value = arg.partition("=")
        if sep and not write:
            write = True  # procps accepts KEY=VALUE without -w
        if key not in state.sysctls:
            if not ignore:
                err.append(f"sysctl: cannot stat {_proc_path(key)}: No such file or directory\n")
                status = 255
            continue
        if sep:
            if not inv.root:
                err.append(f'sysctl: permission denied on key "{key}"\n')
                status = 255
                continue
            low, high = SYSCTL_RANGES.get(key.rsplit(".", 1)[-1], (0, 2**31))
            if not value.strip().isdigit() or not low <= int(value) <= high:
                err.append(f'sysctl: setting key "{key}": Invalid argument\n')
                status = 255
                continue
            state.sysctls[key] = int(value)
            if not quiet:
                out.append(f"{key} = {int(value)}\n")
        elif names_only:
            out.append(f"{state.sysctls[key]}\n")
        else:
            out.append(f"{key} = {state.sysctls[key]}\n")
    return Result("".join(out), "".join(err), status)
