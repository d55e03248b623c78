"""Cross-checks over the resolved model, its topology and the designed device data.

Each check is a small function that appends problems; together they implement the rules of
docs/reference/roce-lossless.md §6 that a single file's schema cannot express. Every check is linear
(or n log n) in devices and links: lookups go through dicts, never nested loops over devices.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Callable
from typing import Any, NamedTuple

from fabconf.compile.design.qos import ECT0, roce_tos
from fabconf.compile.design.switch import load_balancing_for, max_paths_for, telemetry_for
from fabconf.compile.model import Endpoint, Model, Nic
from fabconf.compile.onboarding_checks import check_onboarding
from fabconf.compile.problems import Problems
from fabconf.compile.topology import Topology
from fabconf.platforms import FEATURE_NAMES, NAMES, PLATFORMS, design_hooks, feature

Check = Callable[[Model, Topology, Problems], None]


def _ffile(model: Model) -> str:
    return model.files.get("fabric", "fabric.yaml")


def _hfile(model: Model) -> str:
    return model.files.get("hosts", "hosts.yaml")


def check_priorities(model: Model, topo: Topology, problems: Problems) -> None:
    """One or two lossless priorities, including the RoCE priority; CNP strict and distinct."""
    f, roce = _ffile(model), model.fabric["roce"]
    pfc = roce["pfc_priorities"]
    if roce["priority"] not in pfc:
        problems.add(f, "roce.pfc_priorities", f"must include the RoCE priority {roce['priority']} (PFC on RoCE data)")
    if len(pfc) > 2:
        problems.add(f, "roce.pfc_priorities", f"{len(pfc)} lossless priorities; use one or two (buffer headroom)")
    cnp = roce["cnp"]
    if cnp["priority"] == roce["priority"]:
        problems.add(f, "roce.cnp.priority", "CNP priority must differ from the RoCE data priority")
    if cnp["priority"] in pfc:
        problems.add(f, "roce.cnp.priority", f"CNP priority {cnp['priority']} must not be lossless (it is strict)")
    if cnp["priority"] == 0:
        problems.add(f, "roce.cnp.priority", "CNP priority 0 is the default lossy class; use a strict class such as 6")
    if 0 in pfc:
        problems.add(f, "roce.pfc_priorities", "priority 0 is the default lossy class and cannot be lossless")
    if cnp["dscp"] == roce["dscp"]:
        problems.add(f, "roce.cnp.dscp", "CNP DSCP must differ from the RoCE data DSCP")
    if roce["ets"]["roce_percent"] >= 100:
        problems.add(f, "roce.ets.roce_percent", "leave some bandwidth to the default queue (1..99)")


def check_ecn(model: Model, topo: Topology, problems: Problems) -> None:
    """0 < min < max, in the units each platform in the fabric accepts."""
    f, ecn = _ffile(model), model.fabric["roce"]["ecn"]
    lo, hi = ecn["min_threshold_bytes"], ecn["max_threshold_bytes"]
    if not 0 < lo < hi:
        problems.add(f, "roce.ecn", f"thresholds need 0 < min ({lo}) < max ({hi})")
    platforms = {d.platform for d in model.devices.values() if d.is_switch}
    for name in sorted(platforms):
        unit = PLATFORMS[name].ecn_unit_bytes
        for key, value in (("min_threshold_bytes", lo), ("max_threshold_bytes", hi)):
            if value % unit:
                problems.add(f, f"roce.ecn.{key}", f"{value} is not a whole number of kbytes, which {name} requires")


def check_mtu(model: Model, topo: Topology, problems: Problems) -> None:
    """host MTU <= every switch port MTU; both ends of every link equal; within platform limits."""
    f = _ffile(model)
    host_mtu, switch_mtu = model.fabric["mtu"]["host"], model.fabric["mtu"]["switch"]
    if host_mtu > switch_mtu:
        problems.add(f, "mtu.host", f"host MTU {host_mtu} exceeds switch MTU {switch_mtu}")
    for name, facts in sorted(topo.switches.items()):
        dev = model.devices[name]
        plat = PLATFORMS[dev.platform]
        file, where = dev.where("mtu") if "mtu" in dev.data else (f, ["mtu", "switch"])
        if facts.mtu < plat.min_mtu:
            problems.add(file, where, f"{name}: MTU {facts.mtu} is below the {dev.platform} minimum {plat.min_mtu}")
        if "mtu" in dev.data and dev.data["mtu"] > plat.max_mtu:
            limit = f"the {dev.platform} maximum {plat.max_mtu}"
            problems.add(file, where, f"{name}: MTU {dev.data['mtu']} exceeds {limit}")
        if min(facts.mtu, plat.max_mtu) < host_mtu and facts.host_ports:
            problems.add(file, where, f"{name}: host ports MTU {min(facts.mtu, plat.max_mtu)} < host MTU {host_mtu}")
        for up in facts.uplinks:
            ends = ((up.lower, topo.switches[up.lower].mtu), (up.upper, topo.switches[up.upper].mtu))
            for dname, configured in ends:
                if "mtu" in model.devices[dname].data and configured != up.mtu:
                    problems.add(
                        *model.devices[dname].where("mtu"),
                        f"{up.label()}: MTU {configured} on {dname} "
                        f"but {up.mtu} on the other end; every hop must carry the same MTU",
                    )
            if up.mtu < host_mtu:
                problems.add(_ffile(model), "mtu.switch", f"{up.label()}: MTU {up.mtu} < host MTU {host_mtu}")


def check_vlans(model: Model, topo: Topology, problems: Problems) -> None:
    f = _ffile(model)
    # VLANs carried by the switches of each platform (every platform when no switch carries any yet)
    carried: dict[str, set[int]] = defaultdict(set)
    for n, s in topo.switches.items():
        carried[model.devices[n].platform].update(s.svis)
    seen_id: dict[int, int] = {}
    seen_name: dict[str, int] = {}
    for i, vlan in enumerate(model.fabric["vlans"]):
        vid = vlan["id"]
        if not 1 <= vid <= 4094:
            problems.add(f, ["vlans", i, "id"], f"{vid} is not in 1..4094")
        for spec in PLATFORMS.values():
            for lo, hi in spec.reserved_vlans:
                if lo <= vid <= hi and (vid in carried[spec.name] or not topo.switches):
                    problems.add(f, ["vlans", i, "id"], f"{vid} is in the {spec.label} reserved range {lo}-{hi}")
        if vid in seen_id:
            problems.add(f, ["vlans", i, "id"], f"VLAN {vid} is already defined at vlans[{seen_id[vid]}]")
        seen_id.setdefault(vid, i)
        if vlan["name"] in seen_name:
            problems.add(
                f, ["vlans", i, "name"], f"name {vlan['name']!r} is already used at vlans[{seen_name[vlan['name']]}]"
            )
        seen_name.setdefault(vlan["name"], i)


def check_ecmp(model: Model, topo: Topology, problems: Problems) -> None:
    """Per switch: the ECMP width for its role within the platform's limit, and wide enough for its real
    links: a leaf's uplinks, a spine's super-spine uplinks, a super-spine's links into any one pod."""
    f = _ffile(model)
    orphaned = {ep.device for ep in topo.orphaned}
    for name, facts in sorted(topo.switches.items()):
        dev = model.devices[name]
        paths = max_paths_for(dev, model.fabric)
        if dev.data.get("ecmp_max_paths"):
            file, where = dev.where("ecmp_max_paths")
        elif isinstance(model.fabric["ecmp"]["max_paths"], dict):
            file, where = f, ["ecmp", "max_paths", dev.role]
            if isinstance(model.fabric["ecmp"]["max_paths"].get(dev.role), dict):
                where.append(dev.platform)
        else:
            file, where = f, ["ecmp", "max_paths"]
        plat = PLATFORMS[dev.platform]
        limit = plat.ecmp_limit(dev.data.get("os_version"), dev.data.get("assume_release"))
        if paths > limit:
            problems.add(file, where, f"{name}: {paths} paths exceed the {dev.platform} maximum of {limit}")
        if name in orphaned:
            pass  # its links to a device that could not be resolved: that device's problem is the one to fix
        elif dev.role == "leaf" and not facts.uplinks:
            problems.add(*_device_where(model, name), "leaf has no uplinks in cabling.yaml")
        elif dev.role == "spine" and not facts.downlinks:
            problems.warn(*_device_where(model, name), "spine has no leaf links in cabling.yaml")
        per_pod: dict[str | None, int] = defaultdict(int)
        for down in facts.downlinks:
            per_pod[topo.switches[down.lower].pod] += 1
        needed = len(facts.uplinks) if dev.role != "super_spine" else max(per_pod.values(), default=0)
        what = "uplinks" if dev.role != "super_spine" else "links into one pod"
        if paths < needed:
            problems.add(file, where, f"{name}: {paths} ECMP paths < its {needed} {what}")


