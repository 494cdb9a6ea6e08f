"""Search filters, and the SQL that pushes them into both retrievers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.records import Person
from engine.store.db import day_number


@dataclass(frozen=True)
class Filters:
    """What narrows a search: source types, a date range (inclusive), people."""

    source_types: tuple[str, ...] = ()
    since: str | None = None  # ISO date
    until: str | None = None  # ISO date, inclusive
    people: tuple[Person, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.source_types or self.since or self.until or self.people)


def _next_day(iso: str) -> str:
    day = date.fromisoformat(iso[:10])
    if day == date.max:  # no 10000-01-01: a bound above every "9999-12-31…" text instead
        return day.isoformat() + "\uffff"
    return (day + timedelta(days=1)).isoformat()


def any_of(conditions: list[str]) -> str:
    """`a OR b OR …` nested in halves: SQLite parses a flat chain as a tree as deep as it
    is long and refuses one deeper than 1,000, which 500 names would make."""
    if len(conditions) <= 2:
        return " OR ".join(conditions)
    half = len(conditions) // 2
    return f"({any_of(conditions[:half])}) OR ({any_of(conditions[half:])})"


def people_match_expression(people: tuple[Person, ...]) -> str:
    """The FTS5 query of the chunks whose text names any of these people: one phrase per
    name or alias, OR-ed, on `chunks_fts.content` (a name with no letter or digit is no
    phrase; with none left the query matches nothing).

    The FTS index holds `content` and `title`, not `chunks.people`; every extractor writes
    the names it puts there into the text too (chat `Name: text` lines, mail `From:`/`To:`,
    event `With:`, a record's `People:` field). A phrase matches whole tokens, case- and
    accent-folded, stemmed (`porter unicode61 remove_diacritics 2`), where `instr` (the
    fallback below) matches any substring folding ASCII case only: "Jonas" does not match
    "Jonasson" nor "Ama" "Raman", and "Renée" matches "RENÉE" and "renee"
    (tests/test_person_filter.py)."""
    names = dict.fromkeys(n for p in people for n in p.names)
    phrases = ['"' + n.replace('"', '""') + '"' for n in names if any(c.isalnum() for c in n)]
    return "content : (" + " OR ".join(phrases or ['""']) + ")"


def people_sql(filters: Filters, alias: str, indexed: bool) -> tuple[str, list[Any]]:
    """The person condition: through the FTS index (`indexed`), or `instr` over every
    chunk's people and text."""
    if indexed:
        fts = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?"
        return f"{alias}.seq IN ({fts})", [people_match_expression(filters.people)]
    names = list(dict.fromkeys(n for p in filters.people for n in p.names))
    alternatives, params = [], []
    for name in names:
        alternatives.append(f"instr(lower({alias}.people), lower(?)) > 0")
        alternatives.append(f"instr(lower({alias}.content), lower(?)) > 0")
        params += [name, name]
    return "(" + any_of(alternatives) + ")", params


def chunk_filter_sql(
    filters: Filters, alias: str = "c", people_index: bool = False
) -> tuple[str, list[Any]]:
    """` AND …` conditions over the chunks table, with their parameters. `people_index`:
    find a person's chunks through the FTS index instead of reading every chunk's text
    (`people_match_expression` says how the two differ)."""
    sql: list[str] = []
    params: list[Any] = []
    if filters.source_types:
        # With the person's chunks from the index, they drive the query (looked up by seq):
        # `+` keeps SQLite from scanning every chunk of the type through chunks_type_date.
        unary = "+" if people_index and filters.people else ""
        marks = ",".join("?" * len(filters.source_types))
        sql.append(f"{unary}{alias}.source_type IN ({marks})")
        params += list(filters.source_types)
    if filters.since:
        sql.append(f"{alias}.content_date >= ?")
        params.append(filters.since[:10])
    if filters.until:
        sql.append(f"{alias}.content_date < ?")
        params.append(_next_day(filters.until))
    if filters.people:
        condition, people_params = people_sql(filters, alias, people_index)
        sql.append(condition)
        params += people_params
    return "".join(f" AND {s}" for s in sql), params


def vec_filter_sql(filters: Filters) -> tuple[str, list[Any]]:
    """` AND …` conditions over vec0 metadata columns (applied during the KNN scan)."""
    sql: list[str] = []
    params: list[Any] = []
    if filters.source_types:
        sql.append(f"source_type IN ({','.join('?' * len(filters.source_types))})")
        params += list(filters.source_types)
    if filters.since:
        sql.append("day >= ?")
        params.append(day_number(filters.since[:10]))
    if filters.until:
        sql.append("day <= ? AND day > 0")
        params.append(day_number(filters.until[:10]))
    return "".join(f" AND {s}" for s in sql), params


def columns_mask(
    filters: Filters,
    types: npt.NDArray[np.int16],
    type_codes: dict[str, int],
    days: npt.NDArray[np.int32],
) -> npt.NDArray[np.bool_]:
    """The rows of an in-memory index that pass the source and date filters, from its
    columns (`types`: each row's source type as a code of `type_codes`; `days`: each row's
    `day_number`, 0 when it has no date), as the SQL above selects them. People are the
    caller's: a set of rows found through the FTS index."""
    keep = np.ones(types.shape[0], dtype=bool)
    if filters.source_types:
        codes = [type_codes[t] for t in filters.source_types if t in type_codes]
        keep &= np.isin(types, codes)
    if filters.since:
        keep &= days >= day_number(filters.since[:10])
    if filters.until:
        keep &= (days <= day_number(filters.until[:10])) & (days > 0)
    return keep
