"""Build, start and describe a lab for an inventory: one simulator per device, each at its own
loopback address on its vendor's standard ports (or, without the privilege to bind them or per-device loopback
addresses, on unprivileged ports: ``fabconf_lab.ports``), all cabled together in one World.

``Lab`` is used in-process by the test fixture and by the ``fabconf lab`` daemon alike. It writes
``STATE/inventory/`` — a complete fabconf inventory of the lab (same names, platforms, groups, data,
fabric intent and cabling; lab addresses, ports and connection options) that every fabconf command and
any plain Nornir/NAPALM script can use — and ``STATE/lab.env`` with the lab's credentials.
"""

from __future__ import annotations

import contextlib
import importlib
import ipaddress
import json
import re
import secrets
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fabconf import Compiled, compile_inventory
from fabconf.platforms import platform as platform_spec
from fabconf.private import private_dir, write_private
from fabconf_lab import heap
from fabconf_lab import metrics as labmetrics
from fabconf_lab import ports as labports
from fabconf_lab import registry as labregistry
from fabconf_lab.contract import Simulator
from fabconf_lab.daemon import loopback_network
from fabconf_lab.host.platcmds import GPU_BUSES
from fabconf_lab.ports import DevicePorts
from fabconf_lab.tls import LabCA
from fabconf_lab.world import World

DEFAULT_NETWORK = "127.77.0.0/16"
# how stale the World's answers may be (LLDP, BGP, routes): a real network converges over seconds, and a snapshot
# shared by every question keeps a question's cost flat in the number of devices (``fabconf_lab.world``). Taking a
# snapshot reads every device's view, so it is taken at most every 0.25 s per 256 devices: at 2,048 devices, one
# every 0.25 s took most of the switch worker's CPU while 182 switches were verified, and 40 of them missed a 60 s
# read timeout. A device always sees its own change at once, whatever the age.
WORLD_MAX_AGE = 0.25
WORLD_DEVICES_PER_MAX_AGE = 256


def world_max_age(devices: int) -> float:
    return WORLD_MAX_AGE * max(1.0, devices / WORLD_DEVICES_PER_MAX_AGE)


LAB_USERNAME = "fabconf"

# the exporter port of each platform's metrics where every device has its own address (``fabconf_lab.metrics``);
# each simulator package registers its platform (fabconf_lab/registry.py), imported lazily so the lab costs nothing
# to the render path
METRICS_PORTS = {
    name: labmetrics.HOST_PORT if entry.exporter == "host" else labmetrics.SWITCH_PORT
    for name, entry in labregistry.table().items()
}


@dataclass
class LabDevice:
    name: str
    platform: str
    address: str
    sim: Simulator
    service_ports: DevicePorts

    @property
    def ports(self) -> tuple[int, ...]:
        """The ports its services answer on (what `lab up` waits for and the inventory names)."""
        return self.service_ports.services


def _sim_class(platform: str) -> type:
    module, cls = labregistry.lab_platform(platform).simulator
    return getattr(importlib.import_module(module), cls)


def _nic_specs(nics: tuple[Any, ...]) -> list[dict[str, Any]]:
    """The simulated host's NIC ports as the inventory declares them. A port keeps its ``pci``; ports declared by
    ``adapter`` + ``port`` become PCI functions of one card (port n is function n-1, as on a ConnectX card), each
    adapter on a PCI bus no declared address, simulated GPU or PCIe switch port (the bus below each card's) uses;
    a NIC declared by neither is a single-port card of its own.
    ``nics``: the model's ``Nic`` entries of the host (``compiled.model.devices[name].nics``)."""
    taken = {int(n.pci.split(":")[-2], 16) for n in nics if n.pci}
    taken |= {bus - 1 for bus in taken}  # each card's PCIe switch port (platcmds._bridge)
    taken |= {int(bus, 16) for bus in GPU_BUSES} | set(range(0xE0, 0xE8))  # the GPUs (platcmds.gpu_slots)
    buses: dict[str, int] = {}

    def bus_for(card: str) -> int:
        if card not in buses:
            bus = 0x17 + 0x10 * len(buses)
            while bus in taken or bus - 1 in taken:
                bus += 1
            taken.update((bus, bus - 1))
            buses[card] = bus
        return buses[card]

    specs: list[dict[str, Any]] = []
    for nic in nics:
        if nic.pci:
            pci = nic.pci
        elif nic.adapter:
            pci = f"0000:{bus_for('adapter ' + nic.adapter):02x}:00.{(nic.port or 1) - 1}"
        else:
            pci = f"0000:{bus_for('rdma ' + nic.rdma):02x}:00.0"
        specs.append({"netdev": nic.netdev, "rdma": nic.rdma, "speed_gbps": nic.speed_gbps, "pci": pci})
    return specs


