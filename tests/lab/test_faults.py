"""Step faults that wait (``hold``, ``hang``): ``clear`` lets a request that is already waiting go on."""

from __future__ import annotations

import threading

import pytest

from fabconf_lab.faults import DropConnection, Faults


def _wait_in_thread(faults: Faults, moment: str) -> tuple[threading.Thread, list[str]]:
    seen: list[str] = []

    def request() -> None:
        fault = faults.step(moment)
        assert fault is not None
        try:
            fault.before()
            seen.append("carried out")
        except DropConnection:
            seen.append("dropped")

    thread = threading.Thread(target=request)
    thread.start()
    assert faults.wait_fired(1, timeout=5)
    return thread, seen


@pytest.mark.parametrize(("kind", "end"), [("hold", "carried out"), ("hang", "dropped")])
def test_a_fired_waiting_fault_is_released_by_clear(kind: str, end: str) -> None:
    faults = Faults()
    faults.set(kind, at="commit")
    thread, seen = _wait_in_thread(faults, "commit")
    thread.join(timeout=0.3)
    assert thread.is_alive() and seen == [], "it waits until cleared"
    assert faults.active() == [], "fired once: no longer armed"
    faults.clear()
    thread.join(timeout=5)
    assert seen == [end]
    assert faults.step("commit") is None, "nothing left armed"


def test_hold_takes_no_argument() -> None:
    with pytest.raises(ValueError, match="takes no argument"):
        Faults().set("hold", "5", at="commit")


def test_a_change_marks_its_device_once_until_the_publisher_looks() -> None:
    """What a lab worker's publisher reads (``fabconf_lab.shards``): the devices marked since its last look, each
    once however often marked, and ``ACTIVITY`` set to wake it; a request marks its device at its end, not its
    start (its change comes with its handling)."""
    from fabconf_lab import faults as faults_module

    def ours(taken: list[Faults]) -> list[Faults]:  # a stray timer of another test's simulator may mark its own
        return [f for f in taken if f is one or f is two]

    faults_module.track_changes()  # as a lab worker does
    one, two = Faults(), Faults()
    one.before_request()
    assert ours(faults_module.take_changed()) == []
    faults_module.ACTIVITY.clear()
    one.after_request()
    one.changed()
    two.changed()
    assert faults_module.ACTIVITY.is_set()
    taken = ours(faults_module.take_changed())
    assert len(taken) == 2 and taken[0] is not taken[1]
    assert ours(faults_module.take_changed()) == []
