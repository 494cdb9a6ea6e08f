"""The `chunk_state` row: the writer's stamp of the chunks' state, and how many there are.

Triggers on `chunks` keep one row up to date inside every writing transaction: `stamp`
moves with every chunk inserted or deleted and with every change of what a copy of the
vectors holds (a chunk's id, source type, date or vector), and `count` is the number of
chunks. `origin` is drawn at random when the row is made, so an index built anew (a
repair, a deleted file) never repeats an old index's (origin, stamp). A process that
never read the index can tell from this one row whether a file written beside it
(`memex.db.vectors`, engine/search/retrieve/saved_vectors.py) still holds its state, and
knows the chunk count without counting.
"""

from __future__ import annotations

SCHEMA = """
CREATE TABLE IF NOT EXISTS chunk_state(
    one INTEGER PRIMARY KEY CHECK (one = 1),
    origin INTEGER NOT NULL,
    stamp INTEGER NOT NULL,
    count INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS chunk_state_ai AFTER INSERT ON chunks BEGIN
    UPDATE chunk_state SET stamp = stamp + 1, count = count + 1;
END;
CREATE TRIGGER IF NOT EXISTS chunk_state_ad AFTER DELETE ON chunks BEGIN
    UPDATE chunk_state SET stamp = stamp + 1, count = count - 1;
END;
CREATE TRIGGER IF NOT EXISTS chunk_state_au AFTER UPDATE OF
    id, source_type, content_date, embedding ON chunks BEGIN
    UPDATE chunk_state SET stamp = stamp + 1;
END;
"""


def schema_sql() -> str:
    """The table and its triggers, each made if missing (the row: `start_sql`)."""
    return SCHEMA


def has_row_sql() -> str:
    return "SELECT 1 FROM chunk_state"


def start_sql() -> str:
    """The row of an index that has none: a random origin, the chunks counted once."""
    return (
        "INSERT OR IGNORE INTO chunk_state(one, origin, stamp, count) "
        "VALUES (1, random(), 0, (SELECT count(*) FROM chunks))"
    )


def new_origin_sql() -> str:
    """Another random origin, the stamp and count kept: a copy of the index (a backup)
    that is restored one day never shares an (origin, stamp) with a state the live index
    reached after the copy was made."""
    return "UPDATE chunk_state SET origin = random()"


def select_sql() -> str:
    """(origin, stamp, count); no row in an index that predates the table."""
    return "SELECT origin, stamp, count FROM chunk_state"
