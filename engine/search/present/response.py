"""What a search returns, the options it takes, and the errors it raises."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from engine.records import SearchResult
from engine.search.errors import NoIndexError, SearchError
from engine.search.outcome import SearchOutcome, StageTiming

MODES = ("hybrid", "vector", "bm25")
__all__ = ["MODES", "NoIndexError", "SearchError", "SearchOptions", "SearchResponse", "StageTiming"]


@dataclass
class SearchResponse:
    """Results plus what a front end should know: the mode used, what happened as fields
    (`outcome`: read these, never the warnings), warnings as sentences for people, timing."""

    query: str
    mode: str
    results: list[SearchResult]
    warnings: list[str] = field(default_factory=list)
    took_ms: float = 0.0
    # The days searched, as understood: {"since", "until", "from_query"} (ISO days, or None
    # for an open end; the query's date words when the range came from the query); None
    # when the search had no date range.
    dates: dict[str, str | None] | None = None
    # The query phase, each stage in the order it ran (engine/search/order.py), then the
    # dressing: `--explain`.
    stages: list[StageTiming] = field(default_factory=list)
    outcome: SearchOutcome = field(default_factory=SearchOutcome)

    def stage_lines(self) -> list[str]:
        """`--explain`'s stage table: one line per stage, its time and the hits it kept."""
        width = max((len(t.name) for t in self.stages), default=0)
        return [f"{t.name:<{width}}  {t.ms:7.2f} ms  {t.kept:>5} kept" for t in self.stages]

    def stages_json(self) -> list[dict[str, Any]]:
        return [{"stage": t.name, "ms": round(t.ms, 3), "kept": t.kept} for t in self.stages]

    def as_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "took_ms": round(self.took_ms, 2),
            "warnings": self.warnings,
            "dates": self.dates,
            "outcome": self.outcome.as_json(),
            "results": [r.as_json() for r in self.results],
        }


class SearchOptions(TypedDict, total=False):
    """The keyword arguments of a search, past the query, limit and source types; the
    engine's and the module's search functions take them as `**options`."""

    since: str | None  # a day, month, year or phrase: "2026-05-31", "2026-05", "last week"
    until: str | None  # the same, inclusive (a month's or a week's last day)
    people: Sequence[str] | None  # names or aliases; chunks naming any of them
    mode: str  # hybrid | vector | bm25
    explain: bool  # per-result ranks and stage effects
    prefix: bool  # the last term matches as a prefix (typing in the window)
