"""``ib_send_bw`` (perftest) between lab GPU hosts, with results that follow the lab's links.

A server (``ib_send_bw -d DEV -x GID [--tclass TC] [-D SECS] [--report_gbits] [-F]``, no address) listens on
its NIC's address; a client (the same plus the server's address) measures against it. The bandwidth is what
the path lets through: the slowest link's speed (a host NIC's negotiated speed, a switch port's
``negotiated`` speed, else 400G), times 0.96 for protocol overhead, and down to a tenth as the worst link's
share of errored frames grows (retransmissions) [U: a lab model, not a measured curve]. The path: the two
host links, and between two leaves the first up spine both reach (by name), both uplinks to it.

[lab] The real server blocks until a client is done; the lab's returns at once and listens for ``LISTEN``
seconds (fabconf starts it in the background either way: ``... >/dev/null 2>&1 &``). As the real one, it takes a
moment before it listens (``STARTUP``: it opens the device and creates its queue pairs first) [U: a lab model]; a
client that connects before then is refused (``Couldn't connect to ADDRESS:18515``). The output keeps
perftest's result table (``#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]``).
"""

from __future__ import annotations

import threading
import time
from typing import Any

# perftest's usage, as ``ib_send_bw -h``/``--help`` prints it (exit 0) [U: abridged from perftest 4.5's usage()]
USAGE = (
    " Usage:\n"
    "   ib_send_bw            start a server and wait for connection\n"
    "   ib_send_bw <host>     connect to server at <host>\n"
    "\n"
    " Options:\n"
    "  -a, --all  Run sizes from 2 till 2^23\n"
    "  -d, --ib-dev=<dev>  Use IB device <dev> (default first device found)\n"
    "  -D, --duration  Run test for a customized period of seconds.\n"
    "  -F, --CPU-freq  Do not show a warning even if cpufreq_ondemand module is loaded, and cpu-freq is not on max.\n"
    "  -h, --help  Show this help screen.\n"
    "  -p, --port=<port>  Listen on/connect to port <port> (default 18515)\n"
    "  -s, --size=<size>  Size of message to exchange (default 65536)\n"
    "  -x, --gid-index=<index>  Test uses GID with GID index\n"
    "      --report_gbits  Report Max/Average BW of test in Gbit/sec (instead of MiB/sec)\n"
    "      --tclass=<value>  Set the Traffic Class in GRH (if GRH is in use)\n"
)
LISTEN = 60.0
STARTUP = 0.5  # seconds before a server listens
EFFICIENCY = 0.96
_LISTENERS: dict[int, dict[str, tuple[float, float]]] = {}  # id(world) -> server address -> listening (from, until)
_LOCK = threading.Lock()


