"""Test helper: a known_hosts file for simulators started on their own (outside a ``Lab``, which writes
``STATE/known_hosts`` itself), since fabconf refuses unknown SSH host keys by default."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def known_hosts(path: Path, *sims: Any) -> str:
    lines = []
    for sim in sims:
        service = getattr(sim, "ssh", None) or getattr(sim, "_ssh", None)
        assert service is not None, f"{sim.name} has no SSH service"
        key, port = service.host_key, int(service.port)
        where = sim.address if port == 22 else f"[{sim.address}]:{port}"
        lines.append(f"{where} {key.get_name()} {key.get_base64()}\n")
    path.write_text("".join(lines))
    return str(path)
