"""Entity-first: a query that is only a person's name shows that person first.

"Priya", "Dana Okafor", "Dr. Nilsen", "about Jonte": what is left of the query once stop
words and the punctuation around words are gone is, as a whole, a known person's name or
alias (case-insensitive, the PeopleMatcher's names). Such a query asks about the person, so
the result list searches outward from them: their profile card first, then the hits that
name them (what they said, what was said about them) in the order the ranking gave them
(fused score, recency, re-ranking: the most telling first), then the rest. A longer query
that merely contains a name ("what is Priya working on") asks something else: it keeps the
median-score injection of `stages.inject_entity`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence

from engine.people import PeopleMatcher
from engine.records import Person
from engine.search.context import SearchContext
from engine.search.hits import ChunkRow, Hit
from engine.search.query.fts import STOP_WORDS

_EDGE_PUNCTUATION = ".,;:!?\"'“”‘’()[]{}"
_POSSESSIVE = re.compile(r"['’]s$")


def name_words(text: str) -> str:
    """`text` as comparable words: lower case, single spaces, edge punctuation and a
    possessive 's gone ("Priya's" is Priya)."""
    words = (_POSSESSIVE.sub("", w.strip(_EDGE_PUNCTUATION)) for w in text.lower().split())
    return " ".join(w for w in words if w)


def name_shaped(query: str, matcher: PeopleMatcher) -> Person | None:
    """The person the query is, as a whole, the name or alias of; None otherwise.

    A word that is a stop word is dropped unless it is part of the name ("Ama" stays
    whatever the list says), so "about Priya" and "Priya?" are Priya.
    """
    asked = name_words(query)
    if not asked:
        return None
    for person in matcher.named_in(query):  # those whose words it holds, in order
        for name in person.names:
            wanted = name_words(name)
            kept = [w for w in asked.split() if w in wanted.split() or w not in STOP_WORDS]
            if wanted and " ".join(kept) == wanted:
                return person
    return None


def mentioning(person: Person, rows: Iterable[ChunkRow]) -> set[int]:
    """The seqs of the rows that name the person (name or alias, whole words) in their
    title or text: the speaker lines of a chat window or a meeting, a note about them."""
    names = sorted({n.strip() for n in person.names if n.strip()}, key=len, reverse=True)
    if not names:
        return set()
    pattern = re.compile(
        r"(?<!\w)(?:" + "|".join(re.escape(n) for n in names) + r")(?!\w)", re.IGNORECASE
    )
    return {
        row.seq for row in rows if pattern.search(row.title or "") or pattern.search(row.content)
    }


def entity_first(candidates: Sequence[Hit], profile: Hit, mentioned: Collection[int]) -> list[Hit]:
    """The profile first, then the candidates in `mentioned` in their order, then the rest.

    The profile takes the best score on the list (so the order reads the same by score
    and by position); the others keep their scores.
    """
    rest = [c for c in candidates if c.key != profile.key]
    about = [c.noted(names_person=True) for c in rest if c.seq in mentioned]
    others = [c for c in rest if c.seq not in mentioned]
    best = max((c.score for c in rest), default=1.0)
    pinned = profile.evolve(score=max(best, profile.score)).noted(entity_first="pinned")
    return [pinned, *about, *others]


class EntityFirst:
    """The stage: `entity_first` when `search.entity_first` is on, the query is name-shaped
    and no source-type filter is set (the profile is not of the asked type)."""

    name = "entity_first"
    reads = ("settings", "filters", "query", "matcher")
    writes = ()

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        if not ctx.cfg.entity_first or ctx.filters.source_types:
            return hits
        person = name_shaped(ctx.query, ctx.matcher)
        if person is None:
            return hits
        profile = Hit.profile(person.slug)
        profile = next((h for h in hits if h.key == profile.key), profile)
        rows = [h.row for h in hits if h.row is not None]
        return entity_first(hits, profile, mentioning(person, rows))