class Lab:
    """Simulators for every device of a compiled inventory."""

    def __init__(
        self,
        compiled: Compiled,
        inventory_dir: Path,
        state_dir: Path,
        *,
        network: str = DEFAULT_NETWORK,
        username: str = LAB_USERNAME,
        password: str | None = None,
        names: list[str] | None = None,
        addresses: dict[str, str] | None = None,
        ports: dict[str, DevicePorts] | None = None,
        layout: str | None = None,
        build: bool = True,
    ) -> None:
        """``names`` selects devices (default: all), at the addresses and ports ``fabconf_lab.ports`` plans on
        ``network`` in ``layout`` (default: what ``ports.choose`` finds); ``addresses`` and ``ports`` give them
        instead (a shard of a lab spread over processes, ``fabconf_lab.shards``). ``build=False`` builds no
        simulator here (the shards do)."""
        self.compiled = compiled
        self.inventory_dir = Path(inventory_dir).resolve()
        self.state_dir = private_dir(Path(state_dir).resolve(), tighten=True)  # 0700, this user's, or refused
        self.username = username
        self.password = password or secrets.token_urlsafe(12)
        self.ca = LabCA(self.state_dir / "tls")
        model = compiled.model
        self.world = World(_cables(compiled), max_age=world_max_age(len(model.devices)))
        self.network = network
        self.base: int | None = None  # the shared layout's first port, as this lab was started
        self.slots: dict[str, int] = {}  # where each device sits (``fabconf_lab.ports.place``); kept in STATE
        if addresses is None or ports is None:
            ipaddress.IPv4Network(loopback_network(network))
            layout = labports.choose(network, layout)
            self.base = labports.base_port() if layout == "shared" else None
            selected = sorted(names if names is not None else model.devices)
            platforms = {name: model.devices[name].platform for name in selected}
            room = labports.capacity(layout, network, self.base)
            if len(selected) <= room:
                self.slots = labports.assign(selected, load_slots(self.state_dir, room), room)
            slots = self.slots or None  # none: ``plan`` says there is no room
            addresses, ports = labports.plan(layout, network, platforms, METRICS_PORTS, self.base, slots)
        self.layout = layout
        self.addresses = dict(addresses)  # every device of this lab (a shard runs some of them)
        self.ports = dict(ports)
        self.devices: dict[str, LabDevice] = {}
        self._cabled = _cabled_ports(compiled)  # ports in use, for devices whose model declares no port list
        self.storms: dict[str, labmetrics.Storm] = {}  # `fabconf lab fault DEV pfc-storm`, per device
        # the GPU host hardware faults set on each device (HOST_FAULTS), as `lab fault` and `lab status` list them:
        # one per kind and NIC, the last one set (they change the host's state, which keeps no list of its own)
        self.host_faults: dict[str, dict[str, str]] = {}
        self.metrics = labmetrics.MetricsHub()  # every device's exporter endpoint
        self.views: dict[Path, View] = {}  # scratch views of this lab (``sync(view=...)``)
        for name in sorted(self.addresses) if build else ():
            address = self.addresses[name]
            platform = model.devices[name].platform
            self.devices[name] = LabDevice(name, platform, address, self._build(name, address), self.ports[name])

    def _build(self, name: str, address: str, compiled: Compiled | None = None, root: Path | None = None) -> Simulator:
        """A brownfield simulator of one inventory device at ``address`` (its saved state under ``root``, default the
        lab's state directory, is loaded); ``compiled``: the inventory it comes from (default the lab's)."""
        compiled = compiled or self.compiled
        dev = compiled.model.devices[name]
        cabled = self._cabled if compiled is self.compiled else _cabled_ports(compiled)
        kwargs: dict[str, Any] = {
            "ports": sorted(dev.ports or cabled.get(name, ())),
            "username": self.username,
            "password": self.password,
            "ca": self.ca,
            "world": self.world,
            "state_dir": (root or self.state_dir) / "devices" / name,
        }
        if dev.is_host:
            kwargs["nics"] = _nic_specs(dev.nics)
            kwargs["ports"] = [n["netdev"] for n in kwargs["nics"]]
        else:  # each switch runs the release and is the model its inventory names
            kwargs["model"] = dev.data.get("model")
            kwargs["os_version"] = dev.data.get("os_version")
        kwargs |= _port_kwargs(dev.platform, self.ports[name])
        heap.unsettle()  # a simulator made after start (a reset, a sync): the old one must be collectable
        sim: Simulator = _sim_class(dev.platform)(name, address, **kwargs)
        return sim

    # -- lifecycle ---------------------------------------------------------------------------------------
    def start(self, *, write_state: bool = True) -> None:
        started: list[LabDevice] = []
        try:
            for dev in self.devices.values():
                dev.sim.start()
                started.append(dev)
        except BaseException:
            for dev in started:
                dev.sim.stop()
            raise
        for dev in self.devices.values():
            self._serve_metrics(dev)
        self.metrics.start()
        if write_state:
            self.write_state()

    def _feel_storm(self, dev: LabDevice) -> None:
        """A GPU host's tools (``ethtool -S``) and a switch's PFC counters (NX-OS ``show interface
        priority-flow-control``, NVUE ``counters qos pfc-stats``) show its PFC storm."""
        storm = self.storms.setdefault(dev.name, labmetrics.Storm())
        ctx = getattr(dev.sim, "ctx", None)
        if ctx is not None and hasattr(ctx, "storm"):
            ctx.storm = storm.snapshot
        if hasattr(dev.sim, "pfc_pauses"):
            dev.sim.pfc_pauses = storm.pauses

    def _sim_of(self, name: str) -> Any:
        return lambda: self.devices[name].sim  # the current one: `reset` replaces it

    def stop(self) -> None:
        """Stop the metrics endpoints, then every simulator, in parallel (each server waits for its poll interval)."""
        heap.unsettle()
        self.metrics.stop()

        def one(dev: LabDevice) -> None:
            with contextlib.suppress(Exception):  # stopping the rest matters more
                dev.sim.stop()

        with ThreadPoolExecutor(max_workers=32) as pool:
            list(pool.map(one, self.devices.values()))

    def reset(self, name: str) -> Simulator:
        """Put one device back to its brownfield start: its simulator is stopped, its saved state dropped (its SSH
        host key kept, so known_hosts stays valid), and a fresh one started at the same address and ports."""
        dev = self.devices.get(name)
        if dev is None:
            raise KeyError(f"no lab device {name!r}")
        dev.sim.faults.clear()  # releases requests a step fault holds
        if name in self.storms:
            self.storms[name].stop()
        dev.sim.stop()
        saved = self.state_dir / "devices" / name
        if saved.is_dir():
            for entry in saved.iterdir():
                if entry.name != "ssh":
                    shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        dev.sim = self._build(name, dev.address)
        self._feel_storm(dev)
        dev.sim.start()
        return dev.sim

    def fault(
        self,
        name: str,
        kind: str,
        arg: str | None = None,
        *,
        at: str | None = None,
        after: int = 1,
        every: bool = False,
    ) -> list[str]:
        """Inject a fault (``fabconf_lab.faults``): standing, or with ``at`` armed for one moment of a push."""
        dev = self.devices.get(name)
        if dev is None:
            raise KeyError(f"no lab device {name!r}")
        if kind == "link":
            if at is not None:
                raise ValueError("a link fault is a standing fault: it takes no --at")
            link_fault(dev.sim, arg)
            self.world.invalidate()  # the far end sees the link change at once
            return self._active(name)
        if kind in HOST_FAULTS:
            if at is not None:
                raise ValueError(f"a {kind} fault is a standing fault: it takes no --at")
            HOST_FAULTS[kind](dev.sim, arg)
            where = (arg or "").partition(":")[0] if ":" in (arg or "") else ""
            self.host_faults.setdefault(name, {})[f"{kind} {where}"] = f"{kind} {arg}" if arg else kind
            return self._active(name)
        storm = self.storms.setdefault(name, labmetrics.Storm())
        if kind == "pfc-storm":
            if at is not None or arg is not None:
                raise ValueError("fault 'pfc-storm' is a standing fault: it takes no argument and no --at")
            dev.sim.faults.clear()  # a new standing fault replaces every active one
            storm.start()
            return self._active(name)
        dev.sim.faults.set(kind, arg, at=at, after=after, every=every)
        if at is None:
            storm.stop()  # a standing fault (or clear) replaced it
        return self._active(name)

    def _active(self, name: str) -> list[str]:
        storm = self.storms.get(name)
        hardware = list(self.host_faults.get(name, {}).values())
        return self.devices[name].sim.faults.active() + (["pfc-storm"] if storm and storm.active else []) + hardware

    def status(self) -> list[dict[str, Any]]:
        return [
            {
                "name": d.name,
                "platform": d.platform,
                "address": d.address,
                "ports": list(d.ports),
                "metrics_port": d.service_ports.metrics,
                "faults": self._active(d.name) + link_faults(d.sim),
            }
            for d in self.devices.values()
        ]

    # -- the lab's own inventory -----------------------------------------------------------------------------
    def env(self) -> dict[str, str]:
        return {
            "FABCONF_USERNAME": self.username,
            "FABCONF_PASSWORD": self.password,
            "FABCONF_CA_FILE": str(self.ca.ca_cert_path),
            "FABCONF_KNOWN_HOSTS": str(self.known_hosts_path),
        }

    @property
    def known_hosts_path(self) -> Path:
        return self.state_dir / "known_hosts"

    def write_known_hosts(self) -> Path:
        """STATE/known_hosts: every lab device's SSH host key at its address (OpenSSH format), so fabconf checks
        lab host keys as it checks real ones (the keys persist under STATE, so the file stays valid)."""
        write_private(self.known_hosts_path, "".join(sorted(self.host_key_lines())))
        return self.known_hosts_path

    def host_key_lines(self) -> list[str]:
        """The known_hosts lines of the simulators run here."""
        return [line for dev in self.devices.values() for line in _host_key_lines(dev)]

    def write_state(self) -> Path:
        """Write STATE/inventory/, STATE/lab.env and STATE/slots.json; returns the inventory directory."""
        save_slots(self.state_dir, self.slots)
        known_hosts = self.write_known_hosts()
        names = sorted(n for n in self.addresses if not any(n in v.names for v in self.views.values()))
        return self._write_inventory(self.state_dir, self.compiled, self.inventory_dir, names, known_hosts)

    def _write_inventory(
        self, where: Path, compiled: Compiled, inventory_dir: Path, names: list[str], known_hosts: Path
    ) -> Path:
        """WHERE/inventory/ (``inventory_dir`` at the lab addresses of ``names``) and WHERE/lab.env."""
        inv = where / "inventory"
        private_dir(inv)
        for name in ("groups.yaml", "defaults.yaml", "fabric.yaml", "cabling.yaml"):
            if (inventory_dir / name).exists():  # copied as a new file of its own: never written through a symlink
                write_private(inv / name, (inventory_dir / name).read_bytes())
        raw_hosts = yaml.safe_load((inventory_dir / "hosts.yaml").read_text()) or {}
        hosts: dict[str, Any] = {}
        ca = str(self.ca.ca_cert_path)
        for name in names:
            entry = dict(raw_hosts.get(name) or {})
            entry["hostname"] = self.addresses[name]
            platform = compiled.model.devices[name].platform
            ports = self.ports[name]
            entry["port"] = ports.https if ports.https is not None else ports.ssh
            entry["connection_options"] = _connection_options(platform, ports, ca, str(known_hosts))
            hosts[name] = entry
        header = (
            "# The fabconf lab's inventory: the same devices, groups and data as the source inventory,\n"
            "# at lab addresses. Credentials are in ../lab.env (source it, never copy it here).\n"
        )
        write_private(inv / "hosts.yaml", header + yaml.safe_dump(hosts, sort_keys=False))
        env = self.env() | {"FABCONF_KNOWN_HOSTS": str(known_hosts)}
        write_private(where / "lab.env", "".join(f"{k}={v}\n" for k, v in env.items()))  # 0600 from its creation
        return inv

    # -- following the inventory --------------------------------------------------------------------------
    def sync(self, compiled: Compiled, inventory_dir: Path, view: Path | None = None) -> dict[str, list[str]]:
        """Make the running lab follow ``compiled``: simulators for its new devices, at slots no running device
        holds, then the devices it no longer has stopped; every other device keeps running, untouched, at its
        address and ports. The World takes the new cabling. STATE/inventory and STATE/slots.json follow.

        With ``view`` (a scratch directory) nothing of the lab's own is changed: the new devices run as a view
        (their saved state under VIEW/devices, their slots not kept), VIEW/inventory and VIEW/lab.env describe
        every device of ``compiled`` at its lab address, and ``drop_view`` stops them again. Returns the names
        ``added``, ``removed`` and ``kept``."""
        for other in list(self.views):
            self.drop_view(other)
        inventory_dir = Path(inventory_dir).resolve()
        wanted = compiled.model.devices
        added = sorted(n for n in wanted if n not in self.addresses)
        removed = [] if view is not None else sorted(n for n in self.addresses if n not in wanted)
        kept = sorted(n for n in self.addresses if n in wanted)
        room = labports.capacity(self.layout or "standard", self.network, self.base)
        slots = labports.assign(sorted(self.addresses) + added, self.slots, room)  # never a running device's slot
        placed = {
            name: labports.place(
                self.layout or "standard", self.network, wanted[name].platform, slots[name], METRICS_PORTS, self.base
            )
            for name in added
        }
        root = Path(view).resolve() if view is not None else self.state_dir
        self._follow(compiled, inventory_dir, placed, removed, root)
        if view is None:
            self.slots |= {name: slots[name] for name in added}
            self.compiled, self.inventory_dir = compiled, inventory_dir
            self.write_state()
        else:
            private_dir(root)
            self.views[root] = View(set(added))
            lines = [line for name in sorted(wanted) for line in self.host_keys_of(name)]
            known_hosts = write_private(root / "known_hosts", "".join(sorted(lines)))
            self._write_inventory(root, compiled, inventory_dir, sorted(wanted), known_hosts)
        return {"added": added, "removed": removed, "kept": kept}

    def _follow(
        self,
        compiled: Compiled,
        inventory_dir: Path,
        placed: dict[str, tuple[str, DevicePorts]],
        removed: list[str],
        root: Path,
    ) -> None:
        """Start the devices of ``placed`` (at their address and ports, their saved state under ``root``), then stop
        the ``removed`` ones; the World takes ``compiled``'s cabling. A device that cannot start stops the ones
        started here, and the lab stays as it was."""
        self.apply(compiled, placed, removed, root)

    def apply(
        self,
        compiled: Compiled,
        placed: dict[str, tuple[str, DevicePorts]],
        removed: list[str],
        root: Path,
    ) -> dict[str, list[str]]:
        """``_follow`` in this process (a shard's Lab is asked for it by ``fabconf_lab.shards``); returns the
        known_hosts lines of the devices started, by name. ``removed`` may name devices other processes run: their
        views are forgotten here."""
        previous = self.world.cables()
        self.world.recable(_cables(compiled))
        self.world.max_age = world_max_age(len(compiled.model.devices))
        cabled = self._cabled
        self._cabled = _cabled_ports(compiled)
        started: list[str] = []
        try:
            for name, (address, ports) in sorted(placed.items()):
                platform = compiled.model.devices[name].platform
                self.addresses[name], self.ports[name] = address, ports
                dev = LabDevice(name, platform, address, self._build(name, address, compiled, root), ports)
                self.devices[name] = dev
                dev.sim.start()
                started.append(name)
                self._serve_metrics(dev)
        except BaseException:
            for name in placed:
                self._remove(name, started=name in started)
            self.world.recable(previous)
            self._cabled = cabled
            raise
        for name in removed:
            self._remove(name)
        self.world.forget(removed)
        return {name: self.host_keys_of(name) for name in started}

    def apply_from(
        self, inventory: str, placed: dict[str, tuple[str, DevicePorts]], removed: list[str], root: str
    ) -> dict[str, list[str]]:
        """``apply`` with the inventory read here (a worker of ``fabconf_lab.shards``; a compiled inventory does not
        travel between processes)."""
        return self.apply(compile_inventory(Path(inventory)), placed, removed, Path(root))

    def drop_view(self, view: Path) -> list[str]:
        """Stop the devices a scratch view added (``sync(view=...)``); the lab's cabling is its own again."""
        found = self.views.pop(Path(view).resolve(), None)
        if found is None:
            return []
        self._follow(self.compiled, self.inventory_dir, {}, sorted(found.names), self.state_dir)
        return sorted(found.names)

    def _remove(self, name: str, started: bool = True) -> None:
        heap.unsettle()
        dev = self.devices.pop(name, None)
        storm = self.storms.pop(name, None)
        if storm is not None:
            storm.stop()
        if dev is not None:
            dev.sim.faults.clear()
            if started:
                with contextlib.suppress(Exception):
                    dev.sim.stop()
            self.metrics.remove(dev.address, dev.service_ports.metrics)
        self.world.unregister(name)
        self.addresses.pop(name, None)
        self.ports.pop(name, None)
        self.slots.pop(name, None)

    def _serve_metrics(self, dev: LabDevice) -> None:
        storm = self.storms.setdefault(dev.name, labmetrics.Storm())
        self._feel_storm(dev)
        _port, endpoint = labmetrics.endpoint(dev.platform, self._sim_of(dev.name), self.world, storm)
        self.metrics.add(dev.address, dev.service_ports.metrics, endpoint)
        self.metrics.start()

    def host_keys_of(self, name: str) -> list[str]:
        dev = self.devices.get(name)
        return [] if dev is None else _host_key_lines(dev)


