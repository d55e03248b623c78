"""Host networking facts that the design writes into a GPU host's device data and the Linux driver applies: the
per-NIC routing tables and rule priorities, the main table, and the per-NIC sysctls. They live in the compile half
so that the design depends on no driver; ``fabconf.platform.linux.routing`` uses the same names."""

from __future__ import annotations

ROUTE_PROTO = 250  # the route protocol number fabconf's routes carry, so that it finds (and removes) only its own
ROUTE_TABLE_BASE = 100  # NIC i routes in table ROUTE_TABLE_BASE + i
RULE_BASE = 100  # its source rule at priority RULE_BASE + i
RULE_PRIORITIES = range(RULE_BASE, RULE_BASE + 64)
MAIN = 254  # the kernel's main table
# [U: common practice] ARP answered and sourced per interface; loose reverse-path filtering.
NIC_SYSCTLS = {"arp_announce": 2, "arp_ignore": 1, "rp_filter": 2}
