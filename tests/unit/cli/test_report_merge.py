"""``fabconf report merge``: shards' JSON reports into one run (issue 42)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fabconf.cli.main import main
from fabconf.cli.report import SCHEMA as REPORT_SCHEMA
from fabconf.cli.report_merge import SCHEMA, merge


def shard(tmp_path: Path, name: str, code: int, states: dict[str, str], command: str = "push") -> Path:
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "command": command,
        "exit_code": code,
        "summary": {},
        "devices": [{"device": d, "state": s} for d, s in states.items()],
    }
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_the_schema_is_the_reporters() -> None:
    assert SCHEMA == REPORT_SCHEMA


@pytest.mark.parametrize(("codes", "merged"), [((0, 0), 0), ((0, 2), 2), ((2, 1), 1), ((1, 130), 130), ((0, 141), 141)])
def test_the_worst_shard_decides_the_exit_status(tmp_path: Path, codes: tuple[int, int], merged: int) -> None:
    a = shard(tmp_path, "a", codes[0], {"leaf1": "applied"})
    b = shard(tmp_path, "b", codes[1], {"leaf2": "applied"})
    assert merge([a, b])["exit_code"] == merged


def test_devices_and_summary_of_every_shard(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = shard(tmp_path, "a", 0, {"spine1": "applied", "spine2": "unchanged"})
    b = shard(tmp_path, "b", 1, {"leaf1": "rolled back", "leaf2": "untouched"})
    out = tmp_path / "out" / "merged.json"
    assert main(["report", "merge", str(a), str(b), "-o", str(out)]) == 1
    merged = json.loads(out.read_text())
    assert [d["device"] for d in merged["devices"]] == ["spine1", "spine2", "leaf1", "leaf2"]
    assert merged["summary"] == {"applied": 1, "rolled back": 1, "unchanged": 1, "untouched": 1}
    assert [s["exit_code"] for s in merged["shards"]] == [0, 1]
    assert "4 device(s) from 2 shard(s), exit status 1" in capsys.readouterr().out


def test_drift_shards_keep_drifts_own_fields(tmp_path: Path) -> None:
    a = shard(tmp_path, "a", 2, {"leaf1": "drifted"}, command="drift")
    b = shard(tmp_path, "b", 0, {"leaf2": "in_sync"}, command="drift")
    merged = merge([a, b])
    assert merged["drift"] == merged["summary"] == {"drifted": 1, "in_sync": 1}
    assert merged["exit_code"] == 2


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ({"leaf1": "applied"}, "b.json: devices[0]: leaf1 is also in "),
        (None, "b.json: command: 'diff', where "),
    ],
)
def test_shards_that_do_not_make_one_run_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], second: dict[str, str] | None, message: str
) -> None:
    a = shard(tmp_path, "a", 0, {"leaf1": "applied"})
    b = shard(tmp_path, "b", 0, second or {"leaf2": "changes"}, command="push" if second else "diff")
    assert main(["report", "merge", str(a), str(b)]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_file_that_is_not_a_report_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = shard(tmp_path, "a", 0, {"leaf1": "applied"})
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "other/1"}')
    assert main(["report", "merge", str(a), str(bad), str(tmp_path / "missing.json")]) == 1
    assert "bad.json: schema: expected fabconf.report/1, found 'other/1'" in capsys.readouterr().err
