"""The socket side of a warm process: listen on the index's address, answer each request.

One daemon thread (engine/warm/intake.py) accepts and reads every connection's request line
without blocking, each against its own deadline, so idle or slow clients never hold a worker
nor delay the next client. A complete line goes to a pool of WORKERS threads that asks the
handler, so a search never runs on the reading thread nor on the owner's (the watcher's, the
app's GUI thread). A worker that takes a search first sends a note (`{"working": true}`),
then the reply; both go through the outbox (engine/warm/outbox.py), which writes without
blocking against a deadline per connection: a client that stops reading is dropped there,
and never holds a worker. At most MAX_IN_HAND requests are running or waiting; the next gets
an immediate decline ("busy"), and so does a request no worker has taken within
QUEUE_SECONDS: either way its client answers one-shot, about a second later at most.
Whatever a client sends — garbage, a line that never ends, a request of another version —
gets an error reply or a decline, never a crash. Only this user's processes are answered:
the folder is 0700, the socket 0600, and the peer's uid is checked on every connection
(engine/warm/trust.py); on Windows a client must hold the token from the private port file.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from engine import __version__
from engine.warm import runtime
from engine.warm.intake import Intake
from engine.warm.outbox import Outbox
from engine.warm.protocol import MAX_REQUEST_BYTES, PROTOCOL, ProtocolError, parse, send

Handler = Callable[[dict[str, Any]], dict[str, Any]]
# Searches at once. A warm search can spend most of its time waiting — on an HTTP re-ranker
# or embedder — so it takes a thread, not a core: 20 scripts at once are all answered warm.
# Each thread has its own read connection (its page cache holds only what the file's memory
# map does not); the model, vectors and postings are the engine's, shared.
WORKERS = 24
MAX_IN_HAND = 24  # searches running or waiting; beyond: "busy", the client answers one-shot
QUEUE_SECONDS = 1.0  # a request no worker has taken within this is declined "busy"
WORKING = {"working": True}  # a worker's note as it takes a search: the answer follows
NONCE = re.compile(r"[0-9a-f]{16,64}")


def frame(message: dict[str, Any]) -> bytes:
    """One message as one line, as `protocol.send` frames it, for the outbox to write."""
    try:
        return json.dumps(message, ensure_ascii=True).encode("ascii") + b"\n"
    except (TypeError, ValueError) as exc:  # a handler's answer that JSON cannot hold
        return frame(error(f"internal error: the answer is not JSON ({exc})"))


def decline(reason: str) -> dict[str, Any]:
    """Not this server's to answer: the client runs the one-shot path."""
    return {"ok": False, "decline": reason}


def error(message: str) -> dict[str, Any]:
    return {"ok": False, "error": message}


