"""Ranking stages: each a pure function over a list of hits, constants passed in."""

from __future__ import annotations

import statistics
from collections.abc import Hashable, Mapping, Sequence
from datetime import datetime
from typing import TypeVar

from engine.search.hits import Hit, by_score

K = TypeVar("K", bound=Hashable)


def rrf_score(
    ranks: Mapping[str, int],
    k: float,
    weights: Mapping[str, float] | None = None,
    scales: Mapping[str, float] | None = None,
) -> float:
    """Reciprocal Rank Fusion of one item: Σ w × s / (k + rank + 1) over the lists that rank
    it (`ranks`: list -> 0-based rank), where s is its scale in that list (1 when not given)."""
    score = 0.0
    for name, rank in ranks.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        score += weight * (scales or {}).get(name, 1.0) / (k + rank + 1)
    return score


def rrf_fuse(
    lists: Mapping[str, Sequence[K]],
    k: float,
    weights: Mapping[str, float] | None = None,
    scales: Mapping[str, Mapping[K, float]] | None = None,
) -> dict[K, tuple[float, dict[str, int]]]:
    """`rrf_score` of every key of the lists, with its ranks, in order of first appearance."""
    ranks: dict[K, dict[str, int]] = {}
    for name, keys in lists.items():
        for rank, key in enumerate(keys):
            ranks.setdefault(key, {})[name] = rank
    return {
        key: (rrf_score(r, k, weights, {n: (scales or {}).get(n, {}).get(key, 1.0) for n in r}), r)
        for key, r in ranks.items()
    }


def age_days(content_date: str | None, now: datetime) -> float | None:
    if not content_date:
        return None
    try:
        when = datetime.fromisoformat(content_date[:19])
    except ValueError:
        return None
    return max(0.0, (now - when).total_seconds() / 86400.0)


def recency_factor(age: float | None, half_life: float, floor: float) -> float:
    """2^(-age/half_life), never below the floor; undated content is not decayed."""
    if age is None or half_life <= 0:
        return 1.0
    return float(max(floor, 2.0 ** (-age / half_life)))


def apply_recency(
    candidates: Sequence[Hit],
    now: datetime,
    half_lives: Mapping[str, float],
    default_half_life: float,
    floor: float,
    weight: float = 1.0,
) -> list[Hit]:
    """score *= (1 − weight) + weight × decay: `weight` 1 is the full decay, a small weight
    lets recency settle near-ties without burying old content that matches better."""
    out = []
    for c in candidates:
        decay = recency_factor(
            age_days(c.content_date, now), half_lives.get(c.source_type, default_half_life), floor
        )
        out.append(c.scaled("recency", (1.0 - weight) + weight * decay))
    return by_score(out)


def boost_dates(candidates: Sequence[Hit], since: str, until: str, factor: float) -> list[Hit]:
    """score *= factor for the candidates dated from `since` to `until` (ISO days, inclusive):
    a date the query names lifts what it names without hiding the rest."""
    out = []
    for c in candidates:
        inside = c.content_date is not None and since <= c.content_date[:10] <= until
        out.append(c.scaled("date_boost", factor) if inside else c)
    return by_score(out)


def inject_entity(
    candidates: Sequence[Hit], profile: Hit | None, head: int | None = None
) -> list[Hit]:
    """Insert one synthetic profile with a score near the median; skipped if already there.

    The median is taken over the first `head` candidates (the ones that will be shown), so
    the profile lands inside the visible list rather than in the over-fetched tail.
    """
    out = list(candidates)
    if profile is None or any(c.key == profile.key for c in out):
        return out
    shown = out[:head] if head else out
    median = statistics.median([c.score for c in shown]) if shown else 1.0
    injected = profile.evolve(score=median).noted(injected="median score")
    position = next((i for i, c in enumerate(out) if c.score < median), len(out))
    out.insert(position, injected)
    return out


def similarity(a: Hit, b: Hit) -> float:
    if a.source_file and a.source_file == b.source_file:
        return 1.0
    if a.source_type == b.source_type:
        return 0.5
    return 0.0


def mmr_diversify(candidates: Sequence[Hit], top: int, lam: float, max_per_type: int) -> list[Hit]:
    """Greedy MMR over the head: λ·relevance − (1−λ)·max similarity, ≤ max_per_type per type.

    Relevance is the score scaled to the head's best, so λ means the same at any score scale.
    Only the head is reordered; the tail keeps its order after it.
    """
    pool = list(candidates)
    if len(pool) <= 1 or top <= 1:
        return pool
    best = max(c.score for c in pool) or 1.0
    head: list[Hit] = []
    per_type: dict[str, int] = {}
    while pool and len(head) < top:
        allowed = [c for c in pool if per_type.get(c.source_type, 0) < max_per_type] or pool
        chosen = max(
            allowed,
            key=lambda c: (
                lam * c.score / best
                - (1 - lam) * max((similarity(c, h) for h in head), default=0.0)
            ),
        )
        pool.remove(chosen)
        head.append(chosen.noted(mmr_position=len(head)))
        per_type[chosen.source_type] = per_type.get(chosen.source_type, 0) + 1
    return head + pool
