"""The linux driver's ``mlxconfig -e q`` parser keeps the tables it has read (issue 42): the same table is parsed
once, each caller gets values of its own, and what it cannot read is refused every time."""

from __future__ import annotations

import dataclasses

import pytest

from fabconf.platform.linux import parse
from fabconf.platform.linux.parse import ParseError, parse_mlxconfig_query

QUERY = """
Device #1:
----------

Device type:        ConnectX7
Name:               MCX75310AAS-NEA_Ax
Description:        NVIDIA ConnectX-7 adapter card; 400GbE / NDR IB; single-port OSFP; PCIe 5.0 x16
Device:             0000:17:00.0

Configurations:                                      Default         Current         Next Boot
*        LINK_TYPE_P1                        IB(1)           ETH(2)          ETH(2)
         CNP_DSCP_P1                         48              48              48
*        ROCE_CC_PRIO_MASK_P1                255             255             8
The '*' shows parameters with next value different from default/current value.
"""


def test_a_table_read_again_is_parsed_once_and_each_caller_gets_its_own() -> None:
    parse._mlxconfig_table.cache_clear()
    first = parse_mlxconfig_query(QUERY)
    again = parse_mlxconfig_query(QUERY.replace("0000:17:00.0", "0000:27:00.0"))  # another port, the same table
    assert parse._mlxconfig_table.cache_info().hits == 1
    assert first == again and first is not again
    assert first["ROCE_CC_PRIO_MASK_P1"] == parse.MlxValue("255", "255", "8")
    assert first["ROCE_CC_PRIO_MASK_P1"].pending is True and first["LINK_TYPE_P1"].pending is False
    first.pop("CNP_DSCP_P1")
    assert "CNP_DSCP_P1" in parse_mlxconfig_query(QUERY)
    with pytest.raises(dataclasses.FrozenInstanceError):
        again["CNP_DSCP_P1"].next_boot = "24"  # type: ignore[misc]


@pytest.mark.parametrize(
    "damage",
    [
        lambda t: t.replace("48              48              48", "48              48"),  # a column lost
        lambda t: t.replace("Device #1:", "Device 1:"),  # no device block
        lambda t: t.replace("CNP_DSCP_P1 ", "CNP DSCP "),  # not a key
        lambda t: t.replace("ETH(2)          ETH(2)", "ETH(2)\x00         ETH(2)"),  # a damaged stream
    ],
)
def test_what_cannot_be_read_is_refused_every_time(damage: object) -> None:
    parse_mlxconfig_query(QUERY)
    bad = damage(QUERY)  # type: ignore[operator]
    for _ in range(2):
        with pytest.raises(ParseError):
            parse_mlxconfig_query(bad)
    assert parse_mlxconfig_query(QUERY)["CNP_DSCP_P1"].next_boot == "48"
