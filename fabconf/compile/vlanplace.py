"""Where each VLAN of fabric.yaml lands. A VLAN names exactly one placement:

- ``rail: N`` — the training VLAN of rail N: on each leaf that has a GPU host NIC of that rail cabled to it, with
  those ports as its access ports (``fabconf.compile.topology``'s host ports);
- ``leaves: all`` — on every leaf of the fabric;
- ``pods: [pod1, …]`` — on every leaf of the named pods;
- ``leaves: [leaf1, …]`` — on the named leaves.

The last three (a storage or service VLAN) give each leaf a VLAN and its SVI gateway, the first host address of
the leaf's own subnet of ``subnet_pool`` (the leaf's ``data.id``-th ``/prefix_length``, as a rail VLAN's), which
BGP announces; they have no access ports (what attaches to them is not in the inventory). A name that is not a
leaf or a pod is an error; a VLAN that lands on no device is a warning (a pod with no leaves yet, a rail no host
is cabled on)."""

from __future__ import annotations

from typing import Any

from fabconf.compile.model import Model, natural_key
from fabconf.compile.problems import Problems

PLACEMENTS = ("rail", "leaves", "pods")


def placement_of(vlan: dict[str, Any]) -> list[str]:
    """The placement keys a VLAN entry gives (exactly one is valid)."""
    return [key for key in PLACEMENTS if key in vlan]


def check_placement(fab: dict[str, Any], ffile: str, problems: Problems) -> list[int]:
    """Indexes of ``fab['vlans']`` that give exactly one placement; a problem for each of the others."""
    good = []
    for i, vlan in enumerate(fab["vlans"]):
        given = placement_of(vlan)
        if len(given) == 1:
            good.append(i)
        elif not given:
            problems.add(ffile, ["vlans", i], "needs a placement: one of rail, leaves, pods")
        else:
            problems.add(ffile, ["vlans", i, given[1]], f"give one placement only: {', '.join(given)} are given")
    return good


def placed_leaves(
    model: Model, leaf_pods: dict[str, str | None], pods: list[str], i: int, problems: Problems
) -> list[str]:
    """The leaves the ``leaves`` or ``pods`` VLAN ``vlans[i]`` lands on (sorted); ``leaf_pods``: every leaf with its
    pod; ``pods``: the fabric's pods."""
    ffile = model.files.get("fabric", "fabric.yaml")
    vlan = model.fabric["vlans"][i]
    where: list[Any] = ["vlans", i]
    if vlan.get("leaves") == "all":
        return sorted(leaf_pods, key=natural_key)
    if "leaves" in vlan:
        chosen = []
        for j, name in enumerate(vlan["leaves"]):
            if name in leaf_pods:
                chosen.append(name)
            else:
                dev = model.devices.get(name)
                why = f"a {dev.role.replace('_', '-')}" if dev is not None else "not in the inventory"
                problems.add(ffile, [*where, "leaves", j], f"{name} is not a leaf: {why}")
        return sorted(chosen, key=natural_key)
    wanted = set()
    for j, pod in enumerate(vlan["pods"]):
        if pod in pods:
            wanted.add(pod)
        else:
            problems.add(ffile, [*where, "pods", j], f"{pod} is not a pod of the fabric (pods: {', '.join(pods)})")
    return sorted((n for n, p in leaf_pods.items() if p in wanted), key=natural_key)
