"""A long-running lab process's heap and CPython's cyclic garbage collector (issue 42).

A lab process holds thousands of simulators: at full size (5,632 devices) a GPU-host worker holds 4,096 hosts'
state, 2-4 GiB of objects that live as long as the process. CPython's full (generation 2) collection walks every
tracked object, and it runs whenever the objects that survived younger collections since the last full one grow
past a quarter of those the last one kept. Measured in a full-size push (2026-12-05): every worker ran one every
6-10 s, each 0.6-3 s long, a fifth of a core spent walking simulators that never become garbage.

``settle()`` (once a lab process's devices are up) moves everything alive into the permanent generation
(``gc.freeze``): later collections walk only what was made since. ``unsettle()`` hands it back
(``gc.unfreeze``) the moment a simulator is made or dropped after that (a reset, a sync, a stop): a frozen object
is never collected, so an old simulator's reference cycles would otherwise stay in memory for good. Only the lab's
own processes settle (``fabconf lab``'s daemon and its workers), never a process that runs a lab among other work
(the test fixture).
"""

from __future__ import annotations

import gc

_settled = False


def settle() -> None:
    """Collect once, then keep everything alive now out of every later collection."""
    global _settled
    gc.collect()
    gc.freeze()
    _settled = True


def unsettle() -> None:
    """Give what ``settle`` froze back to the collector (a no-op unless settled)."""
    global _settled
    if _settled:
        gc.unfreeze()
        _settled = False


def settled() -> bool:
    return _settled
