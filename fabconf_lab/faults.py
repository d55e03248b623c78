"""Per-device fault injection shared by every lab simulator.

Standing faults (``fabconf lab fault DEVICE KIND [ARG]``; each REPLACES every active fault):

- ``drop-on-commit``: the connection is closed without a reply when a commit/apply arrives; the
  commit itself is NOT carried out (a commit timer or checkpoint already armed keeps running). On a GPU
  host: when a command that changes the host's state arrives (``mlnx_qos``, ``ip``, ``sysctl``, writes by
  ``tee``, ``mlxconfig set``...), the SSH connection is closed and the command does not run.
- ``reject PATTERN``: any configuration line matching the regular expression is refused with the
  platform's own error for an invalid command (on a GPU host: a state-changing command matching it exits 1
  with the tool's error message and changes nothing).
- ``delay SECONDS``: every request is answered SECONDS late.
- ``auth-refuse``: authentication always fails (HTTP 401 / SSH auth failure).
- ``hang``: requests are accepted and never answered (until the fault is cleared).
- ``garbled`` (GPU hosts): NIC tool output and sysfs reads come back corrupted.
- ``clear``: removes every fault.

Step faults (``fabconf lab fault DEVICE KIND [ARG] --at MOMENT [--after N] [--every]``) fire at one moment
of a push, once (``--every``: at every matching request from the Nth on). They ACCUMULATE: several may be
armed at once (e.g. ``reject --at verify`` to force a rollback, and ``drop --at rollback``); a standing
fault or ``clear`` removes them. Each simulator sorts its requests into moments:

- ``connect``: the driver's opening request (EOS ``show version``, NX-API ``show hostname``, NVUE
  ``GET /system``; a GPU host and SONiC: SSH authentication);
- ``read``: reads before a commit (running configuration, facts, NIC state);
- ``stage``: loading a candidate (EOS ``configure session`` with its lines, or its abort; NX-OS the
  candidate's upload over SSH/SCP and a checkpoint sent on its own; NVUE revision create/patch/delete; SONiC
  ``config checkpoint`` and the patch's SCP upload). GPU hosts stage
  nothing on the host (the candidate is computed by fabconf): no stage moment;
- ``commit``: EOS ``configure session X commit timer``; NX-OS ``configure replace ... commit-timeout`` (the
  whole request: fabconf sends its checkpoint and ``show running-config`` in it, first);
  NVUE ``nv config apply REV --confirm`` (or a REST apply); SONiC ``config apply-patch``; a GPU host: each
  command that changes its state inside a commit (``--after N``: the Nth of them, so the first N-1 are applied);
- ``verify``: any read while a commit waits for its confirmation (GPU host: after the commit released its
  commit lock);
- ``confirm``: EOS ``configure session X commit``; NX-OS ``configure replace commit``; NVUE
  ``nv config apply --confirm-yes``; SONiC ``config delete-checkpoint`` of a kept checkpoint (reads while one is
  kept are ``verify``). GPU hosts have no confirm;
- ``rollback``: EOS ``configure replace`` or the abort of a session pending a timer; NX-OS
  ``rollback running-config``; NVUE an apply while a confirm is pending; SONiC ``config rollback``; a GPU host:
  each state-changing command of a restore (rollback or the restore of an interrupted commit).

Kinds at a moment: ``drop`` (close the connection without a reply; the request is not carried out),
``reject`` (the platform's own error for the request, nothing carried out; a host tool exits non-zero with
its message), ``delay SECONDS`` (the request is carried out, its reply comes SECONDS late), ``hang`` (no
reply and nothing carried out until the fault is cleared; then the connection closes), ``auth-refuse``
(HTTP 401 for the request; SSH authentication fails), ``garbled`` (the request is carried out; its reply is
not valid JSON / the command's output is corrupted), ``hold`` (the request waits until the fault is cleared,
then is carried out as usual: the window in which another changer acts, e.g. ``hold --at commit`` and, while
the push waits, a change made over SSH or the API; ``clear`` lets the commit go on; issue #43).
``Faults.fired`` lists what fired, for tests.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

KINDS = ("drop-on-commit", "reject", "delay", "auth-refuse", "hang")
MOMENTS = ("connect", "read", "stage", "commit", "verify", "confirm", "rollback")
STEP_KINDS = ("drop", "reject", "delay", "hang", "auth-refuse", "garbled", "hold")
MAX_HANG = 600.0  # seconds a hung request waits for the fault to be cleared at most


class DropConnection(Exception):
    """Raised inside a request handler: close the socket without answering."""


T = TypeVar("T")


@dataclass
class StepFault:
    """A fault armed for one moment: fires at the ``after``-th matching request (and later ones if ``every``)."""

    kind: str
    moment: str
    seconds: float = 0.0  # delay
    after: int = 1
    every: bool = False
    seen: int = 0
    released: threading.Event = field(default_factory=threading.Event, repr=False)

    def describe(self) -> str:
        arg = f" {self.seconds:g}" if self.kind == "delay" else ""
        after = f" --after {self.after}" if self.after != 1 else ""
        return f"{self.kind}{arg} --at {self.moment}{after}{' --every' if self.every else ''}"

    def before(self) -> None:
        """What happens before the request is carried out: ``drop`` and ``hang`` never let it run; ``hold`` lets it
        run once the fault is cleared."""
        if self.kind == "hold":
            self.released.wait(MAX_HANG)
            return
        if self.kind == "hang":
            self.released.wait(MAX_HANG)
            raise DropConnection()
        if self.kind == "drop":
            raise DropConnection()

    def after_reply(self) -> None:
        """What happens once the request was carried out, before its reply goes out."""
        if self.kind == "delay":
            time.sleep(self.seconds)

    @property
    def refuses(self) -> bool:
        """``reject`` and ``auth-refuse``: the platform's refusal is the reply; the request is not carried out."""
        return self.kind in ("reject", "auth-refuse")

    def reply(self, body: T, garble: Callable[[T], T]) -> T:
        """The reply of a request carried out: after the fault's delay, garbled for ``garbled``."""
        self.after_reply()
        return garble(body) if self.kind == "garbled" else body


