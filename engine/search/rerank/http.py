"""A re-rank server over HTTP: llama.cpp's server, text-embeddings-inference, Jina, Cohere.

One request shape per family, one parser for every answer: `POST <base_url>/rerank` with
the query and the documents (`documents`, or `texts` for text-embeddings-inference), and an
answer of `{"results": [{"index", "relevance_score"}]}` (llama.cpp, Jina, Cohere) or a list
of `{"index", "score"}` (text-embeddings-inference); every score a finite number, every
index a document's, once. The call is bounded (`engine/net.py`: one deadline for the whole
request, a cap on the answer read, JSON nesting limited, no redirect followed).

The key (optional: a server on this machine needs none) comes from MEMEX_RERANK_API_KEY or
the system keyring (service `memex`, user `rerank`), never from a setting; it goes to the
configured URL only and is never shown: with a key sent, a failure says the status and a
fixed sentence, nothing the server wrote. Retries: timeouts, refused connections and
408/409/429/5xx, `max_retries` times, waiting what the server asks (Retry-After) or
`retry_wait`, all within `timeout` seconds in total: a search never waits longer.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeGuard

from engine import net
from engine.embedders.apikeys import KEYRING_SERVICE, ApiKey, keyring_get, mask
from engine.search.rerank.base import RerankError, Scores
from engine.settings import Settings

ENV_VAR = "MEMEX_RERANK_API_KEY"
KEYRING_USER = "rerank"
RETRY_STATUSES = frozenset({408, 409, 429})
ANSWER_BYTES = 1 << 20  # an answer's cap: 1 MiB, plus room for the documents echoed once


def rerank_key(env: Mapping[str, str] | None = None) -> ApiKey | None:
    """MEMEX_RERANK_API_KEY from `env` (default: the process environment), else the
    keyring's (service `memex`, user `rerank`); a broken keyring counts as no key."""
    env = os.environ if env is None else env
    value = env.get(ENV_VAR, "").strip()
    if value:
        return ApiKey(value, "env")
    stored = keyring_get(KEYRING_USER)
    return ApiKey(stored, "keyring") if stored else None


def endpoint(base_url: str) -> str:
    """`<base_url>/rerank`, for an http(s) URL; RerankError otherwise."""
    if net.http_url(base_url) is None:
        raise RerankError(f"rerank.base_url {base_url!r} is not an http(s) URL")
    return base_url.strip().rstrip("/") + "/rerank"


def request_body(
    query: str, documents: Sequence[str], model: str, request_format: str
) -> dict[str, Any]:
    """The JSON a server of that family expects."""
    if request_format == "texts":  # text-embeddings-inference; long texts cut, not refused
        return {"query": query, "texts": list(documents), "truncate": True}
    body: dict[str, Any] = {"query": query, "documents": list(documents)}
    body["top_n"] = len(documents)  # every document scored (Jina, Cohere may default lower)
    if model:
        body["model"] = model
    return body


def parse_scores(payload: Any, count: int) -> Scores:
    """Document index -> score from either answer shape; RerankError for any other, for a
    score that is not a finite number and for a document scored twice."""
    entries = payload.get("results") if isinstance(payload, dict) else payload
    if not isinstance(entries, list):
        raise RerankError("the re-rank server's answer holds no results")
    scores: Scores = {}
    for entry in entries:
        index, score = _index_and_score(entry, count)
        if index in scores:
            raise RerankError("the re-rank server's answer scores one document twice")
        scores[index] = score
    return scores


def _index_and_score(entry: Any, count: int) -> tuple[int, float]:
    """One result's (index, score): `relevance_score` (llama.cpp, Jina, Cohere) or `score`
    (text-embeddings-inference)."""
    index = entry.get("index") if isinstance(entry, dict) else None
    if not (_is_int(index) and 0 <= index < count):
        raise RerankError("the re-rank server's answer has a result without index or score")
    raw = entry.get("relevance_score", entry.get("score"))
    score = net.finite_number(raw)
    if score is None and isinstance(raw, int | float) and not isinstance(raw, bool):
        raise RerankError("the re-rank server's answer has a score that is not a finite number")
    if score is None:
        raise RerankError("the re-rank server's answer has a result without index or score")
    return index, score


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def answer_cap(documents: Sequence[str]) -> int:
    """The most bytes an answer to these documents may hold (one echo of them fits)."""
    return ANSWER_BYTES + 2 * sum(len(d.encode("utf-8")) for d in documents)