def _flags(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    flags, rest, i = {}, [], 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-d", "-x", "--tclass", "-D", "-p", "-s"):
            if i + 1 >= len(argv):
                raise ValueError(f"option requires an argument -- '{arg.lstrip('-')}'")
            flags[arg] = argv[i + 1]
            i += 2
        elif arg.startswith("-"):
            flags[arg] = ""
            i += 1
        else:
            rest.append(arg)
            i += 1
    return flags, rest


def _is_host(sim: Any) -> bool:
    return hasattr(getattr(sim, "state", None), "nics")


def _host_nic(world: Any, address: str) -> tuple[Any, Any] | None:
    for sim in list(world._devices.values()):
        state = getattr(sim, "state", None)
        for nic in getattr(state, "nics", []) or []:
            if any(a.split("/")[0] == address for a in state.addresses.get(nic.netdev, [])):
                return sim, nic
    return None


def _port_speed(world: Any, device: str, port: str) -> int:
    sim = world._devices.get(device)
    negotiated = getattr(sim, "negotiated", None) or {}
    return int(negotiated.get(port, 400))


def _host_link(world: Any, host: Any, nic: Any) -> tuple[str, int, float, str | None]:
    """(name, Gb/s, error ratio, leaf) of a host NIC's link; speed 0 when it has no carrier."""
    far = world.far_end(host.name, nic.netdev)
    if far is None or nic.link_down or not nic.admin_up:
        return f"{host.name}:{nic.netdev}", 0, 0.0, None
    speed = min(nic.speed, _port_speed(world, *far))
    return f"{host.name}:{nic.netdev}--{far[0]}:{far[1]}", speed, nic.error_ratio, far[0]


def _uplinks(world: Any, leaf: str) -> dict[str, tuple[str, str]]:
    """spine -> (leaf port, spine port) for the leaf's links to spines (devices that are not hosts)."""
    out = {}
    for (dev, port), (rdev, rport) in sorted(world._peer.items()):
        if dev == leaf and not _is_host(world._devices.get(rdev)):
            out.setdefault(rdev, (port, rport))
    return out


def path(world: Any, a: tuple[Any, Any], b: tuple[Any, Any]) -> list[tuple[str, int, float]]:
    """The links a flow from NIC a to NIC b crosses: (name, Gb/s, error ratio)."""
    name_a, speed_a, err_a, leaf_a = _host_link(world, *a)
    name_b, speed_b, err_b, leaf_b = _host_link(world, *b)
    links = [(name_a, speed_a, err_a), (name_b, speed_b, err_b)]
    if leaf_a and leaf_b and leaf_a != leaf_b:
        up_a, up_b = _uplinks(world, leaf_a), _uplinks(world, leaf_b)
        common = sorted(set(up_a) & set(up_b))
        if not common:
            links.append((f"{leaf_a}--{leaf_b} (no common spine)", 0, 0.0))
        else:
            spine = common[0]
            for leaf, ups in ((leaf_a, up_a), (leaf_b, up_b)):
                lport, sport = ups[spine]
                speed = min(_port_speed(world, leaf, lport), _port_speed(world, spine, sport))
                links.append((f"{leaf}:{lport}--{spine}:{sport}", speed, 0.0))
    return links


def bandwidth(links: list[tuple[str, int, float]]) -> float:
    slowest = min(speed for _name, speed, _err in links)
    worst = max(err for _name, _speed, err in links)
    return slowest * EFFICIENCY * max(0.1, 1 - 300 * worst)


def ib_send_bw(host: Any, argv: list[str]) -> tuple[str, str, int]:
    """(stdout, stderr, status) of one ib_send_bw run on lab host ``host``."""
    if any(a in ("-h", "--help") for a in argv[1:]):
        return USAGE, "", 0
    try:
        flags, rest = _flags(argv)
    except ValueError as exc:
        return "", f"ib_send_bw: {exc}\n", 1
    device = flags.get("-d")
    nic = next((n for n in host.state.nics if n.rdma == device), None)
    if nic is None:
        return "", f" Couldn't get device {device}\n Unable to find the Infiniband/RoCE device\n", 1
    world = host.world
    if world is None:
        return "", " Couldn't connect: no lab world\n", 1
    if not rest:  # server
        for address in host.state.addresses.get(nic.netdev, []):
            with _LOCK:
                now = time.monotonic()
                _LISTENERS.setdefault(id(world), {})[address.split("/")[0]] = (now + STARTUP, now + LISTEN)
        banner = "*" * 36
        return f"\n{banner}\n* Waiting for client to connect... *\n{banner}\n", "", 0
    server_address = rest[0]
    with _LOCK:
        since, until = _LISTENERS.get(id(world), {}).get(server_address, (0.0, 0.0))
    wait = since - time.monotonic()
    if until and 0 < wait <= STARTUP:
        time.sleep(wait)  # the server was started and is still opening its device: the client waits for it
    far = _host_nic(world, server_address)
    if not since <= time.monotonic() <= until or far is None:
        refused = (
            f" Couldn't connect to {server_address}:18515\n Unable to open file descriptor for socket connection\n"
        )
        return "", refused, 1
    links = path(world, (host, nic), far)
    if min(speed for _n, speed, _e in links) == 0:
        return "", " Failed to modify QP to RTR\n Unable to Connect the HCA's through the link\n", 1
    gbps = bandwidth(links)
    table = (
        "---------------------------------------------------------------------------------------\n"
        "                    Send BW Test\n"
        f" Dual-port       : OFF\t\tDevice         : {device}\n"
        f" GID index       : {flags.get('-x', '0')}\n"
        f" TOS            : {flags.get('--tclass', '0')}\n"
        "---------------------------------------------------------------------------------------\n"
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
        f" 65536      {int(gbps * 1000):<14d} {gbps:.2f}             {gbps:.2f}              {gbps / 0.524:.6f}\n"
        "---------------------------------------------------------------------------------------\n"
    )
    return table, "", 0
