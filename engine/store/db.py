"""The index: one SQLite file through apsw, with FTS5 and a sqlite-vec vec0 table.

SQL is built by small functions and run elsewhere. `chunks.seq` is the stable integer key
that the FTS5 external-content table and the vec0 table share (an INTEGER PRIMARY KEY
survives VACUUM; an implicit rowid does not).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import sqlite_vec

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 10_000


class IndexError_(RuntimeError):
    """The index file cannot be opened or is unusable."""


SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks(
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    source_file TEXT NOT NULL,
    source_type TEXT NOT NULL,
    content TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    embedding BLOB,
    indexed_at REAL NOT NULL,
    content_hash TEXT NOT NULL,
    content_date TEXT,
    title TEXT NOT NULL DEFAULT '',
    location TEXT NOT NULL DEFAULT '',
    people TEXT NOT NULL DEFAULT '',
    ordinal INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(source_file);
CREATE INDEX IF NOT EXISTS chunks_type_date ON chunks(source_type, content_date);
CREATE INDEX IF NOT EXISTS chunks_unembedded ON chunks(seq) WHERE embedding IS NULL;

CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    content, title, source_type UNINDEXED,
    content='chunks', content_rowid='seq',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, content, title, source_type)
    VALUES (new.seq, new.content, new.title, new.source_type);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, content, title, source_type)
    VALUES ('delete', old.seq, old.content, old.title, old.source_type);
END;
CREATE TRIGGER IF NOT EXISTS chunks_au AFTER UPDATE OF content, title, source_type ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, content, title, source_type)
    VALUES ('delete', old.seq, old.content, old.title, old.source_type);
    INSERT INTO chunks_fts(rowid, content, title, source_type)
    VALUES (new.seq, new.content, new.title, new.source_type);
END;

CREATE TABLE IF NOT EXISTS index_state(
    source_file TEXT PRIMARY KEY,
    source_type TEXT NOT NULL DEFAULT '',
    mtime REAL NOT NULL,
    size INTEGER NOT NULL,
    indexed_at REAL NOT NULL,
    error TEXT
);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def vec_table_sql(table: str, dim: int) -> str:
    """The vec0 table: cosine KNN with source type and day as metadata filtered in the scan."""
    return (f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0("
            f"embedding float[{dim}] distance_metric=cosine, source_type text, day integer)")


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
        if not readonly:
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA cache_size=-65536")
        conn.execute("PRAGMA mmap_size=268435456")
    except apsw.Error as exc:
        raise IndexError_(f"cannot open the index {path}: {exc}") from None
    return conn


def migrate(conn: apsw.Connection) -> None:
    """Create or upgrade the schema; safe to run on every start."""
    with transaction(conn):
        for _ in conn.execute(SCHEMA):
            pass
        version = get_meta(conn, "schema_version")
        if version is None:
            set_meta(conn, "schema_version", str(SCHEMA_VERSION))
        elif int(version) > SCHEMA_VERSION:
            raise IndexError_(
                f"the index was written by a newer Memex (schema {version} > {SCHEMA_VERSION})")


def has_schema(conn: apsw.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='chunks'").fetchone()
    return row is not None


@contextmanager
def transaction(conn: apsw.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextmanager
def read_snapshot(conn: apsw.Connection) -> Iterator[None]:
    """A deferred read transaction: one consistent snapshot for several statements."""
    if not conn.getautocommit():
        yield  # already inside a transaction
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")


def get_meta(conn: apsw.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: apsw.Connection, key: str, value: str) -> None:
    conn.execute("INSERT INTO meta(key, value) VALUES(?, ?) "
                 "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))


def delete_meta(conn: apsw.Connection, key: str) -> None:
    conn.execute("DELETE FROM meta WHERE key = ?", (key,))


def active_vec_table(conn: apsw.Connection) -> str | None:
    """Name of the vec0 table that search uses, or None before any vector exists."""
    return get_meta(conn, "vec_table")


def table_exists(conn: apsw.Connection, name: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone()
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
        conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 1)")
    except apsw.Error:
        return False
    return True


def counts(conn: apsw.Connection) -> dict[str, int]:
    """Row counts that must agree: chunks, FTS rows, embedded chunks and vectors."""
    result = {
        "chunks": conn.execute("SELECT count(*) FROM chunks").fetchone()[0],
        "fts": conn.execute("SELECT count(*) FROM chunks_fts_docsize").fetchone()[0],
        "embedded": conn.execute(
            "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL").fetchone()[0],
        "vectors": 0,
    }
    table = active_vec_table(conn)
    if table and table_exists(conn, table):
        result["vectors"] = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    return result


def known_files(path: Path) -> dict[str, tuple[float, int]]:
    """mtime and size of every indexed file, or {} when there is no index yet."""
    if not path.exists():
        return {}
    conn = connect(path, create=False)
    try:
        if not has_schema(conn):
            return {}
        return {r[0]: (r[1], r[2]) for r in conn.execute(
            "SELECT source_file, mtime, size FROM index_state")}
    finally:
        conn.close()
