"""One thread per lab process that waits on every listening socket of its simulators (SSH, HTTPS) at once.

A lab worker of 4,096 GPU hosts or 1,536 switches used to run a thread per listening socket, blocked in ``accept``
or waking on ``serve_forever``'s poll timeout: some 6,600 threads at full size, contending for the GIL whenever
anything happened. Now one selector holds all of them; a readable listening socket is accepted here (non-blocking,
so it never waits) and the connection handed to its service's callback, which serves it on a thread of its own.
The thread sleeps in ``select`` with no timeout: an idle lab wakes for nothing.

A service listens with ``add(sock, on_accept)`` and stops with ``remove(sock)`` before it closes the socket; a
connection already accepted is its service's (``remove`` does not touch it). A callback must return at once.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import os
import selectors
import socket
import sys
import threading
import time
from collections.abc import Callable

OnAccept = Callable[[socket.socket, tuple[str, int]], None]

# The GIL switch interval of a lab process (Python's default: 5 ms). A thread back from a socket call waits for the
# GIL behind every thread that is computing, each keeping it up to the interval: a request, which takes it again
# after each of its reads and writes, waited that many times. 1 ms: with 30 computing threads in a process, 40
# clients opening a TLS connection per request were served 4x faster, the slowest in 2.8 s instead of 10.7 s
# (bench/README.md, "The switch worker's stall").
SWITCH_INTERVAL = 0.001

# connections accepted from one listening socket per wake-up before the others get a turn (a burst on one device
# does not starve the rest)
ACCEPT_BURST = 64


class Acceptor:
    """A selector over listening sockets, served by one daemon thread started with the first socket."""

    def __init__(self) -> None:
        self._selector = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, sock: socket.socket, on_accept: OnAccept) -> None:
        """Wait for connections on ``sock`` (bound and listening) from now on."""
        sock.setblocking(False)
        with self._lock:
            self._selector.register(sock, selectors.EVENT_READ, on_accept)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="lab-acceptor", daemon=True)
                self._thread.start()

    def remove(self, sock: socket.socket) -> None:
        """Accept nothing more on ``sock`` (the caller then closes it); nothing when it was not added."""
        with self._lock, contextlib.suppress(KeyError, ValueError, OSError):
            self._selector.unregister(sock)

    def listening(self) -> int:
        """How many sockets are waited on (for tests and the lab's own figures)."""
        return len(self._selector.get_map() or {})

    def _loop(self) -> None:
        while True:
            try:
                ready = self._selector.select(timeout=None)
            except OSError:  # a socket closed while registered (its service's remove came late): go on
                continue
            for key, _events in ready:
                sock: socket.socket = key.fileobj  # type: ignore[assignment]
                for _ in range(ACCEPT_BURST):
                    try:
                        conn, peer = sock.accept()
                    except (BlockingIOError, InterruptedError):
                        break
                    except OSError as exc:
                        if exc.errno in (errno.EMFILE, errno.ENFILE):  # out of descriptors for now: the
                            time.sleep(0.05)  # connections being served free them; the socket stays readable
                        else:  # closed or shut down by its service meanwhile
                            self.remove(sock)
                        break
                    conn.setblocking(True)
                    try:
                        key.data(conn, peer)
                    except Exception:  # a service that cannot take it: the client sees the connection close
                        with contextlib.suppress(OSError):
                            conn.close()


def favour_connections() -> None:
    """Set this lab process's GIL switch interval (``SWITCH_INTERVAL``); a lab process calls it before it serves."""
    sys.setswitchinterval(SWITCH_INTERVAL)


def serve_apart(target: Callable[..., object], *args: object) -> None:
    """Run ``target(*args)`` on a new thread and return at once: what an ``OnAccept`` callback does with its
    connection. ``threading.Thread.start`` waits until the new thread has run, which takes the GIL: in a worker
    whose handler threads keep the GIL busy that wait was 0.1-0.3 s a connection (3 s at worst), measured with
    10-50 busy threads, and the one acceptor of every device's listening socket waited it for each connection it
    handed on, so that every device's TLS handshake queued behind it (a full-size verify's spine304 missed three
    20 s timeouts so). A thread of ``_thread`` is started without that wait; an exception it raises is printed
    (``sys.unraisablehook``) as a ``threading`` thread's would be."""
    _thread.start_new_thread(target, args)


_ACCEPTOR: tuple[int, Acceptor] | None = None
_ACCEPTOR_LOCK = threading.Lock()


def acceptor() -> Acceptor:
    """This process's acceptor (one for every service in it; a forked child makes its own, as the parent's
    thread did not come with it)."""
    global _ACCEPTOR
    with _ACCEPTOR_LOCK:
        if _ACCEPTOR is None or _ACCEPTOR[0] != os.getpid():
            _ACCEPTOR = (os.getpid(), Acceptor())
        return _ACCEPTOR[1]
