"""What each platform accepts, in one table, so cross-checks and design never hard-code a vendor.

Values marked [V] come from shared/reference/roce-lossless.md; [A] are assumptions stated here because
the reference does not settle them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Platform:
    name: str
    min_mtu: int
    max_mtu: int
    max_ecmp: int
    port_pattern: re.Pattern[str]
    reserved_vlans: tuple[tuple[int, int], ...] = ()
    ecn_unit_bytes: int = 1  # thresholds must be a multiple of this many bytes


PLATFORMS: dict[str, Platform] = {
    # [V] NVUE link mtu 552-9216; multipaths ebgp 1-128; reserved internal VLANs 3725-3999 and
    # L3-VNI VLANs 4000-4064 (defaults). ECN thresholds in bytes.
    "cumulus": Platform("cumulus", 552, 9216, 128, re.compile(r"^swp\d+(s\d+)?$"), ((3725, 3999), (4000, 4064))),
    # [A] EOS L3 MTU maximum 9214 (the reference's sample uses 9214); maximum-paths up to 128.
    # ECN thresholds are rendered in kbytes when they divide evenly, else bytes (units explicit).
    "eos": Platform("eos", 68, 9214, 128, re.compile(r"^Ethernet\d+(/\d+){0,2}$")),
    # [V] NX-OS interface / network-qos / system jumbomtu 9216; ECN thresholds in kbytes.
    # [A] maximum-paths 1-64.
    "nxos": Platform("nxos", 576, 9216, 64, re.compile(r"^Ethernet\d+/\d+(/\d+)?$"), ecn_unit_bytes=1000),
}
