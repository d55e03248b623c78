"""fabconf's NX-OS driver commits with the switch's own revert timer (``configure replace ... commit-timeout``):
a commit that is never confirmed -- fabconf killed between commit and confirm -- is undone by the switch, as
EOS's commit timer and Cumulus's confirm do; a confirmed one stays; a rollback with the timer pending restores."""

from __future__ import annotations

import itertools
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from trust import known_hosts

from fabconf.compile.pipeline import Compiled
from fabconf.compile.render import render
from fabconf.drivers.contract import Driver, RevertTimer
from fabconf.drivers.factory import driver_for
from fabconf.drivers.trust import Trust
from fabconf_lab.faults import Faults
from fabconf_lab.nxos.sim import NxosSim
from fabconf_lab.tls import LabCA

USER, PASSWORD = "admin", "nx-Pw-3"
_ADDRESSES = (f"127.31.{os.getpid() % 200 + 20}.{i}" for i in itertools.count(1))


@pytest.fixture
def leaf4(example: Compiled, tmp_path: Path) -> Iterator[tuple[NxosSim, str]]:
    ports = sorted(example.model.devices["leaf4"].ports or [])
    sim = NxosSim(
        "leaf4",
        next(_ADDRESSES),
        ports=ports,
        username=USER,
        password=PASSWORD,
        ca=LabCA(tmp_path / "tls"),
        state_dir=tmp_path / "leaf4",
        faults=Faults(),
        os_version=example.data["leaf4"]["os_version"],  # the release the example names (DLB: 10.5(1)F and later)
    )
    sim.start()
    sim.device.config_replace.min_timeout = 1  # the lab knob: the switch itself takes 30-3600 s
    try:
        yield sim, render(example.data["leaf4"])
    finally:
        sim.stop()


def _driver(sim: NxosSim):
    trusted = known_hosts(Path(tempfile.mkdtemp()) / "known_hosts", sim)
    trust = Trust(ca_file=str(sim.ca.ca_cert_path), known_hosts=trusted)  # an inventory's extras never set these
    options = {"napalm": {"port": sim.http_port, "extras": {"ssh_port": sim.ssh_port}}}
    driver = driver_for("nxos", sim.address, USER, PASSWORD, connection_options=options, timeout=20, trust=trust)
    driver.open()
    return driver


def test_an_unconfirmed_commit_is_reverted_by_the_switch(leaf4: tuple[NxosSim, str]) -> None:
    sim, rendered = leaf4
    before = sim.running_config()
    driver = _driver(sim)
    assert isinstance(driver, RevertTimer) and isinstance(driver, Driver)
    driver.load_merge_candidate(config=rendered)
    assert driver.compare_config()
    driver.commit_config(revert_in=1)  # fabconf "dies" here: no confirm ever comes
    assert "policy-map type queuing FABCONF_QUEUING" in sim.running_config()
    assert driver.has_pending_commit()
    time.sleep(1.6)
    assert sim.running_config() == before
    driver.close()


def test_a_confirmed_commit_stays_and_lands_whole(leaf4: tuple[NxosSim, str]) -> None:
    sim, rendered = leaf4
    driver = _driver(sim)
    driver.load_merge_candidate(config=rendered)
    driver.commit_config(revert_in=1)
    driver.confirm_commit()
    assert not driver.has_pending_commit()
    time.sleep(1.4)
    driver.load_merge_candidate(config=rendered)
    assert driver.compare_config() == ""  # at intent, exactly what the merge would have made
    driver.discard_config()
    driver.close()


def _pending(sim: NxosSim, rendered: str, revert_in: int, run: str | None = None):
    """A driver (of run ``run``) whose merge of ``rendered`` is committed and waits on the switch's timer."""
    driver = _driver(sim)
    if run is not None:
        driver.own_run(run)
    driver.load_merge_candidate(config=rendered)
    driver.commit_config(revert_in=revert_in)
    return driver


def test_rollback_with_the_timer_pending_restores_now(leaf4: tuple[NxosSim, str]) -> None:
    sim, rendered = leaf4
    before = sim.running_config()
    driver = _pending(sim, rendered, 60)
    driver.rollback()
    assert not driver.has_pending_commit()
    assert sim.running_config() == before
    driver.close()


def _fabconf_files(sim: NxosSim) -> list[str]:
    return sorted(name for name in sim.bootflash() if name.startswith("fabconf_"))


def test_each_run_replaces_from_files_of_its_own_and_leaves_none(leaf4: tuple[NxosSim, str]) -> None:
    """Two runs at once must not share NAPALM's fixed ``candidate_config.txt`` / ``rollback_config.txt``: one's
    upload overwrote the other's (its MD5 check failed) and one rolled back to the other's checkpoint. Each run
    names its own, and deletes them once its replace is confirmed or rolled back."""
    sim, rendered = leaf4
    before = sim.running_config()
    second = _driver(sim)
    second.own_run("20261205T2100Z-b2")
    first = _pending(sim, rendered, 60, run="20261205T2100Z-a1")
    assert _fabconf_files(sim) == ["fabconf_20261205T2100Za1_candidate.txt", "fabconf_20261205T2100Za1_checkpoint.txt"]
    assert first.leftovers() == {
        "candidate": "fabconf_20261205T2100Za1_candidate.txt",
        "checkpoint": "fabconf_20261205T2100Za1_checkpoint.txt",
    }
    assert second.leftovers()["candidate"] == "fabconf_20261205T2100Zb2_candidate.txt"
    first.rollback()
    assert sim.running_config() == before and _fabconf_files(sim) == []
    second.load_merge_candidate(config=rendered)
    second.commit_config(revert_in=60)
    second.confirm_commit()
    assert "policy-map type queuing FABCONF_QUEUING" in sim.running_config()
    assert _fabconf_files(sim) == []
    assert "rollback_config.txt" not in sim.bootflash()  # NAPALM's shared names are never used
    first.close()
    second.close()


def test_the_next_run_undoes_a_killed_runs_replace_and_deletes_its_files(leaf4: tuple[NxosSim, str]) -> None:
    sim, rendered = leaf4
    before = sim.running_config()
    killed = _pending(sim, rendered, 600, run="killed1")
    left = {**killed.leftovers(), "run": "killed1"}  # what its committing record names
    killed.close()  # the run dies here: no confirm, no rollback
    earlier = {"candidate": "fabconf_killed0_candidate.txt", "checkpoint": "fabconf_killed0_checkpoint.txt"}
    for name in earlier.values():  # an earlier killed run's files, its replace long ended
        sim.device.write_file(f"bootflash:{name}", b"!\n")
    sim.device.write_file("bootflash:notes.txt", b"someone else's\n")
    nxt = _driver(sim)
    nxt.own_run("next2")
    done = nxt.clean_leftovers([{**earlier, "run": "killed0"}, left])
    assert done == ["undid the configure replace killed run killed1 left pending (rolled back to its checkpoint)"]
    assert sim.running_config() == before and not nxt.has_pending_commit()
    assert _fabconf_files(sim) == [] and "notes.txt" in sim.bootflash()
    assert nxt.leftovers() == {"candidate": "fabconf_next2_candidate.txt", "checkpoint": "fabconf_next2_checkpoint.txt"}
    nxt.close()