def _device_where(model: Model, name: str) -> tuple[str, list[Any]]:
    return model.devices[name].origin or _hfile(model), [name]


def check_pods(model: Model, topo: Topology, problems: Problems) -> None:
    """With more than one pod, every pod reaches the rest of the fabric through super-spines, and so does every
    spine of it: a spine without super-spine links takes its leaves' traffic to other pods and has no way on."""
    if len(topo.pods) < 2:
        return
    f = _ffile(model)
    reach: dict[str, int] = defaultdict(int)
    members: dict[str, int] = defaultdict(int)
    stranded: dict[str, list[str]] = defaultdict(list)  # pod -> its spines without a super-spine link
    orphaned = {ep.device for ep in topo.orphaned}
    for name, facts in sorted(topo.switches.items()):
        if facts.pod is None:
            continue
        members[facts.pod] += 1
        if model.devices[name].role == "spine":
            reach[facts.pod] += facts.cabled_uplinks
            if not facts.cabled_uplinks and name not in orphaned:
                stranded[facts.pod].append(name)
    # a pod with a device that could not be resolved: that device's problem is the one to fix
    unresolved = {str(data.get("pod")) for data in model.unresolved.values()}
    for pod in sorted(topo.pods):
        if pod in unresolved:
            continue
        if members[pod] and not reach[pod]:
            problems.add(f, ["pods", pod], f"pod {pod} has no spine-super-spine link: it has no path to the other pods")
        elif not members[pod]:
            problems.warn(f, ["pods", pod], f"pod {pod} has no switches yet")
        else:
            for name in stranded[pod]:
                problems.add(
                    *_device_where(model, name),
                    f"spine of pod {pod} without a super-spine link in cabling.yaml: in a fabric of "
                    f"{len(topo.pods)} pods, traffic its leaves send to another pod has no way on",
                )


