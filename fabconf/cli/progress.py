"""Progress of a run on stderr: a live line on a terminal for runs longer than a second, plain lines
otherwise (one per finished device, and one when a device is slow). Fed by the deploy layer's
``ProgressProcessor`` (Nornir's task-instance hooks)."""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from fabconf.deploy.job import Outcome

LIVE_AFTER = 1.0  # seconds before a terminal gets the live line
SLOW_AFTER = 30.0  # seconds after which a device still working is named


class RunProgress:
    """``with RunProgress("push", total, stream) as p:`` and hand ``p`` to the rollout."""

    def __init__(
        self,
        command: str,
        total: int,
        stream: TextIO,
        *,
        live_after: float = LIVE_AFTER,
        slow_after: float = SLOW_AFTER,
    ) -> None:
        self.command = command
        self.total = total
        self.stream = stream
        self.terminal = stream.isatty()
        self.live_after = live_after
        self.slow_after = slow_after
        self._lock = threading.Lock()
        self._running: dict[str, float] = {}
        self._told_slow: set[str] = set()
        self._done = 0
        self._begun = time.monotonic()
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="fabconf-progress", daemon=True)
        self._console = Console(file=stream, highlight=False, soft_wrap=True)
        self._bar: Progress | None = None
        self._task_id: TaskID | None = None

    # -- what the rollout calls ------------------------------------------------------------------------------
    def started(self, device: str) -> None:
        with self._lock:
            self._running[device] = time.monotonic()

    def done(self, outcome: Outcome) -> None:
        with self._lock:
            self._running.pop(outcome.device, None)
            self._done += 1
            line = f"{outcome.device}: {outcome.state} ({outcome.seconds:.1f} s)"
            if self._bar is not None and self._task_id is not None:
                self._bar.update(self._task_id, completed=self._done)
                self._bar.console.print(f"  {line}", markup=False)
            elif not self.terminal:
                print(f"fabconf {self.command}: {line}", file=self.stream, flush=True)

    # -- the ticker: the live line after LIVE_AFTER, and slow devices --------------------------------------------
    def _tick(self) -> None:
        while not self._stop.wait(0.25):
            now = time.monotonic()
            with self._lock:
                if self.terminal and self._bar is None and now - self._begun >= self.live_after:
                    self._start_bar()
                slow = [d for d, t in self._running.items() if now - t >= self.slow_after and d not in self._told_slow]
                self._told_slow.update(slow)
                for device in sorted(slow):
                    text = f"{device}: still working after {self.slow_after:g} s"
                    if self._bar is not None:
                        self._bar.console.print(f"  {text}", markup=False)
                    else:
                        print(f"fabconf {self.command}: {text}", file=self.stream, flush=True)

    def _start_bar(self) -> None:
        self._bar = Progress(
            TextColumn(f"fabconf {self.command}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("devices"),
            TimeElapsedColumn(),
            console=self._console,
            transient=True,
        )
        self._task_id = self._bar.add_task(self.command, total=self.total, completed=self._done)
        self._bar.start()

    def __enter__(self) -> RunProgress:
        self._ticker.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._ticker.join()
        if self._bar is not None:
            self._bar.stop()