@dataclass
class View:
    """The devices a scratch view of the lab added (``Lab.sync(view=...)``)."""

    names: set[str]


SLOTS = "slots.json"


def load_slots(state: Path, room: int) -> dict[str, int]:
    """The slots a lab of ``state`` gave its devices (STATE/slots.json, by device name), those that fit in ``room``
    and no other device holds; nothing when there is no such file or it does not read as one."""
    try:
        raw = json.loads((Path(state) / SLOTS).read_text()).get("slots")
    except (OSError, ValueError, AttributeError):
        return {}
    out: dict[str, int] = {}
    if not isinstance(raw, dict):
        return out
    for name, slot in sorted(raw.items()):
        if isinstance(slot, int) and not isinstance(slot, bool) and 1 <= slot <= room and slot not in out.values():
            out[str(name)] = slot
    return out


def save_slots(state: Path, slots: dict[str, int]) -> None:
    """STATE/slots.json: where each device sits, so that it stays there across ``lab sync`` and ``lab down``/``up``."""
    if slots:
        write_private(Path(state) / SLOTS, json.dumps({"slots": dict(sorted(slots.items()))}, indent=1) + "\n")


def _cables(compiled: Compiled) -> list[tuple[str, str, str, str]]:
    return [(lk.a.device, lk.a.port, lk.b.device, lk.b.port) for lk in compiled.model.links]


