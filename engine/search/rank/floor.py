"""The relevance floor: a hit with neither keyword nor semantic evidence is not shown.

Fusion ranks whatever the retrievers return, so a query about something the index does not
hold still fills the page: the vector side always has nearest neighbours, and a keyword hit
on one common word of five counts as a match. The floor asks of each hit on the page:

- keyword evidence: the IDF-weighted share of the query's terms that the chunk holds (a
  term absent from the whole index weighs the most, so "Mongolia" missing is not made up
  for by "capital");
- semantic evidence: the cosine of its best part to the query, against a cut chosen for
  this query (`cosine_cut`).

A hit passes with either at or above its threshold (`search.floor_keyword`, and the
query's cosine cut; calibrated on the dev data by bench/floor_sweep.py, which replays a
grid of cuts; the no-answer and meaning-only sets of docs/benchmarks.md measure both arms).

The cosine cut is `search.floor_cosine` for every query, lowered for one whose nearest
chunk stands out from the rest of its vector candidates: MiniLM's cosines for a true
paraphrase of a short query often sit below the absolute cut ("espresso appliance" and the
office coffee machine: 0.34), but such a query's best candidate stands well above its
median candidate, while a query about nothing in the index has a flat, low distribution.
When the best candidate's cosine is at least `search.floor_cosine_spread` above the median
of the vector candidates the pipeline already holds (no extra scan), a hit passes at
`best - search.floor_cosine_margin`, never below `search.floor_cosine_low`.

The semantic arm is closed for a query the embedder cannot read (`unread_cut`): the bundled
model reads English, and for a line in another script its nearest chunks are noise that
can stand out by chance; such a query is shown what its words find (every script is
indexed, engine/language/analyze.py).

It applies only when the vector side ran (in keyword-only mode there is no semantic
evidence to weigh, and every keyword hit is shown as before) and to searches without
filters: a source, date or person filter asks to browse what it selects, and a vague query
about a narrow slice ("what was I afraid of" in June's journal) has little evidence of
either kind (on the personal benchmark's filter cases the floor took nDCG@10 from 0.58 to
0.09).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import apsw
import numpy as np
import numpy.typing as npt

from engine.language.codes import ENGLISH
from engine.language.detect import query_language
from engine.search.context import SearchContext
from engine.search.hits import Hit
from engine.search.query import forms
from engine.search.retrieve.keyword_share import Keywords, keyword_shares
from engine.search.retrieve.part_vectors import part_cosines
from engine.store.sql import chunks as chunks_sql

ENGLISH_ONLY_EMBEDDERS = frozenset({"local"})  # the bundled MiniLM (docs/languages.md)
UNREAD = 2.0  # a cosine cut above any cosine


@dataclass(frozen=True)
class Evidence:
    """Why a hit may be shown."""

    keyword: float  # 0–1: IDF-weighted share of the query's terms the chunk holds
    cosine: float  # the best part's cosine to the query (-1 when the chunk has no vector)

    def passes(self, keyword_floor: float, cosine_floor: float) -> bool:
        return self.keyword >= keyword_floor or self.cosine >= cosine_floor

    def noted(self, hit: Hit, cut: CosineCut) -> Hit:
        """The hit with its evidence as signals and the query's cut as notes."""
        signals = {"keyword_share": round(self.keyword, 3), "cosine": round(self.cosine, 4)}
        noted = hit.evolve(signals={**hit.signals, **signals})
        return noted.noted(cosine_cut=round(cut.cut, 4), cosine_rule=cut.rule)


@dataclass(frozen=True)
class CosineRule:
    """The semantic arm's constants (search.floor_cosine*)."""

    absolute: float  # a hit at or above this always passes
    low: float  # the relative cut never goes below this
    margin: float  # how far below the query's best candidate a hit may sit
    spread: float  # how far the best must stand above the median candidate (the background)


@dataclass(frozen=True)
class CosineCut:
    """The cosine a hit needs for one query, and why, for --explain."""

    cut: float
    rule: str


