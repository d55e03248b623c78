"""Desired vs current state of a GPU host's ConnectX NICs -> readable diff lines and the commands that fix them.

Three kinds of data:

- ``HostTarget``: what should be true. Built from the desired-state YAML fabconf renders
  (``templates/linux/*.j2``) by ``target_from_document``, or from a captured snapshot (``target_from_snapshot``)
  to restore it. A field that is None is not managed (the driver only touches settings in the document).
- ``HostObserved``: what the host reports (filled by the driver from the real tools).
- ``Change``: one readable diff line plus the shell commands that fix it, in apply order (firmware first:
  a firmware reset drops the runtime state; files last).

Document semantics (assumptions stated where the template leaves room):

- ``qos``, ``ecn``, ``roce_tos`` and ``mlxconfig`` are host-wide: they apply to every NIC / RDMA device.
- ``qos.dscp2prio`` lists the entries that differ from the mlx5 default map (DSCP d -> priority d >> 3);
  every other DSCP must be on its default priority (``[]`` = the default map, which already puts DSCP 26
  on priority 3).
- ``ecn.roce_np_enable`` / ``roce_rp_enable`` list exactly the priorities where ECN is enabled.
- ``mlxconfig`` values are compared with the Next Boot column; a Next Boot value that is right but not yet
  Current is pending (not a diff; see the driver's ``pending_firmware``).
- ``nccl_conf`` is the whole ``/etc/nccl.conf``; it is compared by its KEY=VALUE settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from fabconf.drivers.linux_parse import DSCPS, PRIOS, MlxValue, mlx_same, mlx_set_value, parse_nccl_conf

NCCL_CONF = "/etc/nccl.conf"
UNIT_NAME = "fabconf-roce.service"
UNIT_PATH = f"/etc/systemd/system/{UNIT_NAME}"
SCRIPT_PATH = "/usr/local/sbin/fabconf-roce.sh"


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


# -- observed state ----------------------------------------------------------------------------------------


@dataclass
class NicObserved:
    netdev: str
    rdma: str
    present: bool = True
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


@dataclass
class Change:
    line: str
    commands: list[str]
    phase: int  # 0 firmware, 1 runtime, 2 files
    replan: bool = False  # the trust changed while the DSCP map was hidden: plan again afterwards


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
    return nic


def target_from_document(text: str) -> HostTarget:
    """Parse the rendered desired-state YAML; raises DocumentError with the offending path."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise DocumentError(f"not valid YAML: {exc}") from None
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
        if not isinstance(key, str) or not key.replace("_", "").isalnum() or value is None or " " in str(value):
            raise DocumentError(f"mlxconfig: bad entry {key!r}: {value!r}")
        host.mlxconfig[key] = str(value)
    nics = [_nic(item, i, host) for i, item in enumerate(doc["nics"])]
    target = HostTarget(hostname=doc["hostname"], nics=nics)
    if doc.get("nccl_conf") is not None:
        if not isinstance(doc["nccl_conf"], str):
            raise DocumentError("nccl_conf: expected text")
        target.nccl = FileTarget(_text(doc["nccl_conf"]))
    target.boot = BootTarget(unit_text(target), boot_script(target), True)
    return target


def _text(content: str) -> str:
    return content.rstrip("\n") + "\n"


# -- the boot unit (runtime settings are lost at reboot: roce-lossless.md §6 rule 12) -------------------------


def unit_text(target: HostTarget) -> str:
    # [U] ordering: after the mlx5/OFED driver stack (openibd.service where MLNX_OFED installs it) and before the
    # network is declared online, so that NCCL jobs started afterwards see the settings.
    return (
        "# generated by fabconf: re-applies RoCE NIC runtime settings at boot\n"
        "[Unit]\n"
        f"Description=fabconf {target.hostname}: RoCE NIC runtime settings (mlnx_qos, MTU, ECN, ToS)\n"
        "After=openibd.service network-pre.target\n"
        "Before=network-online.target\n\n"
        "[Service]\n"
        "Type=oneshot\n"
        "RemainAfterExit=yes\n"
        f"ExecStart={SCRIPT_PATH}\n\n"
        "[Install]\n"
        "WantedBy=multi-user.target\n"
    )


