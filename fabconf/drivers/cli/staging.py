"""NAPALM's unmodified ``eos`` and ``nxos`` drivers behind fabconf's driver contract.

``StagedCliDriver`` wraps a NAPALM driver and gives it fabconf's candidate semantics: in merge mode
``load_merge_candidate(config=RENDERED)`` reads the running configuration, computes hier_config's
remediation of the owned sections (``fabconf.drivers.cli.remediation``) and loads only that remediation as
NAPALM's merge candidate; an empty remediation stages nothing. ``load_replace_candidate`` hands the full
rendered configuration to NAPALM's replace. ``compare_config`` shows the device's own diff where the
platform table says it is complete (EOS config sessions), else the remediation itself (NAPALM's NX-OS
merge diff omits negations).

``StagedTimerDriver`` is the same for platforms whose commits the device itself reverts unless confirmed
(EOS ``configure session … commit timer``); it carries the ``RevertTimer`` marker.

Every other call is NAPALM's own. The NAPALM driver is reachable as ``.napalm`` for tests and tools.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import TYPE_CHECKING, Any

from napalm.base.exceptions import SessionLockedException

from fabconf.drivers.cli import leftovers as crash
from fabconf.drivers.cli import nxos_counters
from fabconf.drivers.cli.remediation import (
    Remediation,
    keep_management,
    owned_trees,
    owned_views,
    remediate,
    remediation_of,
)
from fabconf.drivers.contract import RevertTimer
from fabconf.drivers.textdiff import unified
from fabconf.platforms import Platform

if TYPE_CHECKING:
    from napalm.base import NetworkDriver, models

__all__ = ["StagedCliDriver", "StagedTimerDriver"]


class StagedCliDriver:
    """A NAPALM CLI driver staged with hier_config remediation of the sections fabconf owns."""

    def __init__(self, napalm_driver: NetworkDriver, spec: Platform) -> None:
        self.napalm = napalm_driver
        self.spec = spec
        self.hostname: str = napalm_driver.hostname
        self._running: str | None = None  # the last running config read, until anything changes the device
        self._staged: Remediation | None = None  # merge mode: what was loaded; None: nothing / replace mode
        self._replace = False
        self._views: tuple[str, str] | None = None  # owned config (running, intended) of the last load
        self._intended: str | None = None  # replace mode: the whole intended configuration
        self._run: str | None = None  # the push run this driver stages for (``own_run``)

    # -- connection -------------------------------------------------------------------------------------------
    def open(self) -> None:
        self.napalm.open()

    def close(self) -> None:
        try:
            self.napalm.close()
        finally:
            # napalm's NX-API driver opens an SSH session (netmiko) for file transfers and its close() leaves it
            # open: one connection per NX-OS switch and push stayed established. NetworkDriver._netmiko_close is
            # napalm's own way to end that session (a no-op when none was opened).
            netmiko_close = getattr(self.napalm, "_netmiko_close", None)
            if callable(netmiko_close):
                netmiko_close()

    # -- candidate ----------------------------------------------------------------------------------------------
    def _running_config(self) -> str:
        if self._running is None:
            self._running = self.napalm.get_config(retrieve="running")["running"]
        return self._running

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        intended = _text(filename, config)
        running = self._running_config()
        trees = owned_trees(self.spec.name, running, intended)
        rem = remediation_of(*trees)
        self._staged, self._replace = rem, False
        self._views = owned_views(*trees)
        if not rem.empty:
            self._load(self.napalm.load_merge_candidate, rem.config)

    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        # the management plane runs over what a replace would otherwise drop: keep it from the running config
        intended = keep_management(self.spec.name, self._running_config(), _text(filename, config))
        self._intended = intended
        self._staged, self._replace = None, True
        self._views = owned_views(*owned_trees(self.spec.name, self._running_config(), intended, whole=True))
        self._load(self.napalm.load_replace_candidate, intended)

    def _load(self, load: Any, config: str) -> None:
        if self._run is not None and self.spec.name == "eos" and self.napalm.config_session is None:
            self.napalm.config_session = crash.session_name(self._run)  # a killed run's session is then known
        try:
            load(config=config)
        except SessionLockedException as exc:
            raise crash.named_lock(self.napalm, exc) from None

    # -- what a killed run leaves (fabconf.drivers.cli.leftovers) ---------------------------------------------
    def own_run(self, run: str) -> dict[str, str]:
        self._run = run
        return {"session": crash.session_name(run)} if self.spec.name == "eos" else {}

    def leftovers(self) -> dict[str, str]:
        if self.spec.name == "eos":
            session = getattr(self.napalm, "config_session", None)
            return {"session": str(session)} if session else {}
        if self.spec.name == "nxos":
            return {"checkpoint": str(self.napalm.rollback_cfg), "candidate": str(self.napalm.candidate_cfg)}
        return {}

    def clean_leftovers(self, recorded: list[dict[str, str]]) -> list[str]:
        self._running = None
        if self.spec.name == "eos":
            return crash.clean_eos(self.napalm, recorded)
        if self.spec.name == "nxos":
            return crash.clean_nxos(self, recorded)
        return []

    def compare_config(self) -> str:
        if self._replace:
            return str(self.napalm.compare_config())
        if self._staged is None or self._staged.empty:
            return ""
        if self.spec.merge_diff_from_device:
            return str(self.napalm.compare_config())
        return self._staged.config

    def config_diff(self) -> str:
        """The owned configuration as it runs and as intended, as a unified diff ("" when equal)."""
        if self._views is None:
            return ""
        return unified(*self._views, self.hostname)

    def intent_diff(self, config: str) -> str:
        """The remediation still needed to reach ``config``, from the running config alone (no session)."""
        self._running = None
        return remediate(self.spec.name, self._running_config(), config).config

    def discard_config(self) -> None:
        staged = self._replace or (self._staged is not None and not self._staged.empty)
        self._staged, self._replace, self._views = None, False, None
        if staged:
            self.napalm.discard_config()

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        self._running = None
        if revert_in is None:
            self.napalm.commit_config(message=message)
        else:
            self.napalm.commit_config(message=message, revert_in=revert_in)
        self._staged, self._replace = None, False

    def rollback(self) -> None:
        self._running = None
        self.napalm.rollback()

    def reattach(self, lost: Any) -> None:
        """A reopened NAPALM EOS driver must know the config session the lost connection opened, so that
        recovery can abort it (nothing may be left on the device). Other platforms keep no session (NX-OS: its own
        files, ``NxosTimerDriver.reattach``)."""
        session = getattr(getattr(lost, "napalm", None), "config_session", None)
        if session and hasattr(self.napalm, "config_session"):
            self.napalm.config_session = session
            if not self.napalm.has_pending_commit():
                with contextlib.suppress(Exception):
                    self.napalm.discard_config()

    # -- getters ------------------------------------------------------------------------------------------------
    def get_facts(self) -> models.FactsDict:
        return self.napalm.get_facts()

    def identity(self) -> dict[str, str]:
        """``get_facts()``'s ``model`` and ``os_version`` from ``show version`` alone, taken from its reply as NAPALM's
        own ``get_facts`` takes them (napalm 5: EOS ``modelName`` and ``internalVersion``; NX-OS ``chassis_id`` and
        ``sys_ver_str``, else ``kickstart_ver_str``). NAPALM's ``get_facts`` also reads the inventory, every interface
        and the hostname: on NX-OS four NX-API requests, each its own TLS connection (issue 42)."""
        if self.spec.name == "eos":
            version = self.napalm.device.run_commands(["show version"])[0]
            return {"model": str(version["modelName"]), "os_version": str(version["internalVersion"])}
        if self.spec.name == "nxos":
            shown = self.napalm.device.show("show version")
            release = shown.get("sys_ver_str", shown.get("kickstart_ver_str", ""))
            return {"model": str(shown.get("chassis_id", "")), "os_version": str(release)}
        facts = self.napalm.get_facts()
        return {"model": str(facts.get("model") or ""), "os_version": str(facts.get("os_version") or "")}

    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False) -> models.ConfigDict:
        config = self.napalm.get_config(retrieve=retrieve, full=full, sanitized=sanitized)
        if retrieve in ("running", "all") and not full and not sanitized:
            self._running = config["running"]
        return config

    def get_interfaces(self) -> dict[str, models.InterfaceDict]:
        return self.napalm.get_interfaces()

    def get_interfaces_counters(self) -> dict[str, Any]:
        """NAPALM's counters where its driver has them (EOS); on NX-OS (NAPALM's NX-API driver has none) the
        receive and transmit counts of ``show interface | json`` read through NAPALM's ``cli()``."""
        try:
            return dict(self.napalm.get_interfaces_counters())
        except NotImplementedError:
            if self.spec.name != "nxos":
                raise
        return nxos_counters.interfaces_counters(self._cli_json(nxos_counters.INTERFACES))

    def pfc_counters(self, ports: list[str]) -> dict[str, dict[str, int]]:
        """port -> PFC frames received so far, per priority (key ``"all"``: the port's total). NX-OS: ``show
        interface priority-flow-control | json``; EOS: NotImplementedError (no sourced JSON path, see
        docs/operations/preflight.md)."""
        if self.spec.name != "nxos":
            raise NotImplementedError(f"no PFC counters read on {self.spec.label}")
        wanted = set(ports)
        return {k: v for k, v in nxos_counters.pfc_counters(self._cli_json(nxos_counters.PFC)).items() if k in wanted}

    def _cli_json(self, command: str) -> dict[str, Any]:
        text = self.napalm.cli([command]).get(command, "")
        try:
            body = json.loads(text) if isinstance(text, str) else text
        except ValueError as exc:
            raise ValueError(f"{command}: not JSON ({exc})") from None
        return body if isinstance(body, dict) else {}

    def get_lldp_neighbors(self) -> dict[str, list[models.LLDPNeighborDict]]:
        return self.napalm.get_lldp_neighbors()

    def get_bgp_neighbors(self) -> dict[str, models.BGPStateNeighborsPerVRFDict]:
        return self.napalm.get_bgp_neighbors()

    def adaptive_ports(self) -> list[str]:
        """NX-OS: the ports of the running ``hardware profile dlb`` section's ``dlb-interface`` lines (read fresh,
        not the copy staging keeps). EOS: [] (fabconf has no EOS dynamic load balancing form)."""
        return dlb_ports(self.napalm.get_config(retrieve="running")["running"])

    def route_paths(self, prefix: str) -> list[str]:
        """NAPALM's ``get_route_to`` where the driver has it (EOS); else ``show ip route PREFIX`` read through
        NAPALM's ``cli`` (napalm's NX-API driver has no ``get_route_to``): every ``*via ADDR,`` line."""
        try:
            routes = self.napalm.get_route_to(destination=prefix, protocol="bgp")
        except NotImplementedError:
            text = self.napalm.cli([f"show ip route {prefix}"]).get(f"show ip route {prefix}", "")
            return _via_lines(text, prefix)
        return sorted(str(r["next_hop"]) for r in routes.get(prefix, []) if r.get("current_active"))


