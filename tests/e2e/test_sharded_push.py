"""Four shards of one push, in parallel processes against one lab, merged by ``fabconf report merge`` into one
report whose exit status and devices agree with the shards' and with the audit log (issue 42)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from labkit import ROOT, free_network

SHARDS = ("spine1,spine2", "leaf1,leaf2", "leaf3,leaf4", "gpu0*")
RESULTS = {"applied", "rolled back", "failed", "conflict", "unreachable"}  # what the audit log records


def test_four_shards_pushed_in_parallel_merge_into_one_run(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory"
    shutil.copytree(ROOT / "inventory", inventory)
    state = tmp_path / "state"
    where = ["--state", str(state), "--network", free_network()]
    env = {**os.environ, "FABCONF_AUDIT_LOG": str(tmp_path / "audit" / "audit.jsonl")}
    fab = [sys.executable, "-m", "fabconf"]
    try:
        up = subprocess.run([*fab, "lab", "up", "-i", str(inventory), *where], capture_output=True, text=True, env=env)
        assert up.returncode == 0, up.stderr
        push = [*fab, "push", "-i", str(inventory), "--lab", *where, "--yes", "--bgp-wait", "0", "--format", "json"]
        reports = [tmp_path / f"shard{i}.json" for i in range(len(SHARDS))]
        procs = []
        for limit, report in zip(SHARDS, reports, strict=True):
            with report.open("w") as out:
                procs.append(subprocess.Popen([*push, "--limit", limit], stdout=out, stderr=subprocess.PIPE, env=env))
        codes = [p.wait(timeout=300) for p in procs]
        for p in procs:
            assert p.stderr is not None
            p.stderr.close()
        shards = [json.loads(r.read_text()) for r in reports]
        assert [s["exit_code"] for s in shards] == codes

        merged_file = tmp_path / "merged.json"
        merge = subprocess.run(
            [*fab, "report", "merge", *map(str, reports), "-o", str(merged_file)],
            capture_output=True,
            text=True,
            env=env,
        )
        merged = json.loads(merged_file.read_text())
        expected = 130 if 130 in codes else 1 if 1 in codes else 2 if 2 in codes else 0
        assert merge.returncode == merged["exit_code"] == expected, merge.stderr
        assert merged["command"] == "push"
        names = sorted(d["device"] for d in merged["devices"])
        assert names == sorted(d["device"] for s in shards for d in s["devices"])
        assert len(names) == 14 and len(set(names)) == 14
        assert sum(merged["summary"].values()) == 14
        for part in merged["shards"]:  # each shard's waves: estimated before its push, and what each took
            assert part["waves"] and all(w["estimate_s"] > 0 for w in part["waves"])

        # the audit log says what the merged report says, device by device
        records = [json.loads(line) for line in Path(env["FABCONF_AUDIT_LOG"]).read_text().splitlines()]
        last = {r["device"]: r["result"] for r in records if r["result"] in RESULTS}
        for device in merged["devices"]:
            if device["state"] in RESULTS:
                assert last.get(device["device"]) == device["state"], device["device"]
            else:  # unchanged or untouched: no outcome recorded for it
                assert device["device"] not in last
        audit = subprocess.run([*fab, "audit", "--format", "json"], capture_output=True, text=True, env=env)
        assert audit.returncode == 0, audit.stdout  # no commit left without its outcome
        assert json.loads(audit.stdout)["unfinished"] == []
    finally:
        subprocess.run([*fab, "lab", "down", "--state", str(state)], capture_output=True)