def parse_step(kind: str, arg: str | None, at: str, after: int = 1, every: bool = False) -> StepFault:
    if at not in MOMENTS:
        raise ValueError(f"unknown moment {at!r}; expected one of {', '.join(MOMENTS)}")
    if kind not in STEP_KINDS:
        raise ValueError(f"fault {kind!r} cannot be given --at; expected one of {', '.join(STEP_KINDS)}")
    if after < 1:
        raise ValueError(f"--after needs N >= 1, got {after}")
    seconds = 0.0
    if kind == "delay":
        try:
            seconds = float(arg) if arg is not None else -1.0
        except ValueError:
            seconds = -1.0
        if not 0 < seconds <= 3600:
            raise ValueError(f"fault 'delay' needs SECONDS in (0, 3600], got {arg!r}")
    elif arg is not None:
        raise ValueError(f"fault {kind!r} --at {at} takes no argument, got {arg!r}")
    return StepFault(kind, at, seconds, after, every)


# set whenever a device of this process may have changed its view (``Faults.changed``: at the end of every request,
# by a commit timer, a background apply, a reboot coming back): what a lab worker's publisher waits on
# (``fabconf_lab.shards``), so that an idle worker does not wake to look at its devices
ACTIVITY = threading.Event()
_CHANGED: dict[int, Faults] = {}  # the Faults of the devices marked since the publisher's last look, by id
_CHANGED_LOCK = threading.Lock()
_TRACKING = False  # set by ``track_changes``: only a lab worker's publisher takes the marks (else they would pile up)


def track_changes() -> None:
    """From now on ``Faults.changed`` records its device for ``take_changed`` (a lab worker, before its first
    request)."""
    global _TRACKING
    _TRACKING = True


def take_changed() -> list[Faults]:
    """The Faults of every device marked ``changed`` since the last call (the publisher's look), and forget them."""
    global _CHANGED
    with _CHANGED_LOCK:
        taken, _CHANGED = _CHANGED, {}
    return list(taken.values())


