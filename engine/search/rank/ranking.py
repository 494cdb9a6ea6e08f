"""The score stages between fusion and re-ranking, each a no-op while its setting is off:
the query's own days lifted, recency, entity injection, MMR diversity (the pure functions
are in engine/search/rank/stages.py)."""

from __future__ import annotations

from engine.search.context import SearchContext
from engine.search.hits import Hit
from engine.search.rank import stages


class QueryDates:
    """With `search.query_dates` = boost: the days the query names lifted in the ranking."""

    name = "query_dates"
    reads = ("dated", "settings")
    writes = ()

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        if ctx.dated is None or ctx.cfg.query_dates != "boost":
            return hits
        since, until = ctx.dated.since.isoformat(), ctx.dated.until.isoformat()
        return stages.boost_dates(hits, since, until, ctx.cfg.query_date_boost)


class Recency:
    """`search.recency`: older content decays by its type's half-life."""

    name = "recency"
    reads = ("settings", "clock")
    writes = ()

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        cfg = ctx.cfg
        if not cfg.recency:
            return hits
        return stages.apply_recency(
            hits,
            ctx.clock,
            cfg.half_lives,
            cfg.default_half_life,
            cfg.decay_floor,
            cfg.recency_weight,
        )


class EntityInjection:
    """`search.entity_injection`: the profile of a person the query names, at the median
    score of the shown hits (not under a source filter: the profile is not of that type)."""

    name = "entity_injection"
    reads = ("settings", "filters", "matcher", "query", "inputs")
    writes = ()

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        if not ctx.cfg.entity_injection or ctx.filters.source_types:
            return hits
        person = ctx.matcher.find(ctx.query)
        profile = None if person is None else Hit.profile(person.slug)
        return stages.inject_entity(hits, profile, head=ctx.limit)


class Diversity:
    """`search.diversity`: MMR over the head, at most `search.max_per_type` per type."""

    name = "diversity"
    reads = ("settings",)
    writes = ()

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        cfg = ctx.cfg
        if not cfg.diversity:
            return hits
        return stages.mmr_diversify(hits, cfg.mmr_top, cfg.mmr_lambda, cfg.max_per_type)


class Page:
    """The page: the first `limit` hits (what the floor left, or the ranking's head)."""

    name = "page"
    reads = ("inputs",)
    writes = ()

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        return hits[: ctx.limit]
