"""OpenAI embeddings, and any OpenAI-compatible server (Ollama, LM Studio, llama.cpp).

Limits of the API, kept without a tokenizer (nothing is downloaded at run time): a text's
UTF-8 byte count bounds its token count (every BPE token covers at least one byte), so each
input is cut to `max_input_tokens` bytes and each request holds at most `max_request_tokens`
bytes and `max_inputs` texts. Whitespace-only texts are never sent: they get the zero vector.

One loop owns retries (the client's own are off): 408/409/429/5xx, timeouts and connection
errors are retried with exponential backoff, honouring `retry-after-ms` / `retry-after`.
When the server asks for a longer wait than `max_wait` in total, or retries run out, it
raises EmbedderError; the indexer then keeps the rest of the queue for the next reindex.
"""

from __future__ import annotations

import base64
import random
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.embedders import EmbedderError, Vectors, register
from engine.embedders.apikeys import get_api_key, is_local_url
from engine.settings import Settings

OPENAI_URL = "https://api.openai.com/v1"
RETRY_STATUSES = frozenset({408, 409, 429})
LOCAL_PLACEHOLDER_KEY = "local-server-needs-no-key"
PROBE_TEXT = "dimension probe"
QUERY_TIMEOUT = 10.0  # seconds: a search falls back to keywords rather than wait
# OpenAI key shapes, whole or echoed in part ("sk-proj-Zx81****HdRj"): a server or proxy may
# repeat what it was sent in an error body, which ends up in a warning or the run log.
_KEY_LIKE = re.compile(r"sk-[\w\-*]{4,}")


def mask_secrets(text: str, key: str | None) -> str:
    """`text` without the API key, or anything shaped like an OpenAI key."""
    if key:
        text = text.replace(key, "sk-***")
    return _KEY_LIKE.sub("sk-***", text)


@dataclass(frozen=True)
class Limits:
    """Per-request limits of the embeddings API (token counts bounded by UTF-8 bytes)."""

    max_inputs: int = 2048
    max_request_tokens: int = 300_000
    max_input_tokens: int = 8192
    max_wait: float = 60.0  # seconds of server-requested waiting before giving up


def truncate_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of `text` whose UTF-8 encoding fits in `max_bytes`."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode("utf-8", errors="ignore")


def plan_batches(sizes: Sequence[int], limits: Limits) -> Iterator[range]:
    """Consecutive index ranges that respect the input-count and token budgets."""
    start, used = 0, 0
    for i, size in enumerate(sizes):
        if i > start and (
            i - start >= limits.max_inputs or used + size > limits.max_request_tokens
        ):
            yield range(start, i)
            start, used = i, 0
        used += size
    if start < len(sizes):
        yield range(start, len(sizes))


def retry_after(headers: Any) -> float | None:
    """Seconds the server asks us to wait, from retry-after-ms or retry-after."""
    if headers is None:
        return None
    for header, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / divisor)
        except ValueError:
            continue
    return None


def decode_embedding(raw: Any) -> Vectors:
    """A base64 float32 string or a list of floats, as float32."""
    if isinstance(raw, str):
        return np.frombuffer(base64.b64decode(raw), dtype="<f4").astype(np.float32)
    return np.asarray(raw, dtype=np.float32)