def _cabled_ports(compiled: Compiled) -> dict[str, set[str]]:
    cabled: dict[str, set[str]] = {}
    for lk in compiled.model.links:
        for ep in (lk.a, lk.b):
            cabled.setdefault(ep.device, set()).add(ep.port)
    return cabled


def _host_key_lines(dev: LabDevice) -> list[str]:
    """The known_hosts line of one lab device's SSH service (none for a device without one)."""
    service = getattr(dev.sim, "ssh", None) or getattr(dev.sim, "_ssh", None)
    key = getattr(service, "host_key", None)
    if key is None:
        return []
    port = int(getattr(service, "port", 22))
    where = dev.address if port == 22 else f"[{dev.address}]:{port}"
    return [f"{where} {key.get_name()} {key.get_base64()}\n"]


def _port_kwargs(platform: str, ports: DevicePorts) -> dict[str, Any]:
    """A simulator's port arguments, as its package registers them (EOS its eAPI ``port``; NX-OS and Cumulus their
    HTTPS ``port`` and ``ssh_port``; a GPU host its SSH ``port``)."""
    return {arg: getattr(ports, service) for arg, service in labregistry.lab_platform(platform).port_args}


def _connection_options(platform: str, ports: DevicePorts, ca_file: str, known_hosts: str) -> dict[str, Any]:
    """How fabconf reaches a lab device: the platform table names the connection section; the lab adds its own
    ports (NAPALM's eAPI/NX-API port, NX-OS's SSH port for its SCP, NVUE's REST and SSH ports, a host's SSH port)
    and how to trust it: its CA and its known_hosts, checked like any device's (``fabconf.drivers.trust``)."""
    spec = platform_spec(platform)
    section = spec.connection_section
    trust = {"ca_file": ca_file, "known_hosts": known_hosts}
    if section == "napalm":
        extras: dict[str, Any] = {"optional_args": {"transport": "https", "port": ports.https}, **trust}
        if ports.ssh is not None:
            extras["ssh_port"] = ports.ssh
        return {section: {"port": ports.https, "extras": extras}}
    if section == "nvue":
        return {section: {"port": ports.https, "extras": {"ssh_port": ports.ssh, **trust}}}
    extras = labregistry.lab_platform(platform).connection_extras
    return {section: {"port": ports.ssh, "extras": {**extras, **trust}}}


