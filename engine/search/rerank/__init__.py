"""The re-ranking stage: the head of the ranked pool re-scored by a cross-encoder.

After fusion, recency, injection and diversity, before entity-first and the relevance floor, the
first `rerank.depth` chunks are sent with the query to a backend (`rerank.backend`: an HTTP
re-rank server, `http.py`, or an ONNX model folder, `onnx.py`) and put back in the order of
its scores; profiles keep their place (stage.py). A failing backend never fails the search:
the results come back un-reranked with one warning, and the backend is left alone for
`rerank.cooldown_seconds` so typing never waits on a dead server. docs/reranking.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

from engine.search.context import Reranked, SearchContext
from engine.search.hits import Hit
from engine.search.outcome import RerankMiss
from engine.search.rerank.base import Backend, BackendFactory, RerankError, Scores
from engine.search.rerank.stage import document_text, head_positions, reorder
from engine.settings import Settings


def _http(settings: Settings) -> Backend:
    # Imported when the backend is made: the HTTP client (http.client, ssl, email) costs
    # every one-shot search milliseconds, and the stage is off by default.
    from engine.search.rerank import http

    return http.create(settings)


def _onnx(settings: Settings) -> Backend:
    from engine.search.rerank import onnx

    return onnx.create(settings)


BACKENDS: dict[str, BackendFactory] = {"http": _http, "onnx": _onnx}


class Reranker:
    """A Searcher's re-ranking stage. Holds its backend once made (at the first search with
    the stage on: nothing is loaded while `rerank.backend` is off) and the last failure."""

    def __init__(
        self,
        settings: Settings,
        *,
        backends: Mapping[str, BackendFactory] = BACKENDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = settings
        self.config = settings.rerank
        self._backends = backends
        self._clock = clock
        self.backend: Backend | None = None
        self._failed: tuple[float, str] | None = None  # when, and what was said

    def apply(self, candidates: list[Hit], query: str) -> Reranked:
        """The candidates with their head re-ordered by the backend's scores; unchanged,
        with why (and a sentence when it failed), when it cannot score."""
        cfg = self.config
        if cfg.backend == "off":
            return Reranked(candidates, RerankMiss.OFF)
        if not query.strip():
            return Reranked(candidates, RerankMiss.EMPTY_QUERY)
        positions = head_positions(candidates, cfg.depth)
        rows = [candidates[p].row for p in positions]
        texts = [document_text(row, cfg.max_chars) for row in rows if row is not None]
        if not texts:
            return Reranked(candidates, RerankMiss.NOTHING_TO_SEND)
        resting = self._rest_left() > 0
        try:
            scores = self._scores(query, texts)
        except RerankError as exc:
            miss = RerankMiss.RESTING if resting else RerankMiss.FAILED
            return Reranked(candidates, miss, f"{exc}; results are not re-ranked.")
        return Reranked(reorder(candidates, positions, scores))

    def _scores(self, query: str, documents: Sequence[str]) -> Scores:
        """The backend's scores (made on first use); RerankError while it rests after a
        failure, or when it fails now."""
        left = self._rest_left()
        if self._failed is not None and left > 0:
            raise RerankError(f"{self._failed[1]} (next try in {left:.0f} s)")
        try:
            if self.backend is None:
                self.backend = self._backends[self.config.backend](self._settings)
            scores = self.backend.scores(query, documents)
        except RerankError as exc:
            self._failed = (self._clock(), str(exc))
            raise
        self._failed = None
        return scores

    def _rest_left(self) -> float:
        """Seconds the backend still rests after its last failure (0 or less: none)."""
        if self._failed is None:
            return 0.0
        return self.config.cooldown_seconds - (self._clock() - self._failed[0])


class Rerank:
    """The stage: the head re-scored by the Searcher's `Reranker` (a no-op while
    `rerank.backend` is off)."""

    name = "rerank"
    reads = ("reranker", "query", "warnings")
    writes = ("rerank_miss", "warnings")

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        done = ctx.reranker.apply(hits, ctx.query)
        ctx.rerank_miss = done.miss
        if done.said is not None:
            ctx.warnings.append(done.said)
        return done.hits


__all__ = ["BACKENDS", "Backend", "Rerank", "RerankError", "Reranker", "Scores"]
