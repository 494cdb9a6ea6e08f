"""Frecency: the results the user opened before rise a little, less as time goes by.

Each open counts 2^(−age / half-life) (`search.frecency_half_life`, days); a result's
opens add up to f, and its score is multiplied by

    1 + weight × f / (f + 1)          (weight: `search.frecency_weight`)

so one fresh open gives half the weight, many opens approach it and never pass it: a
small lift that settles near-ties and cannot carry a poor match over a good one. Opens are
recorded by result id when the user opens a hit (Enter in the app, `memex opened ID`), in
the index's own `opens` table (engine/store/opens.py). The stage runs on the fused chunks,
before grouping and recency: a profile's opens are kept but lift nothing (where a profile
goes is entity injection's and entity-first's call), and a chunk whose text changed has a
new id, so what was opened before no longer counts for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from engine.search.context import SearchContext
from engine.search.hits import Hit, by_score
from engine.search.rank.stages import age_days
from engine.store import opens


def open_weight(times: Sequence[str], now: datetime, half_life: float) -> float:
    """f: the opens, each 2^(−age / half_life); an open dated after `now` counts 1."""
    total = 0.0
    for when in times:
        age = age_days(when, now)
        total += 1.0 if age is None else 2.0 ** (-age / half_life)
    return total


def frecency_factor(f: float, weight: float) -> float:
    return 1.0 + weight * f / (f + 1.0) if f > 0 else 1.0


def apply_frecency(
    candidates: Sequence[Hit],
    opened: Mapping[str, Sequence[str]],
    now: datetime,
    half_life: float,
    weight: float,
) -> list[Hit]:
    """Scores of the opened candidates (by result id) multiplied by their frecency factor,
    sorted by score (ties keep their order); the others unchanged."""
    out = []
    for c in candidates:
        times = opened.get(c.result_id)
        if not times:
            out.append(c)
            continue
        out.append(
            c.scaled("frecency", frecency_factor(open_weight(times, now, half_life), weight))
        )
    return by_score(out)


class Frecency:
    """The stage: the hits' opens read from the index (none when the `opens` table does
    not exist yet) and applied, when `search.frecency` is on."""

    name = "frecency"
    reads = ("settings", "conn", "clock")
    writes = ()

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        cfg = ctx.cfg
        if not cfg.frecency or cfg.frecency_weight <= 0:
            return hits
        times = opens.open_times(ctx.conn, [h.result_id for h in hits])
        if not times:
            return hits
        return apply_frecency(hits, times, ctx.clock, cfg.frecency_half_life, cfg.frecency_weight)
