"""A re-rank server over HTTP: llama.cpp's server, text-embeddings-inference, Jina, Cohere.

One request shape per family, one parser for every answer: `POST <base_url>/rerank` with
the query and the documents (`documents`, or `texts` for text-embeddings-inference), and an
answer of `{"results": [{"index", "relevance_score"}]}` (llama.cpp, Jina, Cohere) or a list
of `{"index", "score"}` (text-embeddings-inference). Stdlib `urllib`, so no dependency.

The key (optional: a server on this machine needs none) comes from MEMEX_RERANK_API_KEY or
the system keyring (service `memex`, user `rerank`), never from a setting; it is never
sent along a redirect (redirects are not followed) and never shown in a message. Retries:
timeouts, refused connections and 408/409/429/5xx, `max_retries` times, waiting what the
server asks (Retry-After) or `retry_wait`; a search never waits longer than that.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeGuard
from urllib.parse import urlparse

from engine.embedders.apikeys import KEYRING_SERVICE, ApiKey, is_local_url, keyring_get
from engine.search.rerank.base import RerankError, Scores
from engine.settings import Settings

ENV_VAR = "MEMEX_RERANK_API_KEY"
KEYRING_USER = "rerank"
RETRY_STATUSES = frozenset({408, 409, 429})
ERROR_BODY_CHARS = 200  # of an error answer, in a warning


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
    try:
        parsed = urlparse(base_url.strip())
        host = parsed.hostname
    except ValueError:  # a malformed address ("http://[::1")
        host = None
    if host is None or parsed.scheme not in ("http", "https"):
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
    """Document index -> score from either answer shape; RerankError for any other."""
    entries = payload.get("results") if isinstance(payload, dict) else payload
    if not isinstance(entries, list):
        raise RerankError("the re-rank server's answer holds no results")
    return dict(_index_and_score(entry, count) for entry in entries)


def _index_and_score(entry: Any, count: int) -> tuple[int, float]:
    """One result's (index, score): `relevance_score` (llama.cpp, Jina, Cohere) or `score`
    (text-embeddings-inference)."""
    index = entry.get("index") if isinstance(entry, dict) else None
    score = entry.get("relevance_score", entry.get("score")) if index is not None else None
    if _is_int(index) and 0 <= index < count and _is_number(score):
        return index, float(score)
    raise RerankError("the re-rank server's answer has a result without index or score")


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


class _Refused(urllib.request.HTTPRedirectHandler):
    """Redirects are answers, not followed: the key must go only to the configured URL."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


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
        # A server on this machine is reached directly, whatever proxy the environment names.
        handlers: list[Any] = [_Refused()]
        if is_local_url(url):
            handlers.append(urllib.request.ProxyHandler({}))
        self._opener = urllib.request.build_opener(*handlers)
        self.requests = 0

    def scores(self, query: str, documents: Sequence[str]) -> Scores:
        body = request_body(query, documents, self._model, self._format)
        return parse_scores(self._post(json.dumps(body).encode("utf-8")), len(documents))

    def _post(self, data: bytes) -> Any:
        last = "no attempt"
        for attempt in range(self._retries + 1):
            self.requests += 1
            try:
                return self._send(data)
            except _Retryable as exc:
                last, delay = str(exc), exc.delay
            wait = self._wait if delay is None else delay
            if attempt == self._retries or wait > self._timeout:
                break
            self._sleep(wait)
        raise RerankError(last if attempt == 0 else f"{last} (after {attempt + 1} attempts)")

    def _send(self, data: bytes) -> Any:
        request = urllib.request.Request(self.url, data=data, method="POST")
        request.add_header("Content-Type", "application/json")
        request.add_header("Accept", "application/json")
        if self._key:
            request.add_unredirected_header("Authorization", f"Bearer {self._key}")
        try:
            with self._opener.open(request, timeout=self._timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise self._status_error(exc) from None
        except (OSError, http.client.HTTPException) as exc:  # refused, reset, timed out
            reason = getattr(exc, "reason", exc)
            name = type(reason).__name__ if isinstance(reason, BaseException) else "URLError"
            raise _Retryable(f"cannot reach the re-rank server at {self.url} ({name})") from None
        try:
            return json.loads(raw)
        except ValueError:
            raise RerankError(f"the re-rank server at {self.url} did not answer JSON") from None

    def _status_error(self, exc: urllib.error.HTTPError) -> Exception:
        status = exc.code
        if status in (401, 403) and self._key:
            return RerankError(
                f"the re-rank server at {self.url} rejected the API key (HTTP {status})"
            )
        if status in (401, 403):
            return RerankError(
                f"the re-rank server at {self.url} asks for an API key (HTTP {status}): set "
                f"{ENV_VAR} or run 'keyring set {KEYRING_SERVICE} {KEYRING_USER}'"
            )
        said = self._masked(_body_of(exc))
        message = f"the re-rank server at {self.url} answered HTTP {status}" + (
            f" ({said})" if said else ""
        )
        if status in RETRY_STATUSES or status >= 500:
            return _Retryable(message, _retry_after(exc.headers))
        return RerankError(message)

    def _masked(self, text: str) -> str:
        """An error body without the key (servers and proxies echo what they were sent)."""
        if self._key:
            text = text.replace(self._key, "***")
        return " ".join(text.split())[:ERROR_BODY_CHARS]


def _body_of(exc: urllib.error.HTTPError) -> str:
    """What an error answer says: its JSON `error` or `message` (Cohere, TEI, llama.cpp's
    `error.message`), else its text."""
    try:
        text = exc.read().decode("utf-8", errors="replace")
    except (OSError, http.client.HTTPException):
        return ""
    try:
        said = json.loads(text)
    except ValueError:
        return text
    if isinstance(said, dict):
        said = said.get("error", said.get("message", said))
    if isinstance(said, dict):
        said = said.get("message", said)
    return said if isinstance(said, str) else text


def _retry_after(headers: Any) -> float | None:
    """Seconds the server asks to wait (Retry-After as seconds), or None."""
    value = headers.get("retry-after") if headers is not None else None
    try:
        return None if value is None else max(0.0, float(value))
    except ValueError:
        return None


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