def _runtime_commands(nic: NicTarget) -> list[str]:
    """Commands (as root) that put ``nic`` into its target runtime state from the post-boot defaults."""
    out = []
    base = f"/sys/class/net/{nic.netdev}/ecn"
    if nic.trust is not None:
        out.append(f"mlnx_qos -i {nic.netdev} --trust {nic.trust} >/dev/null")
    if nic.pfc is not None:
        out.append(f"mlnx_qos -i {nic.netdev} --pfc {','.join(map(str, nic.pfc))} >/dev/null")
    if nic.dscp2prio is not None:
        # after boot the map is the default one: only the entries that differ need setting
        sets = [f"--dscp2prio set,{d},{p}" for d, p in enumerate(nic.dscp2prio) if p != d >> 3]
        if sets:
            out.append(f"mlnx_qos -i {nic.netdev} {' '.join(sets)} >/dev/null")
    if nic.mtu is not None:
        out.append(f"ip link set dev {nic.netdev} mtu {nic.mtu}")
    for kind, flags in (("roce_np", nic.ecn_np), ("roce_rp", nic.ecn_rp)):
        out.extend(f"echo {v} > {base}/{kind}/enable/{p}" for p, v in enumerate(flags or []))
    if nic.cnp_dscp is not None:
        out.append(f"echo {nic.cnp_dscp} > {base}/roce_np/cnp_dscp")
    if nic.cnp_802p_prio is not None:
        out.append(f"echo {nic.cnp_802p_prio} > {base}/roce_np/cnp_802p_prio")
    if nic.cma_tos is not None:
        out.append(f"cma_roce_tos -d {nic.rdma} -t {nic.cma_tos} >/dev/null")
    if nic.traffic_class is not None:
        path = f"/sys/class/infiniband/{nic.rdma}/tc/1/traffic_class"
        out.append(f"[ ! -e {path} ] || echo {nic.traffic_class} > {path}")  # OFED-only file (§4.2)
    return out


def boot_script(target: HostTarget) -> str:
    lines = [
        "#!/bin/bash",
        f"# generated by fabconf for {target.hostname}: mlnx_qos, MTU, ECN sysfs and RoCE ToS are runtime-only",
        "# settings; fabconf-roce.service runs this at boot. Every command runs; the exit status reports failures.",
        "rc=0",
    ]
    for nic in target.nics:
        lines.extend(f"{command} || rc=1" for command in _runtime_commands(nic))
    lines.append("exit $rc")
    return "\n".join(lines) + "\n"


# -- planning -----------------------------------------------------------------------------------------------------


def _bits(values: list[int]) -> str:
    return ",".join(map(str, values))


def _prios(flags: list[int]) -> str:
    return ",".join(str(p) for p, v in enumerate(flags) if v) or "none"


def _write(sudo: str, path: str, value: object) -> str:
    return f"echo {value} | {sudo}tee {path} >/dev/null"


def heredoc_write(sudo: str, path: str, content: str) -> str:
    marker = "FABCONF_EOF"
    while marker in content.splitlines():
        marker += "_"
    return f"{sudo}tee {path} >/dev/null <<'{marker}'\n{content}{marker}"


def _plan_qos(t: NicTarget, o: NicObserved, sudo: str) -> list[Change]:
    out = []
    qos = f"{sudo}mlnx_qos -i {t.netdev}"
    if t.trust is not None and t.trust != o.trust:
        hidden = o.dscp2prio is None and t.dscp2prio is not None
        out.append(Change(f"{t.netdev}: trust {o.trust} -> {t.trust}", [f"{qos} --trust {t.trust}"], 1, hidden))
    if t.pfc is not None and t.pfc != o.pfc:
        out.append(Change(f"{t.netdev}: pfc {_bits(o.pfc)} -> {_bits(t.pfc)}", [f"{qos} --pfc {_bits(t.pfc)}"], 1))
    if t.dscp2prio is not None and o.dscp2prio is not None:
        wrong = [d for d in range(DSCPS) if t.dscp2prio[d] != o.dscp2prio[d]]
        if wrong:
            now = ",".join(f"{d}:{o.dscp2prio[d]}" for d in wrong)
            want = ",".join(f"{d}:{t.dscp2prio[d]}" for d in wrong)
            sets = " ".join(f"--dscp2prio set,{d},{t.dscp2prio[d]}" for d in wrong)
            out.append(Change(f"{t.netdev}: dscp2prio {now} -> {want}", [f"{qos} {sets}"], 1))
    return out