class _Retryable(Exception):
    """A failure worth another try, with what the server asked to wait (or None)."""

    def __init__(self, message: str, delay: float | None = None) -> None:
        super().__init__(message)
        self.delay = delay


class HttpReranker:
    """One re-rank endpoint; `requests` counts what was sent, retries included."""

    name = "http"

    def __init__(
        self,
        url: str,
        *,
        model: str = "",
        request_format: str = "documents",
        api_key: str | None = None,
        timeout: float = 5.0,
        max_retries: int = 1,
        retry_wait: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = url
        self._model, self._format, self._key = model, request_format, api_key
        self._timeout, self._retries, self._wait = timeout, max_retries, retry_wait
        self._sleep = sleep
        self.requests = 0

    def scores(self, query: str, documents: Sequence[str]) -> Scores:
        body = request_body(query, documents, self._model, self._format)
        return parse_scores(self._post(body, answer_cap(documents)), len(documents))

    def _post(self, body: dict[str, Any], cap: int) -> Any:
        """The answer's JSON; every attempt and wait within `timeout` seconds in all."""
        ends, last = time.monotonic() + self._timeout, "no attempt"
        for attempt in range(self._retries + 1):
            self.requests += 1
            try:
                return self._send(body, ends - time.monotonic(), cap)
            except _Retryable as exc:
                last, delay = str(exc), exc.delay
            wait = self._wait if delay is None else delay
            if attempt == self._retries or wait >= ends - time.monotonic():
                break
            self._sleep(wait)
        raise RerankError(last if attempt == 0 else f"{last} (after {attempt + 1} attempts)")

    def _send(self, body: dict[str, Any], seconds: float, cap: int) -> Any:
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        ends = time.monotonic() + seconds  # reading the answer is within it too
        try:
            reply = net.post_json(self.url, body, headers=headers, deadline=seconds, max_bytes=cap)
            if reply.status >= 300:
                raise self._status_error(reply)
            return net.parse_json(reply.body, ends=ends)
        except net.NetError as exc:
            said = self._masked(f"the re-rank server at {self.url} sent {exc}")
            if exc.retryable:
                said = self._masked(f"cannot reach the re-rank server at {self.url} ({exc})")
                raise _Retryable(said) from None
            raise RerankError(said) from None

    def _status_error(self, reply: net.Reply) -> Exception:
        status, where = reply.status, f"the re-rank server at {self.url}"
        if status in (401, 403) and self._key:
            return RerankError(f"{where} rejected the API key (HTTP {status})")
        if status in (401, 403):
            return RerankError(
                f"{where} asks for an API key (HTTP {status}): set "
                f"{ENV_VAR} or run 'keyring set {KEYRING_SERVICE} {KEYRING_USER}'"
            )
        message = f"{where} answered HTTP {status}" + self._server_said(reply)
        if status in RETRY_STATUSES or status >= 500:
            return _Retryable(message, net.retry_after(reply.headers))
        return RerankError(message)

    def _server_said(self, reply: net.Reply) -> str:
        """What the server wrote, in parentheses, only when no key was sent (a server may
        echo a key in any encoding); " (redirects are not followed)" for a 3xx."""
        if 300 <= reply.status < 400:
            return " (redirects are not followed)"
        said = "" if self._key else net.error_text(reply)
        return f" ({self._masked(said)})" if said else ""

    def _masked(self, text: str) -> str:
        return mask(text, self._key)


def create(settings: Settings) -> HttpReranker:
    """The HTTP backend for these settings, with the key if one is set."""
    cfg = settings.rerank
    key = rerank_key()
    return HttpReranker(
        endpoint(cfg.base_url),
        model=cfg.model,
        request_format=cfg.request_format,
        api_key=None if key is None else key.value,
        timeout=cfg.timeout_seconds,
        max_retries=cfg.max_retries,
        retry_wait=cfg.retry_wait_seconds,
    )
