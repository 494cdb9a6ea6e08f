"""Fusion and the ranking stages between it and the re-ranker, as functions of the settings."""

from __future__ import annotations

from datetime import datetime

from engine.people import PeopleMatcher
from engine.search import stages
from engine.search.filters import Filters
from engine.settings import SearchSettings


def fused(
    lists: dict[str, list[int]], shares: dict[int, float], cfg: SearchSettings
) -> list[stages.Candidate]:
    """RRF over the retrievers' lists, best first; a coverage vote counts in proportion to
    the share of the query the chunk holds (engine/search/coordination.py: a hit on one
    common word of five gets a fifth of a vote at most, so it cannot bury a vector-only
    paraphrase)."""
    weights = {
        "bm25": cfg.bm25_weight,
        "vector": cfg.vector_weight,
        "exact": cfg.exact_weight,
        "coverage": cfg.coverage_weight,
    }
    scales = {"coverage": {str(seq): share for seq, share in shares.items()}}
    scored = stages.rrf_fuse(
        {n: [str(x) for x in v] for n, v in lists.items()}, cfg.rrf_k, weights, scales
    )
    out = [
        stages.Candidate(
            key,
            score,
            ranks=ranks,
            explain={"rrf": round(score, 6), **{f"{n}_rank": r + 1 for n, r in ranks.items()}},
        )
        for key, (score, ranks) in scored.items()
    ]
    return sorted(out, key=lambda c: c.score, reverse=True)


def ranked(
    candidates: list[stages.Candidate],
    query: str,
    filters: Filters,
    clock: datetime,
    limit: int,
    cfg: SearchSettings,
    matcher: PeopleMatcher,
) -> list[stages.Candidate]:
    """Recency, entity injection (not under a source filter) and MMR diversity, each when on."""
    if cfg.recency:
        candidates = stages.apply_recency(
            candidates,
            clock,
            cfg.half_lives,
            cfg.default_half_life,
            cfg.decay_floor,
            cfg.recency_weight,
        )
    if cfg.entity_injection and not filters.source_types:
        person = matcher.find(query)
        profile = (
            None
            if person is None
            else stages.Candidate(f"profile:{person.slug}", 0.0, source_type="profile")
        )
        candidates = stages.inject_entity(candidates, profile, head=limit)
    if cfg.diversity:
        candidates = stages.mmr_diversify(candidates, cfg.mmr_top, cfg.mmr_lambda, cfg.max_per_type)
    return candidates
