"""A small re-rank server on 127.0.0.1 speaking the three answer shapes, for tests.

Real HTTP on 127.0.0.1 (tests/fake_http.py), like tests/fake_openai.py.
`shape` picks the family: "llama" (llama.cpp server, `POST /v1/rerank`), "tei"
(text-embeddings-inference, `POST /rerank`, a request with `texts`, a list answer) or
"cohere" (Jina/Cohere, `POST /v2/rerank`). A request of the wrong family's shape is
answered 422, as TEI does. Scores come from `scorer(query, document)`; by default the
largest number written in the document, so a test knows the order it implies.
Failures are scripted: `server.script(503, (429, {"retry-after": "9"}), "hang", ...)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tests.fake_http import ScriptedServer

NUMBER = re.compile(r"\d+")
PATHS = {"llama": "/v1/rerank", "tei": "/rerank", "cohere": "/v2/rerank"}
BASES = {"llama": "/v1", "tei": "", "cohere": "/v2"}


def largest_number(query: str, document: str) -> float:
    """The default score: the largest number in the document (0 without one)."""
    return float(max((int(n) for n in NUMBER.findall(document)), default=0))


class FakeRerank(ScriptedServer):
    """The server, its scripted failures and the requests it saw."""

    def __init__(self, shape: str = "llama") -> None:
        self.shape = shape
        self.scorer: Callable[[str, str], float] = largest_number
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        super().__init__()

    @property
    def base_url(self) -> str:
        """What `rerank.base_url` is set to for this family."""
        return self.origin + BASES[self.shape]

    def serves(self, path: str) -> bool:
        return path == PATHS[self.shape]

    def note(self, body: dict[str, Any], path: str) -> dict[str, Any]:
        self.requests.append(body)
        self.paths.append(path)
        return body

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