class WarmServer:
    """Serves one index's address; `start` binds, `close` stops and removes the socket."""

    def __init__(self, db_path: Path, handler: Handler, env: Mapping[str, str]) -> None:
        self.db_path = db_path
        self.handler = handler
        self.env = env
        self.address: Path | None = None
        self.problem = ""  # why `start` returned False
        self.requests = 0  # every request line read
        self.served = 0  # answered searches
        self.busy = 0  # requests declined because MAX_IN_HAND were in hand
        self.intake: Intake | None = None
        self.outbox = Outbox()
        self.outbox.on_tick = self._expire_queued
        self._lock = threading.Lock()
        self._in_hand: set[socket.socket] = set()
        self._queued: dict[socket.socket, tuple[float, Future[None]]] = {}  # no worker yet
        self._writer: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self._token = ""
        self._inode = 0
        self._thread: threading.Thread | None = None
        self.pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="memex-warm")

    @property
    def in_hand(self) -> int:
        """Requests running or waiting for a worker."""
        with self._lock:
            return len(self._in_hand)

    def start(self) -> bool:
        """Listen and read on a daemon thread; False (see `problem`) if it cannot."""
        try:
            self.address = runtime.address_for(self.db_path, self.env, create=True)
            self._sock, self._token = runtime.listen(self.address)
            self._inode = os.stat(self.address).st_ino
        except OSError as exc:
            self.problem = f"searches are not answered warm: {exc}"
            return False
        self.intake = Intake(self._sock, self._take, MAX_REQUEST_BYTES)
        if self._token:
            self.intake.on_hello = self._hello
        self._thread = threading.Thread(
            target=self.intake.run, name="memex-warm-intake", daemon=True
        )
        self._thread.start()
        self._writer = threading.Thread(target=self.outbox.run, name="memex-warm-out", daemon=True)
        self._writer.start()
        return True

    def close(self) -> None:
        """Stop reading, finish the requests running, remove our socket file. Idempotent."""
        if self.intake is not None:
            self.intake.stop.set()
        if self._thread is not None:
            self._thread.join()
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.outbox.stop.set()  # the replies put so far were sent as far as clients read
        if self._writer is not None:
            self._writer.join()
        with self._lock:
            left, self._in_hand = self._in_hand, set()
            self._queued.clear()
        for conn in left:  # cancelled before a worker took them
            conn.close()
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            self._remove_address()

    def _remove_address(self) -> None:
        """Only our own file: a successor may have bound the same name meanwhile."""
        if self.address is None:
            return
        with contextlib.suppress(OSError):
            if os.stat(self.address).st_ino == self._inode:
                os.unlink(self.address)

    def _take(self, conn: socket.socket, line: bytes) -> None:
        """A complete request line, from the reading thread: to the pool, or "busy"."""
        with self._lock:
            full = len(self._in_hand) >= MAX_IN_HAND
            if full:
                self.busy += 1
            else:
                self._in_hand.add(conn)
        if full:
            self.outbox.put(conn, frame(decline("busy")), last=True)
            return
        try:
            with self._lock:  # queued before a worker can look for it
                future = self.pool.submit(self._handle, conn, line)
                self._queued[conn] = (time.monotonic() + QUEUE_SECONDS, future)
        except RuntimeError:  # closing: the pool takes no more work
            with self._lock:
                self._in_hand.discard(conn)
            conn.close()

    def _expire_queued(self, now: float) -> None:
        """Decline "busy" the requests no worker has taken in QUEUE_SECONDS (the outbox's
        thread, every tick): their clients answer one-shot rather than wait."""
        with self._lock:
            late = [c for c, (deadline, _) in self._queued.items() if deadline <= now]
            declined = [c for c in late if self._queued[c][1].cancel()]
            for conn in declined:
                del self._queued[conn]
                self._in_hand.discard(conn)
                self.busy += 1
        for conn in declined:
            self.outbox.put(conn, frame(decline("busy")), last=True)

    def _handle(self, conn: socket.socket, line: bytes) -> None:
        """On a worker: the reply, put in the outbox; the worker never waits for a reader."""
        with self._lock:
            self._queued.pop(conn, None)
        reply = error("internal error")
        try:
            reply = self.reply_to(line, lambda: self.outbox.put(conn, frame(WORKING), last=False))
        finally:
            with self._lock:
                self._in_hand.discard(conn)
            self.outbox.put(conn, frame(reply), last=True)

    def _hello(self, conn: socket.socket, line: bytes) -> bool:
        """A TCP client's greeting: prove we hold the token (the port file's) before it
        sends its request; False for any other line."""
        try:
            message = parse(line)
        except ProtocolError:
            return False
        nonce = message.get("nonce")
        if message.get("op") != "hello" or not isinstance(nonce, str):
            return False
        if NONCE.fullmatch(nonce):
            with contextlib.suppress(OSError):
                send(conn, {"proof": runtime.prove(self._token, nonce)})
        return True

    def reply_to(self, line: bytes, working: Callable[[], None] | None = None) -> dict[str, Any]:
        if len(line) > MAX_REQUEST_BYTES:
            return error(f"malformed request: a line longer than {MAX_REQUEST_BYTES} bytes")
        try:
            return self.reply(parse(line), working)
        except ProtocolError as exc:
            return error(f"malformed request: {exc}")

    def reply(
        self, request: dict[str, Any], working: Callable[[], None] | None = None
    ) -> dict[str, Any]:
        """The reply to one decoded request line; `working` is told as a search starts."""
        with self._lock:
            self.requests += 1
        if request.get("memex") != PROTOCOL:
            return decline("another protocol")
        if not hmac.compare_digest(str(request.get("token", "")), self._token):
            return error("wrong token")
        if request.get("op") == "status":
            return self.status()
        if request.get("op") != "search":
            return error(f"unknown op {request.get('op')!r}")
        if request.get("version") != __version__:
            return decline("another version of memex")
        if working is not None:
            working()
        try:
            answer = self.handler(request)
        except Exception as exc:  # a bug in one request must not stop the next
            return error(f"internal error: {type(exc).__name__}: {exc}")
        if answer.get("ok") is True:
            with self._lock:
                self.served += 1
                answer["served"] = self.served
            answer["pid"] = os.getpid()
        return answer

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {
                "ok": True,
                "pid": os.getpid(),
                "requests": self.requests,
                "served": self.served,
                "busy": self.busy,
                "dropped": self.outbox.dropped,  # clients that did not read their answer
                "refused": self.intake.refused if self.intake is not None else 0,
            }
