"""The keyword share: how much of the query a keyword hit holds, and a list ranked by it.

BM25 adds up per-term scores, so a chunk that repeats one rare word can outrank one that
holds every word of the question once; on chat windows (~10 short messages) that is most
of what goes wrong on the keyword side. The coverage list re-orders the keyword hits by the
IDF-weighted share of the query's distinct terms each holds (ties keep BM25's order) and
joins the fusion as one more vote (`search.coverage_weight`), scaled by the share
(engine/search/retrieve/retrieval.py). Without it (and the vector list at 1 again) hybrid MRR@10
falls on LoCoMo and QMSum and on the personal benchmark (docs/benchmarks.md, the
ablation rows of `bench.quality` and `bench.personal`). The same shares are the floor's keyword evidence
(engine/search/rank/floor.py). The terms a BM25 hit holds come back with the BM25 query itself
(`fts.bm25_sql`'s third column); only hits from elsewhere are looked up row by row.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol

import apsw

from engine.search.query import fts
from engine.search.query.filters import Filters, chunk_filter_sql
from engine.store.sql import chunks as chunks_sql
from engine.store.sql import fts as fts_sql

FREQUENCY_CAP = 1000  # documents counted per term: beyond it a term is simply common


class Keywords(Protocol):
    """One query's keyword side: its BM25 hits and what any chunk holds of the query. From
    FTS5 (`Fts5Keywords`) or from the warm in-memory index (engine/search/retrieve/keyword_index.py
    `KeywordHits`), with the same answers."""

    @property
    def top(self) -> dict[int, int]:
        """seq -> the terms it holds (bit i: terms[i]) of the best BM25 hits, best first."""
        ...

    def held(self, seqs: Sequence[int]) -> dict[int, int]:
        """seq -> the terms it holds, for any chunk."""
        ...

    def weights(self) -> list[float]:
        """Each term's weight (`term_weights`)."""
        ...


class Fts5Keywords:
    """The keyword side as FTS5 answers it: the hits of `fts.bm25_sql`, and row-by-row
    lookups of what the others hold."""

    def __init__(
        self, conn: apsw.Connection, terms: Sequence[str], prefix: bool, top: dict[int, int]
    ) -> None:
        self.conn, self.terms, self.prefix, self.top = conn, list(terms), prefix, top
        self._weights: list[float] | None = None

    @classmethod
    def search(
        cls,
        conn: apsw.Connection,
        terms: Sequence[str],
        k: int,
        filters: Filters,
        prefix: bool = False,
        require_all: bool = False,
    ) -> Fts5Keywords:
        """The k best BM25 hits through FTS5's `rank` (`fts.bm25_sql`), filtered."""
        expression = fts.match_expression(list(terms), prefix, require_all)
        if expression is None:
            return cls(conn, terms, prefix, {})
        where, params = chunk_filter_sql(filters, people_index=True)
        try:
            rows = conn.execute(fts.bm25_sql(where), (expression, *params, k)).fetchall()
        except apsw.Error:
            rows = []
        return cls(conn, terms, prefix, {r[0]: r[2] for r in rows})

    def held(self, seqs: Sequence[int]) -> dict[int, int]:
        known = {s: self.top[s] for s in seqs if s in self.top}
        missing = [s for s in seqs if s not in known]
        return known | held_terms(self.conn, self.terms, missing, self.prefix)

    def weights(self) -> list[float]:
        if self._weights is None:
            self._weights = term_weights(self.conn, self.terms, self.prefix)
        return self._weights


def term_weights(conn: apsw.Connection, terms: Sequence[str], prefix: bool = False) -> list[float]:
    """Each term's weight, log(1 + N / df) with df counted up to `FREQUENCY_CAP`: a term
    absent from the whole index weighs the most, so "Mongolia" missing is not made up for
    by "capital" (0 for a term FTS5 cannot take: it weighs nothing either way)."""
    total = int(conn.execute(chunks_sql.max_seq_sql()).fetchone()[0])
    weights = []
    for index, term in enumerate(terms):
        expression = fts.match_expression([term], prefix_last=prefix and index == len(terms) - 1)
        try:
            frequency = conn.execute(
                fts_sql.capped_frequency_sql(), (expression, FREQUENCY_CAP)
            ).fetchone()[0]
        except apsw.Error:
            weights.append(0.0)
            continue
        weights.append(weight(total, frequency))
    return weights


def weight(total: int, frequency: int) -> float:
    """A term's weight from the document count and how many documents hold it (counted
    up to `FREQUENCY_CAP`)."""
    return math.log(1.0 + max(1, total) / max(1, min(frequency, FREQUENCY_CAP)))


def held_terms(
    conn: apsw.Connection, terms: Sequence[str], seqs: Sequence[int], prefix: bool = False
) -> dict[int, int]:
    """seq -> the terms it holds, as a bitmask (bit i: terms[i]), for each of `seqs`."""
    expression = fts.match_expression(list(terms), prefix_last=prefix)
    held = dict.fromkeys(seqs, 0)
    if expression is None:
        return held
    try:
        for seq in seqs:
            for (mask,) in conn.execute(fts_sql.held_by_rowid_sql(), (expression, seq)):
                held[seq] = int(mask)
    except apsw.Error:
        pass
    return held


def keyword_shares(
    conn: apsw.Connection,
    terms: Sequence[str],
    seqs: Sequence[int],
    prefix: bool = False,
    held: Mapping[int, int] | None = None,
    weights: Sequence[float] | None = None,
) -> dict[int, float]:
    """seq -> Σ weight(terms it holds) / Σ weight(every term), for each of `seqs` (0 when
    it holds none). `held`: the bitmasks already known (the BM25 query returns them for
    its hits, `fts.bm25_sql`); the others are looked up row by row. `weights`: the
    terms' `term_weights`, when the caller has them already."""
    if not terms or not seqs:
        return dict.fromkeys(seqs, 0.0)
    known = dict(held or {})
    missing = [s for s in seqs if s not in known]
    if missing:
        known.update(held_terms(conn, terms, missing, prefix))
    if weights is None:
        weights = term_weights(conn, terms, prefix)
    total = sum(weights)
    if total <= 0:
        return dict.fromkeys(seqs, 0.0)
    bits = list(enumerate(weights))
    return {s: sum(w for i, w in bits if known[s] >> i & 1) / total for s in seqs}


def by_share(seqs: Sequence[int], shares: Mapping[int, float]) -> list[int]:
    """`seqs` (a ranked list) re-ordered by their share, highest first; ties keep their order."""
    return sorted(seqs, key=lambda s: -shares.get(s, 0.0))
