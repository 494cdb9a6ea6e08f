"""Retrieval: the keyword and vector sides' ranked lists.

`Retrieve` runs the retrievers the mode asks for and records what happened as fields of
`Retrieved` (the mode that ran, whether it fell back to keywords and why, the vector
coverage): the hybrid adds the keyword hits re-ordered by the share of the query they hold
(engine/search/retrieve/keyword_share.py), a vote scaled by that share. Its hits are the
distinct chunks of every list, each with its rank in each; the fuse stage scores them by
Reciprocal Rank Fusion (engine/search/rank/fuse.py).
"""

from __future__ import annotations

from engine.search.context import FloatArray, Retrieved, SearchContext
from engine.search.hits import Hit
from engine.search.outcome import VectorMiss
from engine.search.query.aliases import expanded_terms
from engine.search.retrieve import as_written, feedback, keyword_share
from engine.search.retrieve.vector_coverage import coverage_warning


class Retrieve:
    """Each retriever's ranked chunks, as hits ranked in each list."""

    name = "retrieve"
    reads = (
        "mode", "inputs", "settings", "terms", "query", "matcher", "filters", "prefix",
        "retrievers", "conn", "embedding", "vector_misses", "rows", "warnings", "retrieved",
        "written",
    )  # fmt: skip
    writes = ("retrieved", "rows", "warnings")

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        ctx.retrieved = retrieved(ctx)
        ctx.warnings += [said for _, said in ctx.vector_misses]
        partial = coverage_warning(*ctx.retrieved.coverage) if ctx.retrieved.coverage else None
        if partial:  # the user should know some chunks have no vector yet
            ctx.warnings.append(partial)
        ranks: dict[int, dict[str, int]] = {}
        for name, seqs in ctx.retrieved.lists.items():
            for rank, seq in enumerate(seqs):
                ranks.setdefault(seq, {})[name] = rank
        return [Hit.chunk(seq, ranks=r) for seq, r in ranks.items()]


def retrieved(ctx: SearchContext) -> Retrieved:
    """What the retrievers found; bm25 alone when the vector side cannot run (no model, a
    failing server: the embedding returns None), `fell_back` then set."""
    mode, k = ctx.mode, ctx.k
    lists: dict[str, list[int]] = {}
    keywords = None
    if mode in ("hybrid", "bm25"):
        keywords = ctx.retrievers.keywords(keyword_terms(ctx), k, ctx.filters, ctx.prefix)
        lists["bm25"] = keyword_order(ctx, keywords)
    shares = keyword_votes(ctx, lists, keywords) if mode == "hybrid" else {}
    if mode not in ("hybrid", "vector"):
        return Retrieved(lists, mode, keywords=keywords, miss=VectorMiss.KEYWORD_CHOSEN)
    if keywords is not None:  # while the query is still being embedded on its thread
        ctx.rows.update(ctx.retrievers.rows([s for s in keywords.top if s not in ctx.rows]))
    qvec = ctx.embedding() if ctx.embedding is not None else None
    if qvec is not None:
        found = vector_hits(ctx, qvec, k)
        lists["vector"] = [seq for seq, _ in found]
        coverage = ctx.retrievers.coverage()
        none = coverage[0] == 0 < coverage[1]  # keyword first: no vector written yet
        miss = VectorMiss.NO_VECTORS if none else None
        return Retrieved(lists, mode, False, qvec, dict(found), shares, keywords, coverage, miss)
    miss = vector_miss(ctx)
    if mode == "vector" or ctx.embedding is not None:
        if keywords is None:
            keywords = ctx.retrievers.keywords(keyword_terms(ctx), k, ctx.filters, ctx.prefix)
        return Retrieved(
            {"bm25": keyword_order(ctx, keywords)}, "bm25", True, keywords=keywords, miss=miss
        )
    return Retrieved(lists, mode, shares=shares, keywords=keywords, miss=miss)


def keyword_order(ctx: SearchContext, keywords: keyword_share.Keywords) -> list[int]:
    """The keyword hits, BM25's order; in an index of several languages, those holding the
    query's words as written first (engine/search/retrieve/as_written.py)."""
    seqs = list(keywords.top)
    if not ctx.written:
        return seqs
    ctx.rows.update(ctx.retrievers.rows([s for s in seqs if s not in ctx.rows]))
    return as_written.reorder(seqs, ctx.rows, ctx.written)


def vector_miss(ctx: SearchContext) -> VectorMiss:
    """Why there is no query vector: what the query embedder said, else an empty query
    (nothing was embedded) or a failure it did not name."""
    if ctx.vector_misses:
        return ctx.vector_misses[0][0]
    return VectorMiss.EMPTY_QUERY if ctx.embedding is None else VectorMiss.EMBEDDER_FAILED


def keyword_terms(ctx: SearchContext) -> list[str]:
    """The keyword side's terms: the query's, and with `name_aliases` the other names of the
    person it names (engine/search/query/aliases.py)."""
    if not ctx.cfg.name_aliases:
        return ctx.terms
    return expanded_terms(ctx.terms, ctx.query, ctx.matcher)


def vector_hits(ctx: SearchContext, qvec: FloatArray, k: int) -> list[tuple[int, float]]:
    """The vector side's (seq, cosine) hits; with `vector_prf`, those of a second scan with
    the query moved toward the first scan's top chunks (engine/search/retrieve/feedback.py)."""
    found = ctx.retrievers.vector(qvec, k, ctx.filters)
    cfg = ctx.cfg
    if not cfg.vector_prf or not found:
        return found
    top = [seq for seq, _ in found[: cfg.vector_prf_depth]]
    parts = feedback.best_parts(ctx.conn, top, qvec)
    return ctx.retrievers.vector(
        feedback.moved_query(qvec, parts, cfg.vector_prf_beta), k, ctx.filters
    )


def keyword_votes(
    ctx: SearchContext, lists: dict[str, list[int]], keywords: keyword_share.Keywords | None
) -> dict[int, float]:
    """The hybrid's coverage list, added to `lists`: the keyword hits by the share of the
    query they hold (engine/search/retrieve/keyword_share.py). Returns those shares, which the
    relevance floor reuses."""
    found = lists.get("bm25")
    if ctx.cfg.coverage_weight <= 0 or not found or keywords is None:
        return {}
    shares = keyword_share.keyword_shares(
        ctx.conn, keyword_terms(ctx), found, ctx.prefix, keywords.top, keywords.weights()
    )
    lists["coverage"] = keyword_share.by_share(found, shares)
    return shares
