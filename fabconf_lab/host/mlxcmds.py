"""``mlxconfig`` and ``mlxfwreset`` of a lab GPU host (docs/reference/roce-lossless.md §4.4).

- ``mlxconfig [-d DEV] [-e] q|query [KEY ...]``: per device, the Next Boot value (``-e``: Default, Current and
  Next Boot, ``*`` marking parameters whose value differs from the default).
- ``mlxconfig -d DEV [-y] set KEY=VALUE ...``: changes only Next Boot; without ``-y`` it asks and reads the
  answer from stdin. ``mlxconfig -d DEV [-y] reset``: Next Boot back to the defaults.
- ``mlxfwreset -d DEV [-y] [--level 3] reset``: Next Boot becomes Current, and the driver restart drops the
  runtime state of every function of that card (same PCI bus and device). ``mlxfwreset -d DEV q`` lists levels.

DEV is what MFT documents for ``-d`` [V: NVIDIA MFT "Examples of mlxconfig Usage"; Ubuntu ``mstconfig(1)``]: a
PCI address (``0000:17:00.0`` or ``17:00.0``) or an mst device path (``/dev/mst/mt4129_pciconf0``). An RDMA device
or netdev name (``mlx5_0``) is refused as an unknown device: whether MFT takes one is [U]. A card's
firmware configuration is one: any of its functions (ports) reads and sets it, and a dual-port card shows its
per-port keys twice (``LINK_TYPE_P1``, ``LINK_TYPE_P2``). Single-function cards have ``_P1`` keys only.
[U] error texts and the ``-e`` footer are plausible stand-ins (the reference gives only the normal outputs).
"""

from __future__ import annotations

import functools
import re

from fabconf_lab.host.nicstate import NicPort, card_of, spec_of
from fabconf_lab.host.nicsysfs import NicContext, garble
from fabconf_lab.host.shell import Invocation, Result


def render_value(key: str, value: int) -> str:
    kind = (spec_of(key) or ("int", 0))[0]
    if kind == "bool":
        return f"{'True' if value else 'False'}({value})"
    if kind == "array":
        return f"Array[0..{value}]"
    if isinstance(kind, dict):
        names = {v: k for k, v in kind.items()}
        return f"{names.get(value, 'UNKNOWN')}({value})"
    return str(value)


# The integer keys whose values have a width: an 802.1p priority is 3 bits (0-7) [V: IEEE 802.1Q, the PCP field],
# a DSCP 6 bits (0-63) [V: RFC 2474], the congestion-control priority mask one bit per priority (0-255) [U: MFT
# does not print the range; the mask's meaning is in docs/reference/roce-lossless.md 4.4]. mlxconfig answers
# another value with "-E- Bad value" [U: the wording is the lab's usual one].
INT_RANGES = {"CNP_802P_PRIO": (0, 7), "CNP_DSCP": (0, 63), "ROCE_CC_PRIO_MASK": (0, 255)}


def _in_range(key: str, value: int) -> bool:
    lo, hi = INT_RANGES.get(key.rpartition("_P")[0] or key, (0, 2**32 - 1))
    return lo <= value <= hi


def parse_value(key: str, text: str) -> int | None:
    kind = (spec_of(key) or ("int", 0))[0]
    word = text.strip()
    if kind == "bool":
        return {"true": 1, "1": 1, "false": 0, "0": 0}.get(word.lower())
    if kind == "array":
        return None  # [U] set per element (KEY[i]=N) in MFT; the lab does not model it
    if isinstance(kind, dict):
        names = {name.upper(): number for name, number in kind.items()}  # ``per_mkey`` is lower case
        if word.upper() in names:
            return names[word.upper()]
        return int(word) if word.isdigit() and int(word) in kind.values() else None
    try:
        value = int(word, 0)
    except ValueError:
        return None
    return value if value >= 0 and _in_range(key, value) else None


def _header(nic: NicPort, number: int) -> str:
    return (
        f"\nDevice #{number}:\n----------\n\n"
        f"Device type:        {nic.device_type}\n"
        f"Name:               {nic.part}\n"
        f"Description:        {nic.description}\n"
        f"Device:             {nic.pci}\n\n"
    )


def _query(nic: NicPort, number: int, verbose: bool, keys: list[str]) -> str:
    names = tuple(keys or nic.mlx_next)
    nexts = tuple(map(nic.mlx_next.__getitem__, names))
    if not verbose:
        return _header(nic, number) + _rows(names, None, None, nexts)
    defaults = tuple(map(nic.mlx_default.__getitem__, names))
    return _header(nic, number) + _rows(names, defaults, tuple(map(nic.mlx_current.__getitem__, names)), nexts)