def link_faults(sim: Any) -> list[str]:
    """The standing link faults of a device as ``lab status`` lists them (``link swp1:down``), in the form
    ``fabconf lab fault DEVICE link …`` sets them."""
    out: list[str] = []
    for nic in getattr(getattr(sim, "state", None), "nics", None) or []:  # a GPU host's NIC ports
        if getattr(nic, "link_down", False):
            out.append(f"link {nic.netdev}:down")
        if getattr(nic, "error_ratio", 0):
            out.append(f"link {nic.netdev}:errors={nic.error_ratio:g}")
        if getattr(nic, "fec_off", False):
            out.append(f"link {nic.netdev}:fec=off")
    world = getattr(sim, "world", None)
    if world is not None and hasattr(world, "carrier_down"):  # a cable cut at a switch port, at either end
        out += [f"link {port}:down" for port in world.carrier_down(sim.name)]
    out += [f"link {port}:{speed}g" for port, speed in sorted((getattr(sim, "negotiated", None) or {}).items())]
    out += [f"link {port}:errors={r:g}" for port, r in sorted((getattr(sim, "error_ratio", None) or {}).items()) if r]
    return list(dict.fromkeys(out))


def link_fault(sim: Any, arg: str | None) -> None:
    """``fabconf lab fault DEVICE link PORT:SETTING``: a cable or optic fault on one port, as the link comes up:
    ``PORT:200g`` (negotiated speed; GPU hosts and EOS/Cumulus switches), ``PORT:down`` / ``PORT:up`` (no carrier;
    GPU hosts, and switches, whose cable is then cut at both ends in the World: no LLDP, BGP or route over it),
    ``PORT:errors=0.001`` (share of frames in error; GPU hosts, EOS, NX-OS and Cumulus switches), ``PORT:fec=off``
    (the link up without FEC, mlxlink's ``No FEC``; GPU hosts). It stays until set back (``PORT:400g``,
    ``PORT:up``, ``PORT:errors=0``, ``PORT:fec=on``); ``clear`` does not touch links."""
    port, _, setting = (arg or "").partition(":")
    speed = re.fullmatch(r"(\d+)g", setting)
    errors = re.fullmatch(r"errors=(0(?:\.\d+)?|1(?:\.0+)?)", setting)
    fec = {"fec=off": True, "fec=on": False}.get(setting)
    if not port or not (speed or errors or fec is not None or setting in ("down", "up")):
        raise ValueError(
            "fault 'link' needs PORT:SPEEDg, PORT:down, PORT:up, PORT:errors=RATIO (0..1) or PORT:fec=off|on"
        )
    if hasattr(sim, "set_link"):  # a GPU host
        sim.set_link(
            port,
            speed=int(speed.group(1)) if speed else None,
            down={"down": True, "up": False}.get(setting),
            error_ratio=float(errors.group(1)) if errors else None,
            fec_off=fec,
        )
    elif setting in ("down", "up") and getattr(sim, "world", None) is not None:  # a switch: the World's cable
        sim.world.set_carrier(sim.name, port, up=setting == "up")
    elif speed and hasattr(sim, "negotiated"):
        sim.negotiated[port] = int(speed.group(1))
    elif errors and hasattr(sim, "error_ratio"):  # EOS: counters in `show interfaces`
        sim.error_ratio[port] = float(errors.group(1))
    else:
        raise ValueError(
            f"fault 'link' {setting!r} is modelled on GPU hosts "
            "(switches: PORT:SPEEDg on EOS and Cumulus, errors on EOS, NX-OS and Cumulus)"
        )


