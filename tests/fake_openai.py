"""A small OpenAI-compatible embeddings server on 127.0.0.1, for tests and benchmarks.

Real HTTP (stdlib `http.server` in a thread, ephemeral port) speaking `POST /v1/embeddings`
with float and base64 encodings. Vectors are deterministic bag-of-words hashes: it tests
plumbing, not quality. Failures are scripted: `server.script(429, 500, "hang", ...)` answers
the next requests with those, then goes back to normal; `server.down = True` answers 503
to everything. It enforces the API's limits so that batching and truncation are checked.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

WORD = re.compile(r"\w+", re.UNICODE)
DEFAULT_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072}
MAX_INPUTS, MAX_REQUEST_BYTES, MAX_INPUT_BYTES = 2048, 300_000, 8192


def fake_vector(text: str, dim: int) -> np.ndarray:
    """Deterministic, L2-normalised bag-of-words hash of a text."""
    out = np.zeros(dim, dtype=np.float32)
    for word in WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
        out[int.from_bytes(digest, "little") % dim] += 1.0
    out[0] += 1e-3
    return out / np.linalg.norm(out)


class FakeOpenAI:
    """The server, its scripted failures and the requests it saw."""

    def __init__(self, default_dim: int = 768) -> None:
        self.default_dim = default_dim
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        self.down = False
        self.fail_after: int | None = None  # answer 503 once this many requests got vectors
        self.retry_after: str | None = None  # header sent with 429/503 answers
        self.echo_auth = False  # scripted errors repeat the Authorization header, as some do
        self._script: list[Any] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> FakeOpenAI:
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

    def served(self) -> int:
        """Requests answered with vectors."""
        return sum(1 for r in self.requests if r.get("ok"))

    def _next_failure(self) -> Any:
        with self._lock:
            if self._script:
                return self._script.pop(0)
        if self.fail_after is not None and self.served() >= self.fail_after:
            return 503
        return 503 if self.down else None

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else inputs
        model = str(body.get("model", ""))
        if not isinstance(inputs, list) or not inputs:
            return 400, _error("input must be a non-empty string or array")
        if any(not isinstance(t, str) or t == "" for t in inputs):
            return 400, _error("'$.input' is invalid: empty strings are not allowed")
        sizes = [len(t.encode()) for t in inputs]
        if (
            len(inputs) > MAX_INPUTS
            or sum(sizes) > MAX_REQUEST_BYTES
            or max(sizes) > MAX_INPUT_BYTES
        ):
            return 400, _error("request exceeds the model's limits")
        if "dimensions" in body and not model.startswith("text-embedding-3"):
            return 400, _error("This model does not support specifying dimensions.")
        dim = int(body.get("dimensions") or DEFAULT_DIMS.get(model, self.default_dim))
        data = []
        for i, text in enumerate(inputs):
            vec = fake_vector(text, dim)
            emb: Any = (
                base64.b64encode(vec.astype("<f4").tobytes()).decode()
                if body.get("encoding_format") == "base64"
                else vec.tolist()
            )
            data.append({"object": "embedding", "index": i, "embedding": emb})
        return 200, {
            "object": "list",
            "data": data,
            "model": model,
            "usage": {"prompt_tokens": sum(sizes), "total_tokens": sum(sizes)},
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw or b"{}")
                record: dict[str, Any] = {"n": len(body.get("input") or []), "body": body}
                server.requests.append(record)
                server.auth.append(self.headers.get("Authorization"))
                if self.path.rstrip("/") != "/v1/embeddings":
                    return self._send(404, _error("not found"))
                failure = server._next_failure()
                if failure == "hang":
                    server._release.wait(30)
                    return None
                if failure is not None:
                    status, headers = failure if isinstance(failure, tuple) else (failure, {})
                    if status in (429, 503) and server.retry_after and not headers:
                        headers = {"retry-after": server.retry_after}
                    said = f" for {self.headers.get('Authorization')}" if server.echo_auth else ""
                    return self._send(status, _error(f"scripted {status}{said}"), headers)
                status, payload = server.answer(body)
                record["ok"] = status == 200
                return self._send(status, payload)

            def _send(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": None}}
