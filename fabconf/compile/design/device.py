"""Intent -> device-shaped data: one plain dict per device, the only thing templates ever see.

Shape (every list already sorted; typed in ``fabconf.compile.devicedata``, checked on every golden in
tests/golden/design/*.yaml; see docs/architecture/device-data.md):

switch (cumulus | eos | nxos)::

    hostname, platform, role, model, asn, router_id, loopback, mtu
    interfaces: [{name, description, mtu, kind: uplink|host, address|None, vlan|None,
                  pfc: bool, pfc_watchdog: bool, peer: "DEVICE:PORT" from the cabling}]
    vlans:      [{id, name, gateway: "A.B.C.D/M", mtu}]
    bgp:        {asn, router_id, max_paths, neighbors: [{address, remote_as, description, peer_device}],
                 networks: [...]}
    qos:        the RoCE profile in that platform's own terms (fabconf.compile.design.qos)

gpu host (linux)::

    hostname, platform, role, mtu
    nics:     [{netdev, rdma, rail, speed_gbps, mtu, address, gateway, vlan, leaf, leaf_port, adapter}]
    qos:      {trust, pfc: [8 x 0|1], dscp2prio: [[dscp, prio]...]}
    ecn:      {np_enable: [prio...], rp_enable: [prio...], cnp_dscp, cnp_802p_prio}
    roce_tos, mlxconfig: {KEY: value}, nccl: {NCCL_*: value}
"""

from __future__ import annotations

from typing import Any

from fabconf.compile.design.host import host_data
from fabconf.compile.design.switch import switch_data
from fabconf.compile.model import Device, Model
from fabconf.compile.topology import Topology


def device_data(dev: Device, model: Model, topo: Topology) -> dict[str, Any]:
    """One device's data, of the shape ``fabconf.compile.devicedata.Switch`` or ``Host`` (checked by the tests; the
    templates and checks read it as a plain mapping)."""
    return host_data(dev, model, topo) if dev.is_host else switch_data(dev, model, topo)


def design(model: Model, topo: Topology, names: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Device data for ``names`` (default: every device that resolved), keyed and ordered by name."""
    selected = sorted(names if names is not None else model.devices)
    return {
        n: device_data(model.devices[n], model, topo)
        for n in selected
        if n in model.devices and (model.devices[n].is_host or n in topo.switches)
    }
