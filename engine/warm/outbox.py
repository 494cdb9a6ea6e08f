"""Writing replies on one thread, without blocking anyone: no client can hold a worker.

A worker hands its reply to `Outbox.put` and goes back to the pool at once: the bytes are
sent without blocking, and what the client's socket buffer does not take is written by the
outbox's thread as the client reads (a selector), against a deadline per connection:
WRITE_DEADLINE_SECONDS for each reply or note, from the moment it is put. A client that
stops reading is dropped when its deadline passes. The bytes waiting at once are bounded
(MAX_WAITING_BYTES): past it, the connections waiting longest are dropped first (the newest
reply is always kept, however large).
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

WRITE_DEADLINE_SECONDS = 5.0  # a reply (or a note) must be read within this
MAX_WAITING_BYTES = 64 << 20  # replies not yet read, all connections together
POLL_SECONDS = 0.1  # how soon a stop, or a tick's work, is noticed
CHUNK = 1 << 20  # bytes offered to one send()


@dataclass
class _Waiting:
    """Bytes not yet taken by one connection's reader."""

    deadline: float
    data: bytearray = field(default_factory=bytearray)
    last: bool = False  # the connection closes once these bytes are sent


class Outbox:
    """Sends each connection's lines as its client reads them; `run` on a daemon thread."""

    def __init__(self, deadline: float = WRITE_DEADLINE_SECONDS) -> None:
        self.deadline = deadline
        self.limit = MAX_WAITING_BYTES
        self.dropped = 0  # connections closed because their client did not read in time
        self.stop = threading.Event()
        self.on_tick: Callable[[float], None] = lambda now: None  # the owner's timed work
        self._lock = threading.Lock()
        self._waiting: dict[socket.socket, _Waiting] = {}
        self._wake_w: socket.socket | None = None  # made by `run`, closed when it ends

    @property
    def waiting_bytes(self) -> int:
        with self._lock:
            return sum(len(w.data) for w in self._waiting.values())

    def put(self, conn: socket.socket, data: bytes, *, last: bool) -> None:
        """Send `data` on `conn` without blocking; what is left is sent as the client reads.
        `last`: close the connection once it is all sent. A connection already dropped
        (its client too slow) takes nothing."""
        with self._lock:
            if conn.fileno() < 0:
                return
            waiting = self._waiting.setdefault(conn, _Waiting(0.0))
            waiting.deadline = time.monotonic() + self.deadline  # each line its own
            waiting.data += data
            waiting.last = waiting.last or last
            self._send(conn, waiting)
            self._bound(conn)
            if self._wake_w is not None:
                with contextlib.suppress(OSError):  # full: a wake is on its way already
                    self._wake_w.send(b"\0")

    def run(self) -> None:
        """Write as clients read, drop the late, call `on_tick`, until `stop`."""
        selector = selectors.DefaultSelector()
        wake_r, wake_w = socket.socketpair()
        wake_r.setblocking(False)
        wake_w.setblocking(False)
        selector.register(wake_r, selectors.EVENT_READ)
        with self._lock:
            self._wake_w = wake_w
        try:
            while not self.stop.is_set():
                self._watch(selector, wake_r)
                for key, _ in selector.select(self._wait()):
                    if key.fileobj is wake_r:
                        with contextlib.suppress(OSError):
                            wake_r.recv(4096)
                        continue
                    with self._lock:
                        conn: socket.socket = key.fileobj  # type: ignore[assignment]
                        if conn in self._waiting:
                            self._send(conn, self._waiting[conn])
                now = time.monotonic()
                self._expire(now)
                self.on_tick(now)
        finally:
            with self._lock:
                for conn in list(self._waiting):
                    self._close(conn)
                self._wake_w = None
            selector.close()
            wake_r.close()
            wake_w.close()

    def _send(self, conn: socket.socket, waiting: _Waiting) -> None:
        """As much as the client's buffer takes now (under the lock); closes when done."""
        while waiting.data:
            try:
                sent = conn.send(memoryview(waiting.data)[:CHUNK], socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # the client went away
                self._close(conn)
                return
            del waiting.data[:sent]
        if waiting.last:
            self._close(conn)

    def _bound(self, newest: socket.socket) -> None:
        """Drop the connections waiting longest until the bytes waiting fit the limit."""
        total = sum(len(w.data) for w in self._waiting.values())
        for conn in sorted(self._waiting, key=lambda c: self._waiting[c].deadline):
            if total <= self.limit:
                return
            if conn is not newest and self._waiting[conn].data:
                total -= len(self._waiting[conn].data)
                self.dropped += 1
                self._close(conn)

    def _watch(self, selector: selectors.BaseSelector, wake_r: socket.socket) -> None:
        """Wait for writability only on the connections with bytes left."""
        with self._lock:
            want = {c for c, w in self._waiting.items() if w.data}
        registered = {k.fileobj for k in selector.get_map().values()} - {wake_r}
        for gone in registered - want:  # sent, or closed (its fd may be another's by now)
            with contextlib.suppress(KeyError, ValueError, OSError):
                selector.unregister(gone)
        for conn in want - registered:
            with contextlib.suppress(KeyError, ValueError, OSError):
                selector.register(conn, selectors.EVENT_WRITE)

    def _wait(self) -> float:
        with self._lock:
            pending = [w.deadline for w in self._waiting.values() if w.data]
        if not pending:
            return POLL_SECONDS
        return max(0.0, min(POLL_SECONDS, min(pending) - time.monotonic()))

    def _expire(self, now: float) -> None:
        with self._lock:
            late = [c for c, w in self._waiting.items() if w.data and w.deadline <= now]
            for conn in late:
                self.dropped += 1
                self._close(conn)

    def _close(self, conn: socket.socket) -> None:
        """Forget and close `conn` (under the lock, on any thread); the selector, which only
        the outbox's thread touches, lets go of it at its next `_watch`."""
        self._waiting.pop(conn, None)
        conn.close()
