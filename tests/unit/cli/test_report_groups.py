"""The text report for a change board: a diff shared by many devices is shown once, naming them as a range, and a
host's file writes are shown decoded (the JSON keeps the commands exactly as sent)."""

from __future__ import annotations

import base64
import io

import pytest

from fabconf.cli import report
from fabconf.deploy.job import Outcome, State

SAME = "--- running\n+++ intended\n@@ -1 +1 @@\n-mtu 1500\n+mtu 9000\n"


def _text(outcomes: list[Outcome], **kwargs: bool) -> str:
    buffer = io.StringIO()
    report.print_text(outcomes, "title", stream=buffer, **kwargs)
    return buffer.getvalue()


def test_identical_diffs_are_shown_once_for_a_range_of_devices() -> None:
    outcomes = [Outcome(f"gpu0{n}", "linux", State.CHANGES, diff=SAME) for n in range(1, 9)]
    outcomes.append(Outcome("leaf1", "eos", State.CHANGES, diff=SAME.replace("9000", "9214")))
    text = _text(outcomes)
    assert text.count("+mtu 9000") == 1 and text.count("+mtu 9214") == 1
    assert "gpu01-gpu08 (linux): the same change" in text
    assert "leaf1 (eos)" in text and "leaf1 (eos): the same" not in text


def test_a_push_shows_its_diffs_once() -> None:
    outcomes = [Outcome("leaf1", "eos", State.APPLIED, diff=SAME)]
    assert "+mtu 9000" in _text(outcomes)
    assert "+mtu 9000" not in _text(outcomes, diffs=False)  # shown in the plan already: outcomes only


@pytest.mark.parametrize(
    ("names", "shown"),
    [
        (["gpu01", "gpu02", "gpu03"], "gpu01-gpu03"),
        (["gpu01", "gpu02"], "gpu01, gpu02"),
        (["leaf9", "leaf10", "leaf11"], "leaf9, leaf10, leaf11"),  # not the same width
        (["leaf1", "leaf3", "leaf4", "leaf5", "spine1"], "leaf1, leaf3-leaf5, spine1"),
    ],
)
def test_name_ranges(names: list[str], shown: str) -> None:
    assert report.name_ranges(names) == shown


def test_host_file_writes_are_shown_decoded() -> None:
    content = "NCCL_IB_TC=106\nNCCL_IB_GID_INDEX=3\n"
    sent = f"sudo -n sysctl -q -w x=1\nprintf %s {base64.b64encode(content.encode()).decode()} | base64 -d | "
    sent += "sudo -n tee /etc/nccl.conf >/dev/null\n"
    shown = report.readable_commands(sent)
    assert "# write /etc/nccl.conf (sudo -n tee), contents:\n    NCCL_IB_TC=106\n    NCCL_IB_GID_INDEX=3" in shown
    assert "base64" not in shown and shown.startswith("sudo -n sysctl")
    outcome = Outcome("gpu01", "linux", State.CHANGES, commands=sent)
    assert "NCCL_IB_TC=106" in _text([outcome], commands=True)
    assert report.as_dict([outcome], "diff", 2)["devices"][0]["commands"] == sent  # JSON: exactly as sent
