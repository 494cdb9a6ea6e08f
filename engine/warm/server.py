"""The socket side of a warm process: listen on the index's address, answer each request.

A daemon thread accepts; a pool of two threads reads one request line, asks the handler and
writes one reply line, so a search never runs on the accepting thread nor on the owner's (the
watcher's, the app's GUI thread). Whatever a client sends — garbage, a line that never ends,
a request of another version — gets an error reply or a decline, never a crash. Only this
user can connect: the folder is 0700, the socket 0600, and on Linux the peer's uid is checked.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import socket
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from engine import __version__
from engine.warm import runtime
from engine.warm.protocol import MAX_REQUEST_BYTES, PROTOCOL, ProtocolError, receive, send

Handler = Callable[[dict[str, Any]], dict[str, Any]]
READ_TIMEOUT_SECONDS = 5.0  # a client that connects and sends nothing holds a worker this long
ACCEPT_POLL_SECONDS = 0.25  # how soon `close` is noticed by the accepting thread


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
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._token = ""
        self._inode = 0
        self._thread: threading.Thread | None = None
        self.pool = ThreadPoolExecutor(2, thread_name_prefix="memex-warm")

    def start(self) -> bool:
        """Listen and accept on a daemon thread; False (see `problem`) if it cannot."""
        try:
            self.address = runtime.address_for(self.db_path, self.env, create=True)
            self._sock, self._token = runtime.listen(self.address)
            self._inode = os.stat(self.address).st_ino
        except OSError as exc:
            self.problem = f"searches are not answered warm: {exc}"
            return False
        self._sock.settimeout(ACCEPT_POLL_SECONDS)
        self._thread = threading.Thread(target=self._accept, name="memex-warm-accept", daemon=True)
        self._thread.start()
        return True

    def close(self) -> None:
        """Stop accepting, finish the requests in hand, remove our socket file. Idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.pool.shutdown(wait=True, cancel_futures=True)
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

    def _accept(self) -> None:
        sock = self._sock
        while sock is not None and not self._stop.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stop.is_set():
                    return
                continue
            try:
                self.pool.submit(self._handle, conn)
            except RuntimeError:  # closing: the pool takes no more work
                conn.close()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(READ_TIMEOUT_SECONDS)
                if not runtime.owner_is_me(conn):
                    return
                try:
                    reply = self.reply(receive(conn, MAX_REQUEST_BYTES))
                except ProtocolError as exc:
                    reply = error(f"malformed request: {exc}")
                send(conn, reply)
            except OSError:  # the client went away or never finished its line
                pass

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
            }
