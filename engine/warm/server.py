"""The socket side of a warm process: listen on the index's address, answer each request.

One daemon thread (engine/warm/intake.py) accepts and reads every connection's request line
without blocking, each against its own deadline, so idle or slow clients never hold a worker
nor delay the next client. A complete line goes to a pool of WORKERS threads that asks the
handler and writes one reply line, so a search never runs on the reading thread nor on the
owner's (the watcher's, the app's GUI thread). At most MAX_IN_HAND requests are running or
waiting; the next gets an immediate decline ("busy") and its client answers one-shot.
Whatever a client sends — garbage, a line that never ends, a request of another version —
gets an error reply or a decline, never a crash. Only this user's processes are answered:
the folder is 0700, the socket 0600, and the peer's uid is checked on every connection
(engine/warm/trust.py); on Windows a client must hold the token from the private port file.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import re
import socket
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from engine import __version__
from engine.warm import runtime
from engine.warm.intake import Intake
from engine.warm.protocol import MAX_REQUEST_BYTES, PROTOCOL, ProtocolError, parse, send

Handler = Callable[[dict[str, Any]], dict[str, Any]]
WORKERS = 2  # searches at once: the machine's cores, not the number of clients
MAX_IN_HAND = 16  # searches running or waiting; beyond: "busy", the client answers one-shot
WRITE_TIMEOUT_SECONDS = 30.0  # a client that stops reading its reply holds a worker this long
NONCE = re.compile(r"[0-9a-f]{16,64}")


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
        self._lock = threading.Lock()
        self._in_hand: set[socket.socket] = set()
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
        return True

    def close(self) -> None:
        """Stop reading, finish the requests running, remove our socket file. Idempotent."""
        if self.intake is not None:
            self.intake.stop.set()
        if self._thread is not None:
            self._thread.join()
        self.pool.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            left, self._in_hand = self._in_hand, set()
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
            with conn, contextlib.suppress(OSError):
                conn.settimeout(1.0)
                send(conn, decline("busy"))
            return
        try:
            self.pool.submit(self._handle, conn, line)
        except RuntimeError:  # closing: the pool takes no more work
            with self._lock:
                self._in_hand.discard(conn)
            conn.close()

    def _handle(self, conn: socket.socket, line: bytes) -> None:
        try:
            with conn, contextlib.suppress(OSError):  # the client went away meanwhile
                conn.settimeout(WRITE_TIMEOUT_SECONDS)
                send(conn, self.reply_to(line))
        finally:
            with self._lock:
                self._in_hand.discard(conn)

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

    def reply_to(self, line: bytes) -> dict[str, Any]:
        if len(line) > MAX_REQUEST_BYTES:
            return error(f"malformed request: a line longer than {MAX_REQUEST_BYTES} bytes")
        try:
            return self.reply(parse(line))
        except ProtocolError as exc:
            return error(f"malformed request: {exc}")

    def reply(self, request: dict[str, Any]) -> dict[str, Any]:
        """The reply to one decoded request line."""
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
                "refused": self.intake.refused if self.intake is not None else 0,
            }