def _plan_nic(t: NicTarget, o: NicObserved, sudo: str) -> list[Change]:
    if not o.present:
        return [Change(f"{t.netdev}: missing on the host (no such netdev)", [], 1)]
    out = _plan_qos(t, o, sudo)
    if t.mtu is not None and t.mtu != o.mtu:
        cmd = f"{sudo}ip link set dev {t.netdev} mtu {t.mtu}"
        out.append(Change(f"{t.netdev}: mtu {o.mtu} -> {t.mtu}", [cmd], 1))
    base = f"/sys/class/net/{t.netdev}/ecn"
    for kind, want, have in (("roce_np", t.ecn_np, o.ecn_np), ("roce_rp", t.ecn_rp, o.ecn_rp)):
        if want is not None and want != have:
            cmds = [_write(sudo, f"{base}/{kind}/enable/{p}", v) for p, v in enumerate(want) if v != have[p]]
            out.append(Change(f"{t.netdev}: ecn {kind}_enable {_prios(have)} -> {_prios(want)}", cmds, 1))
    for name, want, now in (("cnp_dscp", t.cnp_dscp, o.cnp_dscp), ("cnp_802p_prio", t.cnp_802p_prio, o.cnp_802p_prio)):
        if want is not None and want != now:
            out.append(
                Change(f"{t.netdev}: ecn {name} {now} -> {want}", [_write(sudo, f"{base}/roce_np/{name}", want)], 1)
            )
    if t.cma_tos is not None and t.cma_tos != o.cma_tos:
        cmd = f"{sudo}cma_roce_tos -d {t.rdma} -t {t.cma_tos}"
        out.append(Change(f"{t.rdma}: roce_tos (cma_roce_tos) {o.cma_tos} -> {t.cma_tos}", [cmd], 1))
    # no tc/1/traffic_class file: inbox (non-OFED) driver, nothing to manage there (§4.2)
    if t.traffic_class is not None and o.traffic_class_file and t.traffic_class != o.traffic_class:
        now = "unset" if o.traffic_class is None else o.traffic_class
        path = f"/sys/class/infiniband/{t.rdma}/tc/1/traffic_class"
        out.append(
            Change(f"{t.rdma}: traffic_class {now} -> {t.traffic_class}", [_write(sudo, path, t.traffic_class)], 1)
        )
    return out


def _plan_firmware(t: NicTarget, o: NicObserved, sudo: str, activate: bool) -> list[Change]:
    if not o.present or not t.mlxconfig:
        return []
    out = []
    sets: list[Change] = []
    args = []
    when = "firmware reset on commit" if activate else "pending until firmware reset or reboot"
    for key, want in sorted(t.mlxconfig.items()):
        have = o.mlx.get(key)
        if have is None:
            out.append(Change(f"{t.rdma}: mlxconfig {key} not supported by the device -> {want}", [], 0))
        elif not mlx_same(want, have.next_boot):
            sets.append(Change(f"{t.rdma}: mlxconfig {key} {have.next_boot} -> {want} ({when})", [], 0))
            args.append(f"{key}={mlx_set_value(want)}")
    if sets:
        # one mlxconfig call for the device; NEVER a firmware reset unless the caller allows it
        sets[0].commands.append(f"{sudo}mlxconfig -d {t.rdma} -y set {' '.join(args)}")
    out += sets
    pending = [k for k in sorted(t.mlxconfig) if k in o.mlx and o.mlx[k].pending]
    if activate and (sets or pending):
        keys = ", ".join(pending) or "the new values"
        reset = f"{sudo}mlxfwreset -d {t.rdma} -y --level 3 reset"
        out.append(Change(f"{t.rdma}: firmware reset to activate mlxconfig ({keys})", [reset], 0))
    return out


