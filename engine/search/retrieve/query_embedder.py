"""The query's vector, from the model that embedded the index, or None and why.

Search reads the active vec0 table, so the query must be embedded by the active model:
while a new embedder's table is built aside (see `engine.store.vectors`), that is the OLD one,
recreated from the settings the index recorded (`meta.embedder_config`); after the swap it
is the new one. Whenever the query cannot be embedded (no model, no key, server down,
another model), the caller falls back to BM25 with the reason (`VectorMiss`) and its
sentence for the user. After a failure the embedder rests for `COOLDOWN_SECONDS`, so typing
into the search box never waits on a dead server once per keystroke.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import apsw
import numpy as np

from engine.embedders import Embedder, EmbedderError, Vectors, create_embedder
from engine.search.outcome import Missed, VectorMiss
from engine.settings import SETTINGS_BY_NAME, Settings
from engine.store import db, vectors

IDENTITY = (
    "embedder.name",
    "embedder.model",
    "embedder.dimensions",
    "embedder.model_path",
    "embedder.input_type",
)
COOLDOWN_SECONDS = 30.0


def index_settings(settings: Settings, stored: dict[str, Any] | None) -> Settings:
    """Settings for the index's embedder: the configured ones if they name the same model."""
    if stored is None or all(settings[k] == stored.get(k, settings[k]) for k in IDENTITY):
        return settings
    return settings.with_values(
        **{k.replace(".", "__"): v for k, v in stored.items() if k in SETTINGS_BY_NAME}
    )


def serves_index(conn: apsw.Connection, embedder: Embedder) -> bool:
    """True if the embedder is the model of the active vectors (or there are none yet)."""
    name, model = db.get_meta(conn, "embedder_name"), db.get_meta(conn, "model_id")
    if name is None:
        return True
    return (embedder.name, embedder.model_id) == (name, model)


class QueryEmbedder:
    """Keeps the right embedder for the index across queries (and across a swap)."""

    def __init__(
        self,
        settings: Settings,
        conn: apsw.Connection,
        embedder: Embedder | None = None,
        make: Callable[[Settings], Embedder] = create_embedder,
    ) -> None:
        """`embedder` fixes the model; otherwise `make` loads the index's (an engine passes
        its EmbedderPool's `get`, so its readers share one model)."""
        self.settings = settings
        self.conn = conn
        self._make = make
        self._fixed = embedder is not None
        self._embedder = embedder
        self._error: str | None = None
        self._for_key: str | None = None
        self._rest_until = 0.0

    def _current(self) -> Embedder | None:
        active = db.get_meta(self.conn, "embedder")
        if self._fixed or (active == self._for_key and (self._embedder or self._error)):
            return self._embedder
        self._for_key, self._embedder, self._error = active, None, None
        try:
            chosen = index_settings(self.settings, vectors.active_config(self.conn))
            self._embedder = self._make(chosen)
        except EmbedderError as exc:
            self._error = str(exc)
        return self._embedder

    def vector(self, query: str, misses: list[Missed]) -> Vectors | None:
        """The query's vector, or None with why added to `misses`."""
        return self.start(query, misses, background=False)()

    def start(
        self, query: str, misses: list[Missed], background: bool = True
    ) -> Callable[[], Vectors | None]:
        """Begin embedding the query (on a thread of its own with `background`, so the
        keyword side runs meanwhile); the call returned waits for the vector, or None
        with why added to `misses`. The index is read here, on the caller's thread and
        snapshot."""
        embedder = self._ready(misses)
        if embedder is None:
            return lambda: None
        dim = db.get_meta(self.conn, "dimension")
        pending = _Pending(embedder.embed_query, query, background)
        return lambda: self._checked(pending, dim, misses)

    def _ready(self, misses: list[Missed]) -> Embedder | None:
        embedder = self._current()
        if embedder is None:
            said = f"embedder unavailable, keyword results only: {self._error}"
            misses.append((VectorMiss.EMBEDDER_UNAVAILABLE, said))
            return None
        if not serves_index(self.conn, embedder):
            said = (
                "the index was embedded with another model; run 'memex reindex' "
                "to re-embed. Keyword results only."
            )
            misses.append((VectorMiss.OTHER_MODEL, said))
            return None
        if time.monotonic() < self._rest_until:
            said = f"embedder failed recently, keyword results only: {self._error}"
            misses.append((VectorMiss.EMBEDDER_RESTING, said))
            return None
        return embedder

    def _checked(self, pending: _Pending, dim: str | None, misses: list[Missed]) -> Vectors | None:
        try:
            qvec = pending.result()
        except EmbedderError as exc:
            self._error = str(exc)
            self._rest_until = time.monotonic() + COOLDOWN_SECONDS
            said = f"embedder failed, keyword results only: {exc}"
            misses.append((VectorMiss.EMBEDDER_FAILED, said))
            return None
        if dim is not None and int(dim) != qvec.shape[-1]:
            said = (
                f"the query embedder gives {qvec.shape[-1]}-d vectors but the index "
                f"holds {dim}-d ones; keyword results only."
            )
            misses.append((VectorMiss.DIMENSIONS_DIFFER, said))
            return None
        return np.asarray(qvec, dtype=np.float32)


class _Pending:
    """One call run on a daemon thread of its own (or at once, without `background`): a
    query's embedding is milliseconds of onnxruntime, which lets go of the GIL, so the
    keyword side runs meanwhile. A daemon thread, not a pool's: Ctrl+C never waits on a slow
    embedding server at exit."""

    def __init__(self, call: Callable[[str], Vectors], text: str, background: bool) -> None:
        self._value: Vectors | None = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        if background:
            threading.Thread(target=self._run, args=(call, text), daemon=True).start()
        else:
            self._run(call, text)

    def _run(self, call: Callable[[str], Vectors], text: str) -> None:
        try:
            self._value = call(text)
        except BaseException as exc:  # re-raised on the waiting thread
            self._error = exc
        finally:
            self._done.set()

    def result(self) -> Vectors:
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value
