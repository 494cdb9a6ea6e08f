"""Recording and reading the results the user opened (frecency, engine/search/rank/frecency.py).

Opens live in their own table of the index file (engine/store/sql/opens.py), apart from the
content tables: a reindex, a rebuild of the vectors or a change of embedder keeps them, and
`memex frecency --clear` forgets them. The table is made on the first open, so an index
without it reads as "nothing opened".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import apsw

from engine.store import db
from engine.store.sql import opens

TABLE = "opens"
MAX_IDS = 500  # ids looked up per statement (SQLite's variable limit is far above)


@dataclass(frozen=True)
class Opened:
    """One opened result: its id, file, how many opens and the newest (ISO datetime)."""

    result_id: str
    source_file: str
    count: int
    last: str


def record_open(
    db_path: Path,
    result_id: str,
    source_file: str,
    when: datetime,
    on_busy: Callable[[], None] | None = None,
) -> None:
    """Note that the user opened this result (its own connection and transaction)."""
    record_opens(db_path, [(result_id, source_file)], when, on_busy)


def record_opens(
    db_path: Path,
    picks: Sequence[tuple[str, str]],
    when: datetime,
    on_busy: Callable[[], None] | None = None,
) -> None:
    """Note these opens, (result id, source file) each, all or none in one transaction.

    `on_busy` is told when another program's write lock makes it wait; held past the busy
    timeout, the lock is `db.IndexBusy` (a full or read-only disk its own IndexError_).
    """
    with _connection(db_path, on_busy) as conn, db.transaction(conn):
        for statement in opens.create_table_sql():
            conn.execute(statement)
        for result_id, source_file in picks:
            conn.execute(opens.insert_sql(), (result_id, source_file, when.isoformat()))


def clear_opens(db_path: Path, on_busy: Callable[[], None] | None = None) -> int:
    """Forget every open; how many there were (the lock as in `record_opens`)."""
    with _connection(db_path, on_busy) as conn:
        if not db.table_exists(conn, TABLE):
            return 0
        with db.transaction(conn):
            gone = sum(row[2] for row in conn.execute(opens.summary_sql()))
            conn.execute(opens.clear_sql())
        return int(gone)


@contextmanager
def _connection(db_path: Path, on_busy: Callable[[], None] | None) -> Iterator[apsw.Connection]:
    """A connection of its own for one write, closed after; SQLite's lock, disk and damage
    errors become the index's sentences (`db.as_index_error`)."""
    conn = db.connect(db_path, create=False, on_busy=on_busy)
    try:
        yield conn
    except apsw.Error as exc:
        plain = db.as_index_error(db_path, exc)
        if plain is None:
            raise
        raise plain from None
    finally:
        conn.close()


def opened(conn: apsw.Connection) -> list[Opened]:
    """Every opened result, newest first ([] when nothing was ever opened)."""
    if not db.table_exists(conn, TABLE):
        return []
    return [Opened(*row) for row in conn.execute(opens.summary_sql())]


def open_times(conn: apsw.Connection, result_ids: Sequence[str]) -> dict[str, list[str]]:
    """result id -> when it was opened (ISO datetimes), for the ids that were."""
    if not result_ids or not db.table_exists(conn, TABLE):
        return {}
    times: dict[str, list[str]] = {}
    ids = list(dict.fromkeys(result_ids))
    for start in range(0, len(ids), MAX_IDS):
        batch = ids[start : start + MAX_IDS]
        for result_id, at in conn.execute(opens.by_ids_sql(len(batch)), batch):
            times.setdefault(result_id, []).append(at)
    return times
