"""fabconf from a plain Nornir script, as a user writes it: the example of docs/architecture/python-api.md, run in
a subprocess on the user's own inventory with the lab overlaid (the fabconf_lab transform function), gets
per-device Results with the diff."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from labkit import ROOT, inv
from pristine import EXAMPLE

from fabconf_lab.orchestrator import Lab


def _docs_example() -> str:
    page = (ROOT / "docs" / "architecture" / "python-api.md").read_text()
    section = page.split("## fabconf from your own Nornir script", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_docs_nornir_script_diffs_the_lab(lab: Lab, tmp_path: Path) -> None:
    """Run as a user runs it: from a directory holding their own `inventory/`, the lab's state elsewhere, no
    credentials in the environment (the `fabconf_lab` transform function brings them)."""
    code = _docs_example()
    assert '"state": ".fabconf-lab"' in code
    shutil.copytree(EXAMPLE, tmp_path / "inventory")
    script = tmp_path / "my_script.py"
    script.write_text(code.replace('"state": ".fabconf-lab"', f'"state": {str(lab.state_dir)!r}'))
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABCONF_")}
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
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


def test_a_nornir_script_on_the_users_own_inventory_sees_its_edits(lab: Lab, tmp_path: Path) -> None:
    """The user's ./inventory is the intent; the `fabconf_lab` transform function only says where each device
    answers in the lab and how to log in. An edit of the inventory shows in the next diff (the lab's own copy of
    the intent, taken at `lab up`, would show it being reverted), and a failed Result says why."""
    import shutil

    import yaml
    from nornir import InitNornir

    from fabconf.deploy.job import State
    from fabconf.deploy.tasks import diff_task, verify_task

    mine = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, mine)
    fabric = mine / "fabric.yaml"
    doc = yaml.safe_load(fabric.read_text())
    doc["roce"]["ecn"]["min_threshold_bytes"] = 200000  # the user's edit, after the lab started
    fabric.write_text(yaml.safe_dump(doc, sort_keys=False))
    for key in ("FABCONF_USERNAME", "FABCONF_PASSWORD"):  # the credentials come from the lab, not the environment
        os.environ.pop(key, None)

    nr = InitNornir(
        runner={"plugin": "threaded", "options": {"num_workers": 8}},
        inventory={
            "plugin": "SimpleInventory",
            "options": {f"{kind}_file": str(mine / f"{kind}s.yaml") for kind in ("host", "group")}
            | {"defaults_file": str(mine / "defaults.yaml")},
            "transform_function": "fabconf_lab",
            "transform_function_options": {"state": str(lab.state_dir)},
        },
        logging={"enabled": False},
    )
    assert nr.inventory.hosts["leaf3"].hostname == lab.devices["leaf3"].address
    diffs = nr.filter(name="leaf3").run(task=diff_task)
    assert diffs["leaf3"][0].result.state is State.CHANGES
    assert "200" in diffs["leaf3"][0].diff, diffs["leaf3"][0].diff

    verified = nr.filter(name="spine1").run(task=verify_task, bgp_wait=0)
    result = verified["spine1"][0]
    assert result.failed and result.result.state is State.FAILED
    assert result.result.message == result.result.checks[0].splitlines()[0].rstrip(":") + (
        f" (and {len(result.result.checks) - 1} more failed check(s))" if len(result.result.checks) > 1 else ""
    )
    assert "verification failed" not in result.result.message
