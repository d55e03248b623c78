"""``mlnx_qos`` of a lab GPU host: stateful, printing the tool's report format (docs/reference/roce-lossless.md §4.1).

Forms: ``mlnx_qos -i IF`` (show); setters, which print the report after applying:
``--trust pcp|dscp``, ``--pfc 0,0,0,1,0,0,0,0``, ``--dscp2prio set,D,P|del,D,P|flush`` (repeatable; not
together with ``--trust``), ``-p/--prio_tc`` (8 TCs, one per priority), ``-s/--tsa`` (ets|strict|vendor per TC),
``-t/--tcbw`` (percent per TC; the ETS ones must add up to 100), ``-r/--ratelimit`` (Gb/s per TC, 0 = unlimited),
``--cable_len N``, ``--prio2buffer``, ``--buffer_size``, ``-d/--dcbx os|fw``. ``--opt=value`` works too.
Setting needs root. When lldpad runs, the report starts with the lldpad warning.

[U] error texts of the real tool are not in the reference; the ones here are plausible stand-ins, and a
failed call changes nothing (exit status 1, or 2 for a usage error).
"""

from __future__ import annotations

from fabconf_lab.host.nicstate import PRIOS, NicPort, default_dscp2prio
from fabconf_lab.host.nicsysfs import NicContext, garble
from fabconf_lab.host.shell import Invocation, Result

LLDPAD_WARNING = "****** WARNING: lldpad service is running and may overwrite your settings ******"
USAGE = "Usage: mlnx_qos -i <interface> [options]\n"

_ALIASES = {
    "-i": "interface",
    "--interface": "interface",
    "--trust": "trust",
    "--pfc": "pfc",
    "--dscp2prio": "dscp2prio",
    "-p": "prio_tc",
    "--prio_tc": "prio_tc",
    "-s": "tsa",
    "--tsa": "tsa",
    "-t": "tcbw",
    "--tcbw": "tcbw",
    "-r": "ratelimit",
    "--ratelimit": "ratelimit",
    "--cable_len": "cable_len",
    "--prio2buffer": "prio2buffer",
    "--buffer_size": "buffer_size",
    "-d": "dcbx",
    "--dcbx": "dcbx",
}


class QosError(Exception):
    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def _list(text: str, name: str, *, count: int = PRIOS) -> list[str]:
    items = [x.strip() for x in text.split(",")]
    if items and items[-1] == "":
        items = items[:-1]
    if len(items) != count:
        raise QosError(f"Error: {name} needs {count} comma-separated values, got {len(items)}")
    return items


def _ints(text: str, name: str, low: int, high: int) -> list[int]:
    out = []
    for item in _list(text, name):
        if not item.isdigit() or not low <= int(item) <= high:
            raise QosError(f"Error: invalid {name} value '{item}' (expected {low}-{high})")
        out.append(int(item))
    return out


def parse_args(argv: list[str]) -> dict[str, list[str]]:
    opts: dict[str, list[str]] = {}
    args = list(argv)
    while args:
        arg = args.pop(0)
        flag, eq, value = arg.partition("=")
        if flag in ("-h", "--help"):
            raise QosError(USAGE, 0)
        if flag == "-a":
            continue
        name = _ALIASES.get(flag)
        if name is None:
            raise QosError(f"{USAGE}mlnx_qos: error: unrecognized arguments: {arg}", 2)
        if not eq:
            if not args:
                raise QosError(f"{USAGE}mlnx_qos: error: argument {flag}: expected one argument", 2)
            value = args.pop(0)
        opts.setdefault(name, []).append(value)
    return opts


