"""The driver contract's conformance suite: EVERY driver fabconf builds — our ``cumulus`` and ``linux``, and
NAPALM's unmodified ``eos`` and ``nxos`` behind the hier_config staging wrapper — goes through the same
lifecycle against the lab, with the same expectations, as NAPALM's own shared getter suite does for its
drivers. One lab for the module; each test leaves its device as it found it.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from network import free_network
from pristine import EXAMPLE

from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.render import render
from fabconf.deploy.job import Job
from fabconf.deploy.options import DeviceOptions
from fabconf.deploy.steps import normalize
from fabconf.deploy.tasks import build_driver
from fabconf.drivers import contract
from fabconf.drivers.contract import Driver, RevertTimer
from fabconf.platforms import Revert
from fabconf_lab.orchestrator import Lab

ROOT = Path(__file__).resolve().parents[3]
ONE_PER_PLATFORM = {"cumulus": "leaf1", "eos": "leaf3", "nxos": "leaf4", "linux": "gpu01", "sonic": "p1-leaf1"}
# platforms the example pod has none of: a device of another example, in a lab of its own
OTHER_EXAMPLE = {"sonic": ROOT / "examples" / "sonic-mix"}
PASSWORD = "Contract-Pw-93k"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    where = tmp_path_factory.mktemp("contract")
    inventory = EXAMPLE
    the_lab = Lab(compile_inventory(inventory), inventory, where / "lab", network=free_network(), password=PASSWORD)
    the_lab.start()
    try:
        yield the_lab
    finally:
        the_lab.stop()


@pytest.fixture(scope="module")
def other_labs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Lab]]:
    labs: dict[str, Lab] = {}
    try:
        for platform, inventory in OTHER_EXAMPLE.items():
            where = tmp_path_factory.mktemp(f"contract-{platform}")
            compiled = compile_inventory(inventory)
            labs[platform] = Lab(compiled, inventory, where / "lab", network=free_network(), password=PASSWORD)
            labs[platform].start()
        yield labs
    finally:
        for other in labs.values():
            other.stop()


@pytest.fixture(scope="module")
def jobs(lab: Lab, other_labs: dict[str, Lab]) -> dict[str, Job]:
    out = {}
    for platform, n in ONE_PER_PLATFORM.items():
        compiled = compile_inventory((other_labs.get(platform) or lab).state_dir / "inventory")
        out[platform] = Job(compiled.model.devices[n], compiled.data[n], render(compiled.data[n]))
    return out


@pytest.fixture
def driver(request: pytest.FixtureRequest, lab: Lab, jobs: dict[str, Job]) -> Iterator[Driver]:
    from fabconf.deploy.credentials import Credentials

    job = jobs[request.param]
    drv = build_driver(job, DeviceOptions(timeout=30), Credentials(lab.username, PASSWORD))
    drv.open()
    try:
        yield drv
    finally:
        drv.close()


PLATFORMS = pytest.mark.parametrize("driver", list(ONE_PER_PLATFORM), indirect=True)
CONTRACT_METHODS = [
    name for name, value in vars(contract.Driver).items() if callable(value) and not name.startswith("_")
]


def _running(driver: Driver) -> str:
    return driver.get_config(retrieve="running")["running"]


def _job(jobs: dict[str, Job], driver: Driver) -> Job:
    return next(j for j in jobs.values() if j.device.hostname == driver.hostname)


@PLATFORMS
def test_the_driver_satisfies_the_contract_with_compatible_signatures(driver: Driver) -> None:
    assert isinstance(driver, Driver)
    for name in CONTRACT_METHODS:
        want = inspect.signature(getattr(contract.Driver, name))
        got = inspect.signature(getattr(driver, name))
        wanted = [p for p in want.parameters if p != "self"]
        assert list(got.parameters)[: len(wanted)] == wanted, (name, got, want)


@PLATFORMS
def test_declared_capabilities_match_the_platform_table(driver: Driver, jobs: dict[str, Job]) -> None:
    spec = _job(jobs, driver).spec
    assert isinstance(driver, RevertTimer) == (spec.revert is Revert.TIMER)
    assert isinstance(driver, contract.Preflight) == spec.is_host
    assert isinstance(driver, contract.ConfigDiff)  # every platform shows one kind of diff: unified
    assert isinstance(driver, contract.CommandPreview) == spec.is_host  # hosts: compare is per setting
    assert isinstance(driver, contract.PendingFirmware) == spec.is_host


@PLATFORMS
def test_getters_return_napalm_shapes(driver: Driver, jobs: dict[str, Job]) -> None:
    facts = driver.get_facts()
    for key in ("hostname", "vendor", "model", "os_version"):
        assert isinstance(facts.get(key), str), (key, facts)
    interfaces = driver.get_interfaces()
    job = _job(jobs, driver)
    names = [n["netdev"] for n in job.data.get("nics", [])] or [i["name"] for i in job.data["interfaces"]]
    for name in names:
        assert isinstance(interfaces[name]["mtu"], int), (name, interfaces[name])
    lldp = driver.get_lldp_neighbors()
    assert isinstance(lldp, dict)
    for port, neighbours in lldp.items():
        assert isinstance(port, str) and all({"hostname", "port"} <= set(n) for n in neighbours)
    bgp = driver.get_bgp_neighbors()  # {} where no BGP runs yet (the brownfield EOS/NX-OS lab), else "global"
    assert isinstance(bgp, dict) and all(isinstance(v["peers"], dict) for v in bgp.values())
    config = driver.get_config()
    assert isinstance(config["running"], str) and config["running"]


@PLATFORMS
def test_load_compare_discard_changes_nothing(driver: Driver, jobs: dict[str, Job]) -> None:
    before = _running(driver)
    driver.load_merge_candidate(config=_job(jobs, driver).rendered)
    assert driver.compare_config().strip()  # the brownfield lab is not at intent
    driver.discard_config()
    assert _running(driver) == before


@PLATFORMS
def test_commit_confirm_compare_rollback(driver: Driver, jobs: dict[str, Job]) -> None:
    job = _job(jobs, driver)
    before = _running(driver)
    driver.load_merge_candidate(config=job.rendered)
    assert driver.compare_config().strip()
    if isinstance(driver, RevertTimer):
        driver.commit_config(revert_in=300)
        assert driver.has_pending_commit()
        driver.confirm_commit()
        assert not driver.has_pending_commit()
    else:
        driver.commit_config()
    driver.load_merge_candidate(config=job.rendered)
    assert not driver.compare_config().strip(), "a second compare after the commit is empty"
    driver.discard_config()
    driver.rollback()
    restored = _running(driver)
    if job.platform == "eos":
        # NAPALM's EOS rollback restores the STARTUP configuration saved before the commit (flash:rollback-0),
        # which the lab started from: the owned sections are as before (the documented platform behaviour).
        driver.load_merge_candidate(config=job.rendered)
        assert driver.compare_config().strip()
        driver.discard_config()
    elif job.platform == "linux":
        # every setting back, except the OFED traffic_class that sysfs cannot unset once set (documented in
        # the linux driver): it stays at the committed value, shown next to the restored RDMA-CM ToS
        was, now = yaml.safe_load(before), yaml.safe_load(restored)
        assert now["roce_tos"] == {"cma_roce_tos": was["roce_tos"], "traffic_class": 106}
        assert {k: v for k, v in now.items() if k != "roce_tos"} == {k: v for k, v in was.items() if k != "roce_tos"}
    else:
        assert normalize(restored) == normalize(before)  # NX-OS prints a timestamp line ("!Time: ...")


def test_every_platform_is_covered() -> None:
    from fabconf.platforms import NAMES

    assert set(ONE_PER_PLATFORM) == set(NAMES)


def test_a_remediation_lowers_queue_shares_before_it_raises_any() -> None:
    """60/40 -> 50/50 and 50/50 -> 70/30: whichever queue loses share goes first, on EOS and NX-OS alike; blocks
    that change no share keep their place."""
    from fabconf.drivers.cli.remediation import lowered_first

    eos = (
        "qos profile FABCONF_ROCE\n  uc-tx-queue 1\n    no bandwidth percent 40\n    bandwidth percent 50\n"
        "  uc-tx-queue 3\n    no bandwidth percent 60\n    bandwidth percent 50\n  uc-tx-queue 6\n    priority strict\n"
    )
    assert lowered_first(eos) == (
        "qos profile FABCONF_ROCE\n  uc-tx-queue 3\n    no bandwidth percent 60\n    bandwidth percent 50\n"
        "  uc-tx-queue 1\n    no bandwidth percent 40\n    bandwidth percent 50\n  uc-tx-queue 6\n    priority strict\n"
    )
    nxos = (
        "policy-map type queuing Q\n  class type queuing c-out-8q-q3\n    no bandwidth remaining percent 50\n"
        "    bandwidth remaining percent 70\n  class type queuing c-out-8q-q-default\n"
        "    no bandwidth remaining percent 50\n    bandwidth remaining percent 30\nhostname x\n"
    )
    lines = lowered_first(nxos).splitlines()
    assert lines.index("  class type queuing c-out-8q-q-default") < lines.index("  class type queuing c-out-8q-q3")
    assert lines[-1] == "hostname x"
    assert lowered_first("") == ""


@PLATFORMS
def test_identity_is_what_get_facts_reports(driver: Driver, lab: Lab, jobs: dict[str, Job]) -> None:
    """The release-line and hardware check's facts (``contract.Identity``, issue 42) are ``get_facts``'s, read with
    fewer requests: on NX-OS one NX-API request where NAPALM's ``get_facts`` makes four."""
    if not isinstance(driver, contract.Identity):
        pytest.skip("this driver's get_facts is its identity")
    facts = driver.get_facts()
    faults = lab.devices[_job(jobs, driver).name].sim.faults
    before = faults.requests
    assert driver.identity() == {"model": facts["model"], "os_version": facts["os_version"]}
    assert faults.requests - before == 1, faults.requests - before
