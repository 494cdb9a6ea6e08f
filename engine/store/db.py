"""The index: one SQLite file through apsw, with FTS5 and a sqlite-vec vec0 table.

SQL is built by small functions and run elsewhere. `chunks.seq` is the stable integer key
that the FTS5 external-content table and the vec0 table share (an INTEGER PRIMARY KEY
survives VACUUM; an implicit rowid does not).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import apsw
import sqlite_vec

from engine.store.sql import chunks, database, fts, meta, schema, state, vec

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 10_000


class IndexError_(RuntimeError):
    """The index file cannot be opened or is unusable."""


def connect(path: Path | str, *, readonly: bool = False, create: bool = True) -> apsw.Connection:
    """Open the index with sqlite-vec loaded, WAL, synchronous=NORMAL and a busy timeout."""
    path = Path(path)
    if not readonly and create:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
    elif not path.exists():
        raise IndexError_(f"no index at {path}")
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE
    try:
        conn = apsw.Connection(str(path), flags=flags)
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        for pragma in database.connection_pragmas(readonly):
            conn.execute(pragma)
    except apsw.Error as exc:
        raise IndexError_(f"cannot open the index {path}: {exc}") from None
    return conn


def migrate(conn: apsw.Connection) -> None:
    """Create or upgrade the schema; safe to run on every start."""
    with transaction(conn):
        for _ in conn.execute(schema.schema_sql()):
            pass
        version = get_meta(conn, "schema_version")
        if version is None:
            set_meta(conn, "schema_version", str(SCHEMA_VERSION))
        elif int(version) > SCHEMA_VERSION:
            raise IndexError_(
                f"the index was written by a newer Memex (schema {version} > {SCHEMA_VERSION})"
            )


def has_schema(conn: apsw.Connection) -> bool:
    row = conn.execute(schema.has_chunks_table_sql()).fetchone()
    return row is not None


@contextmanager
def transaction(conn: apsw.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception."""
    conn.execute(database.begin_immediate_sql())
    try:
        yield
    except BaseException:
        conn.execute(database.rollback_sql())
        raise
    conn.execute(database.commit_sql())


@contextmanager
def read_snapshot(conn: apsw.Connection) -> Iterator[None]:
    """A deferred read transaction: one consistent snapshot for several statements."""
    if not conn.getautocommit():
        yield  # already inside a transaction
        return
    conn.execute(database.begin_sql())
    try:
        yield
    finally:
        conn.execute(database.commit_sql())


def get_meta(conn: apsw.Connection, key: str) -> str | None:
    row = conn.execute(meta.select_value_sql(), (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: apsw.Connection, key: str, value: str) -> None:
    conn.execute(meta.upsert_sql(), (key, value))


def delete_meta(conn: apsw.Connection, key: str) -> None:
    conn.execute(meta.delete_sql(), (key,))


def active_vec_table(conn: apsw.Connection) -> str | None:
    """Name of the vec0 table that search uses, or None before any vector exists."""
    return get_meta(conn, "vec_table")


def table_exists(conn: apsw.Connection, name: str) -> bool:
    row = conn.execute(schema.table_exists_sql(), (name,)).fetchone()
    return row is not None


def day_number(content_date: str | None) -> int:
    """yyyymmdd as an integer for vec0 date filters; 0 when the chunk has no date."""
    if not content_date or len(content_date) < 10:
        return 0
    try:
        return int(content_date[:4] + content_date[5:7] + content_date[8:10])
    except ValueError:
        return 0


def fts_integrity_ok(conn: apsw.Connection) -> bool:
    """The rank=1 integrity-check, which also compares the index against its content table."""
    try:
        conn.execute(fts.integrity_check_sql())
    except apsw.Error:
        return False
    return True


@dataclass(frozen=True)
class Counts:
    """Row counts that must agree: chunks with FTS rows, embedded chunks with vectors."""

    chunks: int
    fts: int
    embedded: int
    vectors: int

    def as_json(self) -> dict[str, int]:
        return asdict(self)


def counts(conn: apsw.Connection) -> Counts:
    """Row counts that must agree: chunks, FTS rows, embedded chunks and vectors."""
    result = {
        "chunks": conn.execute(chunks.count_sql()).fetchone()[0],
        "fts": conn.execute(fts.count_sql()).fetchone()[0],
        "embedded": conn.execute(chunks.count_embedded_sql()).fetchone()[0],
        "vectors": 0,
    }
    table = active_vec_table(conn)
    if table and table_exists(conn, table):
        result["vectors"] = conn.execute(vec.count_sql(table)).fetchone()[0]
    return Counts(**result)


def known_files(path: Path) -> dict[str, tuple[float, int]]:
    """mtime and size of every indexed file, or {} when there is no index yet."""
    if not path.exists():
        return {}
    conn = connect(path, create=False)
    try:
        if not has_schema(conn):
            return {}
        return {r[0]: (r[1], r[2]) for r in conn.execute(state.files_with_stat_sql())}
    finally:
        conn.close()
