"""``fabconf lab up|status|down|fault``: the lab of device simulators, run in the background."""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from fabconf.cli import labcode
from fabconf.cli.labdefaults import DEFAULT_NETWORK as DEFAULT_NETWORK  # the names other modules import from here
from fabconf.cli.labdefaults import DEFAULT_STATE as DEFAULT_STATE
from fabconf.cli.labdefaults import NETWORK_ENV as NETWORK_ENV
from fabconf.cli.labdefaults import NETWORK_HELP as NETWORK_HELP
from fabconf.errors import UsageError
from fabconf_lab import daemon
from fabconf_lab import ports as labports
from fabconf_lab.faults import MOMENTS

SYNC_TIMEOUT = 300.0  # seconds a `lab sync` may take: the daemon compiles the inventory and starts the new devices


LAB_PACKAGE = Path(daemon.__file__ or "").resolve().parent  # fabconf_lab's folder, for labcode's fingerprint
NETWORK_RECORD = "network"  # STATE/network: the network the lab of STATE last started on


def lab_network(value: str | None, state: Path | None = None) -> str:
    """The lab's network: ``--network``, else ``$FABCONF_LAB_NETWORK``, else the one the lab of ``state`` last
    started on (a lab forgot it across ``lab down``/``lab up``: issue #40), else ``DEFAULT_NETWORK``."""
    return value or os.environ.get(NETWORK_ENV, "").strip() or (state and _remembered(state)) or DEFAULT_NETWORK


def _remembered(state: Path) -> str:
    try:
        fd = os.open(state / NETWORK_RECORD, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, encoding="utf-8") as stream:
            return stream.read(64).strip()
    except (OSError, ValueError):
        return ""