def cosine_cut(cosines: Iterable[float], rule: CosineRule) -> CosineCut:
    """The query's cosine cut from its vector candidates' cosines: the absolute cut, or,
    when the best candidate stands out from the median one by `rule.spread`, the best
    minus `rule.margin` (never below `rule.low`, never above the absolute cut)."""
    ranked = sorted(cosines, reverse=True)
    absolute = CosineCut(rule.absolute, f"absolute {rule.absolute:g}")
    if not ranked:
        return absolute
    best, background = ranked[0], statistics.median(ranked)
    if best - background < rule.spread:
        return absolute
    relative = max(rule.low, best - rule.margin)
    if relative >= rule.absolute:
        return absolute
    return CosineCut(
        relative,
        f"best {best:.3f} - margin {rule.margin:g} (best stands {best - background:.3f} "
        f"above the median candidate {background:.3f})",
    )


def evidence(
    conn: apsw.Connection,
    terms: Sequence[str],
    seqs: Sequence[int],
    query: npt.NDArray[np.float32],
    cosines: Mapping[int, float],
    prefix: bool = False,
    shares: Mapping[int, float] | None = None,
    keywords: Keywords | None = None,
) -> dict[int, Evidence]:
    """The evidence for each of `seqs` (cosines, keyword shares, the terms' weights and
    what the chunks hold, when the query's keyword side knows them, are reused: the
    coverage list's, engine/search/retrieve/keyword_share.py)."""
    known = dict(shares or {})
    others = [s for s in seqs if s not in known]
    held = None if keywords is None else keywords.held(others)
    weights = None if keywords is None else keywords.weights()
    known.update(keyword_shares(conn, terms, others, prefix, held, weights))
    shares = known
    scored = dict(cosines)
    missing = [s for s in seqs if s not in scored]
    if missing:
        rows = conn.execute(chunks_sql.embedding_by_seq_sql(len(missing)), missing)
        for seq, blob in rows:
            scored[seq] = float(part_cosines(blob, query).max())
    return {s: Evidence(shares.get(s, 0.0), scored.get(s, -1.0)) for s in seqs}


def passing(
    candidates: Sequence[Hit],
    found: Mapping[int, Evidence],
    keyword_floor: float,
    cut: CosineCut,
) -> list[Hit]:
    """The candidates that pass, in order, each noted with its evidence and the query's
    cosine cut; a candidate with no evidence to weigh (a profile) always passes."""
    kept = []
    for c in candidates:
        proof = found.get(c.seq) if c.seq is not None else None
        if proof is None:
            kept.append(c)
        elif proof.passes(keyword_floor, cut.cut):
            kept.append(proof.noted(c, cut))
    return kept


class Floor:
    """The stage: the first `limit` hits that pass the floor, each noted with its
    evidence; a profile always passes. Applied only to an unfiltered search that ran the
    vector side: a source, date or person filter asks to browse what it selects."""

    name = "floor"
    reads = ("settings", "retrieved", "floored", "inputs", "conn", "terms", "prefix", "query")
    writes = ()

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        cfg, got = ctx.cfg, ctx.retrieved
        if got.qvec is None or not cfg.floor or not ctx.floored:
            return hits
        head = hits[: ctx.limit * 2]
        seqs = [h.seq for h in head if h.seq is not None]
        found = evidence(
            ctx.conn, ctx.terms, seqs, got.qvec, got.cosines, ctx.prefix, got.shares, got.keywords
        )
        rule = CosineRule(
            cfg.floor_cosine, cfg.floor_cosine_low, cfg.floor_cosine_margin, cfg.floor_cosine_spread
        )
        cut = unread_cut(ctx) or cosine_cut(got.cosines.values(), rule)
        return passing(head, found, cfg.floor_keyword, cut)[: ctx.limit]


def unread_cut(ctx: SearchContext) -> CosineCut | None:
    """A cut no cosine reaches when the embedder cannot read the query's language (the
    bundled model reads English: a Chinese or Russian line, or a confident sentence in
    another language, gets cosines that are noise), so only keyword evidence counts; None
    otherwise."""
    if ctx.settings.embedder.name not in ENGLISH_ONLY_EMBEDDERS:
        return None
    language = query_language(ctx.query, forms.languages(ctx.conn))
    if not language or language == ENGLISH:
        return None
    return CosineCut(
        UNREAD, f"the local model reads English, not this query's language ({language})"
    )