def check_pod_asns(model: Model, topo: Topology, problems: Problems) -> None:
    """The spines of a pod share one ASN ([3P] RFC 7938 §5.2.1: one ASN per Tier-2 device group, i.e. a pod's
    spines; a leaf's paths through each of them then carry the same AS path and form one ECMP group without
    ``multipath-relax``): a spine's own ``data.asn`` may only repeat its pod's."""
    by_pod: dict[str, list[str]] = defaultdict(list)
    for name, facts in sorted(topo.switches.items()):
        if model.devices[name].role == "spine" and facts.asn is not None and facts.pod is not None:
            by_pod[facts.pod].append(name)  # a spine without a pod is reported as such
    for pod, spines in sorted(by_pod.items()):
        # the pod's ASN: its derived one when a spine uses it, else the first spine's
        derived = [n for n in spines if "asn" not in model.devices[n].data]
        first = (derived or spines)[0]
        asn = topo.switches[first].asn
        key = _asn_source(model, "spine", pod) if derived else f"{first}'s data.asn"
        for name in spines:
            if topo.switches[name].asn != asn:
                problems.add(
                    *model.devices[name].where("asn"),
                    f"{name}: ASN {topo.switches[name].asn} splits the spines of pod {pod} across ASes ({first} "
                    f"has {asn}, from {key}); a pod's spines share one ASN: set it for the pod "
                    f"({_pod_asn_key(model, pod)}) instead",
                )


def _pod_asn_key(model: Model, pod: str) -> str:
    return f"pods.{pod}.spine_asn" if model.fabric.get("pods") else "bgp.spine_asn"


def check_pools(model: Model, topo: Topology, problems: Problems) -> None:
    """Address pools (loopbacks per tier, point-to-point per tier, VLAN subnet pools) never overlap."""
    f = _ffile(model)
    addressing = model.fabric["addressing"]
    pools: list[tuple[ipaddress.IPv4Network, str]] = []
    named = [(v, f"addressing.loopbacks.{r}") for r, v in sorted(addressing["loopbacks"].items())]
    named += [(addressing[k], f"addressing.{k}") for k in ("p2p_pool", "spine_p2p_pool") if addressing.get(k)]
    named += [(v["subnet_pool"], f"vlans[{i}].subnet_pool") for i, v in enumerate(model.fabric["vlans"])]
    for value, where in named:
        try:
            pools.append((ipaddress.IPv4Network(value), where))
        except ValueError:
            continue  # reported where the pool is used
    pools.sort(key=lambda t: (int(t[0].network_address), t[0].prefixlen))
    widest: tuple[ipaddress.IPv4Network, str] | None = None
    for net, where in pools:  # sorted by start: an overlap is always with the widest-reaching earlier pool
        if widest is not None and net.overlaps(widest[0]):
            problems.add(f, where, f"{net} overlaps {widest[1]} ({widest[0]})")
        if widest is None or int(net.broadcast_address) > int(widest[0].broadcast_address):
            widest = (net, where)


def check_watchdog(model: Model, topo: Topology, problems: Problems) -> None:
    """PFC watchdog timers every platform in the fabric accepts (polling range, timer precision), and a timeout
    every platform can act at: not below the polling interval, and a whole number of intervals in the range of
    the platforms that take a count (Cumulus ``robustness``, NX-OS ``shutdown-multiplier``)."""
    f, wd = _ffile(model), model.fabric["roce"]["pfc_watchdog"]
    if not wd["enabled"]:
        return
    poll, timeout = wd["polling_interval_ms"], wd["timeout_ms"]
    if timeout < poll:
        problems.add(
            f,
            "roce.pfc_watchdog.timeout_ms",
            f"{timeout} ms is below the polling interval ({poll} ms): no switch can act that soon",
        )
    elif wd.get("robustness") is not None and wd["robustness"] * poll != timeout:
        problems.add(
            f,
            "roce.pfc_watchdog.robustness",
            f"{wd['robustness']} x {poll} ms is not the timeout ({timeout} ms); leave it out: it is timeout / polling",
        )
    _check_watchdog_action(model, topo, problems)
    timers = {"polling_interval_ms": poll, "timeout_ms": timeout}
    if wd.get("recovery_ms"):
        timers["recovery_ms"] = wd["recovery_ms"]
    for name in sorted({model.devices[n].platform for n in topo.switches}):
        spec = PLATFORMS[name]
        lo, hi = spec.watchdog_polling_ms
        if not lo <= poll <= hi:
            problems.add(f, "roce.pfc_watchdog.polling_interval_ms", f"{poll} ms: {spec.label} accepts {lo}-{hi} ms")
        for key, value in timers.items():
            if value % spec.watchdog_step_ms:
                problems.add(
                    f,
                    f"roce.pfc_watchdog.{key}",
                    f"{value} ms: {spec.label} takes timers in steps of {spec.watchdog_step_ms} ms",
                )
        if spec.watchdog_multiple is not None and timeout >= poll:
            least, most = spec.watchdog_multiple
            if timeout % poll or not least <= timeout // poll <= most:
                problems.add(
                    f,
                    "roce.pfc_watchdog.timeout_ms",
                    f"{timeout} ms: {spec.label} acts after {least}-{most} whole polling intervals "
                    f"({poll} ms each), and {timeout} / {poll} is not one of them",
                )


