"""A lab process raises its own limit of open files to what its devices need, and refuses, saying what to do, when
the hard limit cannot hold them (issue 42: a 5,632-device lab runs 4,096 GPU hosts in one worker process)."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest
from labcli import fabconf
from network import free_network
from pristine import EXAMPLE

from fabconf_lab import daemon


def test_the_soft_limit_is_raised_to_what_the_devices_need_up_to_the_hard_one() -> None:
    need = daemon.OPEN_FILES_PER_DEVICE * 4096 + daemon.OPEN_FILES_SPARE
    assert daemon.open_files_limit(4096, 1024, 20000) == need
    assert daemon.open_files_limit(4096, 1024, resource.RLIM_INFINITY) == need
    assert daemon.open_files_limit(4096, 1024, need - 100) == need - 100  # the devices fit; fewer spare
    assert daemon.open_files_limit(4096, 30000, 30000) == 30000  # enough already: unchanged
    assert daemon.open_files_limit(14, 1024, 1024) == 1024


def test_a_hard_limit_too_low_for_the_devices_is_refused_with_what_to_do() -> None:
    with pytest.raises(ValueError, match=r"4096 lab devices in one process need about 13312 open files.*ulimit -Hn"):
        daemon.open_files_limit(4096, 1024, 4096)


def _low_soft() -> None:
    """In the child before exec: a soft limit of 64 open files (the hard one as it is)."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))


def test_lab_up_under_a_low_soft_limit_raises_its_own(tmp_path: Path) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    need = daemon.OPEN_FILES_PER_DEVICE * 14 + daemon.OPEN_FILES_SPARE
    if hard != resource.RLIM_INFINITY and hard < need:
        pytest.skip(f"the hard limit of open files here ({hard}) is below what the example's lab asks for ({need})")
    state = tmp_path / "lab"

    network = free_network()
    up = fabconf("lab", "up", "-i", str(EXAMPLE), "--state", str(state), "--network", network, preexec_fn=_low_soft)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        pid = daemon.recorded_daemon(state)
        assert pid is not None
        limits = Path(f"/proc/{pid}/limits").read_text()
        soft = next(line.split()[3] for line in limits.splitlines() if line.startswith("Max open files"))
        assert soft == "unlimited" or int(soft) >= need
    finally:
        fabconf("lab", "down", "--state", str(state))


def test_lab_up_waits_longer_for_a_larger_lab(tmp_path: Path) -> None:
    (tmp_path / "hosts.yaml").write_text(
        "# a comment\n"
        + "".join(f"gpu{i:05d}:\n  hostname: 100.64.0.{i % 250}\n  groups: [gpu_hosts]\n" for i in range(5632))
    )
    assert daemon.ready_timeout(tmp_path) == pytest.approx(daemon.READY_TIMEOUT + daemon.READY_PER_DEVICE * 5632)
    assert daemon.ready_timeout(EXAMPLE) == pytest.approx(daemon.READY_TIMEOUT + daemon.READY_PER_DEVICE * 14)
    assert daemon.ready_timeout(tmp_path / "none") == daemon.READY_TIMEOUT
