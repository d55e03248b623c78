"""NX-OS counters through NAPALM's ``cli()`` (pure parsers, no I/O). NAPALM's NX-API driver has no
``get_interfaces_counters`` and its ``cli()`` returns text only, so fabconf sends ``show … | json``, which NX-OS
prints as JSON text [3P: Ansible's cisco.nxos facts module sends ``show interface | json`` over the CLI].

- ``show interface | json``: ``TABLE_interface`` / ``ROW_interface`` rows (one row is given as the row itself,
  not a list) with ``eth_inucast`` and ``eth_outucast`` (numbers), ``eth_inerr`` and ``eth_outerr`` (strings
  holding a number) [3P: greenpau's go-cisco-nx-api, ``client/interface.go``, a struct of that output].
- ``show interface priority-flow-control | json``: ``TABLE_module`` / ``ROW_module`` / ``TABLE_pfc_interface`` /
  ``ROW_pfc_interface`` rows with ``if_name_str`` and ``rx-stats`` (the RxPPP column: PFC frames received on the
  port, all priorities together) [3P: as third-party NX-API exporters read them].
"""

from __future__ import annotations

from typing import Any

INTERFACES = "show interface | json"
PFC = "show interface priority-flow-control | json"
ALL_PRIORITIES = "all"  # NX-OS counts a port's PFC frames, not each priority's


def rows(table: Any, row: str) -> list[dict[str, Any]]:
    """The rows of ``{"ROW_x": row-or-rows}``; [] when absent."""
    found = table.get(row) if isinstance(table, dict) else None
    if isinstance(found, dict):
        return [found]
    return [r for r in found if isinstance(r, dict)] if isinstance(found, list) else []


def _int(value: Any, command: str, port: str, name: str) -> int:
    """A counter as NX-OS prints it (a number, or a string holding one); anything else is refused naming the
    command, the port and the field: a counter that cannot be read is never taken as 0."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    text = value.strip() if isinstance(value, str) else ""
    if text.isascii() and text.isdigit():
        return int(text)
    shown = "missing" if value is None else f"not a counter ({value!r})"
    raise ValueError(f"{command}: {port}: {name} is {shown}")


def interfaces_counters(body: dict[str, Any]) -> dict[str, dict[str, int]]:
    """NAPALM's ``get_interfaces_counters`` keys fabconf reads, for each port that reports receive counters."""
    out = {}
    for row in rows(body.get("TABLE_interface"), "ROW_interface"):
        if "eth_inucast" not in row:
            continue  # loopbacks, SVIs
        port = str(row.get("interface"))
        out[port] = {
            key: _int(row.get(name), INTERFACES, port, name)
            for key, name in (
                ("rx_unicast_packets", "eth_inucast"),
                ("rx_errors", "eth_inerr"),
                ("tx_unicast_packets", "eth_outucast"),
                ("tx_errors", "eth_outerr"),
            )
        }
    return out


def pfc_counters(body: dict[str, Any]) -> dict[str, dict[str, int]]:
    """port -> {"all": PFC frames received} from ``show interface priority-flow-control``."""
    out = {}
    for module in rows(body.get("TABLE_module"), "ROW_module"):
        for row in rows(module.get("TABLE_pfc_interface"), "ROW_pfc_interface"):
            if "if_name_str" in row:
                port = str(row["if_name_str"])
                out[port] = {ALL_PRIORITIES: _int(row.get("rx-stats"), PFC, port, "rx-stats")}
    return out