def _check_watchdog_action(model: Model, topo: Topology, problems: Problems) -> None:
    """The watchdog action on every switch platform: one the platform renders (platforms.py ``watchdog_actions``),
    else refused; where the platform has no action setting, anything but drop is a warning: it is not applied."""
    f, action = _ffile(model), str(model.fabric["roce"]["pfc_watchdog"]["action"])
    by_platform: dict[str, list[str]] = {}
    for name in sorted(topo.switches):
        by_platform.setdefault(model.devices[name].platform, []).append(name)
    for platform, names in sorted(by_platform.items()):
        spec, shown = PLATFORMS[platform], ", ".join(names)
        if spec.watchdog_actions and action not in spec.watchdog_actions:
            problems.add(
                f,
                "roce.pfc_watchdog.action",
                f"{action!r}: the {spec.label} PFC watchdog takes {' or '.join(spec.watchdog_actions)} ({shown})",
            )
        elif not spec.watchdog_actions and action != "drop":
            problems.warn(
                f,
                "roce.pfc_watchdog.action",
                f"{action!r} is not applied on {spec.label} ({shown}): its PFC watchdog has no action setting, so "
                "fabconf renders none and the switch acts as it does by default",
            )


def check_shares(model: Model, topo: Topology, problems: Problems) -> None:
    """Every DWRR class gets a share of at least 1 %: the lossless priorities split ``roce_percent`` (a class
    with 0 % would run strict priority on Cumulus, above RoCE [V: Cumulus Linux 5.x "Quality of Service" page])."""
    roce = model.fabric["roce"]
    total, lossless = roce["ets"]["roce_percent"], len(roce["pfc_priorities"])
    if total < lossless:
        problems.add(
            _ffile(model),
            "roce.ets.roce_percent",
            f"{total} % split over {lossless} lossless priorities leaves one with 0 %; give each at least 1 %",
        )


def check_releases(model: Model, topo: Topology, problems: Problems) -> None:
    """Every switch runs a release fabconf knows, on hardware of a known family (where the platform's
    configuration differs by family). A GPU host names no release: fabconf renders every host alike, whatever
    its OS, so an ``os_version`` there would be silently ignored and is refused instead."""
    for _name, dev in sorted(model.devices.items()):
        for key in ("os_version", "assume_release"):
            if dev.is_host and key in dev.data:
                problems.add(
                    *dev.where(key),
                    f"data.{key} is for switches: a GPU host is rendered the same whatever its OS release "
                    "(preflight reads the kernel and drivers from the host itself); remove it",
                )
    verdicts: dict[tuple[Any, ...], _Verdict] = {}  # once per platform, release and model, not once per switch
    for name in sorted(topo.switches):
        dev = model.devices[name]
        version, assume = dev.data.get("os_version"), dev.data.get("assume_release")
        asked = (dev.platform, version, assume, dev.data.get("model"))
        try:
            verdict = verdicts.get(asked)
            if verdict is None:
                verdict = verdicts[asked] = _release_verdict(*asked)
        except TypeError:  # a value that cannot be a key (the schema keeps these to text): asked for this switch alone
            verdict = _release_verdict(*asked)
        release, assumption, hardware = verdict
        if release is not None:
            problems.add(*dev.where("assume_release" if assume else "os_version"), f"{name}: {release}")
        if assumption is not None:
            problems.warn(*dev.where("assume_release"), f"{name}: {assumption}")
        if hardware is not None:
            problems.add(*dev.where("model"), f"{name}: {hardware}")


_Verdict = tuple[str | None, str | None, str | None]  # (release refused, release assumed, hardware refused)


