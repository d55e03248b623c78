"""Every lab device's metrics as its exporter would serve them, on the device's own lab address, for a real
Prometheus (``fabconf monitoring --lab`` writes its configuration):

- GPU hosts on port ``HOST_PORT``, path ``/metrics``, in node_exporter's format and names
  (``fabconf.monitoring.names``; node_exporter's own ``device`` label is the netdev or the RDMA device):
  ``node_network_receive_packets_total``/``_errs_total`` and ``node_network_speed_bytes`` per NIC port,
  ``node_ethtool_received_prio{N}_pause``, ``..._prio{N}_pause_duration`` (microseconds paused: all of a storm)
  and ``node_ethtool_transmitted_pause_storm_error_events`` (the ethtool
  collector), ``node_infiniband_port_packets_transmitted_total`` and ``..._local_ack_timeout_errors_total``,
  ``..._np_cnp_packets_sent_total``, ``..._np_ecn_marked_roce_packets_received_total`` per RDMA port;
- switches on port ``SWITCH_PORT``, path ``/snmp``, in snmp_exporter's format: IF-MIB ``ifHCInUcastPkts``,
  ``ifInErrors`` (labels ``ifIndex``, ``ifName``), BGP4-MIB ``bgpPeerState`` (label ``bgpPeerRemoteAddr``; 6 =
  established) from the lab's BGP sessions, and on Cumulus Linux ``clIntInPfc{N}Pkt``.

The counters are the ones the lab's tools show (``fabconf_lab.host.platcmds.counters``: frames grow with time
while the link is up, errors in proportion to a ``link PORT:errors=R`` fault). Faults move them:

- ``fabconf lab fault DEV pfc-storm``: pause frames arrive at ``STORM_PAUSES_PER_S`` on every PFC priority of
  every port (priority 3 where none is enabled), and on a GPU host the NIC's PFC storm watchdog acts once per
  storm (``tx_pause_storm_error_events``); ``clear`` or any other standing fault ends it (the counters keep
  their totals);
- ``hang``: the endpoint accepts the scrape and never answers, as the device does (Prometheus: ``up == 0``).

A switch's series are served only while its running configuration enables their source
(``LabPlatform.metric_sources``): the SNMP series while an SNMP agent is configured (EOS/NX-OS ``snmp-server
community|user``, Cumulus ``system snmp-server state enabled``, SONiC ``SNMP_COMMUNITY``). Without one the endpoint
answers as snmp_exporter does when the agent never answers: HTTP 500 and promhttp's error body naming
``snmp_error`` (``SNMP_DOWN``), so Prometheus shows ``up == 0`` and the switch's other series vanish. The lab
serves gnmic's output for each switch on ``/gnmic`` of the same port (``gnmic_text``: one gnmic per switch, in
effect, with the Prometheus output and the API server's ``gnmic_target_up`` on one path): the switch's series
while its gNMI server is configured, and ``gnmic_target_up{name=SWITCH} 0`` alone while it is not, as gnmic shows
a target it cannot connect to. Both read the same counters (``_switch_ports``): the frames, the errors of a ``link
PORT:errors=R`` fault, the speed (400G, or a ``link PORT:SPEEDg`` fault's) and the BGP sessions of the World.

Ports above 1024 and not the exporters' own (9100, 9116), so that exporters running on the machine do not clash
with the lab; a port the lab cannot bind leaves that device without metrics, the lab still runs. One thread serves
every endpoint of a lab process (``MetricsHub``).
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fabconf_lab.host.nicstate import PRIOS
from fabconf_lab.host.nicsysfs import hw_counters
from fabconf_lab.host.platcmds import counters
from fabconf_lab.registry import lab_platform

HOST_PORT = 19100
SWITCH_PORT = 19116
STORM_PAUSES_PER_S = 1_000_000.0  # a lab model: far above any storm threshold, below a 400G line's frame rate
SWITCH_FRAMES_PER_S = 1_000_000.0  # a lab model, as a GPU host's NIC port
SWITCH_PORT_GBPS = 400  # a lab switch port's speed unless a `link PORT:SPEEDg` fault says otherwise
HANG_LIMIT_S = 120.0  # a hung scrape is dropped after this, as the device's other requests are
BGP_STATE = {"Idle": 1, "Connect": 2, "Active": 3, "OpenSent": 4, "OpenConfirm": 5, "Established": 6}
_EPOCH = time.monotonic()
# the series gnmic makes of fabconf's telemetry paths (the product's fabconf.monitoring.names, which the lab does not
# import: tests/lab/test_switch_metric_sources.py checks they are the same)
GNMI_IN_PACKETS = "interfaces_interface_state_counters_in_unicast_pkts"
GNMI_IN_ERRORS = "interfaces_interface_state_counters_in_errors"
GNMI_SPEED_MBPS = "interfaces_interface_ethernet_state_port_speed"
GNMI_BGP_STATE = "network_instances_network_instance_protocols_protocol_bgp_neighbors_neighbor_state_session_state"
GNMI_TARGET_UP = "gnmic_target_up"


@dataclass
class Storm:
    """A PFC pause storm on one device (``fabconf lab fault DEV pfc-storm``), as totals that never go down."""

    since: float | None = None
    earlier: float = 0.0  # pause frames of the storms that ended
    events: int = 0  # storms the NIC's watchdog acted on
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def active(self) -> bool:
        return self.since is not None

    def start(self) -> None:
        with self.lock:
            if self.since is None:
                self.since = time.monotonic()
                self.events += 1

    def stop(self) -> None:
        with self.lock:
            if self.since is not None:
                self.earlier += (time.monotonic() - self.since) * STORM_PAUSES_PER_S
                self.since = None

    def snapshot(self) -> tuple[int, int]:
        """(pause frames so far on each storming priority, storms the NIC's watchdog acted on)."""
        return self.pauses(), self.events

    def pauses(self) -> int:
        with self.lock:
            running = (time.monotonic() - self.since) * STORM_PAUSES_PER_S if self.since is not None else 0.0
            return int(self.earlier + running)


class _Text:
    """Prometheus's text format, one ``# TYPE`` line per metric."""

    def __init__(self) -> None:
        self.families: dict[str, tuple[str, list[str]]] = {}

    def add(self, name: str, kind: str, labels: dict[str, str], value: float) -> None:
        pairs = ",".join(f'{k}="{v}"' for k, v in labels.items())
        number = str(int(value)) if float(value).is_integer() else repr(float(value))
        self.families.setdefault(name, (kind, []))[1].append(f"{name}{{{pairs}}} {number}")

    def render(self) -> str:
        out = []
        for name, (kind, lines) in self.families.items():
            out.append(f"# TYPE {name} {kind}")
            out += lines
        return "\n".join(out) + "\n"


def host_text(sim: Any) -> str:
    """A lab GPU host as node_exporter shows it (ethtool collector enabled), from the counters its own tools show
    (``ethtool -S``, ``/sys/class/infiniband/*/ports/1/hw_counters``)."""
    text = _Text()
    for nic in list(sim.state.nics):
        c = counters(sim.ctx, nic)
        hw = hw_counters(sim.ctx, nic)
        net = {"device": nic.netdev}
        text.add("node_network_receive_packets_total", "counter", net, c["rx_packets_phy"])
        text.add("node_network_receive_errs_total", "counter", net, c["rx_crc_errors_phy"])
        text.add("node_network_transmit_packets_total", "counter", net, c["tx_packets_phy"])
        if sim.ctx.oper_up(nic):
            text.add("node_network_speed_bytes", "gauge", net, nic.speed * 1_000_000_000 / 8)
        for prio in range(PRIOS):
            text.add(f"node_ethtool_received_prio{prio}_pause", "untyped", net, c[f"rx_prio{prio}_pause"])
            # mlx5's rx_prioN_pause_duration (microseconds): a storm holds the port paused all the time
            paused_us = c[f"rx_prio{prio}_pause"] / STORM_PAUSES_PER_S * 1_000_000
            text.add(f"node_ethtool_received_prio{prio}_pause_duration", "untyped", net, paused_us)
        text.add("node_ethtool_transmitted_pause_storm_error_events", "untyped", net, c["tx_pause_storm_error_events"])
        rdma = {"device": nic.rdma, "port": "1"}
        text.add("node_infiniband_port_packets_transmitted_total", "counter", rdma, c["tx_packets_phy"])
        text.add("node_infiniband_local_ack_timeout_errors_total", "counter", rdma, hw["local_ack_timeout_err"])
        text.add("node_infiniband_np_cnp_packets_sent_total", "counter", rdma, hw["np_cnp_sent"])
        ecn = hw["np_ecn_marked_roce_packets"]
        text.add("node_infiniband_np_ecn_marked_roce_packets_received_total", "counter", rdma, ecn)
    return text.render()


@dataclass(frozen=True)
class _Port:
    name: str
    received: int  # unicast frames received so far
    errors: int  # of those, in error
    speed_gbps: int  # the speed its link came up at


def _switch_ports(sim: Any) -> list[_Port]:
    """A lab switch's ports with their counters, one truth for its SNMP and its gNMI series."""
    ratios: dict[str, float] = getattr(sim, "error_ratio", {})
    negotiated: dict[str, int] = getattr(sim, "negotiated", {})
    frames = int(SWITCH_FRAMES_PER_S * (time.monotonic() - _EPOCH))
    ports = []
    for name, port in sorted(sim.lab_view().ports.items()):
        received = frames if port.enabled else 0
        errors = int(received * ratios.get(name, 0.0))
        ports.append(_Port(name, received, errors, negotiated.get(name, SWITCH_PORT_GBPS)))
    return ports


def switch_text(sim: Any, platform: str, world: Any, storm: Storm) -> str:
    """A lab switch as snmp_exporter shows it with the modules if_mib, fabconf_bgp4 (and fabconf_cumulus_pfc)."""
    text = _Text()
    for index, port in enumerate(_switch_ports(sim), start=1):
        name = port.name
        labels = {"ifIndex": str(index), "ifName": name}
        text.add("ifHCInUcastPkts", "counter", labels, port.received)
        text.add("ifInErrors", "counter", labels, port.errors)
        if lab_platform(platform).snmp_pfc:
            for prio in range(PRIOS):
                text.add(f"clIntInPfc{prio}Pkt", "counter", labels, storm.pauses() if prio == 3 else 0)
    for session in world.bgp_sessions(sim.name) if world is not None else []:
        text.add("bgpPeerState", "gauge", {"bgpPeerRemoteAddr": session.peer}, BGP_STATE.get(session.state, 1))
    return text.render()


# what snmp_exporter answers (HTTP 500) when the agent does not respond: its collector sends an invalid metric
# ``snmp_error`` "Error scraping target" [3P: copies of snmp_exporter's ``collector.go`` ``Collect`` in public
# repositories] and promhttp's ``HTTPErrorOnError`` answers 500 with this body [3P: the body quoted in a public
# exporter client's test of a failed snmp_exporter scrape; U: the gosnmp timeout wording of the last clause]
SNMP_DOWN = (
    "An error has occurred while serving metrics:\n\n"
    'error collecting metric Desc{{fqName: "snmp_error", help: "Error scraping target", constLabels: {{}}, '
    "variableLabels: []}}: error getting target {target}: request timeout (after 3 retries)\n"
)


def gnmic_text(sim: Any, platform: str, world: Any) -> str:
    """What gnmic serves for a lab switch (fabconf-gnmic.yml: no metric prefix, no subscription name in the names,
    the ``fabconf`` subscription, its processors' numbers): the telemetry paths' series named as gnmic's
    ``MetricName`` makes them, labelled with ``source`` (the target's name), ``subscription_name`` and the path
    keys' tags, untyped [V: openconfig/gnmic ``pkg/outputs/prometheus_output/prometheus_common.go``, commit
    59775038], and ``gnmic_target_up`` (label ``name``): 0 with no series while the switch's gNMI server is not
    configured."""
    text = _Text()
    if "gnmi" not in switch_sources(sim, platform):
        text.add(GNMI_TARGET_UP, "gauge", {"name": sim.name}, 0)
        return text.render()
    text.add(GNMI_TARGET_UP, "gauge", {"name": sim.name}, 1)
    tags = {"source": sim.name, "subscription_name": "fabconf"}
    for port in _switch_ports(sim):
        labels = {"interface_name": port.name, **tags}
        text.add(GNMI_IN_PACKETS, "untyped", labels, port.received)
        text.add(GNMI_IN_ERRORS, "untyped", labels, port.errors)
        text.add(GNMI_SPEED_MBPS, "untyped", labels, port.speed_gbps * 1000)
    for session in world.bgp_sessions(sim.name) if world is not None else []:
        labels = {
            "network_instance_name": "default",
            "protocol_identifier": "BGP",
            "protocol_name": "BGP",
            "neighbor_neighbor_address": session.peer,
            **tags,
        }
        text.add(GNMI_BGP_STATE, "untyped", labels, BGP_STATE.get(session.state, 1))
    return text.render()


def switch_sources(sim: Any, platform: str) -> frozenset[str]:
    """The metric sources a lab switch's running configuration enables now (``"snmp"``, ``"gnmi"``)."""
    read = lab_platform(platform).metric_sources
    return frozenset({"snmp", "gnmi"}) if read is None else read(sim.running_config())


@dataclass
class Endpoint:
    path: str
    render: Callable[[], str]
    hung: Callable[[], bool]
    down: Callable[[], str | None] = lambda: None  # the exporter's error body while the source is not configured
    others: dict[str, Callable[[], str]] = field(default_factory=dict)  # other paths on the same port (/gnmic)


class MetricsHub:
    """Every device endpoint of one lab process, on one thread: a selector over their listening sockets (a lab of
    thousands of devices adds one thread, not one per device); each scrape is answered on a short thread of its
    own, so a hung device holds only its own scrapes."""

    def __init__(self) -> None:
        self.selector = selectors.DefaultSelector()
        self.stopping = threading.Event()
        self.sockets: list[socket.socket] = []
        self.thread = threading.Thread(target=self._loop, name="lab-metrics", daemon=True)

    def add(self, address: str, port: int, endpoint: Endpoint) -> bool:
        """Listen for one device; False when its address and port cannot be bound."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((address, port))
            sock.listen(16)
            sock.setblocking(False)
        except OSError:
            sock.close()
            return False
        self.sockets.append(sock)
        self.selector.register(sock, selectors.EVENT_READ, endpoint)
        return True

    def remove(self, address: str, port: int) -> None:
        """Stop listening for one device (a device ``lab sync`` removed); nothing when none listens there."""
        for sock in list(self.sockets):
            try:
                where = sock.getsockname()[:2]
            except OSError:
                continue
            if where != (address, port):
                continue
            with contextlib.suppress(Exception):
                self.selector.unregister(sock)
            sock.close()
            self.sockets.remove(sock)

    def start(self) -> None:
        if self.sockets and not self.thread.is_alive() and not self.stopping.is_set():
            self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(timeout=5)
        for sock in self.sockets:
            with contextlib.suppress(Exception):
                self.selector.unregister(sock)
            sock.close()
        self.sockets = []

    def _loop(self) -> None:
        while not self.stopping.is_set():
            for key, _events in self.selector.select(timeout=0.5):
                with contextlib.suppress(OSError):
                    conn, _peer = key.fileobj.accept()  # type: ignore[union-attr]
                    threading.Thread(target=self._answer, args=(conn, key.data), daemon=True).start()

    def _answer(self, conn: socket.socket, endpoint: Endpoint) -> None:
        with conn:
            conn.settimeout(10)
            request = b""
            with contextlib.suppress(OSError):
                while b"\r\n\r\n" not in request and len(request) < 16384:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    request += chunk
            parts = request.split(b"\r\n", 1)[0].split()
            path = parts[1].decode(errors="replace").split("?", 1)[0] if len(parts) > 1 else ""
            if path != endpoint.path and path not in endpoint.others:
                self._send(conn, 404, b"not found\n")
                return
            deadline = time.monotonic() + HANG_LIMIT_S
            while endpoint.hung() and time.monotonic() < deadline and not self.stopping.is_set():
                time.sleep(0.1)
            if endpoint.hung() or self.stopping.is_set():
                return  # as the device: accepted, never answered
            if path != endpoint.path:
                self._send(conn, 200, endpoint.others[path]().encode())
                return
            error = endpoint.down()
            if error is not None:
                self._send(conn, 500, error.encode())
                return
            self._send(conn, 200, endpoint.render().encode())

    @staticmethod
    def _send(conn: socket.socket, status: int, body: bytes) -> None:
        reason = {200: "OK", 404: "Not Found"}.get(status, "Internal Server Error")
        head = (
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; version=0.0.4\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        with contextlib.suppress(OSError):
            conn.sendall(head.encode() + body)


def endpoint(platform: str, sim: Callable[[], Any], world: Any, storm: Storm) -> tuple[int, Endpoint]:
    """A device's port and endpoint: GPU hosts as node_exporter, switches as snmp_exporter."""
    hung = lambda: bool(sim().faults.hang)  # noqa: E731
    if lab_platform(platform).exporter == "host":
        return HOST_PORT, Endpoint("/metrics", lambda: host_text(sim()), hung)

    def down() -> str | None:
        device = sim()
        return None if "snmp" in switch_sources(device, platform) else SNMP_DOWN.format(target=device.address)

    others = {"/gnmic": lambda: gnmic_text(sim(), platform, world)}
    return SWITCH_PORT, Endpoint("/snmp", lambda: switch_text(sim(), platform, world, storm), hung, down, others)
