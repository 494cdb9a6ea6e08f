"""A small OpenAI-compatible embeddings server on 127.0.0.1, for tests and benchmarks.

Real HTTP on 127.0.0.1 (tests/fake_http.py) speaking `POST /v1/embeddings`
with float and base64 encodings. Vectors are deterministic bag-of-words hashes: it tests
plumbing, not quality. Failures are scripted: `server.script(429, 500, "hang", ...)` answers
the next requests with those, then goes back to normal; `server.down = True` answers 503
to everything. It enforces the API's limits so that batching and truncation are checked.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

import numpy as np

from tests.fake_http import ScriptedServer

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


class FakeOpenAI(ScriptedServer):
    """The server, its scripted failures and the requests it saw."""

    def __init__(self, default_dim: int = 768) -> None:
        self.default_dim = default_dim
        self.requests: list[dict[str, Any]] = []
        self.down = False
        self.fail_after: int | None = None  # answer 503 once this many requests got vectors
        self.retry_after: str | None = None  # header sent with 429/503 answers
        super().__init__()

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def served(self) -> int:
        """Requests answered with vectors."""
        return sum(1 for r in self.requests if r.get("ok"))

    def _next_failure(self) -> Any:
        scripted = super()._next_failure()
        if scripted is not None:
            return scripted
        if self.fail_after is not None and self.served() >= self.fail_after:
            return 503
        return 503 if self.down else None

    def serves(self, path: str) -> bool:
        return path.rstrip("/") == "/v1/embeddings"

    def note(self, body: dict[str, Any], path: str) -> dict[str, Any]:
        record: dict[str, Any] = {"n": len(body.get("input") or []), "body": body}
        self.requests.append(record)
        return record

    def error(self, message: str) -> dict[str, Any]:
        return _error(message)

    def failure_headers(self, status: int, headers: dict[str, str]) -> dict[str, str]:
        if status in (429, 503) and self.retry_after and not headers:
            return {"retry-after": self.retry_after}
        return headers

    def answered(self, record: dict[str, Any], status: int) -> None:
        record["ok"] = status == 200

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


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": None}}