ROCE_MTUS = (256, 512, 1024, 2048, 4096)
ROCE_HEADERS = 96  # bytes a RoCE v2 packet spends on headers within the netdev MTU (the lab's ibv_devinfo model)


def _host_nic(sim: Any, netdev: str, kind: str) -> Any:
    state = getattr(sim, "state", None)
    nic = next((n for n in getattr(state, "nics", []) if n.netdev == netdev), None)
    if nic is None:
        raise ValueError(f"{sim.name} has no NIC port {netdev} (the {kind} fault is for GPU hosts)")
    return nic


def pcie_fault(sim: Any, arg: str | None) -> None:
    """``fabconf lab fault HOST pcie NETDEV:xN|NGT/s``: the NIC's PCIe link trains at width xN or speed N GT/s
    (``lspci -vvv`` LnkSta shows it ``(downgraded)``); ``NETDEV:x16`` and ``NETDEV:32GT/s`` set it back."""
    netdev, _, setting = (arg or "").partition(":")
    width = re.fullmatch(r"x(1|2|4|8|16)", setting)
    speed = re.fullmatch(r"(2\.5|5|8|16|32)GT/s", setting)
    if not netdev or not (width or speed):
        raise ValueError("fault 'pcie' needs NETDEV:xN (1, 2, 4, 8, 16) or NETDEV:NGT/s (2.5, 5, 8, 16, 32)")
    nic = _host_nic(sim, netdev, "pcie")
    with sim.lock:
        if width:
            nic.pcie_width = int(width.group(1))
        elif speed:
            nic.pcie_speed = float(speed.group(1))