def _remember(state: Path, network: str) -> None:
    fd = os.open(state / NETWORK_RECORD, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as stream:
        stream.write(network + "\n")


def _print_status(reply: dict[str, Any]) -> None:
    devices = reply.get("devices", [])
    width = max((len(d["name"]) for d in devices), default=6)
    ports = {d["name"]: ",".join(map(str, d["ports"])) for d in devices}
    pw = max((len(p) for p in ports.values()), default=5)
    print(f"{'device':<{width}}  {'platform':<8}  {'address':<15}  {'ports':<{pw}}  faults")
    for d in devices:
        where = f"{d['address']:<15}  {ports[d['name']]:<{pw}}"
        print(f"{d['name']:<{width}}  {d['platform']:<8}  {where}  {', '.join(d['faults']) or '-'}")
    print(f"inventory: {reply.get('inventory')}")


def _all_answer(devices: list[dict], timeout: float = 30.0) -> list[str]:
    """Devices (name:port) that do not accept a TCP connection within ``timeout``."""
    deadline = time.monotonic() + timeout
    pending = [(d["name"], d["address"], p) for d in devices for p in d["ports"]]
    while pending and time.monotonic() < deadline:
        still = []
        for name, address, port in pending:
            try:
                socket.create_connection((address, port), timeout=1).close()
            except OSError:
                still.append((name, address, port))
        pending = still
        if pending:
            time.sleep(0.2)
    return [f"{n}:{p}" for n, _, p in pending]


def start_lab(inventory: Path, state: Path, network: str, quiet: bool = False, workers: int = 0) -> int:
    """Start the lab daemon unless one already runs for ``state``; returns an exit status. ``quiet`` (a ``--lab``
    command) uses a running lab; ``fabconf lab up`` over a running one says it is already up, and what to do. Only a
    loopback ``network`` and a known forced port layout (``fabconf_lab.ports``) are accepted, before anything
    binds."""
    try:
        daemon.loopback_network(network)
        if os.environ.get(labports.LAYOUT_ENV, "").strip():
            labports.choose(network)  # a forced layout that does not exist
        labports.base_port()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    viewed = daemon.viewed_lab(state)
    if viewed is not None:  # a scratch view of a running lab (``sync_lab(view=...)``): that lab answers for it
        if quiet and daemon.is_running(viewed):
            labcode.check(viewed, LAB_PACKAGE)
            return 0
        raise UsageError(f"{state} is a scratch view of the lab of {viewed}, not a lab of its own")
    daemon.state_dir(state)  # 0700, this user's, writable by no one else: UnsafePath (one line) otherwise
    if daemon.is_running(state):
        labcode.check(state, LAB_PACKAGE)
        if quiet:
            return 0
        pid = daemon.recorded_daemon(state)
        print(
            f"the lab of {state} is already up{f' (pid {pid})' if pid else ''}: fabconf lab status --state {state} "
            f"lists it; fabconf lab sync -i {inventory} --state {state} makes it follow this inventory; "
            f"fabconf lab down --state {state} stops it"
        )
        return 0
    if quiet:
        print(f"starting the lab for {inventory} in {state} ...", file=sys.stderr)
    log = state / "lab.log"
    log_fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(log_fd, "w") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-I",  # isolated: a secrets.py or json.py in the current directory is never imported
                "-m",
                "fabconf_lab.daemon",
                "--inventory",
                str(inventory.resolve()),
                "--state",
                str(state.resolve()),
                "--network",
                network,
                "--workers",
                str(workers),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    if not daemon.wait_ready(state, proc, daemon.ready_timeout(inventory)):
        if proc.poll() is None:
            proc.terminate()
        print(f"fabconf: the lab did not start; {log}:", file=sys.stderr)
        print(log.read_text()[-4000:], file=sys.stderr)
        return 1
    labcode.record(state, LAB_PACKAGE)
    _remember(state, network)
    reply = daemon.request(state, {"cmd": "status"})
    silent = _all_answer(reply["devices"])
    if silent:
        print(f"fabconf: lab devices not answering: {', '.join(silent)}", file=sys.stderr)
        return 1
    if quiet:
        return 0
    _print_status(reply)
    print(f"credentials: {state / 'lab.env'}  (e.g. set -a; . {state / 'lab.env'}; set +a)")
    return 0


def sync_lab(inventory: Path, state: Path, view: Path | None = None) -> dict[str, Any]:
    """Make the running lab of ``state`` follow ``inventory`` (``fabconf lab sync``): simulators for its new
    devices, the ones it no longer has stopped, every other device left running at its address and ports. With
    ``view`` (a scratch directory) the lab's own devices, inventory and kept addresses are left as they are: the new
    devices run for the view only, VIEW/inventory and VIEW/lab.env describe the whole inventory at the lab, and
    ``drop_view`` stops them. The inventory is validated here first (an InputError: ``file: path: message``)."""
    from fabconf.compile.pipeline import compile_inventory  # only to sync: `lab status` needs no model

    compile_inventory(inventory)
    if not daemon.is_running(state):
        raise UsageError(f"no lab is running for {state}: start it with fabconf lab up -i {inventory} --state {state}")
    labcode.check(state, LAB_PACKAGE)
    request: dict[str, Any] = {"cmd": "sync", "inventory": str(inventory.resolve())}
    if view is not None:
        request["view"] = str(daemon.checked_view(view))  # 0700, this user's: the daemon checks it again
    try:
        reply = daemon.request(state, request, timeout=SYNC_TIMEOUT)
    except ConnectionError as exc:
        raise UsageError(str(exc)) from None
    if not reply.get("ok"):
        raise UsageError(str(reply.get("error")))
    silent = _all_answer([d for d in reply["devices"] if d["name"] in reply["added"]])
    if silent:
        raise UsageError(f"lab devices not answering: {', '.join(silent)}")
    return reply


def lab_running(state: Path) -> bool:
    """A lab runs for ``state``."""
    return daemon.is_running(state)


def drop_view(state: Path, view: Path) -> None:
    """Stop the devices a scratch view (``sync_lab(view=...)``) added; nothing when the lab has gone."""
    with contextlib.suppress(ConnectionError):
        daemon.request(state, {"cmd": "drop_view", "view": str(view.resolve())}, timeout=SYNC_TIMEOUT)


def _print_sync(reply: dict[str, Any], state: Path) -> None:
    added, removed = reply["added"], reply["removed"]
    print(f"added: {', '.join(added) or '-'}")
    print(f"removed: {', '.join(removed) or '-'}")
    print(f"kept: {len(reply['kept'])} device(s), at their addresses and ports")
    if added:
        shown = [d for d in reply["devices"] if d["name"] in added]
        _print_status({"devices": shown, "inventory": state / "inventory"})


def cmd_lab(args: argparse.Namespace) -> int:
    state = Path(args.state)
    if args.lab_command == "up":
        return start_lab(Path(args.inventory), state, lab_network(args.network, state), workers=args.workers)
    if args.lab_command == "sync":
        _print_sync(sync_lab(Path(args.inventory), state), state)
        return 0
    try:
        if args.lab_command in ("status", "fault") and daemon.is_running(state):
            labcode.check(state, LAB_PACKAGE)
        if args.lab_command == "status":
            _print_status(daemon.request(state, {"cmd": "status"}))
            return 0
        if args.lab_command == "down":
            if not daemon.is_running(state):
                print(f"no lab is running for {state}: nothing to stop")
                return 0
            daemon.stop(state)
            print(f"lab of {state} stopped")
            return 0
        kind = args.kind
        request = {"cmd": "fault", "device": args.device, "kind": kind, "arg": args.arg}
        request |= {"at": args.at, "after": args.after, "every": args.every}
        reply = daemon.request(state, request)
    except ConnectionError as exc:
        print(f"fabconf: {exc}", file=sys.stderr)
        return 1
    if not reply.get("ok"):
        print(f"fabconf: {reply.get('error')}", file=sys.stderr)
        return 1
    print(f"{args.device}: faults: {', '.join(reply['faults']) or 'none'}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    lab = sub.add_parser(
        "lab",
        help="the lab of protocol-faithful device simulators",
        description="Run the inventory's devices as simulators on loopback addresses.",
    )
    lab.set_defaults(func=cmd_lab)
    labsub = lab.add_subparsers(dest="lab_command", required=True, metavar="ACTION")

    def common(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument(
            "--state", default=DEFAULT_STATE, metavar="DIR", help=f"lab state directory (default: ./{DEFAULT_STATE})"
        )
        return p

    up = common(labsub.add_parser("up", help="start the lab in the background; returns once every device answers"))
    up.add_argument("-i", "--inventory", default="inventory", metavar="DIR")
    up.add_argument("--network", default=None, help=NETWORK_HELP)
    up.add_argument(
        "--workers",
        type=int,
        default=0,
        metavar="N",
        help="simulator processes (default: one per 128 devices, at most one per core, and the switches one per 768; "
        "1: one process)",
    )
    sync = common(
        labsub.add_parser(
            "sync",
            help="the running lab follows the inventory: simulators for new devices, none for removed ones",
            description="Add simulators for the inventory's new devices and stop those of devices it no longer has; "
            "every other device keeps running, untouched, at its address and ports (the lab keeps each device's "
            "place in STATE/slots.json, across lab down and lab up too). STATE/inventory follows.",
        )
    )
    sync.add_argument("-i", "--inventory", default="inventory", metavar="DIR")
    common(labsub.add_parser("status", help="list the lab's devices, addresses and faults"))
    common(labsub.add_parser("down", help="stop the lab"))
    fault = common(labsub.add_parser("fault", help="inject or clear a fault on one device"))
    fault.add_argument("device")
    fault.add_argument(
        "kind",
        help="drop-on-commit | reject PATTERN | delay SECONDS | auth-refuse | hang | garbled (hosts) | clear; "
        "a new fault replaces every active one; link PORT:200g|down|up|errors=RATIO|fec=off|fec=on (a cable or optic "
        "fault; fec: hosts, the link up without FEC); "
        "pfc-storm (pause frames at line rate in the device's metrics; hosts: the NIC's watchdog acts); "
        "mtu NETDEV:SIZE (hosts: the RoCE active MTU falls to SIZE); pcie NETDEV:xN|NGT/s (hosts: the NIC's "
        "PCIe link trains lower); numa NETDEV:N (hosts: the NIC's card on NUMA node N, away from its GPU); "
        "above4g on|off (hosts: the BIOS's Above 4G Decoding); iommu on|off (hosts: booted with or without the "
        "IOMMU); sriov NETDEV:N (hosts: N SR-IOV VFs); version COMPONENT=VERSION (hosts: ofed, nvidia_driver or "
        "nccl at another version). "
        "With --at: drop | reject | delay SECONDS | hang | auth-refuse | garbled | hold (the request waits until "
        "the fault is cleared, then runs: a window for another changer), armed for one moment of a push, "
        "next to the other step faults",
    )
    fault.add_argument("arg", nargs="?", default=None)
    fault.add_argument(
        "--at",
        choices=MOMENTS,
        default=None,
        help="fire at this moment of a push only (once, unless --every)",
    )
    fault.add_argument(
        "--after", type=int, default=1, metavar="N", help="at the Nth request of that moment (default 1)"
    )
    fault.add_argument("--every", action="store_true", help="fire at every request of that moment from the Nth on")


def lab_exporter_ports() -> tuple[int, int]:
    """The ports on which every lab device serves its metrics: (GPU hosts, as node_exporter; switches, as
    snmp_exporter). The product reaches the lab only through this module."""
    from fabconf_lab import metrics

    return metrics.HOST_PORT, metrics.SWITCH_PORT