def _release_verdict(platform: str, version: Any, assume: Any, hardware: Any) -> _Verdict:
    """What ``check_releases`` says of a switch of ``platform`` running ``version`` (``assume``) on ``hardware``."""
    spec = PLATFORMS[platform]
    release = assumption = family = None
    try:
        spec.release_line(version, assume)
    except ValueError as exc:
        release = str(exc)
    if spec.assumed(version, assume):
        assumption = spec.assumption(str(version), str(assume))
    try:
        spec.hardware_family(hardware)
    except ValueError as exc:
        family = str(exc)
    return release, assumption, family


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def check_features(model: Model, topo: Topology, problems: Problems) -> None:
    """Adaptive routing and the gNMI server only where the switch's platform, release and model have them (the
    platform table's ``FEATURES``), and a gNMI port the platform accepts."""
    f = _ffile(model)
    port = int(model.fabric["monitoring"]["telemetry"]["port"])
    for name in sorted(topo.switches):
        dev = model.devices[name]
        spec = PLATFORMS[dev.platform]
        version = str(dev.data.get("os_version") or spec.default_version)
        wanted = [
            (
                "adaptive",
                "load_balancing",
                ["load_balancing", "mode"],
                load_balancing_for(dev, model.fabric) == "adaptive",
            ),
            ("telemetry", "telemetry", ["monitoring", "telemetry", "enabled"], telemetry_for(dev, model.fabric)),
        ]
        for feat, key, fabric_path, on in wanted:
            if not on:
                continue
            where: tuple[str, list[Any]] = dev.where(key) if key in dev.data else (f, list(fabric_path))
            row = feature(feat, dev.platform)
            why = row.refusal(spec.label, version, dev.data.get("model"))
            what = FEATURE_NAMES[feat]
            if why:
                problems.add(*where, f"{name}: cannot run {what}: {why}")
                continue
            doubt = row.doubt(dev.data.get("model"))
            if doubt:
                problems.warn(*where, f"{name}: {what} may not run here: {doubt}")
            if feat == "telemetry" and not row.port_range[0] <= port <= row.port_range[1]:
                lo, hi = row.port_range
                problems.add(
                    f, ["monitoring", "telemetry", "port"], f"{name}: {spec.label} takes a gNMI port {lo}..{hi}"
                )
            elif feat == "telemetry" and row.listening_address and not _is_address(dev.hostname):
                problems.add(
                    dev.origin,
                    [name, "hostname"],
                    f"{name}: the {spec.label} gNMI server listens on the management address: hostname must be an "
                    f"IP address, not {dev.hostname!r}",
                )


def check_unique(model: Model, topo: Topology, problems: Problems) -> None:
    """Unique management addresses, ids per role, leaf ASNs, loopbacks and interface addresses."""
    h, c = _hfile(model), model.files.get("cabling", "cabling.yaml")
    first: dict[tuple[str, Any], str] = {}

    def claim(kind: str, value: Any, owner: str, file: str, path: Any, what: str) -> None:
        """``value``: an address as an int for "ip", (network as an int, prefix length) for "net"."""
        key = (kind, value)
        if key in first and first[key] != owner:
            problems.add(file, path, f"{what} {_shown(kind, value)} is already used by {first[key]}")
        else:
            first.setdefault(key, owner)

    asn_owner: dict[int, tuple[str, str, str]] = {}  # ASN -> (first device, its role/pod group, the key setting it)
    # derived values claim first, so a collision is reported where an override (data.asn, data.loopback) is
    rank = {"super_spine": 0, "spine": 1, "leaf": 2}
    ordered = sorted(
        model.devices.items(),
        key=lambda kv: ("asn" in kv[1].data or "loopback" in kv[1].data, rank.get(kv[1].role, 3), kv[0]),
    )
    reported: set[str] = set()
    for name, dev in ordered:
        claim("mgmt", dev.hostname, name, *_mgmt_where(model, name), "management address")
        if dev.id is not None:
            claim(f"id-{dev.role}", dev.id, name, *dev.where("id"), f"{dev.role} id")
        facts = topo.switches.get(name)
        if facts is None:
            continue
        if facts.asn is not None:
            # RFC 7938: one ASN per super-spine tier, per pod's spines and per leaf; nothing else may share it
            group = {"super_spine": "super-spines", "spine": f"spines of pod {facts.pod}"}.get(dev.role, name)
            source = "data.asn" if "asn" in dev.data else _asn_source(model, dev.role, facts.pod)
            seen = asn_owner.setdefault(facts.asn, (name, group, source))
            if seen[1] != group:
                # the other end of the clash is named with the key that gave it this ASN (bgp.super_spine_asn…)
                whose = seen[0] if seen[1] == seen[0] else f"{seen[0]} ({seen[1]})"
                whose += f" from {seen[0]}'s data.asn" if seen[2] == "data.asn" else f" from {seen[2]}"
                if "asn" in dev.data:
                    problems.add(*dev.where("asn"), f"ASN {facts.asn} is already used by {whose}")
                else:
                    where = _asn_source(model, dev.role, facts.pod)
                    if where not in reported:  # one line per fabric-level setting, not one per leaf
                        reported.add(where)
                        problems.add(_ffile(model), where, f"{name}: ASN {facts.asn} is already used by {whose}")
        if facts.loopback is not None:
            file, path = dev.where("loopback" if "loopback" in dev.data else "id")
            claim("ip", int(facts.loopback), name, file, path, "loopback")
        for vid, gw in facts.svis.items():
            net = (int(gw.network.network_address), gw.network.prefixlen)
            claim("net", net, f"{name} VLAN {vid}", h, [name], "subnet")
    # 65k claims at 32k GPUs: a value claimed for the first time is taken at once, the rest go through ``claim``
    for _name, facts in sorted(topo.switches.items()):
        for up in facts.uplinks:
            key: tuple[str, Any] = ("net", (up.network, 31))
            if key not in first:
                first[key] = f"{up.lower}:{up.lower_port}"
            else:
                claim(*key, f"{up.lower}:{up.lower_port}", c, ["links", up.link_index], "link subnet")
    for host, ports in sorted(topo.host_ports.items()):
        for hp in ports:
            key = ("ip", hp.ip)
            if key not in first:
                first[key] = f"{host}:{hp.nic.netdev}"
            else:
                claim(*key, f"{host}:{hp.nic.netdev}", c, ["links", hp.link_index], "address")