@dataclass
class Faults:
    drop_on_commit: bool = False
    reject: re.Pattern[str] | None = None
    delay: float = 0.0
    auth_refuse: bool = False
    hang: bool = False
    steps: list[StepFault] = field(default_factory=list)
    fired: list[str] = field(default_factory=list)  # "KIND --at MOMENT" of every step fault that fired
    requests: int = 0  # requests the device has started to answer (``before_request``)
    _cleared: threading.Event = field(default_factory=threading.Event, repr=False)
    _waiting: list[StepFault] = field(default_factory=list, repr=False)  # fired hold/hang steps, until cleared
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _fired_cond: threading.Condition = field(default_factory=threading.Condition, repr=False)

    def set(
        self, kind: str, arg: str | None = None, *, at: str | None = None, after: int = 1, every: bool = False
    ) -> None:
        """Inject ``kind``. Without ``at`` it REPLACES whatever fault was active (no ``clear`` needed in between);
        with ``at`` it is armed for that moment, next to the other step faults. A missing or malformed argument
        is an error and changes nothing."""
        if at is not None:
            step = parse_step(kind, arg, at, after, every)
            with self._lock:
                self.steps.append(step)
            return
        self._check(kind, arg)
        self.clear()
        self._set_standing(kind, arg)

    def _check(self, kind: str, arg: str | None) -> None:
        if kind not in (*KINDS, "clear"):
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {', '.join(KINDS)} or clear")
        if kind == "delay":
            try:
                seconds = float(arg) if arg is not None else -1.0
            except ValueError:
                seconds = -1.0
            if not 0 < seconds <= 3600:
                raise ValueError(f"fault 'delay' needs SECONDS in (0, 3600], got {arg!r}")
        if kind == "reject":
            if not arg:
                raise ValueError("fault 'reject' needs a PATTERN")
            try:
                re.compile(arg)
            except re.error as exc:
                raise ValueError(f"fault 'reject': {arg!r} is not a regular expression: {exc}") from None
        elif arg is not None and kind not in ("delay",):
            raise ValueError(f"fault {kind!r} takes no argument, got {arg!r}")

    def _set_standing(self, kind: str, arg: str | None) -> None:
        if kind == "clear":
            return
        if kind == "drop-on-commit":
            self.drop_on_commit = True
        elif kind == "reject":
            self.reject = re.compile(arg or "")
        elif kind == "delay":
            self.delay = float(arg or "5")
        elif kind == "auth-refuse":
            self.auth_refuse = True
        elif kind == "hang":
            self.hang = True
            self._cleared.clear()

    def clear(self) -> None:
        self.drop_on_commit = False
        self.reject = None
        self.delay = 0.0
        self.auth_refuse = False
        self.hang = False
        self._cleared.set()
        with self._lock:
            steps, self.steps = self.steps + self._waiting, []
            self._waiting = []
        for step in steps:
            step.released.set()

    def active(self) -> list[str]:
        out = []
        if self.drop_on_commit:
            out.append("drop-on-commit")
        if self.reject is not None:
            out.append(f"reject {self.reject.pattern}")
        if self.delay:
            out.append(f"delay {self.delay:g}")
        if self.auth_refuse:
            out.append("auth-refuse")
        if self.hang:
            out.append("hang")
        with self._lock:
            out += [s.describe() for s in self.steps]
        return out

    def before_request(self, max_hang: float = 3600.0) -> None:
        """Call at the start of every request: applies delay and hang (``after_request`` at its end)."""
        self.requests += 1
        if self.hang:
            self._cleared.wait(max_hang)
        if self.delay:
            time.sleep(self.delay)

    def after_request(self) -> None:
        """Call at the end of every request (answered, refused or dropped), before its reply goes out: the request
        may have changed the device's view, look at it again (``changed``)."""
        self.changed()

    def changed(self) -> None:
        """The device's view may have changed (a request ended, a commit timer ran out, a background apply finished,
        a reboot came back): a lab spread over processes looks at this device's view on its next round and sends it
        to the other workers if it differs (``fabconf_lab.shards``). Cheap: a dict entry and an event."""
        if _TRACKING:
            with _CHANGED_LOCK:
                _CHANGED[id(self)] = self
        ACTIVITY.set()

    def rejects(self, line: str) -> bool:
        return self.reject is not None and self.reject.search(line) is not None

    def on_commit(self) -> None:
        """Call where the device is about to commit/apply: raises DropConnection when armed."""
        if self.drop_on_commit:
            raise DropConnection()

    # -- step faults ----------------------------------------------------------------------------------------
    def step(self, moment: str | None) -> StepFault | None:
        """A request of ``moment`` (None: of no moment) arrived: the step fault that fires for it, if any
        (counted, recorded in ``fired``, and disarmed unless ``every``). The caller carries it out:
        ``fault.before()`` first, then the request (or the platform's refusal for ``reject``/``auth-refuse``),
        then ``fault.after_reply()``, garbling the reply for ``garbled``."""
        if moment is None or not self.steps:
            return None
        with self._lock:
            hit = None
            for step in [s for s in self.steps if s.moment == moment]:
                step.seen += 1
                if hit is None and (step.seen == step.after or (step.every and step.seen > step.after)):
                    hit = step
            if hit is None:
                return None
            if not hit.every:
                self.steps.remove(hit)
            if hit.kind in ("hold", "hang"):  # a fired one still waits for ``clear``
                self._waiting.append(hit)
        with self._fired_cond:
            self.fired.append(hit.describe())
            self._fired_cond.notify_all()
        return hit

    def wait_fired(self, count: int = 1, timeout: float = 30.0) -> bool:
        """Wait until ``count`` step faults have fired in all (tests)."""
        with self._fired_cond:
            return self._fired_cond.wait_for(lambda: len(self.fired) >= count, timeout)


def garble_bytes(body: bytes) -> bytes:
    """A reply that is not valid JSON: cut short, with a byte replaced (as a proxy or a broken agent might)."""
    cut = body[: max(1, len(body) * 2 // 3)]
    return b"\x00" + cut[1:] if cut else b"\x00garbled"
