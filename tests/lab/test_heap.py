"""A lab process keeps its simulators out of CPython's full collections (``fabconf_lab.heap``), and gives them
back the moment one is replaced or the lab stops, so that nothing it drops stays in memory."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from network import free_network
from pristine import EXAMPLE

from fabconf.compile.pipeline import compile_inventory
from fabconf_lab import heap
from fabconf_lab.orchestrator import Lab


def test_a_settled_lab_frees_a_reset_simulator_and_unsettles_when_it_stops(tmp_path: Path) -> None:
    lab = Lab(compile_inventory(EXAMPLE), EXAMPLE, tmp_path / "lab", network=free_network(), password="pw")
    lab.start()
    try:
        heap.settle()
        assert heap.settled() and gc.get_freeze_count() > 0  # the simulators are out of the collector's walks
        old = weakref.ref(lab.devices["gpu01"].sim.state)
        lab.reset("gpu01")
        assert not heap.settled() and gc.get_freeze_count() == 0
        gc.collect()
        assert old() is None, "the reset host's old state is still in memory"
        heap.settle()
        lab.stop()
        assert not heap.settled() and gc.get_freeze_count() == 0
    finally:
        lab.stop()
        heap.unsettle()  # this test process is not a lab's own