def numa_fault(sim: Any, arg: str | None) -> None:
    """``fabconf lab fault HOST numa NETDEV:N``: the NIC's card sits in a slot of NUMA node N, away from the PCIe
    switch of the GPU it serves (``nvidia-smi topo -m`` shows NODE or SYS); ``NETDEV:-1`` puts it back."""
    netdev, _, node = (arg or "").partition(":")
    if not netdev or not re.fullmatch(r"-1|[0-7]", node):
        raise ValueError("fault 'numa' needs NETDEV:N (a NUMA node 0..7, or -1 for the GPU's own PCIe switch)")
    nic = _host_nic(sim, netdev, "numa")
    with sim.lock:
        nic.numa = int(node)


def mtu_fault(sim: Any, arg: str | None) -> None:
    """``fabconf lab fault HOST mtu NETDEV:SIZE``: the NIC's RoCE active MTU falls to SIZE (256..4096), as a netdev
    MTU of SIZE plus the RoCE headers makes it (``ibv_devinfo`` shows it). It stays until set back."""
    netdev, _, size = (arg or "").partition(":")
    if not netdev or not size.isdigit() or int(size) not in ROCE_MTUS:
        raise ValueError(f"fault 'mtu' needs NETDEV:SIZE with SIZE one of {', '.join(map(str, ROCE_MTUS))}")
    nic = _host_nic(sim, netdev, "mtu")
    with sim.lock:
        nic.mtu = int(size) + ROCE_HEADERS