# The table of a query printed again for the same values (issue 42: the GPU hosts of a lab print the same firmware
# configuration at every diff and verify, 143 rows per NIC, a quarter of what a host's read cost the lab): the text
# comes from the values alone, so it is kept by them.
@functools.lru_cache(maxsize=1024)
def _rows(
    names: tuple[str, ...], defaults: tuple[int, ...] | None, currents: tuple[int, ...] | None, nexts: tuple[int, ...]
) -> str:
    """The Configurations table of ``mlxconfig q`` (Next Boot only) or, with the Default and Current values,
    ``mlxconfig -e q``."""
    out = []
    if defaults is not None and currents is not None:
        out.append("Configurations:                                      Default         Current         Next Boot\n")
        for key, default, current, value in zip(names, defaults, currents, nexts, strict=True):
            d, c, n = render_value(key, default), render_value(key, current), render_value(key, value)
            mark = "*" if value != default else " "
            out.append(f"{mark}        {key:<36}{d:<15} {c:<15} {n}\n")  # [U] a long value keeps one space
        out.append("The '*' shows parameters with next value different from default/current value.\n")
    else:
        out.append("Configurations:                                          Next Boot\n")
        for key, value in zip(names, nexts, strict=True):
            out.append(f"        {key:<44}{render_value(key, value)}\n")
    return "".join(out)


_PCI = re.compile(r"([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")


def mft_device(ctx: NicContext, name: str) -> NicPort | None:
    """The port ``-d NAME`` opens: a PCI address or an mst device path, the forms MFT documents; None else."""
    if name.startswith("/dev/mst/") or _PCI.fullmatch(name):
        return ctx.state.nic(name)
    return None


def mlxconfig(ctx: NicContext, inv: Invocation) -> Result:
    args = inv.argv[1:]
    dev: str | None = None
    verbose = assume_yes = False
    rest: list[str] = []
    while args:
        arg = args.pop(0)
        if arg in ("-d", "--dev") and args:
            dev = args.pop(0)
        elif arg in ("-e", "--enable_verbosity"):
            verbose = True
        elif arg in ("-y", "--yes"):
            assume_yes = True
        elif arg in ("-h", "--help"):
            synopsis = "mlxconfig [-d <device>] [-y] [-e] <q|set|reset> ..."
            return Result(f"    NAME:\n        mlxconfig\n    SYNOPSIS:\n        {synopsis}\n")
        else:
            rest.append(arg)
    if not rest:
        return Result(err="-E- No command found. For more information please read the help message:\n", status=1)
    command, params = rest[0], rest[1:]
    if dev is None:
        if command not in ("q", "query"):
            return Result(err="-E- Device must be specified for this command\n", status=1)
        nics = [n for n in ctx.state.nics if holder(ctx, n) is n]
    else:
        nic = mft_device(ctx, dev)
        if nic is None:
            return Result(err=f"-E- Failed to open device: {dev}. No such file or directory\n", status=1)
        nics = [holder(ctx, nic)]
    if not inv.root:
        return Result(err=f"-E- Failed to open device: {dev or nics[0].pci}. Permission denied\n", status=1)
    if command in ("q", "query"):
        unknown = [k for k in params if any(k not in n.mlx_next for n in nics)]
        if unknown:
            return Result(err=f"-E- The Device doesn't support {unknown[0]} parameter\n", status=1)
        text = "".join(_query(n, i, verbose, params) for i, n in enumerate(nics, start=1))
        return Result(garble(text) if ctx.garbled() else text)
    nic = nics[0]
    if command == "set":
        return _set(nic, params, assume_yes, inv.stdin)
    if command == "reset":
        prompt = f"\nReset configuration for device {nic.pci}? (y/n) [n] : "
        if not _confirm(assume_yes, inv.stdin):
            return Result(prompt + "\n", "-E- Aborted by user.\n", 1)
        nic.mlx_next = dict(nic.mlx_default)
        return Result(
            prompt + ("y" if assume_yes else "") + "\nApplying... Done!\n"
            "-I- Please reboot machine to load new configurations.\n"
        )
    return Result(err=f"-E- Unknown command: {command}\n", status=1)


def _confirm(assume_yes: bool, stdin: str) -> bool:
    return assume_yes or stdin.strip().lower().startswith("y")


