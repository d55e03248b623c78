"""The one contract every lab simulator keeps, and the constructor spec they share.

``Simulator`` is what the orchestrator, the World and the tests may use of any simulator, whatever its
platform: its identity, its faults, start/stop, the view the World reads (LLDP, BGP, ECMP), and its
configuration as text (``running_config()``; ``startup_config()`` where the platform keeps one).

``SimBase`` holds the constructor arguments all four simulators take (name, address, ports, credentials,
the lab CA, the World, a state directory, faults), so each simulator adds only what is its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Required, TypedDict, runtime_checkable

from fabconf_lab.faults import Faults

if TYPE_CHECKING:
    from fabconf_lab.tls import LabCA
    from fabconf_lab.world import DeviceView, World


@runtime_checkable
class Simulator(Protocol):
    name: str
    address: str
    faults: Faults

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def lab_view(self) -> DeviceView: ...
    def running_config(self) -> str: ...


class SimArgs(TypedDict, total=False):
    """The constructor arguments every simulator shares, spelled out once: each simulator takes them as
    ``**common: Unpack[SimArgs]`` and hands them to ``SimBase`` unchanged."""

    ports: Required[list[str]]
    username: Required[str]
    password: Required[str]
    ca: LabCA | None
    world: World | None
    state_dir: Path | None
    faults: Faults | None
    model: str | None  # what the device reports as its hardware model (None: the simulator's default)
    os_version: str | None  # and its OS release


class SimBase:
    """The constructor arguments every simulator shares. ``state_dir`` is where a simulator may keep state
    across ``lab down``/``lab up``; ``faults`` default to ``new_faults()`` (hosts have more kinds)."""

    def __init__(
        self,
        name: str,
        address: str,
        *,
        ports: list[str],
        username: str,
        password: str,
        ca: LabCA | None = None,
        world: World | None = None,
        state_dir: Path | None = None,
        faults: Faults | None = None,
        model: str | None = None,
        os_version: str | None = None,
    ) -> None:
        self.name = name
        # what the device reports as its hardware model and OS release (None: the simulator's default)
        self.model = model
        self.os_version = os_version
        self.address = address
        self.ports = list(ports)
        self.username = username
        self.password = password
        self.ca = ca
        self.world = world
        self.state_dir = Path(state_dir) if state_dir is not None else None
        self.faults = faults if faults is not None else self.new_faults()

    def new_faults(self) -> Faults:
        return Faults()
