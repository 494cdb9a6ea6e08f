"""The chunk rows a search shows, read from the index in its read snapshot."""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from engine.search.hits import ChunkRow
from engine.store.sql import chunks


def chunk_rows(conn: apsw.Connection, seqs: Sequence[int]) -> dict[int, ChunkRow]:
    """seq -> what a result shows, for the chunks this snapshot holds."""
    if not seqs:
        return {}
    cursor = conn.execute(chunks.rows_by_seq_sql(len(seqs)), list(seqs))
    return {row[0]: ChunkRow(*row) for row in cursor}


def read_rows(conn: apsw.Connection, seqs: Sequence[int], rows: dict[int, ChunkRow]) -> None:
    """Add to `rows` those of `seqs` it does not hold yet."""
    missing = [s for s in seqs if s not in rows]
    if missing:
        rows.update(chunk_rows(conn, missing))
