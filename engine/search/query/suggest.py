"""Did-you-mean warnings for filters that name nothing known: `--source slak`, a stranger.

A source type the index holds no chunk of can match nothing, so the search would answer
"No results" without saying why; a person missing from the people file still filters (by
the name itself, in speakers and text) but gets none of the person's aliases. Both are
said in the response's `warnings`, with the closest known name (`difflib`) when there is one.
The check costs one indexed lookup per source-type filter; the lists of known names are
read only when a filter misses.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

import apsw

from engine.people import PeopleMatcher
from engine.store.sql import chunks

CUTOFF = 0.6  # difflib's default: "slak" finds "slack", "Prya" finds "Priya"


def closest(word: str, known: Iterable[str]) -> str | None:
    """The known name nearest to `word`, ignoring case; None when none is near."""
    by_key = {name.lower(): name for name in known}
    found = difflib.get_close_matches(word.strip().lower(), list(by_key), n=1, cutoff=CUTOFF)
    return by_key[found[0]] if found else None


def unknown_filters(
    conn: apsw.Connection,
    matcher: PeopleMatcher,
    source_types: Sequence[str] | None,
    people: Sequence[str] | None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The source types the index holds no chunk of, and the people not in the people file."""
    types = tuple(t for t in source_types or () if not _has_type(conn, t))
    return types, tuple(name for name in people or () if not matcher.by_name(name))


def filter_warnings(
    conn: apsw.Connection,
    matcher: PeopleMatcher,
    source_types: Sequence[str] | None,
    people: Sequence[str] | None,
) -> list[str]:
    """One warning per source type without chunks and per person not in the people file."""
    types, strangers = unknown_filters(conn, matcher, source_types, people)
    return unknown_filter_warnings(conn, matcher, types, strangers)


def unknown_filter_warnings(
    conn: apsw.Connection,
    matcher: PeopleMatcher,
    types: Sequence[str],
    strangers: Sequence[str],
) -> list[str]:
    """The sentences for `unknown_filters`' answer, with the nearest known names."""
    warnings = [unknown_type_warning(t, _known_types(conn)) for t in types]
    names = [n for p in matcher.people for n in (p.name, *p.aliases)]
    return warnings + [unknown_person_warning(name, names) for name in strangers]


def unknown_type_warning(source_type: str, known: Sequence[str]) -> str:
    guess = closest(source_type, known)
    text = f"no source type '{source_type}' in the index"
    if guess is not None:
        return f"{text}; did you mean '{guess}'?"
    return f"{text}; it holds: {', '.join(known) or 'nothing yet'}"


def unknown_person_warning(name: str, known: Sequence[str]) -> str:
    guess = closest(name, known)
    text = f"'{name}' is not in the people file; searched for the name as written"
    return f"{text}; did you mean '{guess}'?" if guess is not None else text


def _has_type(conn: apsw.Connection, source_type: str) -> bool:
    return conn.execute(chunks.has_type_sql(), (source_type,)).fetchone() is not None


def _known_types(conn: apsw.Connection) -> list[str]:
    """Every source type in the index, most chunks first."""
    return [str(t) for t, _ in conn.execute(chunks.count_per_type_sql())]
