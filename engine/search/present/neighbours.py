"""Context around a hit: the chunks just before and after it in the same file.

Front ends show a hit in full with its neighbours (the messages before a chat window, the
section after a heading). Chunks keep their position in the file as `ordinal`.
"""

from __future__ import annotations

from dataclasses import dataclass

import apsw

from engine.store.sql import chunks


@dataclass(frozen=True)
class Neighbour:
    """One chunk of a file shown around a hit; `is_hit` marks the hit itself."""

    id: str
    content: str
    title: str
    location: str
    content_date: str | None
    ordinal: int
    is_hit: bool


def neighbours(
    conn: apsw.Connection, chunk_id: str, before: int = 2, after: int = 2
) -> list[Neighbour]:
    """The hit and up to `before`/`after` chunks around it, in file order; [] if unknown."""
    row = conn.execute(chunks.position_by_id_sql(), (chunk_id,)).fetchone()
    if row is None:
        return []
    source_file, ordinal = row
    rows = conn.execute(
        chunks.neighbours_sql(), (source_file, ordinal - before, ordinal + after)
    ).fetchall()
    return [
        Neighbour(
            id=r[0],
            content=r[1],
            title=r[2],
            location=r[3],
            content_date=r[4],
            ordinal=r[5],
            is_hit=r[0] == chunk_id,
        )
        for r in rows
    ]
