"""Address checks the EOS and NX-OS simulators share: a real IPv4 address, a prefix with a length.

Each answer depends on the text alone and is remembered (``functools.lru_cache``): a switch checks the same
addresses again on every push and diff, and ``ipaddress`` parsing was a sixth of an EOS switch's CPU in a diff.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

_REMEMBERED = 1 << 15  # addresses per check


@lru_cache(maxsize=_REMEMBERED)
def valid_ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


@lru_cache(maxsize=_REMEMBERED)
def valid_prefix(text: str, strict: bool) -> bool:
    try:
        if strict:
            ipaddress.IPv4Network(text)
        else:
            ipaddress.IPv4Interface(text)
    except ValueError:
        return False
    return "/" in text


@lru_cache(maxsize=_REMEMBERED)
def host_address_error(text: str) -> str | None:
    """Why an address (``A.B.C.D`` or ``A.B.C.D/N``) cannot be a router's own or a peer's address, or None.

    Multicast (224/4), class E (240/4, the limited broadcast included), the unspecified address and loopback
    (127/8) are not unicast host addresses [V: RFC 5771, RFC 1122 section 3.2.1.3, RFC 1112]; both CLIs refuse
    them for an interface, a router-id or a neighbor [U: the wording each CLI uses].
    """
    try:
        addr = ipaddress.IPv4Interface(text).ip
    except ValueError:
        return None  # malformed: the syntax checks answer
    if addr.is_multicast:
        return f"{addr} is a multicast address"
    if addr.is_unspecified:
        return f"{addr} is the unspecified address"
    if addr.is_loopback:
        return f"{addr} is a loopback address"
    if addr.is_reserved or str(addr) == "255.255.255.255":
        return f"{addr} is a reserved (class E) address"
    return None


@lru_cache(maxsize=_REMEMBERED)
def network_error(text: str) -> str | None:
    """Why a prefix cannot be announced as a unicast network (multicast or class E space), or None."""
    try:
        net = ipaddress.IPv4Network(text, strict=False)
    except ValueError:
        return None
    if net.is_multicast or (net.network_address.is_reserved and net.prefixlen >= 4):
        return f"{net} is not unicast address space"
    return None
