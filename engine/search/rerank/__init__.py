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

from engine.search.context import SearchContext
from engine.search.hits import Hit
from engine.search.rerank import http, onnx
from engine.search.rerank.base import Backend, BackendFactory, RerankError, Scores
from engine.search.rerank.stage import document_text, head_positions, reorder
from engine.settings import Settings

BACKENDS: dict[str, BackendFactory] = {"http": http.create, "onnx": onnx.create}


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

    def apply(self, candidates: list[Hit], query: str, warnings: list[str]) -> list[Hit]:
        """The candidates with their head re-ordered by the backend's scores; unchanged, with
        a warning appended, when it cannot score."""
        cfg = self.config
        if cfg.backend == "off" or not query.strip():
            return candidates
        positions = head_positions(candidates, cfg.depth)
        rows = [candidates[p].row for p in positions]
        texts = [document_text(row, cfg.max_chars) for row in rows if row is not None]
        if not texts:
            return candidates
        try:
            scores = self._scores(query, texts)
        except RerankError as exc:
            warnings.append(f"{exc}; results are not re-ranked.")
            return candidates
        return reorder(candidates, positions, scores)

    def _scores(self, query: str, documents: Sequence[str]) -> Scores:
        """The backend's scores (made on first use); RerankError while it rests after a
        failure, or when it fails now."""
        if self._failed is not None:
            when, said = self._failed
            left = self.config.cooldown_seconds - (self._clock() - when)
            if left > 0:
                raise RerankError(f"{said} (next try in {left:.0f} s)")
        try:
            if self.backend is None:
                self.backend = self._backends[self.config.backend](self._settings)
            scores = self.backend.scores(query, documents)
        except RerankError as exc:
            self._failed = (self._clock(), str(exc))
            raise
        self._failed = None
        return scores


class Rerank:
    """The stage: the head re-scored by the Searcher's `Reranker` (a no-op while
    `rerank.backend` is off)."""

    name = "rerank"

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        return ctx.reranker.apply(hits, ctx.query, ctx.warnings)


__all__ = ["BACKENDS", "Backend", "Rerank", "RerankError", "Reranker", "Scores"]
