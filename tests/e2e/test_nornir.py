"""fabconf from a plain Nornir script, as a user writes it: the example of docs/architecture/python-api.md, run in a
subprocess against the lab's inventory (SimpleInventory on STATE/inventory), gets per-device Results with the diff."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from labkit import ROOT, inv

from fabconf.lab.orchestrator import Lab


def _docs_example() -> str:
    page = (ROOT / "docs" / "architecture" / "python-api.md").read_text()
    section = page.split("## fabconf from your own Nornir script", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_docs_nornir_script_diffs_the_lab(lab: Lab, tmp_path: Path) -> None:
    code = _docs_example()
    assert 'inv = ".fabconf-lab/inventory"' in code
    script = tmp_path / "my_script.py"
    script.write_text(code.replace('inv = ".fabconf-lab/inventory"', f"inv = {inv(lab)!r}"))
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=dict(os.environ), cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for leaf in ("leaf1", "leaf2", "leaf3", "leaf4"):
        assert f"{leaf} changes" in out, out
    assert not [line for line in out.splitlines() if line.startswith(("spine", "gpu"))]  # filtered on role=leaf
    assert "+qos profile FABCONF_ROCE" in out and "(intended)" in out  # the diff came back in the Result


def test_nornir_tasks_return_results_with_outcomes(lab: Lab) -> None:
    from nornir import InitNornir

    from fabconf.deploy.job import State
    from fabconf.deploy.tasks import diff_task, verify_task

    d = inv(lab)
    nr = InitNornir(
        runner={"plugin": "threaded", "options": {"num_workers": 8}},
        inventory={
            "plugin": "SimpleInventory",
            "options": {
                "host_file": f"{d}/hosts.yaml",
                "group_file": f"{d}/groups.yaml",
                "defaults_file": f"{d}/defaults.yaml",
            },
        },
        logging={"enabled": False},
    )
    results = nr.run(task=diff_task)
    assert set(results) == set(lab.devices)
    for name, multi in results.items():
        outcome = multi[0].result
        assert outcome.state is State.CHANGES, (name, outcome)
        assert multi[0].diff and multi[0].changed and not multi[0].failed
    verified = nr.filter(name="spine1").run(task=verify_task, bgp_wait=0)
    assert verified["spine1"][0].result.state is State.FAILED  # brownfield: not at intent yet
    assert verified["spine1"][0].failed
    assert verified.failed  # Nornir's AggregatedResult: a failed device is never green
