"""Whose file is at the index's path: Memex writes only into Memex's own files.

An index file carries Memex's application id in its SQLite header (`PRAGMA application_id`,
the 4 bytes at offset 68 of the file): APPLICATION_ID, the ASCII of "MMEX" (0x4D4D4558,
1296909656). A file is told from its first 100 bytes, before SQLite opens it — opening for
writing is itself a write (the switch to WAL rewrites the header and leaves -wal and -shm
files beside it):

- no file, or a 0-byte file: a new index, for the commands that build one (reindex, watch,
  demo); every other command finds no index there (exit 3) and leaves it as it is;
- Memex's application id: the index;
- no application id (0) and Memex's schema (the `chunks`, `index_state` and `meta` tables, a
  schema version in `meta`): an index made before the id existed, stamped when opened for
  writing. Its tables are read with SQLite's `immutable` flag, which reads the file as bytes
  and leaves nothing beside it;
- anything else — another program's SQLite database (another application id, other tables,
  none), a file that is not SQLite (or whose header was overwritten), a folder, a device —
  is refused with one sentence, and nothing is written into it or beside it.
"""

from __future__ import annotations

import enum
import os
import stat
from pathlib import Path
from urllib.parse import quote

import apsw

from engine.store.sql import meta, schema

APPLICATION_ID = int.from_bytes(b"MMEX", "big")  # 0x4D4D4558
MAGIC = b"SQLite format 3\0"
HEADER_BYTES = 100
ID_AT = slice(68, 72)  # the application id, big-endian (sqlite.org/fileformat.html)
MEMEX_TABLES = ("chunks", "index_state", "meta")
NOTHING_WRITTEN = "nothing was written"


class Kind(enum.Enum):
    """What is at the index's path."""

    ABSENT = "no file"
    EMPTY = "a 0-byte file"
    MEMEX = "a Memex index"
    UNSTAMPED = "a Memex index made before the application id"
    FOREIGN = "another program's SQLite database"
    NOT_SQLITE = "not an SQLite database"
    FOLDER = "a folder"
    SPECIAL = "not a regular file"


MINE = (Kind.MEMEX, Kind.UNSTAMPED)
NEW = (Kind.ABSENT, Kind.EMPTY)


def kind_of(path: Path) -> Kind:
    """What `path` holds, from its type, size and first 100 bytes (and, for an SQLite file
    without an application id, its table names read immutably); nothing is written."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # the open that creates it says why not
        return Kind.ABSENT
    if stat.S_ISDIR(info.st_mode):
        return Kind.FOLDER
    if not stat.S_ISREG(info.st_mode):
        return Kind.SPECIAL
    if info.st_size == 0:
        return Kind.EMPTY
    with open(path, "rb") as f:
        header = f.read(HEADER_BYTES)
    if len(header) < HEADER_BYTES or not header.startswith(MAGIC):
        return Kind.NOT_SQLITE
    found = int.from_bytes(header[ID_AT], "big")
    if found == APPLICATION_ID:
        return Kind.MEMEX
    if found != 0:
        return Kind.FOREIGN
    return Kind.UNSTAMPED if has_memex_schema(path) else Kind.FOREIGN


def has_memex_schema(path: Path) -> bool:
    """Whether the SQLite file holds Memex's tables and a schema version, read with the
    `immutable` flag (no lock, no journal, no -wal or -shm made); False when SQLite cannot
    read it."""
    uri = f"file:{quote(os.fspath(path))}?immutable=1"
    try:
        conn = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    except apsw.Error:
        return False
    try:
        for table in MEMEX_TABLES:
            if conn.execute(schema.table_exists_sql(), (table,)).fetchone() is None:
                return False
        return conn.execute(meta.select_value_sql(), ("schema_version",)).fetchone() is not None
    except apsw.Error:
        return False
    finally:
        conn.close()


def refusal(path: Path, kind: Kind) -> str:
    """The one sentence for a file that is not Memex's."""
    if kind is Kind.FOLDER:
        why = "it is a folder"
    elif kind is Kind.SPECIAL:
        why = "it is not a regular file"
    elif kind is Kind.NOT_SQLITE:
        why = (
            "it is not an SQLite database; if it was your index, its first page was "
            "overwritten: move it aside and run 'memex reindex'"
        )
    else:
        why = "it is another program's SQLite database"
    return f"{path} is not a Memex index ({why}); {NOTHING_WRITTEN}"


def stamp_sql() -> str:
    """Mark the file as Memex's (a header field: no table is touched)."""
    return f"PRAGMA application_id={APPLICATION_ID}"
