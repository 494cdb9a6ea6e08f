"""Reading request lines from many connections at once, on one thread, each with a deadline.

`Intake.run()` accepts on the listening socket and reads every open connection without
blocking (a selector), so a client that connects and sends nothing costs a file descriptor,
never a worker: the next client's line is read as soon as it arrives. Each connection has
READ_DEADLINE_SECONDS for its whole line, however slowly it drips; at most MAX_OPEN wait at
once (the oldest is closed to make room). A connection whose peer is another user is closed
before a byte is read. A complete line goes to `on_line(conn, line)`, which owns the
connection from then on; `on_hello(conn, line)` answers a line that is only a greeting and
leaves the connection here for its next line.
"""

from __future__ import annotations

import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.warm.trust import peer_problem

READ_DEADLINE_SECONDS = 5.0  # the whole request line, from the moment of connecting
MAX_OPEN = 64  # connections waiting for their line at once
POLL_SECONDS = 0.25  # how soon a stop is noticed

OnLine = Callable[[socket.socket, bytes], None]
OnHello = Callable[[socket.socket, bytes], bool]


@dataclass
class _Waiting:
    """A connection whose request line is not complete yet."""

    deadline: float
    data: bytearray = field(default_factory=bytearray)


class Intake:
    """Accepts on `listener` and hands each complete line to `on_line` until `stop`."""

    def __init__(self, listener: socket.socket, on_line: OnLine, limit: int) -> None:
        self.listener = listener
        self.on_line = on_line
        self.on_hello: OnHello = lambda _conn, _line: False
        self.limit = limit
        self.refused = 0  # connections from another user, closed unread
        self.stop = threading.Event()
        self._waiting: dict[socket.socket, _Waiting] = {}
        self._selector = selectors.DefaultSelector()

    def run(self) -> None:
        self.listener.setblocking(False)
        self._selector.register(self.listener, selectors.EVENT_READ)
        try:
            while not self.stop.is_set():
                for key, _ in self._selector.select(self._wait()):
                    if key.fileobj is self.listener:
                        self._accept()
                    else:
                        self._read(key.fileobj)  # type: ignore[arg-type]
                self._expire(time.monotonic())
        finally:
            for conn in list(self._waiting):
                self._drop(conn)
            self._selector.close()

    def _wait(self) -> float:
        if not self._waiting:
            return POLL_SECONDS
        soonest = min(w.deadline for w in self._waiting.values()) - time.monotonic()
        return max(0.0, min(POLL_SECONDS, soonest))

    def _accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            return  # the client gave up meanwhile, or too many files: the next try
        if peer_problem(conn):
            self.refused += 1
            conn.close()
            return
        if len(self._waiting) >= MAX_OPEN:
            oldest = min(self._waiting, key=lambda c: self._waiting[c].deadline)
            self._drop(oldest)
        conn.setblocking(False)
        self._waiting[conn] = _Waiting(time.monotonic() + READ_DEADLINE_SECONDS)
        self._selector.register(conn, selectors.EVENT_READ)

    def _read(self, conn: socket.socket) -> None:
        waiting = self._waiting.get(conn)
        if waiting is None:
            return
        try:
            data = conn.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._drop(conn)  # closed before the end of its line
            return
        waiting.data += data
        while conn in self._waiting:
            end = waiting.data.find(b"\n")
            if end < 0:
                if len(waiting.data) > self.limit:
                    self._line(conn, bytes(waiting.data))  # too long: `on_line` says so
                return
            line = bytes(waiting.data[:end])
            del waiting.data[: end + 1]
            self._line(conn, line)

    def _line(self, conn: socket.socket, line: bytes) -> None:
        """A complete line (or one over the limit): a greeting stays, the rest go on."""
        if len(line) <= self.limit and self.on_hello(conn, line):
            return
        self._selector.unregister(conn)
        del self._waiting[conn]
        conn.setblocking(True)
        self.on_line(conn, line)

    def _expire(self, now: float) -> None:
        for conn in [c for c, w in self._waiting.items() if w.deadline <= now]:
            self._drop(conn)

    def _drop(self, conn: socket.socket) -> None:
        if self._waiting.pop(conn, None) is not None:
            self._selector.unregister(conn)
        conn.close()