def _set(nic: NicPort, params: list[str], assume_yes: bool, stdin: str) -> Result:
    if not params:
        return Result(err="-E- No parameters to set\n", status=1)
    changes: list[tuple[str, int]] = []
    for item in params:
        key, eq, text = item.partition("=")
        if not eq:
            return Result(err=f"-E- Bad parameter format: {item}, expected PARAM=VALUE\n", status=1)
        if key not in nic.mlx_next:
            return Result(err=f"-E- The Device doesn't support {key} parameter\n", status=1)
        value = parse_value(key, text)
        if value is None:
            return Result(err=f"-E- Bad value {text} for parameter {key}\n", status=1)
        changes.append((key, value))
    out = [_header(nic, 1), "Configurations:                                      Next Boot       New\n"]
    for key, value in changes:
        out.append(f"         {key:<44}{render_value(key, nic.mlx_next[key]):<16}{render_value(key, value)}\n")
    out.append("\n Apply new Configuration? (y/n) [n] : ")
    if not _confirm(assume_yes, stdin):
        return Result("".join(out) + "\n", "-E- Aborted by user.\n", 1)
    for key, value in changes:
        nic.mlx_next[key] = value
    out.append(
        ("y" if assume_yes else "") + "\nApplying... Done!\n-I- Please reboot machine to load new configurations.\n"
    )
    return Result("".join(out))


def same_card(ctx: NicContext, nic: NicPort) -> list[NicPort]:
    """All functions of the card ``nic`` belongs to (same PCI domain:bus:device), in function order."""
    return sorted((n for n in ctx.state.nics if card_of(n.pci) == card_of(nic.pci)), key=lambda n: n.pci)


def holder(ctx: NicContext, nic: NicPort) -> NicPort:
    """The function that holds the card's firmware configuration (its first)."""
    return same_card(ctx, nic)[0]


def firmware_reset(ctx: NicContext, nic: NicPort) -> None:
    members = same_card(ctx, nic)
    card = members[0]
    for port, member in enumerate(members, start=1):
        member.apply_pending()
        member.reset_runtime()
        if port > 1:  # the port's CNP settings come from the card's _P<port> keys
            member.cnp_dscp = card.mlx_current.get(f"CNP_DSCP_P{port}", member.cnp_dscp)
            member.cnp_802p_prio = card.mlx_current.get(f"CNP_802P_PRIO_P{port}", member.cnp_802p_prio)


def mlxfwreset(ctx: NicContext, inv: Invocation) -> Result:
    args = inv.argv[1:]
    dev: str | None = None
    assume_yes = False
    level = 3
    rest: list[str] = []
    while args:
        arg = args.pop(0)
        if arg in ("-d", "--device") and args:
            dev = args.pop(0)
        elif arg in ("-y", "--yes"):
            assume_yes = True
        elif arg in ("-l", "--level") and args:
            value = args.pop(0)
            level = int(value) if value.isdigit() else -1
        else:
            rest.append(arg)
    if dev is None:
        return Result(err="-E- Device was not specified\n", status=1)
    nic = mft_device(ctx, dev)
    if nic is None:
        return Result(err=f"-E- Failed to open device: {dev}\n", status=1)
    if not inv.root:
        return Result(err="-E- Permission denied: mlxfwreset must run as root\n", status=1)
    command = rest[0] if rest else ""
    if command in ("q", "query"):
        return Result(
            "Reset-levels:\n"
            '0: Driver, PCI link, network link will remain up ("live-Patch")      -Supported     (default)\n'
            "3: Driver restart and PCI reset                                       -Supported\n"
            "4: Warm Reboot                                                        -Supported\n"
        )
    if command not in ("r", "reset"):
        return Result(err="-E- No command given (q|reset)\n", status=1)
    if level not in (0, 3):
        return Result(err=f"-E- Reset level {level} is not supported in the lab (use 0 or 3)\n", status=1)
    names = {0: 'Driver, PCI link, network link will remain up ("live-Patch")', 3: "Driver restart and PCI reset"}
    out = f"The reset level for device, {nic.pci} is:\n\n{level}: {names[level]}\nContinue with reset?[y/N] "
    if not _confirm(assume_yes, inv.stdin):
        return Result(out + "\n", "-E- Aborted by user.\n", 1)
    out += "y\n" if assume_yes else "\n"
    if level == 0:
        return Result(out + "-I- Sending Reset Command To Fw             -Done\n-I- FW was loaded successfully.\n")
    firmware_reset(ctx, nic)
    return Result(
        out + "-I- Sending Reset Command To Fw             -Done\n"
        "-I- Stopping Driver                         -Done\n"
        "-I- Resetting PCI                           -Done\n"
        "-I- Starting Driver                         -Done\n"
        "-I- Restarting MST                          -Done\n"
        "-I- FW was loaded successfully.\n"
    )
