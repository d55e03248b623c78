"""Documentation of a fabric from its compiled intent: the cabling plan for the people who plug the cables,
a Markdown page per device, per pod and for the fabric, and a Graphviz diagram.

- ``cabling.csv``: device, port, peer, peer port, speed (Gb/s), cable/optic, one row per link end pair, in
  cabling order. Speed: a GPU NIC's declared speed for host links, else the fabric default 400 [U]; the
  cable/optic column says what the link needs by its tier (``DAC/AOC (in rack)`` for host links,
  ``optic (leaf-spine)`` and ``optic (spine-super-spine)`` for fabric links) [U: a rule of thumb, not a
  bill of materials].
- ``devices/<name>.md``: role, platform, model, release, pod, rack, management address, ASN, loopback,
  interfaces with their peers and addresses, BGP neighbours, and the RoCE profile as the device applies it.
- ``pods/<pod>.md`` and ``fabric.md``: the devices by role, the link counts, the RoCE profile.
- ``fabric.dot`` (and ``fabric.svg`` when Graphviz's ``dot`` is installed): tiers top to bottom.

Everything is written in sorted order, so regenerating after a change gives a reviewable diff.
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
from pathlib import Path
from typing import Any

from fabconf.compile.model import natural_key
from fabconf.compile.pipeline import Compiled
from fabconf.private import write_file

ROLE_ORDER = ("super_spine", "spine", "leaf", "gpu_host")


def _cable(roles: set[str]) -> str:
    if "gpu_host" in roles:
        return "DAC/AOC (in rack)"
    if "super_spine" in roles:
        return "optic (spine-super-spine)"
    return "optic (leaf-spine)"


def cabling_csv(compiled: Compiled) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["device", "port", "peer", "peer_port", "speed_gbps", "cable"])
    devices = compiled.model.devices
    for link in compiled.model.links:
        a, b = link.a, link.b
        if a.device not in devices or b.device not in devices:
            continue
        roles = {devices[a.device].role, devices[b.device].role}
        speed = compiled.model.link_speed(a.device, a.port, b.device, b.port)
        writer.writerow([a.device, a.port, b.device, b.port, speed, _cable(roles)])
    return out.getvalue()


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def device_page(compiled: Compiled, name: str) -> str:
    dev, data = compiled.model.devices[name], compiled.data[name]
    lines = [f"# {name}", ""]
    facts = [
        ["role", dev.role],
        ["platform", dev.platform],
        ["model", data.get("model") or dev.data.get("model", "")],
        ["release", data.get("os_version", "")],
        ["pod", dev.pod or ""],
        ["rack", dev.data.get("rack", "")],
        ["management address", dev.hostname],
    ]
    if not dev.is_host:
        facts += [["ASN", data["asn"]], ["loopback", data["loopback"]], ["ECMP paths", data["bgp"]["max_paths"]]]
    lines += [*_table(["", ""], facts), ""]
    if dev.is_host:
        lines += ["## RoCE NICs", ""]
        rows = [
            [
                n["netdev"],
                n["rdma"],
                n["rail"],
                n["speed_gbps"],
                n["address"],
                n["gateway"],
                f"{n['leaf']}:{n['leaf_port']}",
            ]
            for n in data["nics"]
        ]
        lines += [*_table(["netdev", "rdma", "rail", "Gb/s", "address", "gateway", "leaf port"], rows), ""]
        qos = data["qos"]
        lines += [
            "## RoCE profile",
            "",
            f"trust {qos['trust']}, PFC on priorities "
            f"{', '.join(str(p) for p, on in enumerate(qos['pfc']) if on)}, ToS {data['roce_tos']}, "
            f"CNP DSCP {data['ecn']['cnp_dscp']} priority {data['ecn']['cnp_802p_prio']}, MTU {data['mtu']}.",
            "",
        ]
        return "\n".join(lines)
    lines += ["## Interfaces", ""]
    rows = [
        [i["name"], i["kind"], i["peer"], i["address"] or f"VLAN {i['vlan']}", i["mtu"]] for i in data["interfaces"]
    ]
    lines += [*_table(["port", "kind", "peer", "address / VLAN", "MTU"], rows), ""]
    lines += ["## BGP neighbours", ""]
    rows = [[n["address"], n["remote_as"], n["peer_device"]] for n in data["bgp"]["neighbors"]]
    lines += [*_table(["address", "remote AS", "device"], rows), ""]
    if data["vlans"]:
        lines += ["## VLANs", ""]
        lines += [*_table(["id", "name", "gateway"], [[v["id"], v["name"], v["gateway"]] for v in data["vlans"]]), ""]
    roce = compiled.model.fabric["roce"]
    lines += [
        "## RoCE profile",
        "",
        f"DSCP {roce['dscp']} -> priority {roce['priority']} "
        f"(lossless: {', '.join(map(str, roce['pfc_priorities']))}), "
        f"CNP DSCP {roce['cnp']['dscp']} strict on priority {roce['cnp']['priority']}, ECN "
        f"{roce['ecn']['min_threshold_bytes']}-{roce['ecn']['max_threshold_bytes']} bytes, MTU {data['mtu']}.",
        "",
    ]
    return "\n".join(lines)


def _group_page(compiled: Compiled, title: str, names: list[str]) -> str:
    devices = compiled.model.devices
    lines = [f"# {title}", ""]
    by_role: dict[str, list[str]] = {}
    for name in names:
        by_role.setdefault(devices[name].role, []).append(name)
    rows = [
        [role, len(by_role[role]), ", ".join(sorted(by_role[role], key=natural_key))]
        for role in ROLE_ORDER
        if role in by_role
    ]
    lines += [*_table(["role", "count", "devices"], rows), ""]
    chosen = set(names)
    links = [lk for lk in compiled.model.links if lk.a.device in chosen or lk.b.device in chosen]
    lines += [f"{len(links)} link(s); see cabling.csv.", ""]
    return "\n".join(lines)


def dot(compiled: Compiled) -> str:
    devices = compiled.model.devices
    lines = ["graph fabric {", "  rankdir=TB;", "  node [shape=box, fontsize=10];"]
    for rank, role in enumerate(ROLE_ORDER):
        members = sorted((n for n, d in devices.items() if d.role == role), key=natural_key)
        if members:
            lines.append(f"  {{ rank=same; /* {rank}: {role} */ " + " ".join(f'"{n}";' for n in members) + " }")
    for link in compiled.model.links:
        lines.append(f'  "{link.a.device}" -- "{link.b.device}" [label="{link.a.port}/{link.b.port}", fontsize=7];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def write(compiled: Compiled, out: Path) -> list[Path]:
    """Write every document under ``out``; returns the files written."""
    written: list[Path] = []

    def put(rel: str, text: str) -> None:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(path, text)  # final mode, never through a symbolic link (Unwritable: file and why)
        written.append(path)

    put("cabling.csv", cabling_csv(compiled))
    names = sorted(compiled.data, key=natural_key)
    for name in names:
        put(f"devices/{name}.md", device_page(compiled, name))
    pods = sorted({d.pod for n, d in compiled.model.devices.items() if d.pod and n in compiled.data})
    for pod in pods:
        members = [n for n in names if compiled.model.devices[n].pod == pod]
        put(f"pods/{pod}.md", _group_page(compiled, f"pod {pod}", members))
    put("fabric.md", _group_page(compiled, f"fabric {compiled.model.fabric['name']}", names))
    put("fabric.dot", dot(compiled))
    graphviz = shutil.which("dot")
    if graphviz:
        svg = subprocess.run([graphviz, "-Tsvg"], input=dot(compiled), capture_output=True, text=True, check=False)
        if svg.returncode == 0:
            put("fabric.svg", svg.stdout)
    return written
