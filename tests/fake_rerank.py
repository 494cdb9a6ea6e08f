"""A small re-rank server on 127.0.0.1 speaking the three answer shapes, for tests.

Real HTTP (stdlib `http.server` in a thread, ephemeral port), like tests/fake_openai.py.
`shape` picks the family: "llama" (llama.cpp server, `POST /v1/rerank`), "tei"
(text-embeddings-inference, `POST /rerank`, a request with `texts`, a list answer) or
"cohere" (Jina/Cohere, `POST /v2/rerank`). A request of the wrong family's shape is
answered 422, as TEI does. Scores come from `scorer(query, document)`; by default the
largest number written in the document, so a test knows the order it implies.
Failures are scripted: `server.script(503, (429, {"retry-after": "9"}), "hang", ...)`.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

NUMBER = re.compile(r"\d+")
PATHS = {"llama": "/v1/rerank", "tei": "/rerank", "cohere": "/v2/rerank"}
BASES = {"llama": "/v1", "tei": "", "cohere": "/v2"}


def largest_number(query: str, document: str) -> float:
    """The default score: the largest number in the document (0 without one)."""
    return float(max((int(n) for n in NUMBER.findall(document)), default=0))


class FakeRerank:
    """The server, its scripted failures and the requests it saw."""

    def __init__(self, shape: str = "llama") -> None:
        self.shape = shape
        self.scorer: Callable[[str, str], float] = largest_number
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        self.paths: list[str] = []
        self.echo_auth = False  # error answers repeat the Authorization header
        self._script: list[Any] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def base_url(self) -> str:
        """What `rerank.base_url` is set to for this family."""
        return self.origin + BASES[self.shape]

    def start(self) -> FakeRerank:
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

    def answer(self, body: dict[str, Any]) -> tuple[int, Any]:
        key = "texts" if self.shape == "tei" else "documents"
        documents, query = body.get(key), body.get("query")
        if not isinstance(query, str) or not isinstance(documents, list) or not documents:
            return 422, {"error": f"query and {key} are required", "error_type": "Validation"}
        scored = [(i, self.scorer(query, str(d))) for i, d in enumerate(documents)]
        if self.shape == "tei":
            ranked = sorted(scored, key=lambda p: -p[1])
            return 200, [{"index": i, "score": s} for i, s in ranked]
        if self.shape == "llama":  # in document order, as llama.cpp answers
            results = [{"index": i, "relevance_score": s} for i, s in scored]
            usage = {"prompt_tokens": 1, "total_tokens": 1}
            return 200, {"model": body.get("model", ""), "object": "list", "usage": usage,
                         "results": results}  # fmt: skip
        ranked = sorted(scored, key=lambda p: -p[1])[: int(body.get("top_n") or len(scored))]
        results = [{"index": i, "relevance_score": s} for i, s in ranked]
        return 200, {"id": "r-1", "results": results, "meta": {"billed_units": {"search_units": 1}}}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw or b"{}")
                server.requests.append(body)
                server.auth.append(self.headers.get("Authorization"))
                server.paths.append(self.path)
                if self.path != PATHS[server.shape]:
                    return self._send(404, {"error": "not found"})
                failure = server._next_failure()
                if failure == "hang":
                    server._release.wait(30)
                    return None
                if failure is not None:
                    status, headers = failure if isinstance(failure, tuple) else (failure, {})
                    said = f" for {self.headers.get('Authorization')}" if server.echo_auth else ""
                    return self._send(status, {"error": f"scripted {status}{said}"}, headers)
                return self._send(*server.answer(body))

            def _send(
                self, status: int, payload: Any, headers: dict[str, str] | None = None
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