class StagedTimerDriver(StagedCliDriver, RevertTimer):
    """A staged CLI driver whose device reverts an unconfirmed commit by itself (EOS commit timer)."""

    def confirm_commit(self) -> None:
        self.napalm.confirm_commit()

    def has_pending_commit(self) -> bool:
        return bool(self.napalm.has_pending_commit())


def _via_lines(text: str, prefix: str) -> list[str]:
    """Next hops of ``prefix`` in NX-OS ``show ip route`` text: the ``*via A.B.C.D,`` lines under its header."""
    hops: list[str] = []
    inside = False
    for line in text.splitlines():
        if not line.startswith(" "):
            inside = line.split(",", 1)[0].strip() == prefix
        elif inside and line.strip().startswith("*via "):
            hops.append(line.strip()[5:].split(",", 1)[0])
    return sorted(hops)


def _text(filename: str | None, config: str | None) -> str:
    if config is not None:
        return config
    if filename is None:
        raise ValueError("load a candidate from config= or filename=")
    with open(filename, encoding="utf-8") as handle:
        return handle.read()


def dlb_ports(text: str) -> list[str]:
    """The ports an NX-OS running configuration lists under ``hardware profile dlb`` (``dlb-interface A,B``, one
    line or several; ``Eth1/5`` is read as ``Ethernet1/5``)."""
    ports: list[str] = []
    inside = False
    for line in text.splitlines():
        if not line.startswith(" "):
            inside = line.strip() == "hardware profile dlb"
            continue
        words = line.split(None, 1)
        if inside and len(words) == 2 and words[0] == "dlb-interface":
            for name in re.split(r"\s*,\s*", words[1].strip()):
                m = re.fullmatch(r"(?i)eth(?:ernet)?(\d+(?:/\d+)+)", name)
                if m:
                    ports.append(f"Ethernet{m.group(1)}")
    return sorted(set(ports), key=lambda p: tuple(int(x) for x in re.findall(r"\d+", p)))