def _plan_boot(b: BootTarget, o: HostObserved, sudo: str) -> list[Change]:
    prefix = f"boot unit {UNIT_NAME}: "
    lines: list[str] = []
    cmds: list[str] = []
    keep_enabled = b.unit is not None and b.enabled
    if o.enabled and not keep_enabled:
        lines.append("enabled -> " + ("removed" if b.unit is None else "disabled"))
        cmds.append(f"{sudo}systemctl disable {UNIT_NAME}")
    changed = False
    for label, path, want, have in (
        ("script", SCRIPT_PATH, b.script, o.script),
        ("unit file", UNIT_PATH, b.unit, o.unit),
    ):
        if want == have:
            continue
        changed = True
        if want is None:
            lines.append(f"{label} {path} -> removed")
            cmds.append(f"{sudo}rm -f {path}")
            continue
        lines.append(f"{label} {path} " + ("missing" if have is None else "differs"))
        cmds.append(heredoc_write(sudo, path, want))
        if path == SCRIPT_PATH:
            cmds.append(f"{sudo}chmod 0755 {path}")
    if changed:
        cmds.append(f"{sudo}systemctl daemon-reload")
    if keep_enabled and not o.enabled:
        lines.append("not enabled")
        cmds.append(f"{sudo}systemctl enable {UNIT_NAME}")
    if b.unit is not None and o.unit is None:
        lines = ["missing"]  # a fresh install: one line says it all
    if not lines:
        return []
    return [Change("\n".join(prefix + line for line in lines), cmds, 2)]


def _plan_files(t: HostTarget, o: HostObserved, sudo: str) -> list[Change]:
    out = _plan_nccl(t.nccl, o.nccl, sudo) if t.nccl is not None else []
    return out + (_plan_boot(t.boot, o, sudo) if t.boot is not None else [])


def _plan_nccl(want: FileTarget, have: str | None, sudo: str) -> list[Change]:
    if want.content is None:
        if have is None:
            return []
        return [Change(f"{NCCL_CONF}: present -> removed", [f"{sudo}rm -f {NCCL_CONF}"], 2)]
    target = parse_nccl_conf(want.content)
    current = parse_nccl_conf(have) if have is not None else {}
    lines = [f"{NCCL_CONF}: missing"] if have is None else []
    for key, value in target.items():
        if current.get(key) != value:
            lines.append(f"{NCCL_CONF}: {key} {current.get(key, '(unset)')} -> {value}")
    lines += [f"{NCCL_CONF}: {key} {value} -> (removed)" for key, value in current.items() if key not in target]
    if not lines:
        return []
    return [Change("\n".join(lines), [heredoc_write(sudo, NCCL_CONF, want.content)], 2)]


def plan(target: HostTarget, observed: HostObserved, *, sudo: str = "") -> list[Change]:
    """Everything that differs, in apply order (phase, then NIC order). Empty when the host matches."""
    changes: list[Change] = []
    for nic in target.nics:
        have = observed.nics.get(nic.netdev) or NicObserved(nic.netdev, nic.rdma, present=False)
        changes += _plan_firmware(nic, have, sudo, target.activate_firmware)
        changes += _plan_nic(nic, have, sudo)
    changes += _plan_files(target, observed, sudo)
    return sorted(changes, key=lambda c: c.phase)


def diff_text(changes: list[Change]) -> str:
    return "\n".join(c.line for c in changes)


# -- restore ---------------------------------------------------------------------------------------------------


def target_from_snapshot(snapshot: HostObserved, managed: HostTarget, *, activate_firmware: bool) -> HostTarget:
    """A target that puts back, from ``snapshot``, every setting ``managed`` touches."""
    nics = []
    for want in managed.nics:
        old = snapshot.nics.get(want.netdev)
        if old is None or not old.present:
            continue
        nics.append(
            NicTarget(
                netdev=want.netdev,
                rdma=want.rdma,
                mtu=old.mtu if want.mtu is not None else None,
                trust=old.trust if want.trust is not None else None,
                pfc=list(old.pfc) if want.pfc is not None else None,
                # a map hidden by trust pcp cannot be captured; it is left as the commit set it
                dscp2prio=list(old.dscp2prio) if want.dscp2prio is not None and old.dscp2prio else None,
                ecn_np=list(old.ecn_np) if want.ecn_np is not None else None,
                ecn_rp=list(old.ecn_rp) if want.ecn_rp is not None else None,
                cnp_dscp=old.cnp_dscp if want.cnp_dscp is not None else None,
                cnp_802p_prio=old.cnp_802p_prio if want.cnp_802p_prio is not None else None,
                cma_tos=old.cma_tos if want.cma_tos is not None else None,
                # an unset traffic_class cannot be unset again through sysfs; it keeps the committed value
                traffic_class=old.traffic_class if want.traffic_class is not None else None,
                mlxconfig={k: old.mlx[k].next_boot for k in want.mlxconfig if k in old.mlx},
            )
        )
    target = HostTarget(hostname=managed.hostname, nics=nics, activate_firmware=activate_firmware)
    if managed.nccl is not None:
        target.nccl = FileTarget(snapshot.nccl)
    if managed.boot is not None:
        target.boot = BootTarget(snapshot.unit, snapshot.script, snapshot.enabled)
    return target


