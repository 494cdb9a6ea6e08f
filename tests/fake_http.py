"""A JSON-over-HTTP server on 127.0.0.1 with scripted failures: the base of the fake servers.

Real HTTP (stdlib `http.server` in a thread, ephemeral port). A subclass says which path it
serves, what it records of a request, how it answers and how its errors look
(tests/fake_openai.py, tests/fake_rerank.py). Failures are scripted:
`server.script(503, (429, {"retry-after": "9"}), "hang", ...)` answers the next requests
with those, then goes back to normal; "hang" holds the request until `stop`.

Hostile answers, for the bounded client (tests/test_hostile_servers.py, bench/hostile_http.py):
"endless" (a chunked 200 body that never ends), "trickle" (a 200 body one byte every
`TRICKLE_GAP` s), "trickle-headers" (the status line and headers the same way), "deep"
(JSON nested 100,000 levels), "huge" (a 50 MB JSON body, its length declared), "huge-chunked"
(the same, undeclared), and ("raw", status, bytes) for any body. With `echo_auth`, error
bodies repeat the Authorization header plain, base64, hex and URL-encoded, as a careless
server or proxy might.
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import urllib.parse
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TRICKLE_GAP = 0.05  # seconds between the bytes of a trickle
HUGE_BYTES = 50 * 1024 * 1024
HOSTILE = ("endless", "trickle", "trickle-headers", "deep", "huge", "huge-chunked")


class ScriptedServer:
    """The server, its scripted failures and the Authorization headers it saw."""

    def __init__(self) -> None:
        self.auth: list[str | None] = []
        self.echo_auth = False  # scripted errors repeat the Authorization header, as some do
        self._script: list[Any] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_class(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> Any:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def script(self, *answers: Any) -> None:
        """Next answers: an HTTP status (int), (status, headers) or 'hang'."""
        with self._lock:
            self._script.extend(answers)

    def _next_failure(self) -> Any:
        with self._lock:
            return self._script.pop(0) if self._script else None

    # -- what a subclass decides ----------------------------------------------------------

    def serves(self, path: str) -> bool:
        raise NotImplementedError

    def note(self, body: dict[str, Any], path: str) -> dict[str, Any]:
        """Record a request (before any failure); returns the record `answered` gets."""
        raise NotImplementedError

    def answer(self, body: dict[str, Any]) -> tuple[int, Any]:
        raise NotImplementedError

    def error(self, message: str) -> Any:
        return {"error": message}

    def failure_headers(self, status: int, headers: dict[str, str]) -> dict[str, str]:
        return headers

    def answered(self, record: dict[str, Any], status: int) -> None:
        """Called after a normal (unscripted) answer."""


def _handler_class(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = json.loads(raw or b"{}")
            record = server.note(body, self.path)
            server.auth.append(self.headers.get("Authorization"))
            if not server.serves(self.path):
                return self._send(404, server.error("not found"))
            failure = server._next_failure()
            if failure == "hang":
                server._release.wait(30)
                return None
            if failure in HOSTILE or (isinstance(failure, tuple) and failure[0] == "raw"):
                return self._hostile(failure)
            if failure is not None:
                status, headers = failure if isinstance(failure, tuple) else (failure, {})
                headers = server.failure_headers(status, headers)
                said = _echoed(self.headers.get("Authorization")) if server.echo_auth else ""
                return self._send(status, server.error(f"scripted {status}{said}"), headers)
            status, payload = server.answer(body)
            server.answered(record, status)
            return self._send(status, payload)

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _hostile(self, kind: Any) -> None:
            with contextlib.suppress(OSError):  # the client hung up, as a bounded one does
                _write_hostile(self, kind, server._release)
            self.close_connection = True

    return Handler


def _echoed(auth: str | None) -> str:
    """The Authorization header in the forms a careless server might repeat it."""
    if not auth:
        return ""
    raw = auth.encode()
    forms = (auth, base64.b64encode(raw).decode(), raw.hex(), urllib.parse.quote(auth))
    return " for " + " / ".join(forms)


HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


def _write_hostile(handler: BaseHTTPRequestHandler, kind: Any, stop: threading.Event) -> None:
    out = handler.wfile
    if isinstance(kind, tuple):  # ("raw", status, body)
        _, status, body = kind
        out.write(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\n" % status)
        out.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    else:
        WRITERS[kind](out, stop)
    out.flush()


def _trickle(out: Any, data: bytes, stop: threading.Event) -> None:
    for byte in data:
        if stop.wait(TRICKLE_GAP):
            return
        out.write(bytes([byte]))
        out.flush()


def _trickle_headers(out: Any, stop: threading.Event) -> None:
    _trickle(out, HEAD + b"X-Slow: " + b"a" * 100_000, stop)


def _trickle_body(out: Any, stop: threading.Event) -> None:
    out.write(HEAD + b"Content-Length: 1000000\r\n\r\n")
    _trickle(out, b'{"results": [' + b" " * 999_000, stop)


def _chunked(out: Any, stop: threading.Event, limit: int | None) -> None:
    """A chunked body of 64 KiB chunks: endless, or a JSON string `limit` bytes long."""
    out.write(HEAD + b"Transfer-Encoding: chunked\r\n\r\n")
    piece, chunk, sent = (b"[" if limit is None else b'{"pad": "'), b"a" * 65536, 0
    while not stop.is_set() and (limit is None or sent < limit):
        out.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        piece, sent = chunk, sent + len(piece)
    out.write(b'4\r\n"}  \r\n0\r\n\r\n')


def _huge(out: Any, stop: threading.Event) -> None:
    out.write(HEAD + b"Content-Length: %d\r\n\r\n" % (HUGE_BYTES + 13))
    out.write(b'{"pad": "')
    for _ in range(HUGE_BYTES // 65536):
        out.write(b"a" * 65536)
    out.write(b'"}  ')


def _deep(out: Any, stop: threading.Event) -> None:
    body = b"[" * 100_000 + b"]" * 100_000
    out.write(HEAD + b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


WRITERS: dict[str, Callable[[Any, threading.Event], None]] = {
    "endless": lambda out, stop: _chunked(out, stop, None),
    "huge-chunked": lambda out, stop: _chunked(out, stop, HUGE_BYTES),
    "trickle": _trickle_body,
    "trickle-headers": _trickle_headers,
    "huge": _huge,
    "deep": _deep,
}
