"""The query's vector, from the model that embedded the index, or a warning and None.

Search reads the active vec0 table, so the query must be embedded by the active model:
while a new embedder's table is built aside (see `engine.store.vectors`), that is the OLD one,
recreated from the settings the index recorded (`meta.embedder_config`); after the swap it
is the new one. Whenever the query cannot be embedded (no model, no key, server down,
another model), the caller falls back to BM25 and passes the warning on. After a failure
the embedder rests for `COOLDOWN_SECONDS`, so typing into the search box never waits on a
dead server once per keystroke.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import apsw
import numpy as np

from engine.embedders import Embedder, EmbedderError, Vectors, create_embedder
from engine.settings import SETTINGS_BY_NAME, Settings
from engine.store import db, vectors

IDENTITY = ("embedder.name", "embedder.model", "embedder.dimensions", "embedder.model_path")
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

    def vector(self, query: str, warnings: list[str]) -> Vectors | None:
        embedder = self._current()
        if embedder is None:
            warnings.append(f"embedder unavailable, keyword results only: {self._error}")
            return None
        if not serves_index(self.conn, embedder):
            warnings.append(
                "the index was embedded with another model; run 'memex reindex' "
                "to re-embed. Keyword results only."
            )
            return None
        if time.monotonic() < self._rest_until:
            warnings.append(f"embedder failed recently, keyword results only: {self._error}")
            return None
        try:
            qvec = embedder.embed_query(query)
        except EmbedderError as exc:
            self._error = str(exc)
            self._rest_until = time.monotonic() + COOLDOWN_SECONDS
            warnings.append(f"embedder failed, keyword results only: {exc}")
            return None
        dim = db.get_meta(self.conn, "dimension")
        if dim is not None and int(dim) != qvec.shape[-1]:
            warnings.append(
                f"the query embedder gives {qvec.shape[-1]}-d vectors but the index "
                f"holds {dim}-d ones; keyword results only."
            )
            return None
        return np.asarray(qvec, dtype=np.float32)
