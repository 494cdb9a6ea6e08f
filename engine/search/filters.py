"""Search filters, and the SQL that pushes them into both retrievers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

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


def chunk_filter_sql(filters: Filters, alias: str = "c") -> tuple[str, list[Any]]:
    """` AND …` conditions over the chunks table, with their parameters."""
    sql: list[str] = []
    params: list[Any] = []
    if filters.source_types:
        sql.append(f"{alias}.source_type IN ({','.join('?' * len(filters.source_types))})")
        params += list(filters.source_types)
    if filters.since:
        sql.append(f"{alias}.content_date >= ?")
        params.append(filters.since[:10])
    if filters.until:
        sql.append(f"{alias}.content_date < ?")
        params.append(_next_day(filters.until))
    if filters.people:
        names = list(dict.fromkeys(n for p in filters.people for n in p.names))
        alternatives = []
        for name in names:
            alternatives.append(f"instr(lower({alias}.people), lower(?)) > 0")
            alternatives.append(f"instr(lower({alias}.content), lower(?)) > 0")
            params += [name, name]
        sql.append("(" + any_of(alternatives) + ")")
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
