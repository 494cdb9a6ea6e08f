"""The fuse stage: one Reciprocal Rank Fusion score from each hit's ranks in the
retrievers' lists (`stages.rrf_score`)."""

from __future__ import annotations

from engine.search.context import SearchContext
from engine.search.hits import Hit, by_score
from engine.search.rank import stages


class Fuse:
    """Reciprocal Rank Fusion over the lists each hit is ranked in, best first; a coverage
    vote counts in proportion to the share of the query the chunk holds (a hit on one
    common word of five gets a fifth of a vote at most, so it cannot bury a vector-only
    paraphrase)."""

    name = "fuse"
    reads = ("settings", "retrieved")
    writes = ()

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        cfg, shares = ctx.cfg, ctx.retrieved.shares
        weights = {
            "bm25": cfg.bm25_weight,
            "vector": cfg.vector_weight,
            "coverage": cfg.coverage_weight,
        }
        out = []
        for hit in hits:
            scales = {"coverage": shares.get(hit.seq, 1.0)} if hit.seq is not None else {}
            score = stages.rrf_score(hit.ranks, cfg.rrf_k, weights, scales)
            # Made afresh, not `replace`d: about half the cost, on every candidate.
            out.append(Hit(score, seq=hit.seq, ranks=hit.ranks, signals={"rrf": round(score, 6)}))
        return by_score(out)
