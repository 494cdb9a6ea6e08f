"""OpenAI embeddings, and any OpenAI-compatible server (Ollama, LM Studio, llama.cpp).

Limits of the API, kept without a tokenizer (nothing is downloaded at run time): a text's
UTF-8 byte count bounds its token count (every BPE token covers at least one byte), so each
input is cut to `max_input_tokens` bytes and each request holds at most `max_request_tokens`
bytes and `max_inputs` texts. Whitespace-only texts are never sent: they get the zero vector.

Every request is bounded (`engine/net.py`): one deadline for the whole request
(`embedder.timeout_seconds`; a search query's call, its retry included, at most
`QUERY_TIMEOUT`), a cap on the answer read (what a correct answer to it can hold), JSON
nesting limited, no redirect followed (the key and the text go to `base_url`'s host only).
Every answer is checked: one vector per text, each of the same length (the requested
`dimensions`, or the first answer's), every value a finite number.

One loop owns retries: 408/409/429/5xx, timeouts and connection errors are retried with
exponential backoff, honouring `retry-after-ms` / `retry-after`. When the server asks for a
longer wait than `max_wait` in total, or retries run out, it raises EmbedderError; the
indexer then keeps the rest of the queue for the next reindex. With a key sent, a failure
says the status and a fixed sentence, never what the server wrote (it may echo the key).
"""

from __future__ import annotations

import base64
import binascii
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine import net
from engine.embedders import EmbedderError, Vectors, register
from engine.embedders.apikeys import get_api_key, mask
from engine.net import is_local_url
from engine.settings import Settings

OPENAI_URL = "https://api.openai.com/v1"
RETRY_STATUSES = frozenset({408, 409, 429})
LOCAL_PLACEHOLDER_KEY = "local-server-needs-no-key"
PROBE_TEXT = "dimension probe"
QUERY_TIMEOUT = 10.0  # seconds: a search falls back to keywords rather than wait
MAX_DIM = 8192  # the most a vector may hold (embedder.dimensions' bound)
ANSWER_BYTES = 1 << 20  # an answer's cap: 1 MiB, plus NUMBER_BYTES per value expected
NUMBER_BYTES = 32  # one float as JSON text ("-0.012345678901234567, "), base64 takes 6
INPUT_TYPE_MARK = " (query/passage)"  # in model_id: such vectors differ from the plain model's


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


