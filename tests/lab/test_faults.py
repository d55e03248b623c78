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