def _shown(kind: str, value: Any) -> Any:
    """A claimed value as the user reads it."""
    if kind == "ip":
        return ipaddress.IPv4Address(value)
    if kind == "net":
        return ipaddress.IPv4Network(value)
    return value


def _asn_source(model: Model, role: str, pod: str | None) -> str:
    """The fabric.yaml setting a derived ASN comes from."""
    if role == "spine" and pod and (model.fabric.get("pods") or {}).get(pod, {}).get("spine_asn"):
        return f"pods.{pod}.spine_asn"
    return {"super_spine": "bgp.super_spine_asn", "spine": "bgp.spine_asn"}.get(role, "bgp.leaf_asn_base")


def _mgmt_where(model: Model, name: str) -> tuple[str, list[Any]]:
    dev = model.devices[name]
    return dev.origin or _hfile(model), [name, "hostname"]


def check_hosts(model: Model, topo: Topology, problems: Problems) -> None:
    """ToS, NCCL and firmware settings agree with the RoCE profile; every NIC is cabled."""
    f = _ffile(model)
    roce, hosts = model.fabric["roce"], model.fabric["hosts"]
    tos = roce_tos(model.fabric)
    if tos >> 2 != roce["dscp"]:
        problems.add(f, "hosts.tos", f"ToS {tos} carries DSCP {tos >> 2}, not the RoCE DSCP {roce['dscp']}")
    elif tos & 0b11 == 0:
        problems.add(f, "hosts.tos", f"ToS {tos} is Not-ECT; use {(roce['dscp'] << 2) | ECT0} so DCQCN can mark")
    nccl = hosts["nccl"]
    # NCCL settings that must agree with the RoCE profile [V: NCCL env docs: NCCL_IB_TC is the traffic class
    # (ToS byte) and NCCL_IB_SL the service level, which RoCE carries as the 802.1p priority]
    for key, want, what in (
        ("NCCL_IB_TC", tos, "the RoCE ToS"),
        ("NCCL_IB_SL", roce["priority"], "the RoCE priority"),
        ("NCCL_IB_GID_INDEX", hosts["gid_index"], "hosts.gid_index"),
    ):
        value = nccl.get(key)
        if value is not None and str(value) != str(want):
            problems.add(f, f"hosts.nccl.{key}", f"{value} differs from {what} {want}")
    mlx = hosts["mlxconfig"]
    for key, value in sorted(mlx.items()):
        base, _, port = key.rpartition("_P")
        if not port.isdigit():
            continue
        want = {"CNP_DSCP": roce["cnp"]["dscp"], "CNP_802P_PRIO": roce["cnp"]["priority"]}.get(base)
        if want is not None and str(value) != str(want):
            problems.add(f, f"hosts.mlxconfig.{key}", f"{value} differs from roce.cnp ({want})")
        if base == "ROCE_CC_PRIO_MASK":
            try:
                bits = int(str(value), 0)
            except ValueError:
                problems.add(f, f"hosts.mlxconfig.{key}", f"{value!r} is not a number")
                continue
            for prio in roce["pfc_priorities"]:
                if not bits >> prio & 1:
                    problems.add(f, f"hosts.mlxconfig.{key}", f"{value} leaves DCQCN off on lossless priority {prio}")
    for name, dev in sorted(model.devices.items()):
        if not dev.is_host:
            continue
        file, path = dev.where("nics")
        if not dev.nics:
            problems.add(file, path, f"{name}: a GPU host needs at least one RoCE NIC")
        cabled = {hp.nic.netdev for hp in topo.host_ports.get(name, [])}
        seen: dict[str, str] = {}
        cards: dict[tuple[str, int], str] = {}
        _check_card_declarations(dev.nics, file, path, problems)
        for i, nic in enumerate(dev.nics):
            if nic.rdma in seen:
                problems.add(file, [*path, i, "rdma"], f"{name}: {nic.rdma} is already used by {seen[nic.rdma]}")
            seen[nic.rdma] = nic.netdev
            if nic.card in cards:
                card, port = nic.card
                problems.add(file, [*path, i], f"{name}: port {port} of card {card} is already {cards[nic.card]}")
            cards.setdefault(nic.card, nic.netdev)
            if nic.netdev not in cabled and Endpoint(name, nic.netdev) not in topo.orphaned:
                problems.warn(file, [*path, i], f"{name}:{nic.netdev} is not cabled to a leaf")


