"""The commit-time base check of the CLI platforms (issue #43): the running configuration a change was computed
from, against the one the switch had when the commit ran (read in the commit's own request). NX-OS
(``nxos_replace``) and EOS (``eos_guard``) commit the whole configuration -- a replace, or a session started from
a copy of the running configuration -- so a change made in between would otherwise be overwritten silently."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from napalm.base.exceptions import CommitError

from fabconf.drivers.contract import CommitConflict

CHANGED_LINES = 20  # lines of "what changed meanwhile" a conflict shows
# what NAPALM's get_config drops from `show running-config` (napalm/nxos/nxos.py), and NX-OS's "!" comments
_NOISE = re.compile(r"^\s*(!.*|Startup config saved at:.*)?$")


def config_lines(text: str) -> list[str]:
    """A running configuration as compared for a moved base: no blank or comment lines, no trailing spaces."""
    return [ln.rstrip() for ln in text.splitlines() if not _NOISE.match(ln)]


def base_moved(expected: str, found: str) -> str:
    """What differs between the running configuration a change was computed from and the one the switch had at
    commit, as a short unified diff ("" when they are the same)."""
    old, new = config_lines(expected), config_lines(found)
    if old == new:
        return ""
    lines = list(difflib.unified_diff(old, new, "read before the diff", "at commit", lineterm="", n=0))
    more = len(lines) - CHANGED_LINES
    return "\n".join(lines[:CHANGED_LINES] + ([f"... ({more} more lines)"] if more > 0 else []))


def refuse_moved(hostname: str, expected: str, found: str) -> None:
    """``CommitConflict`` (nothing committed yet) when ``found`` is not the base ``expected``."""
    moved = base_moved(expected, found)
    if moved:
        raise CommitConflict(f"{hostname}: the device changed since its diff was computed (another changer?):\n{moved}")


def undo_if_moved(hostname: str, expected: str, found: str, undo: Callable[[], None], read: Callable[[], str]) -> None:
    """A commit (still pending its timer) ran on ``found``, not on the base ``expected`` its change was computed
    from: ``undo`` it at once, check with ``read`` that the device shows ``found`` again (the other change stays,
    none of ours does) and raise ``CommitConflict``. An undo that does not bring ``found`` back raises
    ``CommitError`` instead: the device's state is then unknown, and the push's recovery takes over."""
    moved = base_moved(expected, found)
    if not moved:
        return
    undo()
    left = base_moved(found, read())
    if left:
        raise CommitError(
            f"{hostname}: the device changed since its diff was computed (another changer?), and undoing the commit "
            f"did not bring back the configuration it found:\n{left}"
        )
    raise CommitConflict(
        f"{hostname}: the device changed since its diff was computed (another changer?); the commit was undone at "
        f"once and the configuration it found is back:\n{moved}"
    )
