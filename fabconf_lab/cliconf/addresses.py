"""Address checks the EOS and NX-OS simulators share: a real IPv4 address, a prefix with a length."""

from __future__ import annotations

import ipaddress


def valid_ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def valid_prefix(text: str, strict: bool) -> bool:
    try:
        if strict:
            ipaddress.IPv4Network(text)
        else:
            ipaddress.IPv4Interface(text)
    except ValueError:
        return False
    return "/" in text