def _check_card_declarations(nics: tuple[Nic, ...], file: str, path: list[Any], problems: Problems) -> None:
    """A NIC's ``pci`` and its ``adapter`` + ``port`` name the same card and port: PCI function n is port n+1, and
    the ports of one adapter are the functions of one PCI device (``0000:17:00``). fabconf would otherwise set the
    firmware of one card through the other's name. Hosts sharing a group's NICs share its one message."""
    card_of_adapter: dict[str, tuple[str, int]] = {}  # adapter -> (PCI device, first NIC index declaring it)
    adapter_of_card: dict[str, tuple[str, int]] = {}  # PCI device -> (adapter, first NIC index)
    for i, nic in enumerate(nics):
        if not nic.pci:
            continue
        device, _, function = nic.pci.rpartition(".")
        if nic.port is not None and nic.port != int(function) + 1:
            problems.add(
                file,
                [*path, i, "port"],
                f"{nic.netdev}: port {nic.port} disagrees with pci {nic.pci} (PCI function {function} is "
                f"port {int(function) + 1} of its card)",
            )
        if not nic.adapter:
            continue
        first_card, j = card_of_adapter.setdefault(nic.adapter, (device, i))
        if first_card != device:
            problems.add(
                file,
                [*path, i, "adapter"],
                f"{nic.netdev}: adapter {nic.adapter} is PCI device {first_card} (nics[{j}]) but pci "
                f"{nic.pci} is on {device}",
            )
        first_adapter, j = adapter_of_card.setdefault(device, (nic.adapter, i))
        if first_adapter != nic.adapter:
            problems.add(
                file,
                [*path, i, "adapter"],
                f"{nic.netdev}: pci {nic.pci} is on the card of adapter {first_adapter} (nics[{j}]), not {nic.adapter}",
            )
    for i, j in _unnamed_ports(nics):
        nic, adapter = nics[i], nics[j].adapter
        problems.add(
            file,
            [*path, i, "adapter"],
            f"{nic.netdev}: pci {nic.pci} is on the card of adapter {adapter} (nics[{j}]) but names no adapter, so "
            f"fabconf would take them for two cards; give every port of a card the same adapter, or none",
        )


def _unnamed_ports(nics: tuple[Nic, ...]) -> list[tuple[int, int]]:
    """(i, j): NIC i names no adapter but its PCI device is the card NIC j names an adapter for."""
    named: dict[str, int] = {}
    for j, nic in enumerate(nics):
        if nic.pci and nic.adapter:
            named.setdefault(nic.pci.rpartition(".")[0], j)
    return [
        (i, named[nic.pci.rpartition(".")[0]])
        for i, nic in enumerate(nics)
        if nic.pci and not nic.adapter and nic.pci.rpartition(".")[0] in named
    ]


def check_attachment(model: Model, topo: Topology, problems: Problems) -> None:
    """Rail-optimised hosts: each leaf serves one rail (a warning: small fabrics share leaves between rails).
    Dual-homed hosts: the ports of each card go to two different leaves of one pod, as independent L3 links."""
    rails: dict[str, set[int]] = defaultdict(set)
    for name, ports in sorted(topo.host_ports.items()):
        dev = model.devices[name]
        if dev.data.get("attachment", "rail_optimised") == "rail_optimised":
            for hp in ports:
                rails[hp.leaf].add(hp.nic.rail)
            continue
        if _unnamed_ports(dev.nics):  # its cards are not known: _check_card_declarations says why, once
            continue
        file, path = dev.where("attachment")
        by_card: dict[str, list[Any]] = defaultdict(list)
        for hp in ports:
            by_card[hp.nic.card[0]].append(hp)
        for card, members in sorted(by_card.items()):
            leaves = [hp.leaf for hp in members]
            if len(members) < 2:
                problems.warn(file, path, f"{name}: card {card} has one cabled port: it is not dual-homed")
            elif len(set(leaves)) < len(leaves):
                problems.add(
                    file,
                    path,
                    f"{name}: the ports of card {card} go to {', '.join(leaves)}; dual-homed ports "
                    "go to the two leaves of a leaf pair",
                )
            elif len({topo.switches[leaf].pod for leaf in leaves if leaf in topo.switches}) > 1:
                where = ", ".join(leaves)
                problems.add(file, path, f"{name}: card {card} is homed to leaves of different pods ({where})")
    for leaf, served in sorted(rails.items()):
        if len(served) > 1:
            problems.warn(
                *_device_where(model, leaf),
                f"{leaf} serves rails {', '.join(map(str, sorted(served)))}; a rail-optimised leaf serves one rail",
            )


