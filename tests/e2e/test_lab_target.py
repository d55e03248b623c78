"""``--lab`` takes the intent from the inventory you edit (-i); the lab supplies only where devices answer
and their credentials. The lab runs as the background daemon, as a user starts it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from labkit import ROOT, free_network
from pristine import EXAMPLE


@pytest.fixture
def lab_cli(tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    inventory = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, inventory)
    state = tmp_path / "state"
    where = ["--state", str(state), "--network", free_network()]
    try:
        yield inventory, where
    finally:
        subprocess.run([sys.executable, "-m", "fabconf", "lab", "down", "--state", str(state)], capture_output=True)


def _fab(*args: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "fabconf", *args], capture_output=True, text=True, cwd=ROOT)
    return proc.returncode, proc.stdout, proc.stderr


def test_lab_diff_follows_the_edited_inventory(lab_cli: tuple[Path, list[str]]) -> None:
    inventory, where = lab_cli
    code, _, err = _fab("push", "-i", str(inventory), "--lab", *where, "--limit", "leaf3", "--yes", "--bgp-wait", "0")
    assert code in (0, 1), err  # BGP to the brownfield spines may not come up; the config lands either way
    code, out, err = _fab("diff", "-i", str(inventory), "--lab", *where, "--limit", "leaf3", "--format", "json")
    before = json.loads(out)["devices"][0]
    # edit the intent in place: the ECN thresholds change on the device's next diff
    fabric = inventory / "fabric.yaml"
    doc = yaml.safe_load(fabric.read_text())
    doc["roce"]["ecn"]["min_threshold_bytes"] = 200000
    fabric.write_text(yaml.safe_dump(doc, sort_keys=False))
    code, out, err = _fab("diff", "-i", str(inventory), "--lab", *where, "--limit", "leaf3", "--format", "json")
    assert code == 2, err
    after = json.loads(out)["devices"][0]
    assert after["state"] == "changes" and after["diff"] != before["diff"]
    assert "200" in after["diff"]


def test_a_missing_inventory_is_an_error_even_with_lab(lab_cli: tuple[Path, list[str]]) -> None:
    inventory, where = lab_cli
    code, _, err = _fab("diff", "-i", str(inventory.parent / "inventry"), "--lab", *where)
    assert code == 1
    assert "inventry: no such inventory directory" in err
    assert "Traceback" not in err


def test_a_device_the_running_lab_lacks_is_named_with_what_to_do(lab_cli: tuple[Path, list[str]]) -> None:
    inventory, where = lab_cli
    code, _, err = _fab("diff", "-i", str(inventory), "--lab", *where, "--limit", "leaf3")
    assert code == 2, err
    hosts = yaml.safe_load((inventory / "hosts.yaml").read_text())
    hosts["leaf9"] = {**hosts["leaf3"], "hostname": "192.0.2.19", "data": {**hosts["leaf3"]["data"], "id": 9}}
    (inventory / "hosts.yaml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    cabling = yaml.safe_load((inventory / "cabling.yaml").read_text())
    cabling["links"].append(["leaf9:Ethernet63/1", "spine1:Ethernet9/1"])
    (inventory / "cabling.yaml").write_text(yaml.safe_dump(cabling, sort_keys=False))
    code, _, err = _fab("diff", "-i", str(inventory), "--lab", *where, "--limit", "leaf9")
    assert code == 1
    assert "leaf9: in" in err and "not in the running lab" in err and "fabconf lab sync -i" in err


def _fab_into_closed_pipe(*args: str) -> tuple[int, str]:
    """Run fabconf with its standard output a pipe whose reader has already gone (`fabconf … | head -0`)."""
    read, write = os.pipe()
    os.close(read)
    proc = subprocess.run(
        [sys.executable, "-m", "fabconf", *args], stdout=write, stderr=subprocess.PIPE, text=True, cwd=ROOT, check=False
    )
    os.close(write)
    return proc.returncode, proc.stderr


def test_a_closed_pipe_ends_every_lab_command_quietly_with_141(lab_cli: tuple[Path, list[str]]) -> None:
    """`fabconf diff --lab | head` exited 1 ("a device failed") and `fabconf lab status | head` printed
    `[Errno 32] Broken pipe`: a BrokenPipeError is a ConnectionError, which the lab's control channel and the
    device steps caught as their own failure."""
    inventory, where = lab_cli
    code, _, err = _fab("lab", "up", "-i", str(inventory), *where)
    assert code == 0, err
    state = where[where.index("--state") + 1]
    code, err = _fab_into_closed_pipe("lab", "status", "--state", state)
    assert (code, err) == (141, "")
    code, err = _fab_into_closed_pipe("diff", "-i", str(inventory), "--lab", *where, "--limit", "leaf1,spine1")
    assert code == 141, err
    assert "Broken pipe" not in err and "Traceback" not in err