def apply(nic: NicPort, opts: dict[str, list[str]]) -> None:
    """Validate every option, then apply them all (nothing changes when one is invalid)."""
    new = {}
    if "trust" in opts:
        if "dscp2prio" in opts:
            raise QosError("Error: --dscp2prio can't be used together with --trust")
        trust = opts["trust"][-1]
        if trust not in ("pcp", "dscp"):
            raise QosError(
                f"mlnx_qos: error: argument --trust: invalid choice: '{trust}' (choose from 'pcp', 'dscp')", 2
            )
        new["trust"] = trust
    if "pfc" in opts:
        new["pfc"] = _ints(opts["pfc"][-1], "pfc", 0, 1)
    if "dscp2prio" in opts:
        table = list(nic.dscp2prio)
        for item in opts["dscp2prio"]:
            parts = [x.strip() for x in item.split(",")]
            if parts == ["flush"]:
                table = default_dscp2prio()
                continue
            if len(parts) != 3 or parts[0] not in ("set", "del") or not all(p.isdigit() for p in parts[1:]):
                raise QosError(f"Error: invalid --dscp2prio argument '{item}' (set,DSCP,PRIO | del,DSCP,PRIO | flush)")
            dscp, prio = int(parts[1]), int(parts[2])
            if not (0 <= dscp <= 63 and 0 <= prio <= 7):
                raise QosError(f"Error: invalid --dscp2prio argument '{item}' (DSCP 0-63, priority 0-7)")
            # [U] deleting a mapping is assumed to return the DSCP to its default priority (DSCP >> 3)
            table[dscp] = prio if parts[0] == "set" else dscp >> 3
        new["dscp2prio"] = table
    if "prio_tc" in opts:
        new["prio_tc"] = _ints(opts["prio_tc"][-1], "prio_tc", 0, 7)
    tsa = list(nic.tc_tsa)
    if "tsa" in opts:
        tsa = _list(opts["tsa"][-1], "tsa")
        bad = [t for t in tsa if t not in ("ets", "strict", "vendor")]
        if bad:
            raise QosError(f"Error: invalid tsa '{bad[0]}' (ets, strict or vendor)")
        new["tc_tsa"] = tsa
    if "tcbw" in opts or "tsa" in opts:
        bw = _ints(opts["tcbw"][-1], "tcbw", 0, 100) if "tcbw" in opts else list(nic.tc_bw)
        if "ets" in tsa:
            total = sum(b for b, t in zip(bw, tsa, strict=True) if t == "ets")
            if total != 100:
                raise QosError(f"Error: ETS bandwidth of the ets TCs must add up to 100, got {total}")
        if any(b for b, t in zip(bw, tsa, strict=True) if t != "ets"):
            raise QosError("Error: only ets TCs may have a bandwidth share")
        new["tc_bw"] = bw
    if "ratelimit" in opts:
        try:
            rates = [float(x) for x in _list(opts["ratelimit"][-1], "ratelimit")]
        except ValueError:
            raise QosError("Error: invalid ratelimit value") from None
        new["ratelimit"] = rates
    if "cable_len" in opts:
        value = opts["cable_len"][-1]
        if not value.isdigit():
            raise QosError(f"Error: invalid cable_len '{value}'")
        new["cable_len"] = int(value)
    if "prio2buffer" in opts:
        new["prio2buffer"] = _ints(opts["prio2buffer"][-1], "prio2buffer", 0, 7)
    if "buffer_size" in opts:
        new["buffer_size"] = _ints(opts["buffer_size"][-1], "buffer_size", 0, 1 << 24)
    if "dcbx" in opts:
        mode = opts["dcbx"][-1]
        if mode not in ("os", "fw"):
            raise QosError(f"mlnx_qos: error: argument -d/--dcbx: invalid choice: '{mode}' (choose from 'os', 'fw')", 2)
        new["dcbx"] = mode
    for key, value in new.items():
        setattr(nic, key, value)


def report(nic: NicPort, lldpad_running: bool) -> str:
    """The tool's pretty-printed state."""
    lines = []
    if lldpad_running:
        lines.append(LLDPAD_WARNING)
    lines.append("DCBX mode: " + ("OS controlled" if nic.dcbx == "os" else "Firmware controlled"))
    lines.append(f"Priority trust state: {nic.trust}")
    if nic.trust == "dscp":
        lines.append("dscp2prio mapping:")
        for prio in range(PRIOS):
            dscps = sorted((d for d in range(64) if nic.dscp2prio[d] == prio), reverse=True)
            for start in range(0, len(dscps), 8):
                lines.append(f"\tprio:{prio} dscp:" + "".join(f"{d:02d}," for d in dscps[start : start + 8]))
    lines.append("default priority:")
    lines.append("Receive buffer size (bytes): " + "".join(f"{s}," for s in nic.effective_buffer_size()))
    lines.append(f"Cable len: {nic.cable_len}")
    lines.append("PFC configuration:")
    lines.append("\tpriority    " + "   ".join(str(p) for p in range(PRIOS)))
    lines.append("\tenabled     " + "".join(f"{v}   " for v in nic.pfc))
    lines.append("\tbuffer      " + "".join(f"{v}   " for v in nic.effective_prio2buffer()))
    for tc in range(PRIOS):
        rate = nic.ratelimit[tc]
        limit = "unlimited" if not rate else f"{rate:.1f} Gbps"
        tsa = nic.tc_tsa[tc]
        line = f"tc: {tc} ratelimit: {limit}, tsa: {tsa}"
        if tsa == "ets":
            line += f", bw: {nic.tc_bw[tc]}%"
        lines.append(line)
        lines.extend(f"\t priority:  {p}" for p in range(PRIOS) if nic.prio_tc[p] == tc)
    return "\n".join(lines) + "\n"


def mlnx_qos(ctx: NicContext, inv: Invocation) -> Result:
    try:
        opts = parse_args(inv.argv[1:])
        if "interface" not in opts:
            raise QosError(f"{USAGE}mlnx_qos: error: the following arguments are required: -i/--interface", 2)
        name = opts.pop("interface")[-1]
        nic = next((n for n in ctx.state.nics if n.netdev == name), None)
        if nic is None:
            if name in ("lo", ctx.state.mgmt_if):
                raise QosError(f"Error: {name} does not support DCB")
            raise QosError(f"Error: interface {name} not found (No such device)")
        if opts:
            if not inv.root:
                raise QosError("Error: Operation not permitted (mlnx_qos must run as root to change settings)")
            apply(nic, opts)
    except QosError as exc:
        text = str(exc)
        if exc.status == 0:
            return Result(text)
        return Result(err=text if text.endswith("\n") else text + "\n", status=exc.status)
    out = report(nic, ctx.state.lldpad_running)
    return Result(garble(out) if ctx.garbled() else out)