class OpenAIEmbedder:
    """Remote embeddings; the dimension comes from the model's first answer."""

    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = OPENAI_URL,
        api_key: str | None = None,
        dimensions: int | None = None,
        timeout: float = 30.0,
        max_retries: int = 5,
        limits: Limits | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        try:
            import openai
        except ImportError:
            raise EmbedderError(
                "the openai package is not installed (pip install 'memex[openai]')"
            ) from None
        self._openai = openai
        self.model_id = model
        self.base_url = base_url
        # Only text-embedding-3 models accept `dimensions`; others have one fixed size.
        self._dimensions = dimensions if model.startswith("text-embedding-3") else None
        self._dim: int | None = self._dimensions
        self._limits = limits or Limits()
        self._max_retries = max_retries
        self._timeout = timeout
        self._sleep = sleep
        self._key = api_key  # kept only to mask it in messages
        self._encoding = "base64" if base_url.rstrip("/") == OPENAI_URL else "float"
        self._client = openai.OpenAI(
            api_key=api_key or LOCAL_PLACEHOLDER_KEY,
            base_url=base_url,
            timeout=timeout,
            max_retries=0,
        )
        self.config: dict[str, Any] = {"embedder.model": model, "embedder.base_url": base_url}
        if dimensions is not None:
            self.config["embedder.dimensions"] = dimensions
        self.requests = 0  # HTTP requests sent, retries included (for tests and benchmarks)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._embed_batch([PROBE_TEXT])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed in API-sized requests; empty texts get the zero vector; order is kept."""
        limit = self._limits.max_input_tokens
        keep = [i for i, t in enumerate(texts) if t.strip()]
        inputs = [truncate_utf8(texts[i], limit) for i in keep]
        parts: list[Vectors] = []
        for batch in plan_batches([len(t.encode("utf-8")) for t in inputs], self._limits):
            parts.append(self._embed_batch(inputs[batch.start : batch.stop]))
        out = np.zeros((len(texts), self.dim if texts else (self._dim or 0)), dtype=np.float32)
        if parts:
            out[keep] = np.concatenate(parts)
        return out

    def embed_query(self, text: str) -> Vectors:
        """One text, failing fast (one retry, a short timeout): search has a fallback."""
        if not text.strip():
            return np.zeros(self.dim, dtype=np.float32)
        text = truncate_utf8(text, self._limits.max_input_tokens)
        row: Vectors = self._embed_batch([text], quick=True)[0]
        return row

    def _embed_batch(self, inputs: list[str], quick: bool = False) -> Vectors:
        response = self._request(inputs, quick)
        data = sorted(response.data, key=lambda item: item.index)
        if len(data) != len(inputs):
            raise EmbedderError(f"the server returned {len(data)} vectors for {len(inputs)} texts")
        vectors = np.stack([decode_embedding(item.embedding) for item in data])
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        if vectors.shape[1] != self._dim:
            raise EmbedderError(
                f"the server returned {vectors.shape[1]}-d vectors, expected {self._dim}-d"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        unit: Vectors = (vectors / norms).astype(np.float32)
        return unit

    def _request(self, inputs: list[str], quick: bool = False) -> Any:
        extra: dict[str, Any] = {"encoding_format": self._encoding}
        if self._dimensions is not None:
            extra["dimensions"] = self._dimensions
        retries = min(1, self._max_retries) if quick else self._max_retries
        if quick:
            extra["timeout"] = min(self._timeout, QUERY_TIMEOUT)
        waited, last = 0.0, "no attempt"
        for attempt in range(retries + 1):
            self.requests += 1
            try:
                return self._client.embeddings.create(input=inputs, model=self.model_id, **extra)
            except self._openai.APIStatusError as exc:
                status = exc.status_code
                if status not in RETRY_STATUSES and status < 500:
                    raise EmbedderError(_describe(exc, self._key)) from None
                delay, last = retry_after(exc.response.headers), _describe(exc, self._key)
            except self._openai.APIConnectionError as exc:
                delay, last = None, _describe(exc, self._key)
            if attempt == retries:
                break
            wait = delay if delay is not None else _backoff(attempt)
            if waited + wait > self._limits.max_wait:
                raise EmbedderError(
                    f"{last}; the server asks to wait {wait:.0f} s, giving up "
                    "for now (the rest is embedded on the next reindex)"
                )
            waited += wait
            self._sleep(wait)
        raise EmbedderError(f"{last} (after {retries + 1} attempts)")


def _backoff(attempt: int) -> float:
    """Exponential backoff, 0.5 s doubling to at most 8 s, with up to 25 % jitter."""
    return min(0.5 * 2.0**attempt, 8.0) * (1 - 0.25 * random.random())


def _describe(exc: Exception, key: str | None) -> str:
    """One sentence about a failed request; never the key (error bodies can echo it)."""
    status = getattr(exc, "status_code", None)
    if status is None:
        return f"cannot reach the embedding server ({type(exc).__name__})"
    if status in (401, 403):
        return f"the embedding server rejected the API key (HTTP {status})"
    # Masked before it is cut: a key cut in half would no longer match itself.
    message = mask_secrets(str(getattr(exc, "message", "") or exc), key)[:200]
    return f"the embedding server answered HTTP {status}: {message}"


@register("openai")
def _create(settings: Settings) -> OpenAIEmbedder:
    base_url = settings.embedder.base_url
    # A server on this machine (Ollama, LM Studio, llama.cpp) needs no key: it gets the
    # placeholder, so the OpenAI key is only ever sent to a remote base_url.
    key = None if is_local_url(base_url) else get_api_key()
    if key is None and not is_local_url(base_url):
        raise EmbedderError("no OpenAI API key: set OPENAI_API_KEY or run 'memex key set'")
    return OpenAIEmbedder(
        settings.embedder.model,
        base_url=base_url,
        api_key=None if key is None else key.value,
        dimensions=settings.embedder.dimensions,
        timeout=settings.embedder.timeout_seconds,
        max_retries=settings.embedder.max_retries,
    )
