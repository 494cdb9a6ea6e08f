"""What every stage of a search sees: the `SearchContext`, and the `Stage` protocol.

A stage is a named callable from the context and the hits so far to the hits after it
(engine/search/order.py lists them in the order they run). The context holds what the
query asked (text, checked inputs, filters, clock, settings, the people), what retrieval
found (`Retrieved`), what happened (the fields `SearchOutcome` is made of), the
user-facing warnings, and each stage's time and output size. Each stage declares the
fields it reads and writes (`reads`, `writes`); tests/test_stage_declarations.py runs every
stage on a context that records what it touches and holds the declarations to it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import apsw
import numpy as np
import numpy.typing as npt

from engine.people import PeopleMatcher
from engine.search.hits import ChunkRow, Hit
from engine.search.outcome import Missed, RerankMiss, StageTiming, VectorMiss
from engine.search.query.dates import DateRange
from engine.search.query.filters import Filters
from engine.search.query.inputs import SearchInputs
from engine.search.retrieve.keyword_share import Keywords
from engine.settings import SearchSettings, Settings

FloatArray = npt.NDArray[np.float32]


class Retrievers(Protocol):
    """The two retrievers a Searcher brings (warm in-memory or SQL backends)."""

    def keywords(
        self,
        terms: list[str],
        k: int,
        filters: Filters,
        prefix: bool = False,
        require_all: bool = False,
    ) -> Keywords: ...

    def vector(self, qvec: FloatArray, k: int, filters: Filters) -> list[tuple[int, float]]: ...

    def coverage(self) -> tuple[int, int]:
        """(chunks with a vector, all chunks)."""
        ...

    def rows(self, seqs: Sequence[int]) -> dict[int, ChunkRow]:
        """seq -> the row a result shows, for the chunks the snapshot holds."""
        ...


@dataclass(frozen=True)
class Reranked:
    """The re-ranking stage's answer: the hits, and why they were not re-ranked (None:
    they were) with the sentence for the user when it failed."""

    hits: list[Hit]
    miss: RerankMiss | None = None
    said: str | None = None


class Reranking(Protocol):
    """The re-ranking stage's backend holder (engine/search/rerank/)."""

    def apply(self, hits: list[Hit], query: str) -> Reranked: ...


@dataclass(frozen=True)
class Retrieved:
    """What the retrievers found: each one's ranked seqs, the mode that ran, whether it
    fell back to keywords (the vector side could not run), the query's vector (None when
    the vector side did not run), the vector hits' cosines, the keyword hits' shares of the
    query (empty when the coverage list did not run), the keyword side itself (None when
    it did not run) and the vector coverage of the index ((embedded, chunks); None when
    the vector side did not run) and why the vector side did not run or found nothing
    (None: it ran over some vectors)."""

    lists: dict[str, list[int]]
    mode: str
    fell_back: bool = False
    qvec: FloatArray | None = None
    cosines: dict[int, float] = field(default_factory=dict)
    shares: dict[int, float] = field(default_factory=dict)
    keywords: Keywords | None = None
    coverage: tuple[int, int] | None = None
    miss: VectorMiss | None = None


@dataclass
class SearchContext:
    """One search as its stages see it."""

    query: str
    inputs: SearchInputs
    filters: Filters
    clock: datetime
    settings: Settings
    matcher: PeopleMatcher
    conn: apsw.Connection
    terms: list[str]
    mode: str
    prefix: bool
    dated: DateRange | None  # the days the query's own words name
    floored: bool  # whether the relevance floor applies (no filter set)
    retrievers: Retrievers
    reranker: Reranking
    embedding: Callable[[], FloatArray | None] | None = None
    explain: bool = False
    retrieved: Retrieved = field(default_factory=lambda: Retrieved({}, "hybrid"))
    warnings: list[str] = field(default_factory=list)
    # why the query has no vector, as the query embedder found (it runs on its own thread)
    vector_misses: list[Missed] = field(default_factory=list)
    rerank_miss: RerankMiss | None = RerankMiss.OFF  # None: the head was re-ranked
    # the filters' source types and people the index does not know (engine/search/query/suggest.py)
    unknown_filters: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    timings: list[StageTiming] = field(default_factory=list)
    # seq -> row, read once per search: the keyword hits' while the query is still being
    # embedded (engine/search/retrieve/retrieval.py), the rest by `Locate`
    rows: dict[int, ChunkRow] = field(default_factory=dict)
    # the query's words as typed in an index of several languages (retrieve/as_written.py)
    written: list[str] = field(default_factory=list)

    @property
    def cfg(self) -> SearchSettings:
        return self.settings.search

    @property
    def limit(self) -> int:
        return self.inputs.limit

    @property
    def k(self) -> int:
        """Candidates fetched per retriever: a short list's head is a long one's."""
        return max(self.limit * self.cfg.overfetch, self.cfg.min_candidates)


class Stage(Protocol):
    """One step of the ranking: the hits after it, from the hits before it. `reads` and
    `writes` name the context's fields it reads and the ones it sets or adds to (`cfg`,
    `limit` and `k` are read through `settings` and `inputs`)."""

    name: str

    @property
    def reads(self) -> tuple[str, ...]: ...

    @property
    def writes(self) -> tuple[str, ...]: ...

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]: ...