# What a switch's designed QoS data says about the priority chain (each switch platform's design hooks' read_chain):
# (traffic class of the RoCE DSCP, lossless priorities, None when trust is right or the problem's detail).
ChainView = tuple[int | None, set[int], str | None]


class DeviceChain(NamedTuple):
    """What the priority-chain check reads from one device's designed data: small enough to send back from the
    process that designed the device (``fabconf.compile.output``), so the check runs before any file is written."""

    platform: str
    prio: int | None  # a host: the priority its DSCP map gives the RoCE DSCP; a switch: the traffic class
    lossless: frozenset[int]  # the priorities with PFC on
    trust: str | None  # a host: its trust setting; a switch: what its platform says is wrong with trust, or None
    tos: int  # a host: its RoCE ToS byte (0 for a switch)
    pfc_off: tuple[str, ...] = ()  # a switch: its interfaces with PFC off


def chain_view(d: dict[str, Any], dscp: int) -> DeviceChain:
    """The ``DeviceChain`` of one device's data, for the fabric's RoCE DSCP ``dscp``."""
    q = d.get("qos", {})
    spec = PLATFORMS[d["platform"]]
    if spec.is_host:
        explicit = {a: b for a, b in q.get("dscp2prio", [])}
        pfc = q.get("pfc", [0] * 8)
        lossless = frozenset(i for i, on in enumerate(pfc) if on)
        return DeviceChain(spec.name, explicit.get(dscp, dscp >> 3), lossless, q.get("trust"), d["roce_tos"])
    tc, lossless_set, trust_problem = design_hooks(spec.name).read_chain(q, dscp)
    pfc_off = tuple(itf["name"] for itf in d["interfaces"] if not itf["pfc"])
    return DeviceChain(spec.name, tc, frozenset(lossless_set), trust_problem, 0, pfc_off)


def check_device_data(model: Model, topo: Topology, problems: Problems, data: dict[str, dict[str, Any]]) -> None:
    """The priority chain end to end, read back from the designed device data of every device.

    host DSCP -> host priority (dscp2prio) -> PFC bit  ==  switch DSCP map -> traffic class -> PFC priority,
    trust DSCP where RoCE enters, and PFC on both ends of every host link.
    """
    dscp = model.fabric["roce"]["dscp"]
    check_chain(model, topo, problems, {name: chain_view(d, dscp) for name, d in data.items()})


def check_chain(model: Model, topo: Topology, problems: Problems, views: dict[str, DeviceChain]) -> None:
    """``check_device_data`` on the devices' ``DeviceChain`` (``chain_view``), in ``views``' order."""
    roce = model.fabric["roce"]
    dscp, prio = roce["dscp"], roce["priority"]
    h = _hfile(model)
    for name, v in views.items():
        spec = PLATFORMS[v.platform]
        if spec.is_host:
            if v.prio != prio:
                problems.add(h, [name], f"host maps DSCP {dscp} to priority {v.prio}, fabric expects {prio}")
            if v.trust != "dscp":
                problems.add(h, [name], "host NICs must trust DSCP")
            if (v.tos >> 2) != dscp:
                problems.add(h, [name], f"host ToS {v.tos} does not carry DSCP {dscp}")
            if v.prio not in v.lossless:
                problems.add(h, [name], f"host PFC is off on priority {v.prio}")
            continue
        if v.trust is not None:
            problems.add(h, [name], f"{spec.label} RoCE ports must trust DSCP{v.trust}")
        if v.prio != prio:
            problems.add(h, [name], f"switch maps DSCP {dscp} to traffic class {v.prio}, fabric expects {prio}")
        if prio not in v.lossless:
            problems.add(h, [name], f"switch has no PFC on priority {prio}")
    pfc_off = {name: set(v.pfc_off) for name, v in views.items() if v.pfc_off}
    if not pfc_off:
        return
    for host, ports in topo.host_ports.items():
        for hp in ports:
            if hp.leaf_port in pfc_off.get(hp.leaf, ()):
                problems.add(h, [hp.leaf], f"{hp.leaf}:{hp.leaf_port} faces {host} but has PFC off")


def check_platform_rules(model: Model, topo: Topology, problems: Problems) -> None:
    """Each switch platform's own checks (its design hooks' ``checks``), for the platforms the fabric's switches run."""
    used = {model.devices[n].platform for n in topo.switches}
    for name in NAMES:
        if name in used:
            for check in design_hooks(name).checks:
                check(model, topo, problems)


CHECKS: tuple[Check, ...] = (
    check_priorities,
    check_ecn,
    check_mtu,
    check_vlans,
    check_ecmp,
    check_pods,
    check_pod_asns,
    check_pools,
    check_releases,
    check_watchdog,
    check_shares,
    check_platform_rules,
    check_unique,
    check_features,
    check_hosts,
    check_attachment,
    check_onboarding,
)


def run(model: Model, topo: Topology, problems: Problems) -> None:
    for check in CHECKS:
        check(model, topo, problems)
