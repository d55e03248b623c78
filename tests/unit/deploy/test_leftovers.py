"""What killed runs left on a device, as the audit log records it (fabconf.deploy.leftovers.recorded): the
next push of that device at that target cleans exactly these."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from fabconf.compile.pipeline import Compiled
from fabconf.deploy import audit
from fabconf.deploy.job import Job
from fabconf.deploy.leftovers import Cleaner, diff_session, recorded
from fabconf.deploy.lock import DeviceLocks, lock_address
from fabconf.drivers.contract import Driver

T = "lab /tmp/x"


@pytest.fixture(autouse=True)
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    return tmp_path / "audit.jsonl"


def commit(run: str, device: str = "leaf3", target: str = T, **left: str) -> None:
    extra: dict[str, Any] = {"leftovers": left} if left else {}
    audit.record(run, device, "d", audit.COMMITTING, target=target, **extra)


def test_a_killed_runs_recorded_leftovers_are_found_at_its_target_only() -> None:
    commit("r1", session="fabconf_r1")
    assert recorded("leaf3", T, "now") == [{"session": "fabconf_r1", "run": "r1"}]
    assert recorded("leaf3", "10.0.0.3", "now") == []  # another fabric's leaf3
    assert recorded("leaf4", T, "now") == []
    assert recorded("leaf3", T, "r1") == []  # a run never cleans up after itself


def test_a_run_that_ended_on_the_device_left_nothing() -> None:
    commit("r1", session="fabconf_r1")
    audit.record("r1", "leaf3", "d", "applied", target=T)
    assert recorded("leaf3", T, "now") == []


def test_a_failed_run_may_have_left_a_commit_waiting_for_its_timer() -> None:
    commit("r1", checkpoint="rollback_config.txt")
    audit.record("r1", "leaf3", "d", "failed", "device state unknown", target=T)
    assert recorded("leaf3", T, "now") == [{"checkpoint": "rollback_config.txt", "run": "r1"}]


def test_cleaned_leftovers_are_not_found_again_and_the_unfinished_commit_is_closed() -> None:
    commit("r1", session="fabconf_r1")
    assert [e["run"] for e in audit.unfinished()] == ["r1"]
    audit.record("r2", "leaf3", "", audit.CLEANED, "aborted", target=T, resolves=["r1"])
    assert recorded("leaf3", T, "now") == []
    assert audit.unfinished() == []


def test_acknowledged_or_resolved_commits_still_have_their_leftovers_cleaned() -> None:
    commit("r1", session="fabconf_r1")
    audit.acknowledge("leaf3", "looked at it")
    audit.resolve("verify", [("leaf3", "verified", "ignored")], {"lab_state": "/tmp/x"})
    assert audit.unfinished() == []
    assert recorded("leaf3", T, "now") == [{"session": "fabconf_r1", "run": "r1"}]


def test_a_later_commit_of_another_run_means_the_earlier_leftovers_were_cleaned_first() -> None:
    commit("r1", session="fabconf_r1")
    commit("r2", session="fabconf_r2")  # r2 cleaned r1's before it staged
    assert recorded("leaf3", T, "now") == [{"session": "fabconf_r2", "run": "r2"}]
    commit("r3")  # a commit that leaves nothing by name
    assert recorded("leaf3", T, "now") == []


class LeftDriver:
    """The ``Leftovers`` side of a switch whose staging leaves a named session (as EOS's does)."""

    def __init__(self, *open_sessions: str) -> None:
        self.open = set(open_sessions)
        self.asked: list[list[dict[str, str]]] = []

    def own_run(self, run: str) -> dict[str, str]:
        return {"session": f"fabconf_{run}"}

    def leftovers(self) -> dict[str, str]:
        return {}

    def clean_leftovers(self, recorded: list[dict[str, str]]) -> list[str]:
        self.asked.append(recorded)
        gone = [r["session"] for r in recorded if r.get("session") in self.open]
        self.open -= set(gone)
        return [f"aborted {name}" for name in gone]


def _job(example: Compiled) -> Job:
    return Job(example.model.devices["leaf3"], example.data["leaf3"], "intended")


def test_the_next_push_cleans_and_records_it_and_names_its_own_staging_first(example: Compiled) -> None:
    job = _job(example)
    target = audit.target_of(None, job.device.hostname)
    commit("r1", target=target, session="fabconf_r1")
    driver = LeftDriver("fabconf_r1", "operators_own")
    said = Cleaner("r2").clean(job, cast(Driver, driver))
    assert said == "cleaned what a killed run left: aborted fabconf_r1"
    assert driver.open == {"operators_own"}  # not recorded by fabconf: the driver refuses it, never cleans it
    log = [(e["run"], e["result"], e.get("resolves"), e.get("leftovers")) for e in audit_log()]
    assert log[1:] == [("r2", "cleaned", ["r1"], None), ("r2", "staging", None, {"session": "fabconf_r2"})]
    assert audit.unfinished() == []  # the killed run's commit is resolved by the cleaning


def test_a_retried_attempt_cleans_what_its_lost_attempt_staged(example: Compiled) -> None:
    job = _job(example)
    cleaner = Cleaner("r2")
    driver = LeftDriver()
    assert cleaner.clean(job, cast(Driver, driver)) == ""  # nothing recorded: nothing asked of the device
    assert driver.asked == []
    driver.open.add("fabconf_r2")  # the connection was lost after the staging request was carried out
    assert "aborted fabconf_r2" in cleaner.clean(job, cast(Driver, driver))
    assert [e["result"] for e in audit_log()].count("staging") == 1  # named once per push


def test_a_run_whose_device_lock_another_live_process_holds_is_left_alone(
    example: Compiled, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = _job(example)
    commit("r1", target=audit.target_of(None, job.device.hostname), session="fabconf_r1")
    monkeypatch.setenv("FABCONF_LOCK_DIR", str(tmp_path / "locks"))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _HOLD,
            str(tmp_path / "locks"),
            job.platform,
            lock_address(job.device.hostname, job.device.port),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        driver = LeftDriver("fabconf_r1")
        assert Cleaner("r2").clean(job, cast(Driver, driver)) == ""
        assert driver.open == {"fabconf_r1"}  # its commit is in progress, not killed
    finally:
        holder.kill()
        holder.wait()


def test_the_lock_this_process_holds_is_no_other_run(
    example: Compiled, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = _job(example)
    commit("r1", target=audit.target_of(None, job.device.hostname), session="fabconf_r1")
    monkeypatch.setenv("FABCONF_LOCK_DIR", str(tmp_path / "locks"))
    address = lock_address(job.device.hostname, job.device.port)
    with DeviceLocks([("leaf3", job.platform, address)]):  # `fabconf push` holds the lock itself
        said = Cleaner("r2").clean(job, cast(Driver, LeftDriver("fabconf_r1")))
    assert said == "cleaned what a killed run left: aborted fabconf_r1"


_HOLD = """
import sys, time
from pathlib import Path
from fabconf.deploy.lock import DeviceLocks
with DeviceLocks([("leaf3", sys.argv[2], sys.argv[3])], Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


def audit_log() -> list[dict[str, Any]]:
    return [json.loads(line) for line in audit.audit_path().read_text().splitlines()]


def test_a_dead_diffs_session_is_cleaned_and_a_live_ones_left_alone(
    example: Compiled, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#39: a diff's session is named after the diff and marked alive by a lock file it holds until it has
    discarded; the next push cleans the session of a diff whose lock is free, never that of a live one."""
    monkeypatch.setenv("FABCONF_LOCK_DIR", str(tmp_path / "locks"))
    job = _job(example)
    driver = LeftDriver()
    with diff_session(job, cast(Driver, driver)) as cleaned:
        assert cleaned == ""
        (own,) = (tmp_path / "locks" / "diffs").rglob("*.lock")
        assert own.stem.startswith("fabconf_diff")
        driver.open.add(own.stem)  # staged, compared, not discarded yet
        assert Cleaner("r2").clean(job, cast(Driver, driver)) == ""
        assert own.stem in driver.open  # a live diff's: left alone
    assert not own.exists()  # a diff that ends removes its mark
    dead = own.with_name("fabconf_diff1x00.lock")
    dead.touch(mode=0o600)  # what a killed diff leaves: the file, its lock free
    driver.open.add(dead.stem)
    said = Cleaner("r3").clean(job, cast(Driver, driver))
    assert said == "cleaned what a killed run left: aborted fabconf_diff1x00"
    assert not dead.exists()
    again = own.with_name("fabconf_diff2x00.lock")
    again.touch(mode=0o600)
    driver.open.add(again.stem)
    with diff_session(job, cast(Driver, driver)) as cleaned:  # the next diff cleans a dead diff's session too
        assert cleaned == "aborted fabconf_diff2x00"
    assert not again.exists() and again.stem not in driver.open


def _reread(path: Path, device: str, target: str, current_run: str) -> list[dict[str, str]]:
    """What ``recorded`` answered when it read the whole log on every call (before issue 42): the oracle."""
    found: dict[str, dict[str, str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("device") != device or entry.get("target") != target:
            continue
        run, result = str(entry.get("run")), entry.get("result")
        if result in ("staging", audit.COMMITTING) and run != current_run:
            left = entry.get("leftovers")
            found = {run: {**{str(k): str(v) for k, v in left.items()}, "run": run}} if isinstance(left, dict) else {}
        elif result == audit.CLEANED:
            for done in entry.get("resolves") or ():
                found.pop(str(done), None)
        elif result in ("applied", "rolled back", "unchanged", "untouched", "conflict"):
            found.pop(run, None)
    return list(found.values())


@pytest.mark.parametrize("seed", range(12))
def test_the_log_read_on_from_where_it_stopped_answers_as_reading_it_whole(log: Path, seed: int) -> None:
    """``recorded`` folds the log once per run and reads only what was added since its last call: the same answers
    as reading the whole log each time, over random records, lines cut short by a kill, and a log replaced."""
    rnd = random.Random(seed)
    devices, targets, runs = ["leaf1", "leaf2", "spine1"], [T, "10.0.0.3"], ["r1", "r2", "r3", "now"]
    results = ["staging", "committing", "cleaned", "applied", "failed", "rolled back", "conflict", "unreachable"]

    def line() -> str:
        entry: dict[str, Any] = {
            "run": rnd.choice(runs),
            "device": rnd.choice(devices),
            "target": rnd.choice(targets),
            "result": rnd.choice(results),
        }
        if rnd.random() < 0.6:
            entry["leftovers"] = rnd.choice([{"session": f"s{rnd.randrange(9)}"}, {"checkpoint": "c"}, "text", None])
        if entry["result"] == "cleaned":
            entry["resolves"] = rnd.sample(runs, rnd.randrange(3))
        return json.dumps(entry)

    for _round in range(300):
        step = rnd.random()
        with log.open("a", encoding="utf-8") as out:
            if step < 0.05:  # a kill in mid-line; the next record starts on a line of its own (audit.record)
                out.write(line()[: rnd.randrange(5, 30)] + "\n")
            elif step < 0.15:  # another process's record caught in mid-write: asked about now, then finished
                text = line()
                cut = rnd.randrange(1, len(text))
                out.write(text[:cut])
                out.flush()
                device, target = rnd.choice(devices), rnd.choice(targets)
                assert recorded(device, target, "now") == _reread(log, device, target, "now")
                out.write(text[cut:] + "\n")
            elif step < 0.17:  # the log replaced by another (rotated, or another audit at the same path)
                log.unlink()
                log.write_text("".join(line() + "\n" for _ in range(rnd.randrange(1, 40))))
            else:
                out.write("".join(line() + "\n" for _ in range(rnd.randrange(1, 4))))
        device, target = rnd.choice(devices), rnd.choice(targets)
        assert recorded(device, target, "now") == _reread(log, device, target, "now"), _round
