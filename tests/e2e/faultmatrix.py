"""The fault matrix: one table of cells (platform x moment x fault) and what each ends in, shared by the test
suite (tests/e2e/test_fault_matrix.py) and the document (docs/fault-matrix.md, written by
``python tests/e2e/faultmatrix.py``; a test checks that the document matches this table).

A cell's entry is the state fabconf reports for the device (``applied``, ``rolled back``, ``failed``,
``unreachable``, ``untouched``), and from it the end state read back from the lab: ``applied`` means the
device is at intent and verifies; every other state means the device is exactly as it was before the push.
``killed`` cells run fabconf as a process that is SIGKILLed at the moment; their entry is the end state
after the device's own revert timer (switches) or the next push (GPU hosts): ``before`` or ``intent``.
``n/a`` cells name why the fault cannot happen at that moment on that platform.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

DEVICES = {"cumulus": "leaf1", "eos": "leaf3", "nxos": "leaf4", "linux": "gpu01", "sonic": "p1-leaf1"}
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INVENTORIES = {"sonic": EXAMPLES / "sonic-mix"}  # platforms the example pod has no device of: their example
MOMENTS = ("connect", "read", "stage", "commit", "verify", "confirm", "rollback")
FAULTS = ("drop", "reject", "delay", "hang", "auth-refuse", "garbled", "killed")
DOC = Path(__file__).resolve().parents[2] / "docs" / "fault-matrix.md"

# why a cell cannot happen (the key is what a table entry says after "n/a:")
NA = {
    "login": "an SSH login is refused only by failing authentication: that is auth-refuse",
    "handshake": "an SSH handshake has no reply to garble: a broken handshake is a dropped connection",
    "stage": "a GPU host stages nothing on the host: fabconf computes the candidate from the state it read",
    "confirm": "a GPU host has no commit timer, so nothing to confirm: every commit is final",
}

# fabconf's reported state per cell (ok applied, rb rolled back, fail failed, unr unreachable, unt untouched);
# killed cells: the end state (before, intent); na:KEY cannot happen (NA[KEY] says why); "X/Y": either
STATES = {"ok": "applied", "rb": "rolled back", "fail": "failed", "unr": "unreachable", "unt": "untouched"}
TABLE = """
platform moment   drop       reject     delay      hang       auth-refuse garbled      killed
eos      connect  ok         unr        unr        unr        unr         unr          before
eos      read     ok         fail       fail       fail       fail        fail         before
eos      stage    ok         fail       fail       fail       fail        fail         before
eos      commit   rb         rb         rb         rb         rb          rb           before
eos      verify   rb         rb         rb         rb         rb          rb           before
eos      confirm  rb         rb         rb         rb         rb          rb           before
eos      rollback rb         rb         rb         rb         rb          rb           before
nxos     connect  ok         unr        unr        unr        unr         unr          before
nxos     read     ok         fail       fail       fail       fail        fail         before
nxos     stage    rb         rb         ok         rb         rb          rb           before
nxos     commit   rb         rb         rb         rb         rb          rb           before
nxos     verify   rb         rb         rb         rb         rb          rb           before
nxos     confirm  rb         rb         rb         rb         rb          rb           before
nxos     rollback rb         rb         rb         rb         rb          rb           intent
cumulus  connect  ok         unr        unr        unr        unr         unr          before
cumulus  read     ok         fail       fail       fail       fail        fail         before
cumulus  stage    ok         fail       fail       fail       fail        fail         before
cumulus  commit   rb         rb         ok         rb         rb          ok           before
cumulus  verify   ok         rb         rb         rb         rb          rb           before
cumulus  confirm  rb         rb         rb         rb         rb          ok           before
cumulus  rollback rb         rb         rb         rb         rb          rb           before
linux    connect  ok         na:login   unr        unr        unr         na:handshake before
linux    read     ok         fail       fail       fail       fail        fail         before
linux    stage    na:stage   na:stage   na:stage   na:stage   na:stage    na:stage     na:stage
linux    commit   rb         rb         rb         rb         rb          ok           intent
linux    verify   rb         rb         rb         rb         rb          rb           intent
linux    confirm  na:confirm na:confirm na:confirm na:confirm na:confirm  na:confirm   na:confirm
linux    rollback rb         rb         rb         rb         rb          rb           intent
sonic    connect  unr        unr        unr        unr        unr         unr          before
sonic    read     fail       fail       fail       fail       fail        fail         before
sonic    stage    rb         rb         rb         rb         rb          ok           before
sonic    commit   rb         rb         rb         rb         rb          ok           before
sonic    verify   rb         rb         rb         rb         rb          rb           intent
sonic    confirm  ok         ok         ok         ok         ok          ok           intent
sonic    rollback rb         rb         rb         rb         rb          rb           intent
"""


@dataclass(frozen=True)
class Cell:
    platform: str
    moment: str
    fault: str
    entry: str  # the table's entry: a reported state ("rolled-back"), "before"/"intent" (killed), "n/a:KEY"

    @property
    def id(self) -> str:
        return f"{self.platform}-{self.moment}-{self.fault}"

    @property
    def device(self) -> str:
        return DEVICES[self.platform]

    @property
    def na(self) -> str:
        """Why the cell cannot happen ("" when it can)."""
        return NA[self.entry.split(":", 1)[1]] if self.entry.startswith("na:") else ""

    @property
    def states(self) -> set[str]:
        """The states fabconf may report (killed cells: the end states)."""
        return {STATES.get(s, s) for s in self.entry.split("/")}


def cells() -> list[Cell]:
    rows = [line.split() for line in TABLE.strip().splitlines()]
    header, body = rows[0], rows[1:]
    assert header[2:] == list(FAULTS), header
    out = []
    for row in body:
        assert len(row) == 2 + len(FAULTS), row
        out += [Cell(row[0], row[1], fault, entry) for fault, entry in zip(FAULTS, row[2:], strict=True)]
    return out


CELLS = cells()


def document() -> str:
    """docs/fault-matrix.md: one table per platform, each cell its reported state, end state and test id."""
    applicable = [c for c in CELLS if not c.na]
    lines = [
        "# The fault matrix",
        "",
        "<!-- written by `python tests/e2e/faultmatrix.py` from the table the tests use; do not edit by hand -->",
        "",
        "Every cell is a test against the lab (`tests/e2e/test_fault_matrix.py`, the cell's id in brackets):",
        "fabconf's real push path (rollout, Nornir task, retries, drivers over real sockets) pushes one device of the",
        "example pod while the lab injects the fault at that moment of the push (`fabconf lab fault DEVICE KIND --at",
        "MOMENT`, see `fabconf_lab/faults.py`). The test then reads the device back from the lab:",
        "",
        "- reported **applied**: the device is at intent and verifies;",
        "- reported **rolled back**, **failed** or **unreachable**: the device is exactly as it was before the push",
        "  (GPU hosts: but for a RoCE traffic class that was unset, which sysfs cannot unset again; the outcome",
        "  names it). A failed device's message says so (`nothing was committed`, `back to its previous",
        "  configuration`).",
        "",
        "Nothing is ever half-applied or reported green when it is not.",
        "",
        "**drop** closes the connection without a reply (the request is not carried out); **reject** is the",
        "platform's own error for the request (a host tool exits non-zero with its message); **delay** is a reply",
        "later than fabconf's `--timeout` (3 s; the request is carried out); **hang** is a request never answered",
        "nor carried out; **auth-refuse** is HTTP 401 for the request or a failed SSH login; **garbled** is a reply",
        "that is not valid JSON (HTTP) or corrupted command output (SSH), the request carried out. Faults at",
        "**rollback** are armed together with `reject --at verify`, which makes the push roll back. On a GPU host",
        "a commit or rollback fault hits its 3rd change (two are already made).",
        "",
        "**killed**: fabconf runs as a process that is SIGKILLed while the lab holds the request of that moment",
        "(`--confirm-timeout 3`). The cell is the device's end state (**before** or **intent**, at intent meaning",
        "verified) once the switch's own revert timer ran out, or, on a GPU host, after the next push, which first",
        "restores a commit or rollback the killed run left half-done. SONiC has no commit timer either: its end state",
        "is read before the next push, which then rolls back to the checkpoint the killed run left and applies.",
        "",
        "**The kill matrix** (`test_killed_push_never_blocks_the_next`, one test per platform and moment from",
        "connect to confirm): the push is SIGKILLed the same way but with a revert timer far longer than the test, and",
        "the next push runs at once. It must exit 0 (applied or unchanged), clean what the killed run left on the",
        "device and record it (`cleaned`), leave nothing open in `fabconf audit`, and the device must verify with",
        "nothing pending",
        "([Pushing a pod: a killed push](jobs/push.md#a-killed-push-what-it-leaves-and-how-the-next-one-cleans-it)).",
    ]
    for platform, device in DEVICES.items():
        where = f"examples/{INVENTORIES[platform].name}" if platform in INVENTORIES else "the example pod"
        lines += ["", f"## {platform} ({device} of {where})", ""]
        lines += ["| moment | " + " | ".join(FAULTS) + " |", "|---" * (1 + len(FAULTS)) + "|"]
        for moment in MOMENTS:
            shown = []
            for c in (c for c in CELLS if c.platform == platform and c.moment == moment):
                shown.append("n/a" if c.na else f"{' or '.join(sorted(c.states))} [{c.id}]")
            lines.append(f"| {moment} | " + " | ".join(shown) + " |")
    lines += ["", "## Cells that cannot happen", ""]
    for key, why in NA.items():
        where = ", ".join(c.id for c in CELLS if c.entry == f"na:{key}")
        lines.append(f"- {why}: {where}.")
    lines += ["", f"{len(CELLS)} cells: {len(applicable)} tested, {len(CELLS) - len(applicable)} n/a.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(document())
    print(f"wrote {DOC}", file=sys.stderr)
