"""How much of the index has vectors yet, for the warning of a search over a partial index.

Indexing is keyword first (engine/index/embedding.py): until the vector phase is done, a
vector or hybrid search sees only the chunks embedded so far, and says so. The counts are
read again only when the index changed (`PRAGMA data_version`), so a search pays them once
per commit of the writer, not per keystroke; the chunks' count is the one the writer keeps
(engine/store/sql/chunk_state.py), the unembedded ones a count over their partial index.
"""

from __future__ import annotations

import apsw

from engine.store import db
from engine.store.sql import chunks as chunks_sql
from engine.store.sql import database


class VectorCoverage:
    """The fraction of chunks with a vector, on one read connection."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self._version: int | None = None
        self._counts = (0, 0)  # (embedded, chunks)

    def counts(self) -> tuple[int, int]:
        """(chunks with a vector, all chunks), read inside the caller's snapshot."""
        version = int(self.conn.execute(database.data_version_sql()).fetchone()[0])
        if version != self._version:
            state = db.chunk_state(self.conn)  # the writer's count: no scan of the chunks
            total = (
                int(self.conn.execute(chunks_sql.count_sql()).fetchone()[0])
                if state is None
                else state.count
            )
            missing = int(self.conn.execute(chunks_sql.count_unembedded_sql()).fetchone()[0])
            self._version, self._counts = version, (total - missing, total)
        return self._counts


def coverage_warning(embedded: int, total: int) -> str | None:
    """A sentence for the response's warnings while part of the index has no vector."""
    if total == 0 or embedded >= total:
        return None
    share = embedded / total
    return (
        f"vectors cover {share:.0%} of the index so far ({embedded:,} of {total:,} "
        "chunks; the rest are being embedded): those are found by keywords only"
    )
