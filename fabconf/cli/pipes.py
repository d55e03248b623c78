"""A closed standard output ends the command quietly with 141 (128 + SIGPIPE), as shell tools do.

``fabconf diff | head`` or ``fabconf lab status | head``: once the reader is gone, a write raises
``BrokenPipeError``, which is an ``OSError`` and a ``ConnectionError``, so any ``except OSError`` or
``except ConnectionError`` on the way up (a lab control request, a device step) took it for its own failure
and exited 1 ("a device failed") or printed ``[Errno 32] Broken pipe``. The guard turns it, at the write
itself, into ``ReaderGone``, which derives from ``BaseException`` as ``KeyboardInterrupt`` does, so that
only ``main`` handles it."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a tool whose reader went away


class ReaderGone(BaseException):  # a signal, not an error: a BaseException, as KeyboardInterrupt is
    """Standard output's reader went away."""


class _Guarded:
    """Standard output whose ``write`` and ``flush`` raise ``ReaderGone`` for a closed pipe."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise ReaderGone from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise ReaderGone from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null: the interpreter's final flush must not fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ else 1)
        os.close(devnull)


@contextlib.contextmanager
def guarded_stdout() -> Iterator[None]:
    """``sys.stdout`` guarded for the command's duration (restored after, for callers such as tests)."""
    original = sys.stdout
    sys.stdout = _Guarded(original)
    try:
        yield
    finally:
        sys.stdout = original
