"""A JSON-over-HTTP server on 127.0.0.1 with scripted failures: the base of the fake servers.

Real HTTP (stdlib `http.server` in a thread, ephemeral port). A subclass says which path it
serves, what it records of a request, how it answers and how its errors look
(tests/fake_openai.py, tests/fake_rerank.py). Failures are scripted:
`server.script(503, (429, {"retry-after": "9"}), "hang", ...)` answers the next requests
with those, then goes back to normal; "hang" holds the request until `stop`.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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
            if failure is not None:
                status, headers = failure if isinstance(failure, tuple) else (failure, {})
                headers = server.failure_headers(status, headers)
                said = f" for {self.headers.get('Authorization')}" if server.echo_auth else ""
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

    return Handler
