"""The text report prints messages as written: a check's "[gid]" or a "[U]" mark is text, not rich markup."""

from __future__ import annotations

import io

from fabconf.cli import report
from fabconf.deploy.job import Outcome, State


def test_brackets_in_messages_are_printed_as_written() -> None:
    out = io.StringIO()
    failed = Outcome("gpu01", "linux", State.FAILED, message="preflight failed", checks=["[gid] mlx5_0: no GID [U]"])
    report.print_text([failed], "fabconf preflight", stream=out)
    assert "[gid] mlx5_0: no GID [U]" in out.getvalue()
