"""The relevance floor: a hit with neither keyword nor semantic evidence is not shown.

Fusion ranks whatever the retrievers return, so a query about something the index does not
hold still fills the page: the vector side always has nearest neighbours, and a keyword hit
on one common word of five counts as a match. The floor asks of each hit on the page:

- keyword evidence: the IDF-weighted share of the query's terms that the chunk holds (a
  term absent from the whole index weighs the most, so "Mongolia" missing is not made up
  for by "capital");
- semantic evidence: the cosine of its best part to the query.

A hit passes with either at or above its threshold (`search.floor_keyword`,
`search.floor_cosine`, calibrated on the dev data: docs/benchmarks.md, "Relevance floor").
It applies only when the vector side ran (in keyword-only mode there is no semantic
evidence to weigh, and every keyword hit is shown as before) and to searches without
filters: a source, date or person filter asks to browse what it selects, and a vague query
about a narrow slice ("what was I afraid of" in June's journal) has little evidence of
either kind (on the personal benchmark's filter cases the floor took nDCG@10 from 0.58 to
0.09).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import apsw
import numpy as np
import numpy.typing as npt

from engine.search import fts
from engine.search.part_vectors import part_cosines
from engine.store.sql import chunks as chunks_sql
from engine.store.sql import fts as fts_sql

FREQUENCY_CAP = 1000  # documents counted per term: beyond it a term is simply common


@dataclass(frozen=True)
class Evidence:
    """Why a hit may be shown."""

    keyword: float  # 0–1: IDF-weighted share of the query's terms the chunk holds
    cosine: float  # the best part's cosine to the query (-1 when the chunk has no vector)

    def passes(self, keyword_floor: float, cosine_floor: float) -> bool:
        return self.keyword >= keyword_floor or self.cosine >= cosine_floor

    def notes(self) -> dict[str, float]:
        return {"keyword_share": round(self.keyword, 3), "cosine": round(self.cosine, 4)}


def evidence(
    conn: apsw.Connection,
    terms: Sequence[str],
    seqs: Sequence[int],
    query: npt.NDArray[np.float32],
    cosines: Mapping[int, float],
    prefix: bool = False,
) -> dict[int, Evidence]:
    """The evidence for each of `seqs` (cosines already known are reused)."""
    shares = keyword_shares(conn, terms, seqs, prefix)
    scored = dict(cosines)
    missing = [s for s in seqs if s not in scored]
    if missing:
        rows = conn.execute(chunks_sql.embedding_by_seq_sql(len(missing)), missing)
        for seq, blob in rows:
            scored[seq] = float(part_cosines(blob, query).max())
    return {s: Evidence(shares.get(s, 0.0), scored.get(s, -1.0)) for s in seqs}


def keyword_shares(
    conn: apsw.Connection, terms: Sequence[str], seqs: Sequence[int], prefix: bool = False
) -> dict[int, float]:
    """seq -> Σ idf(terms it holds) / Σ idf(every term), for chunks holding any."""
    if not terms or not seqs:
        return {}
    total = max(1, int(conn.execute(chunks_sql.max_seq_sql()).fetchone()[0]))
    held: dict[int, float] = {}
    weights = 0.0
    for index, term in enumerate(dict.fromkeys(terms)):
        expression = fts.match_expression([term], prefix_last=prefix and index == len(terms) - 1)
        if expression is None:
            continue
        try:
            frequency = conn.execute(
                fts_sql.capped_frequency_sql(), (expression, FREQUENCY_CAP)
            ).fetchone()[0]
            rows = conn.execute(fts_sql.matching_rowids_sql(len(seqs)), (expression, *seqs))
            matched = [r[0] for r in rows]
        except apsw.Error:  # a term FTS5 cannot take: it weighs nothing either way
            continue
        weight = math.log(1.0 + total / max(1, frequency))
        weights += weight
        for seq in matched:
            held[seq] = held.get(seq, 0.0) + weight
    return {seq: value / weights for seq, value in held.items()} if weights else {}