def above4g_fault(sim: Any, arg: str | None) -> None:
    """``fabconf lab fault HOST above4g off|on``: the BIOS's Above 4G Decoding; off leaves every GPU's 128G BAR1
    without an address (``lspci -vvv`` ``Memory at <unassigned>``)."""
    if arg not in ("on", "off"):
        raise ValueError("fault 'above4g' needs on or off")
    state = _host_state(sim, "above4g")
    with sim.lock:
        state.above4g = arg == "on"


IOMMU_WORDS = ("intel_iommu=on", "iommu=pt")


def iommu_fault(sim: Any, arg: str | None) -> None:
    """``fabconf lab fault HOST iommu off|on``: the host booted without (or with) ``intel_iommu=on iommu=pt``:
    ``/sys/class/iommu`` is empty, so SR-IOV VFs cannot be assigned."""
    if arg not in ("on", "off"):
        raise ValueError("fault 'iommu' needs on or off")
    state = _host_state(sim, "iommu")
    with sim.lock:
        words = [w for w in state.kernel_cmdline.split() if w not in IOMMU_WORDS]
        state.kernel_cmdline = " ".join(words + (list(IOMMU_WORDS) if arg == "on" else []))


def sriov_fault(sim: Any, arg: str | None) -> None:
    """``fabconf lab fault HOST sriov NETDEV:N``: the NIC runs N SR-IOV VFs (a driver reload dropped them: 0)."""
    netdev, _, count = (arg or "").partition(":")
    if not netdev or not count.isdigit() or int(count) > 127:
        raise ValueError("fault 'sriov' needs NETDEV:N (0..127 VFs)")
    nic = _host_nic(sim, netdev, "sriov")
    with sim.lock:
        nic.sriov_numvfs = int(count)


VERSIONED = {"ofed": "ofed_version", "nvidia_driver": "nvidia_driver", "nccl": "nccl_version"}


def version_fault(sim: Any, arg: str | None) -> None:
    """``fabconf lab fault HOST version COMPONENT=VERSION``: the host runs another MLNX_OFED (``ofed=23.10-1.1.9.0``),
    NVIDIA driver (``nvidia_driver=535.104.05``) or NCCL (``nccl=2.18.5-1+cuda12.2``)."""
    key, _, value = (arg or "").partition("=")
    if key not in VERSIONED or not re.fullmatch(r"[0-9][\w.+~-]{0,63}", value):
        raise ValueError(f"fault 'version' needs COMPONENT=VERSION with COMPONENT one of {', '.join(VERSIONED)}")
    state = _host_state(sim, "version")
    with sim.lock:
        setattr(state, VERSIONED[key], f"MLNX_OFED_LINUX-{value}" if key == "ofed" else value)


def _host_state(sim: Any, kind: str) -> Any:
    state = getattr(sim, "state", None)
    if state is None or not hasattr(state, "nics"):
        raise ValueError(f"the {kind} fault is for GPU hosts; {sim.name} is not one")
    return state


# GPU host hardware faults
HOST_FAULTS = {
    "mtu": mtu_fault,
    "pcie": pcie_fault,
    "numa": numa_fault,
    "above4g": above4g_fault,
    "iommu": iommu_fault,
    "sriov": sriov_fault,
    "version": version_fault,
}
