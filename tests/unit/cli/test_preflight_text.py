"""A passing preflight in text mode printed every value it read as raw JSON (158 KB, lines of 3,661 characters)
while the table's detail column was empty (issue #40): the table names the checks each device passed, and the
values are printed, cut short, only for the devices that did not pass (``--format json`` keeps them all)."""

from __future__ import annotations

import io

from fabconf.cli import report
from fabconf.cli.preflight import EVIDENCE_LINE, evidence_text
from fabconf.deploy.job import Outcome, State


def _evidence() -> dict[str, dict[str, str]]:
    return {check: {f"cmd {i}": "x" * 500 for i in range(8)} for check in ("gid", "pcie", "active_mtu")}


def test_a_passing_preflight_names_its_checks_and_prints_no_raw_values() -> None:
    passed = Outcome("gpu01", "linux", State.VERIFIED, evidence=_evidence())
    out = io.StringIO()
    report.print_text([passed], "fabconf preflight (read only)", stream=out)
    out.write(evidence_text([passed]))
    text = out.getvalue()
    for words in ("evidence: 3 check(s)", "passed:", "active_mtu,", "gid,", "pcie"):  # the table folds the column
        assert words in text, text
    assert "cmd 0" not in text and len(text) < 2000


def test_a_failing_device_s_values_are_shown_cut_short() -> None:
    failed = Outcome("gpu02", "linux", State.FAILED, message="pcie", checks=["pcie: x8"], evidence=_evidence())
    passed = Outcome("gpu01", "linux", State.VERIFIED, evidence=_evidence())
    text = evidence_text([passed, failed])
    lines = text.strip().splitlines()
    assert lines[0].endswith("(every value: --format json):")
    assert [line.split(":")[0] for line in lines[1:]] == ["gpu02 active_mtu", "gpu02 gid", "gpu02 pcie"]
    assert all(len(line) <= EVIDENCE_LINE and line.endswith("…") for line in lines[1:])


def test_the_preflight_page_names_the_json_key_the_report_has() -> None:
    from pathlib import Path

    page = (Path(__file__).resolve().parents[3] / "docs" / "operations" / "preflight.md").read_text()
    assert "each device's `evidence` names every check run" in page
    assert "`checks` names" not in page
    assert "evidence" in Outcome("d", "linux", State.VERIFIED).as_dict()