def restore_limits(snapshot: HostObserved, managed: HostTarget) -> list[str]:
    """What a restore cannot put back exactly (said in the commit/rollback error)."""
    notes = []
    for want in managed.nics:
        old = snapshot.nics.get(want.netdev)
        if old is None or not old.present:
            continue
        if want.traffic_class is not None and old.traffic_class is None and old.traffic_class_file:
            notes.append(f"{want.rdma}: traffic_class was unset and cannot be unset again")
        if want.dscp2prio is not None and old.dscp2prio is None:
            notes.append(f"{want.netdev}: the dscp2prio map was hidden (trust pcp) and could not be captured")
    return notes


# -- the running document --------------------------------------------------------------------------------------------


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


def running_document(observed: HostObserved, managed: HostTarget | None) -> str:
    """The host's current state as YAML in the desired document's shape (host-wide sections collapse to one
    value when all NICs agree; mlxconfig shows Next Boot values, pending ones noted in a comment)."""
    present = [n for n in observed.nics.values() if n.present]
    speeds = {n.netdev: n.speed_gbps for n in managed.nics} if managed else {}
    doc: dict[str, Any] = {"hostname": observed.hostname, "nics": []}
    for nic in observed.nics.values():
        entry: dict[str, Any] = {"netdev": nic.netdev, "rdma": nic.rdma}
        if nic.present:
            entry["mtu"] = nic.mtu
        else:
            entry["missing"] = True
        if speeds.get(nic.netdev) is not None:
            entry["speed_gbps"] = speeds[nic.netdev]
        doc["nics"].append(entry)
    if present:

        def each(fn: Any) -> Any:
            return _uniform({n.netdev: fn(n) for n in present})

        doc["qos"] = {
            "trust": each(lambda n: n.trust),
            "pfc": each(lambda n: _bits(n.pfc)),
            "dscp2prio": each(
                lambda n: None if n.dscp2prio is None else [[d, p] for d, p in enumerate(n.dscp2prio) if p != d >> 3]
            ),
        }
        doc["ecn"] = {
            "roce_np_enable": each(lambda n: [p for p, v in enumerate(n.ecn_np) if v]),
            "roce_rp_enable": each(lambda n: [p for p, v in enumerate(n.ecn_rp) if v]),
            "cnp_dscp": each(lambda n: n.cnp_dscp),
            "cnp_802p_prio": each(lambda n: n.cnp_802p_prio),
        }
        doc["roce_tos"] = _uniform({n.rdma: _tos(n) for n in present})
        keys = sorted(managed.nics[0].mlxconfig) if managed and managed.nics else sorted(present[0].mlx)
        wanted = managed.nics[0].mlxconfig if managed and managed.nics else {}
        doc["mlxconfig"] = {
            key: _uniform({n.rdma: _mlx_shown(n, key, wanted.get(key)) for n in present}) for key in keys
        }
    doc["nccl_conf"] = observed.nccl
    head = [f"# {observed.hostname} -- current RoCE NIC state, read by fabconf's linux driver"]
    for nic in present:
        for key, value in sorted(nic.mlx.items()):
            if value.pending:
                head.append(
                    f"# pending until firmware reset or reboot: {nic.rdma} {key} {value.current} -> {value.next_boot}"
                )
    head.append(
        f"# boot unit {UNIT_NAME}: "
        + ("enabled" if observed.enabled else "present, disabled" if observed.unit else "absent")
    )
    body = yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=120)
    return "\n".join(head) + "\n" + body


def _mlx_shown(nic: NicObserved, key: str, wanted: str | None) -> str | None:
    value = nic.mlx.get(key)
    if value is None:
        return None
    if wanted is not None and mlx_same(wanted, value.next_boot):
        return wanted  # the desired spelling of the same value ("2" for "ETH(2)"), so documents compare equal
    return value.next_boot