def decode_embedding(raw: Any) -> Vectors:
    """A base64 float32 string or a list of numbers, as float32; EmbedderError for
    anything else, an empty vector or a value that is not a finite number."""
    if isinstance(raw, str):
        try:
            data = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            raise EmbedderError("the embedding server sent a vector that is not base64") from None
        if len(data) % 4:
            raise EmbedderError("the embedding server sent a vector of partial numbers")
        vector = np.frombuffer(data, dtype="<f4").astype(np.float32)
    elif isinstance(raw, list) and all(_is_number(v) for v in raw):
        try:
            with np.errstate(over="ignore"):  # too large for float32: inf, refused below
                vector = np.asarray(raw, dtype=np.float64).astype(np.float32)
        except OverflowError:  # an integer of hundreds of digits
            vector = np.array([np.inf], dtype=np.float32)
    else:
        raise EmbedderError("the embedding server sent a vector that is not a list of numbers")
    if not vector.size or not np.isfinite(vector).all():
        raise EmbedderError("the embedding server sent a vector with a value that is not finite")
    return vector


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_vectors(payload: Any, count: int) -> list[Vectors]:
    """The `count` vectors of an embeddings answer, in input order; EmbedderError unless
    every index 0..count-1 comes exactly once."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise EmbedderError("the embedding server's answer holds no data")
    if len(data) != count:
        raise EmbedderError(f"the server returned {len(data)} vectors for {count} texts")
    rows: dict[int, Vectors] = {}
    for item in data:
        index = item.get("index") if isinstance(item, dict) else None
        if not isinstance(index, int) or isinstance(index, bool) or index in rows:
            raise EmbedderError("the embedding server's answer has a vector without its index")
        if not 0 <= index < count:
            raise EmbedderError("the embedding server's answer has a vector without its index")
        rows[index] = decode_embedding(item.get("embedding"))
    return [rows[i] for i in range(count)]


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
        input_type: bool = False,
        limits: Limits | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if net.http_url(base_url) is None:
            raise EmbedderError(f"embedder.base_url {base_url!r} is not an http(s) URL")
        self._model = model
        # With input_type the server embeds queries and chunks apart (E5's "query: " and
        # "passage: "): other vectors than the plain model's, so another identity (a re-embed).
        self._input_type = input_type
        self.model_id = model + INPUT_TYPE_MARK if input_type else model
        self.base_url = base_url
        self._url = base_url.strip().rstrip("/") + "/embeddings"
        # Only text-embedding-3 models accept `dimensions`; others have one fixed size.
        self._dimensions = dimensions if model.startswith("text-embedding-3") else None
        self._dim: int | None = self._dimensions
        self._limits = limits or Limits()
        self._max_retries = max_retries
        self._timeout = timeout
        self._sleep = sleep
        self._key = api_key
        self._encoding = "base64" if base_url.rstrip("/") == OPENAI_URL else "float"
        self.config: dict[str, Any] = {"embedder.model": model, "embedder.base_url": base_url}
        if dimensions is not None:
            self.config["embedder.dimensions"] = dimensions
        self.config["embedder.input_type"] = input_type
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
        """One text, failing fast (one retry, `QUERY_TIMEOUT` in all): search has a fallback."""
        if not text.strip():
            return np.zeros(self.dim, dtype=np.float32)
        text = truncate_utf8(text, self._limits.max_input_tokens)
        row: Vectors = self._embed_batch([text], quick=True)[0]
        return row

    def _embed_batch(self, inputs: list[str], quick: bool = False) -> Vectors:
        rows = parse_vectors(self._request(inputs, quick), len(inputs))
        lengths = {len(row) for row in rows}
        if len(lengths) > 1:
            raise EmbedderError("the server returned vectors of different lengths")
        (length,) = lengths
        if self._dim is None and length > MAX_DIM:
            raise EmbedderError(f"the server returned {length}-d vectors (at most {MAX_DIM})")
        if self._dim is None:
            self._dim = length
        if length != self._dim:
            raise EmbedderError(f"the server returned {length}-d vectors, expected {self._dim}-d")
        vectors = np.stack(rows)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        unit: Vectors = (vectors / norms).astype(np.float32)
        return unit

    def _payload(self, inputs: list[str], for_query: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"input": inputs, "model": self._model}
        body["encoding_format"] = self._encoding
        if self._input_type:
            body["input_type"] = "query" if for_query else "passage"
        if self._dimensions is not None:
            body["dimensions"] = self._dimensions
        return body

    def _request(self, inputs: list[str], quick: bool = False) -> Any:
        """The answer's JSON. A query's call (`quick`: one retry) ends within
        `QUERY_TIMEOUT` (or the timeout, if shorter) in all; others per request."""
        retries = min(1, self._max_retries) if quick else self._max_retries
        ends = time.monotonic() + min(self._timeout, QUERY_TIMEOUT) if quick else None
        payload, cap = self._payload(inputs, for_query=quick), self._answer_cap(len(inputs))
        waited, last = 0.0, "no attempt"
        for attempt in range(retries + 1):
            self.requests += 1
            seconds = self._timeout if ends is None else ends - time.monotonic()
            try:
                return self._attempt(payload, seconds, cap)
            except _Retryable as exc:
                last, delay = str(exc), exc.delay
            if attempt == retries:
                break
            wait = delay if delay is not None else _backoff(attempt)
            if ends is not None and wait >= ends - time.monotonic():
                break
            if waited + wait > self._limits.max_wait:
                raise EmbedderError(
                    f"{last}; the server asks to wait {wait:.0f} s, giving up "
                    "for now (the rest is embedded on the next reindex)"
                )
            waited += wait
            self._sleep(wait)
        raise EmbedderError(last if attempt == 0 else f"{last} (after {attempt + 1} attempts)")

    def _answer_cap(self, count: int) -> int:
        """The most bytes a correct answer for `count` texts can hold."""
        return ANSWER_BYTES + count * (self._dim or MAX_DIM) * NUMBER_BYTES

    def _attempt(self, payload: dict[str, Any], seconds: float, cap: int) -> Any:
        """One request; its JSON, or _Retryable, or EmbedderError."""
        headers = {"Authorization": f"Bearer {self._key or LOCAL_PLACEHOLDER_KEY}"}
        ends = time.monotonic() + seconds  # reading the answer is within it too
        try:
            reply = net.post_json(
                self._url, payload, headers=headers, deadline=seconds, max_bytes=cap
            )
            if reply.status >= 300:
                raise self._status_error(reply)
            return net.parse_json(reply.body, ends=ends)
        except net.NetError as exc:
            if exc.retryable:
                said = f"cannot reach the embedding server at {self.base_url} ({exc})"
                raise _Retryable(mask(said, self._key)) from None
            said = f"the embedding server at {self.base_url} sent {exc}"
            raise EmbedderError(mask(said, self._key)) from None

    def _status_error(self, reply: net.Reply) -> Exception:
        """The error for an answer of status ≥ 300: never the server's words when a key
        was sent (it may echo the key in any encoding)."""
        status = reply.status
        if status in (401, 403):
            return EmbedderError(f"the embedding server rejected the API key (HTTP {status})")
        said = ""
        if 300 <= status < 400:
            said = "redirects are not followed"
        elif not self._key:
            said = net.error_text(reply)
        message = mask(f"the embedding server answered HTTP {status}", self._key)
        message += f": {mask(said, self._key)}" if said else ""
        if status in RETRY_STATUSES or status >= 500:
            return _Retryable(message, net.retry_after(reply.headers))
        return EmbedderError(message)


class _Retryable(Exception):
    """A failure worth another try, with what the server asked to wait (or None)."""

    def __init__(self, message: str, delay: float | None = None) -> None:
        super().__init__(message)
        self.delay = delay


def _backoff(attempt: int) -> float:
    """Exponential backoff, 0.5 s doubling to at most 8 s, with up to 25 % jitter."""
    return min(0.5 * 2.0**attempt, 8.0) * (1 - 0.25 * random.random())


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
        input_type=settings.embedder.input_type,
    )
