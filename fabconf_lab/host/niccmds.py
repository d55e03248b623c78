"""Link and RDMA tools of a lab GPU host: ``ip link``, ``rdma``, ``ibstat``, ``ibv_devinfo``, ``show_gids``,
``ibdev2netdev`` and ``cma_roce_tos``, printing the real tools' formats (docs/reference/roce-lossless.md §4.2, §4.5).

Each tool is ``fn(ctx: NicContext, inv: Invocation) -> Result``. Supported forms:

- ``ip [-j] [-p] [-d] link [show|list] [[dev] IF]``; ``ip link set [dev] IF [mtu N] [up|down]``;
  ``ip [-j] [-4] addr|address|a [show] [[dev] IF]``. Errors as iproute2: ``Device "X" does not exist.`` (1),
  ``RTNETLINK answers: Operation not permitted`` (2, not root), ``Error: mtu greater than device maximum.`` (2).
- ``rdma [-j] link [show] [DEV[/PORT]]``, ``rdma [-j] dev [show] [DEV]``.
- ``ibstat [-l] [DEV [PORT]]``, ``ibv_devinfo [-l] [-d DEV] [-i PORT]``, ``show_gids [DEV [PORT]]``,
  ``ibdev2netdev [-v]``, ``cma_roce_tos -d DEV [-p 1] [-t TOS]`` (root only; prints the value).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from fabconf_lab.host import iproute
from fabconf_lab.host.nicstate import NicPort
from fabconf_lab.host.nicsysfs import MAX_MTU, MIN_MTU, NicContext, garble
from fabconf_lab.host.shell import Invocation, Result

Tool = Callable[[NicContext, Invocation], Result]


def _out(ctx: NicContext, text: str, status: int = 0, err: str = "") -> Result:
    return Result(garble(text) if ctx.garbled() and text else text, err, status)


# -- ip -------------------------------------------------------------------------------------------


def _links(ctx: NicContext) -> list[dict[str, object]]:
    """All interfaces in iproute2 JSON shape (lo, the management port, the NIC ports)."""
    state = ctx.state
    links: list[dict[str, object]] = [
        {
            "ifindex": 1,
            "ifname": "lo",
            "flags": ["LOOPBACK", "UP", "LOWER_UP"],
            "mtu": 65536,
            "qdisc": "noqueue",
            "operstate": "UNKNOWN",
            "linkmode": "DEFAULT",
            "group": "default",
            "txqlen": 1000,
            "link_type": "loopback",
            "address": "00:00:00:00:00:00",
            "broadcast": "00:00:00:00:00:00",
        },
        {
            "ifindex": 2,
            "ifname": state.mgmt_if,
            "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"],
            "mtu": 1500,
            "qdisc": "mq",
            "operstate": "UP",
            "linkmode": "DEFAULT",
            "group": "default",
            "txqlen": 1000,
            "link_type": "ether",
            "address": state.mgmt_mac,
            "broadcast": "ff:ff:ff:ff:ff:ff",
        },
    ]
    for index, nic in enumerate(state.nics, start=3):
        up = ctx.oper_up(nic)
        flags = ["BROADCAST", "MULTICAST"]
        if nic.admin_up:
            flags = (["NO-CARRIER"] if not up else []) + flags + ["UP"] + (["LOWER_UP"] if up else [])
        links.append(
            {
                "ifindex": index,
                "ifname": nic.netdev,
                "flags": flags,
                "mtu": nic.mtu,
                "qdisc": "mq",
                "operstate": "UP" if up else "DOWN",
                "linkmode": "DEFAULT",
                "group": "default",
                "txqlen": 1000,
                "link_type": "ether",
                "address": nic.mac,
                "broadcast": "ff:ff:ff:ff:ff:ff",
            }
        )
    return links


def _link_text(link: dict[str, object]) -> str:
    flags = ",".join(link["flags"])  # type: ignore[arg-type]
    state = link["operstate"]
    kind = link["link_type"]
    return (
        f"{link['ifindex']}: {link['ifname']}: <{flags}> mtu {link['mtu']} qdisc {link['qdisc']} state {state} "
        f"mode DEFAULT group default qlen {link['txqlen']}\n"
        f"    link/{kind} {link['address']} brd {link['broadcast']}\n"
    )


def _oneline(links: list[dict[str, object]], addrs: dict[str, list[str]], addresses: bool) -> str:
    """``ip -o``: each record on one line, its line feeds replaced by ``\\`` [V: ip(8), -o, -oneline]; for
    ``addr`` a record is one address (``N: IF    inet A/P scope S IF\\       valid_lft ...``)."""
    out = []
    for link in links:
        if not addresses:
            out.append(_link_text(link).rstrip("\n").replace("\n", "\\") + "\n")
            continue
        name = str(link["ifname"])
        scope = "host" if name == "lo" else "global"
        for a in addrs.get(name, []):
            out.append(
                f"{link['ifindex']}: {name}    inet {a} scope {scope} {name}\\"
                "       valid_lft forever preferred_lft forever\n"
            )
    return "".join(out)


def _addrs(ctx: NicContext) -> dict[str, list[str]]:
    return ctx.state.addresses


def ip(ctx: NicContext, inv: Invocation) -> Result:
    args = inv.argv[1:]
    as_json = pretty = oneline = False
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-j", "-json"):
            as_json = True
        elif flag in ("-o", "-oneline"):
            oneline = True
        elif flag in ("-p", "-pretty"):
            pretty = True
        elif flag in ("-d", "-details", "-4", "-s", "-stats", "-br", "-brief"):
            continue
        else:
            return Result(err=f'Option "{flag}" is unknown, try "ip -help".\n', status=255)
    if not args:
        return Result(err="Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }\n", status=255)
    obj, rest = args[0], args[1:]
    if obj in ("link", "l"):
        if rest and rest[0] == "set":
            return _ip_link_set(ctx, inv, rest[1:])
        return _ip_show(ctx, rest, as_json, pretty, addresses=False, oneline=oneline)
    if obj in ("addr", "address", "a"):
        if rest and rest[0] in ("add", "del", "delete", "replace", "change", "flush"):
            return iproute.addr_change(ctx.state, inv, rest)
        return _ip_show(ctx, rest, as_json, pretty, addresses=True, oneline=oneline)
    if obj in ("route", "r", "ro"):
        return iproute.route(ctx.state, inv, rest, as_json)
    if obj in ("rule", "ru"):
        return iproute.rule(ctx.state, inv, rest, as_json)
    return Result(err=f'Object "{obj}" is unknown, try "ip help".\n', status=255)


def _ip_show(
    ctx: NicContext, rest: list[str], as_json: bool, pretty: bool, addresses: bool, oneline: bool = False
) -> Result:
    if rest and rest[0] in ("show", "list", "ls", "sh"):
        rest = rest[1:]
    if rest and rest[0] == "dev":
        rest = rest[1:]
    links = _links(ctx)
    if rest:
        links = [link for link in links if link["ifname"] == rest[0]]
        if not links:
            return Result(err=f'Device "{rest[0]}" does not exist.\n', status=1)
    addrs = _addrs(ctx)
    if as_json:
        if addresses:
            for link in links:
                link["addr_info"] = [
                    {
                        "family": "inet",
                        "local": a.split("/")[0],
                        "prefixlen": int(a.split("/")[1]),
                        "scope": "host" if link["ifname"] == "lo" else "global",
                        "label": link["ifname"],
                        "valid_life_time": 4294967295,
                        "preferred_life_time": 4294967295,
                    }
                    for a in addrs.get(str(link["ifname"]), [])
                ]
        return _out(
            ctx, json.dumps(links, indent=4 if pretty else None, separators=None if pretty else (",", ":")) + "\n"
        )
    if oneline:
        return _out(ctx, _oneline(links, addrs, addresses))
    text = []
    for link in links:
        block = _link_text(link)
        if addresses:
            for a in addrs.get(str(link["ifname"]), []):
                scope = "host" if link["ifname"] == "lo" else "global"
                block += f"    inet {a} scope {scope} {link['ifname']}\n"
                block += "       valid_lft forever preferred_lft forever\n"
        text.append(block)
    return _out(ctx, "".join(text))


def _ip_link_set(ctx: NicContext, inv: Invocation, rest: list[str]) -> Result:
    if rest and rest[0] == "dev":
        rest = rest[1:]
    if not rest:
        return Result(err='Not enough information: "dev" argument is required.\n', status=255)
    name, rest = rest[0], rest[1:]
    nic = next((n for n in ctx.state.nics if n.netdev == name), None)
    if nic is None:
        if name in ("lo", ctx.state.mgmt_if):
            return Result(err="RTNETLINK answers: Operation not permitted\n", status=2)
        return Result(err=f'Cannot find device "{name}"\n', status=1)
    mtu: int | None = None
    admin: bool | None = None
    while rest:
        word = rest.pop(0)
        if word == "mtu" and rest:
            try:
                mtu = int(rest.pop(0))
            except ValueError:
                return Result(err='Error: argument "mtu" is wrong: Invalid "mtu" value\n', status=255)
        elif word in ("up", "down"):
            admin = word == "up"
        else:
            return Result(err=f'Error: either "dev" is duplicate, or "{word}" is a garbage.\n', status=255)
    if not inv.root:
        return Result(err="RTNETLINK answers: Operation not permitted\n", status=2)
    if mtu is not None:
        if mtu > MAX_MTU:
            return Result(err="Error: mtu greater than device maximum.\n", status=2)
        if mtu < MIN_MTU:
            return Result(err="Error: mtu less than device minimum.\n", status=2)
        nic.mtu = mtu
    if admin is not None:
        nic.admin_up = admin
    return Result()


# -- rdma ----------------------------------------------------------------------------------------


def _port_states(ctx: NicContext, nic: NicPort) -> tuple[str, str]:
    if ctx.oper_up(nic):
        return "ACTIVE", "LINK_UP"
    # [U] an administratively down port shows DISABLED (§4.5); an enabled port without a cable is assumed POLLING
    return "DOWN", "DISABLED" if not nic.admin_up else "POLLING"


def _select(ctx: NicContext, name: str | None) -> list[NicPort] | None:
    if not name:
        return list(ctx.state.nics)
    dev = name.split("/")[0]
    hit = [n for n in ctx.state.nics if n.rdma == dev]
    return hit or None


def rdma(ctx: NicContext, inv: Invocation) -> Result:
    args = inv.argv[1:]
    as_json = False
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-j", "-json"):
            as_json = True
    if not args:
        return Result(err="Usage: rdma [ OPTIONS ] OBJECT { COMMAND | help }\n", status=255)
    obj, rest = args[0], args[1:]
    if rest and rest[0] in ("show", "list"):
        rest = rest[1:]
    if rest and rest[0] == "dev":
        rest = rest[1:]
    nics = _select(ctx, rest[0] if rest else None)
    if nics is None:
        return Result(err="Wrong device name\n", status=1)
    if obj == "link":
        rows = []
        for nic in nics:
            state, phys = _port_states(ctx, nic)
            rows.append(
                {
                    "ifindex": ctx.state.nics.index(nic),
                    "ifname": nic.rdma,
                    "port": 1,
                    "state": state,
                    "physical_state": phys,
                    "netdev": nic.netdev,
                    "netdev_index": 3 + ctx.state.nics.index(nic),
                }
            )
        if as_json:
            return _out(ctx, json.dumps(rows, separators=(",", ":")) + "\n")
        text = "".join(
            f"link {r['ifname']}/1 state {r['state']} physical_state {r['physical_state']} netdev {r['netdev']}\n"
            for r in rows
        )
        return _out(ctx, text)
    if obj == "dev":
        rows = [
            {
                "ifindex": ctx.state.nics.index(nic),
                "ifname": nic.rdma,
                "node_type": "ca",
                "fw": nic.fw_version,
                "node_guid": _guid4(nic.guid),
                "sys_image_guid": _guid4(nic.guid),
            }
            for nic in nics
        ]
        if as_json:
            return _out(ctx, json.dumps(rows) + "\n")
        text = "".join(
            f"{r['ifindex']}: {r['ifname']}: node_type ca fw {r['fw']} node_guid {r['node_guid']} "
            f"sys_image_guid {r['sys_image_guid']}\n"
            for r in rows
        )
        return _out(ctx, text)
    return Result(err=f'Object "{obj}" is unknown, try "rdma help".\n', status=1)


def _guid4(guid: str) -> str:
    return ":".join(guid[i : i + 4] for i in range(0, 16, 4))


# -- ibstat, ibv_devinfo ----------------------------------------------------------------------------


def ibstat(ctx: NicContext, inv: Invocation) -> Result:
    args = [a for a in inv.argv[1:] if not a.startswith("-")]
    if "-l" in inv.argv:
        return _out(ctx, "".join(f"{n.rdma}\n" for n in ctx.state.nics))
    nics = _select(ctx, args[0] if args else None)
    if nics is None:
        return Result(
            err=f"ibpanic: [{inv.argv[0]}] main: '{args[0]}' IB device can't be found: No such file\n", status=1
        )
    blocks = []
    for nic in nics:
        up = ctx.oper_up(nic)
        phys = "LinkUp" if up else "Disabled" if not nic.admin_up else "Polling"
        blocks.append(
            f"CA '{nic.rdma}'\n"
            f"\tCA type: {nic.ca_type}\n"
            "\tNumber of ports: 1\n"
            f"\tFirmware version: {nic.fw_version}\n"
            "\tHardware version: 0\n"
            f"\tNode GUID: 0x{nic.guid}\n"
            f"\tSystem image GUID: 0x{nic.guid}\n"
            "\tPort 1:\n"
            f"\t\tState: {'Active' if up else 'Down'}\n"
            f"\t\tPhysical state: {phys}\n"
            f"\t\tRate: {nic.speed if up else 10}\n"
            "\t\tBase lid: 0\n"
            "\t\tLMC: 0\n"
            "\t\tSM lid: 0\n"
            "\t\tCapability mask: 0x00010000\n"
            f"\t\tPort GUID: 0x{nic.guid}\n"
            "\t\tLink layer: Ethernet\n"
        )
    return _out(ctx, "".join(blocks))


def roce_active_mtu(netdev_mtu: int) -> tuple[int, int]:
    """RoCE path MTU for a netdev MTU: the largest IB MTU fitting after RoCE headers (96 bytes), with its enum."""
    room = netdev_mtu - 96
    for size, enum in ((4096, 5), (2048, 4), (1024, 3), (512, 2)):
        if room >= size:
            return size, enum
    return 256, 1


def ibv_devinfo(ctx: NicContext, inv: Invocation) -> Result:
    args = inv.argv[1:]
    if "-l" in args or "--list" in args:
        names = "".join(f"\t{n.rdma}\n" for n in ctx.state.nics)
        return _out(ctx, f"{len(ctx.state.nics)} HCAs found:\n{names}")
    dev = None
    if "-d" in args and args.index("-d") + 1 < len(args):
        dev = args[args.index("-d") + 1]
    nics = _select(ctx, dev)
    if nics is None:
        return Result(err=f"IB device '{dev}' wasn't found\n", status=255)
    blocks = []
    for nic in nics:
        up = ctx.oper_up(nic)
        size, enum = roce_active_mtu(nic.mtu)
        blocks.append(
            f"hca_id:\t{nic.rdma}\n"
            "\ttransport:\t\t\tInfiniBand (0)\n"
            f"\tfw_ver:\t\t\t\t{nic.fw_version}\n"
            f"\tnode_guid:\t\t\t{_guid4(nic.guid)}\n"
            f"\tsys_image_guid:\t\t\t{_guid4(nic.guid)}\n"
            "\tvendor_id:\t\t\t0x02c9\n"
            f"\tvendor_part_id:\t\t\t{nic.ca_type.removeprefix('MT')}\n"
            "\thw_ver:\t\t\t\t0x0\n"
            f"\tboard_id:\t\t\t{nic.psid}\n"
            "\tphys_port_cnt:\t\t\t1\n"
            "\t\tport:\t1\n"
            f"\t\t\tstate:\t\t\t{'PORT_ACTIVE (4)' if up else 'PORT_DOWN (1)'}\n"
            "\t\t\tmax_mtu:\t\t4096 (5)\n"
            f"\t\t\tactive_mtu:\t\t{size} ({enum})\n"
            "\t\t\tsm_lid:\t\t\t0\n"
            "\t\t\tport_lid:\t\t0\n"
            "\t\t\tport_lmc:\t\t0x00\n"
            "\t\t\tlink_layer:\t\tEthernet\n"
        )
    return _out(ctx, "\n".join(blocks) + "\n")


# -- GIDs, ibdev2netdev, cma_roce_tos ----------------------------------------------------------------


def gids(nic: NicPort, addresses: list[str] | None = None) -> list[tuple[int, str, str, str]]:
    """(index, gid, ipv4, version): link-local v1/v2 at 0/1, then the IPv4-mapped v1/v2 at 2/3 for the port's
    first address (``addresses``: its current ones; default its initial address)."""
    g = nic.guid
    link_local = "fe80:0000:0000:0000:" + ":".join(g[i : i + 4] for i in range(0, 16, 4))
    rows = [(0, link_local, "", "v1"), (1, link_local, "", "v2")]
    first = next(iter(addresses), None) if addresses is not None else nic.address
    if first:
        addr = first.split("/")[0]
        octets = [int(x) for x in addr.split(".")]
        mapped = f"0000:0000:0000:0000:0000:ffff:{octets[0]:02x}{octets[1]:02x}:{octets[2]:02x}{octets[3]:02x}"
        rows += [(2, mapped, addr, "v1"), (3, mapped, addr, "v2")]
    return rows


def show_gids(ctx: NicContext, inv: Invocation) -> Result:
    args = inv.argv[1:]
    nics = _select(ctx, args[0] if args else None) or []
    lines = [
        "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV",
        "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---",
    ]
    count = 0
    for nic in nics:
        for index, gid, ipv4, ver in gids(nic, ctx.state.addresses.get(nic.netdev)):
            ip_col = f"{ipv4}  \t" if ipv4 else "\t\t"
            lines.append(f"{nic.rdma}\t1\t{index}\t{gid}\t{ip_col}{ver}\t{nic.netdev}")
            count += 1
    lines.append(f"n_gids_found={count}")
    return _out(ctx, "\n".join(lines) + "\n")


def ibdev2netdev(ctx: NicContext, inv: Invocation) -> Result:
    verbose = "-v" in inv.argv[1:]
    lines = []
    for nic in ctx.state.nics:
        up = ctx.oper_up(nic)
        link = "Up" if up else "Down"
        if verbose:
            port = "ACTIVE" if up else "DOWN"
            lines.append(
                f"{nic.pci} {nic.rdma} ({nic.ca_type} - {nic.part.split('_')[0]}) {nic.description} "
                f"fw {nic.fw_version} port 1 ({port}) ==> {nic.netdev} ({link})"
            )
        else:
            lines.append(f"{nic.rdma} port 1 ==> {nic.netdev} ({link})")
    return _out(ctx, "\n".join(lines) + "\n")


def cma_roce_tos(ctx: NicContext, inv: Invocation) -> Result:
    args = inv.argv[1:]
    opts: dict[str, str] = {}
    while args:
        flag = args.pop(0)
        if flag in ("-d", "-p", "-t") and args:
            opts[flag] = args.pop(0)
        elif flag == "-h":
            return Result("Usage: cma_roce_tos -d <ib device> [-p <port>] [-t <tos>]\n")
        else:
            return Result(err=f"cma_roce_tos: invalid option -- '{flag.lstrip('-')}'\n", status=1)
    if not inv.root:
        # [U] the script needs root for configfs; the exact message is assumed
        return Result(err="cma_roce_tos: must be run as root\n", status=1)
    dev = opts.get("-d")
    nic = next((n for n in ctx.state.nics if n.rdma == dev), None) if dev else ctx.state.nics[0]
    if nic is None or opts.get("-p", "1") != "1":
        return Result(err=f"cma_roce_tos: failed to find device {dev} port {opts.get('-p', '1')}\n", status=1)
    if "-t" in opts:
        try:
            tos = int(opts["-t"])
        except ValueError:
            tos = -1
        if not 0 <= tos <= 255:
            return Result(err=f"cma_roce_tos: invalid ToS value {opts['-t']}\n", status=1)
        nic.roce_tos = tos
    return _out(ctx, f"{nic.roce_tos}\n")


TOOLS: dict[str, Tool] = {
    "ip": ip,
    "rdma": rdma,
    "ibstat": ibstat,
    "ibv_devinfo": ibv_devinfo,
    "show_gids": show_gids,
    "ibdev2netdev": ibdev2netdev,
    "cma_roce_tos": cma_roce_tos,
}
