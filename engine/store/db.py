"""The index: one SQLite file through apsw, with FTS5 and a sqlite-vec vec0 table.

SQL is built by small functions and run elsewhere. `chunks.seq` is the stable integer key
that the FTS5 external-content table and the vec0 table share (an INTEGER PRIMARY KEY
survives VACUUM; an implicit rowid does not).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import apsw
import sqlite_vec

from engine import parts
from engine.store import damage_marker, owner, people
from engine.store.sql import chunk_state as chunk_state_sql
from engine.store.sql import chunks, database, fts, meta, schema, state, vec

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 10_000


# SQLite's answers for a file that is not a sound database: a page overwritten, a file
# cut short, another program's file.
DAMAGE = (apsw.CorruptError, apsw.NotADBError)
REPAIR_HINT = "'memex maintenance --repair' moves it aside and rebuilds the index from your files"


class IndexError_(RuntimeError):
    """The index file cannot be opened or is unusable."""


class IndexDamaged(IndexError_):
    """The index file is corrupt (damaged pages, cut short): only a rebuild helps."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason  # SQLite's words: "database disk image is malformed"


class NoIndexYet(IndexError_):
    """The file exists but holds no Memex index (empty, or another program's database)."""


class NotMemexIndex(NoIndexYet):
    """The file at the index's path is not Memex's (another program's database, a file
    that is not SQLite, a folder): refused before anything is written (engine/store/owner.py)."""


class IndexBusy(IndexError_):
    """Another program held the index's write lock for longer than the busy timeout."""


def damaged(
    path: Path | str | None, exc: BaseException | str, *, remember: bool = True
) -> IndexDamaged:
    """The one sentence for a damaged index file, with the way forward. With a path (and
    `remember`), the damage is remembered beside the file (engine/store/damage_marker.py):
    every later `connect` refuses it, readers included, until it is repaired or replaced."""
    if path is not None and remember:
        damage_marker.remember(Path(path), str(exc))
    where = "" if path is None else f" {path}"
    return IndexDamaged(f"the index{where} is damaged ({exc}); {REPAIR_HINT}", str(exc))


class BusyWait:
    """SQLite's busy timeout, told once: `notice()` runs before a wait for the write lock
    is given up (halfway through, or at the end of a short timeout), then BusyError."""

    def __init__(self, timeout_ms: int, notice: Callable[[], None]) -> None:
        self.timeout = timeout_ms / 1000
        self.notice = notice
        self.noticed = False
        self.started = 0.0

    def __call__(self, count: int) -> bool:
        now = time.monotonic()
        if count == 0:
            self.started = now
        waited = now - self.started
        if not self.noticed and (waited >= min(1.0, self.timeout / 2) or waited >= self.timeout):
            self.noticed = True
            self.notice()
        if waited >= self.timeout:
            return False
        time.sleep(min(0.001 * 2 ** min(count, 7), self.timeout - waited))
        return True


def check_lines(rows: list[tuple[Any, ...]]) -> list[str]:
    """The lines of an integrity or quick check's answer (a row may hold several)."""
    lines = [line.strip() for row in rows for line in str(row[0]).splitlines()]
    return [line for line in lines if line and not line.startswith("*** in database")]


def quick_check(conn: apsw.Connection) -> str | None:
    """Why the file is damaged by SQLite's quick check (every page read once), or None
    when it is sound. The connection's page cache is freed after it."""
    try:
        lines = check_lines(conn.execute(database.quick_check_sql()).fetchall())
    except DAMAGE as exc:  # too damaged for the check to run to its end
        return str(exc)
    conn.execute(database.shrink_memory_sql())
    if lines == ["ok"]:
        return None
    more = f"; {len(lines) - 2} more" if len(lines) > 2 else ""
    return "; ".join(lines[:2]) + more


def verify(conn: apsw.Connection, path: Path | str) -> None:
    """The integrity gate (docs/security-integrity.md): IndexDamaged, with the way to
    --repair, when SQLite's quick check finds the file damaged."""
    reason = quick_check(conn)
    if reason is not None:
        raise damaged(path, reason)


def connect(
    path: Path | str,
    *,
    readonly: bool = False,
    create: bool = True,
    on_busy: Callable[[], None] | None = None,
    verify_first: bool = False,
    trust_marker: bool = True,
) -> apsw.Connection:
    """Open the index with sqlite-vec loaded, WAL, synchronous=NORMAL and a busy timeout
    (`on_busy`: told once when a wait for another writer's lock grows long). A file found
    damaged before (its marker) is refused at once, unless `trust_marker` is False (the
    checks that read the file themselves). With `verify_first`, the integrity gate runs
    before the connection is returned: a writer never starts on a damaged file."""
    path = Path(path)
    kind = claim(path, build=create and not readonly)
    if trust_marker:
        refuse_remembered(path)
    conn = _open(path, readonly=readonly, create=create, on_busy=on_busy, new=kind in owner.NEW)
    if verify_first:
        _gate(conn, path, remember=not readonly)
    return conn


def claim(path: Path, *, build: bool) -> owner.Kind:
    """What is at `path`, when Memex may open it: its own index, or no file (or a 0-byte
    file) for a command that builds one (`build`). NotMemexIndex for another program's file
    or a folder, NoIndexYet for a 0-byte file when not building: nothing is written to
    either (engine/store/owner.py)."""
    try:
        kind = owner.kind_of(path)
    except OSError as exc:  # a folder that cannot be entered, a file that cannot be read
        raise unwritable(path, exc) from None
    if kind is owner.Kind.EMPTY and not build:
        raise NoIndexYet(f"{path} holds no Memex index yet; run 'memex reindex' first")
    if kind not in owner.MINE + owner.NEW:
        raise NotMemexIndex(owner.refusal(path, kind))
    return kind


def _gate(conn: apsw.Connection, path: Path, *, remember: bool) -> None:
    """`verify` for a connection just opened, closed when the file is damaged."""
    try:
        reason = quick_check(conn)
    except BaseException:
        conn.close()
        raise
    if reason is not None:
        conn.close()  # first: remembered with the identity the file keeps once closed
        raise damaged(path, reason, remember=remember)


def refuse_remembered(path: Path) -> None:
    """IndexDamaged, with the reason first found, when `path` was found damaged and is
    still the same file (a restored or rebuilt file is not: its marker is dropped)."""
    reason = damage_marker.remembered(path)
    if reason is not None:
        raise damaged(path, reason, remember=False)


def _open(
    path: Path,
    *,
    readonly: bool,
    create: bool,
    on_busy: Callable[[], None] | None,
    new: bool = False,
) -> apsw.Connection:
    if not readonly and create:
        _create_file(path)
    elif not path.exists():
        raise IndexError_(f"no index at {path}")
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE
    try:
        conn = apsw.Connection(str(path), flags=flags)
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        if on_busy is None:
            conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        else:
            conn.set_busy_handler(BusyWait(BUSY_TIMEOUT_MS, on_busy))
        if new:  # stamped before the switch to WAL: in the main file's header at once
            _setup(conn, owner.stamp_sql())
        for pragma in database.connection_pragmas(readonly):
            _setup(conn, pragma)
        conn.register_fts5_function(fts.HELD_FUNCTION, terms_held)
        conn.register_fts5_function(fts.FREQUENCY_FUNCTION, phrase_frequency)
    except DAMAGE as exc:
        raise damaged(path, exc, remember=not readonly) from None
    except apsw.Error as exc:
        raise IndexError_(f"cannot open the index {path}: {exc}") from None
    return conn


def _setup(conn: apsw.Connection, pragma: str) -> None:
    """One connection pragma. Switching a new file to WAL needs it to itself, and SQLite
    does not wait for that with the busy handler: a reader opening the file at that moment
    (a warm search at `memex watch`'s start) is waited out here, up to the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute(pragma).fetchall()
            return
        except apsw.BusyError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


def terms_held(api: apsw.FTS5ExtensionApi, *_: object) -> int:
    """FTS5 auxiliary function: which of the query's phrases the current row holds, as a
    bitmask (bit i: phrase i). Search queries quote each term as one phrase, so bit i is
    term i (engine/search/retrieve/keyword_share.py)."""
    return sum(1 << i for i in range(min(api.phrase_count, 63)) if api.phrase_columns(i))


def phrase_frequency(api: apsw.FTS5ExtensionApi, *_: object) -> float:
    """FTS5 auxiliary function: phrase 0's hits in the current row, each weighted by its
    column's BM25 weight (`fts.COLUMN_WEIGHTS`), as FTS5's bm25() counts them."""
    located = api.phrase_locations(0)
    return float(sum(len(hits) * w for hits, w in zip(located, fts.COLUMN_WEIGHTS, strict=False)))


def _create_file(path: Path) -> None:
    """The index file (0600) and its folder, or IndexError_ saying why they cannot be."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    except OSError as exc:
        raise unwritable(path, exc) from None


def as_index_error(path: Path | str, exc: apsw.Error) -> IndexError_ | None:
    """The sentence for an SQLite error that is the file's or the disk's fault, not the
    code's: damage, a lock held too long, a full disk; None for any other error."""
    if isinstance(exc, DAMAGE):
        return damaged(path, exc)
    if isinstance(exc, apsw.BusyError):
        return IndexBusy(
            f"the index {path} is busy: another program has held its write lock for more "
            f"than {BUSY_TIMEOUT_MS / 1000:g} s; try again when it has finished"
        )
    if isinstance(exc, (apsw.FullError, apsw.IOError)):
        return IndexError_(
            f"cannot write the index {path}: {exc} (is the disk full?); everything indexed "
            "before is kept: free some space and run 'memex reindex' again"
        )
    if isinstance(exc, (apsw.ReadOnlyError, apsw.CantOpenError, apsw.PermissionsError)):
        return unwritable(Path(path), PermissionError(str(exc)))
    return None


def unwritable(path: Path, exc: OSError) -> IndexError_:
    """The one sentence for an index that cannot be written where it is configured."""
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(path) else ""
    return IndexError_(
        f"cannot write the index {path}: {exc.strerror or exc}{where}; choose a writable "
        "folder with --db, MEMEX_DB or 'db' in the config file"
    )


def migrate(conn: apsw.Connection) -> None:
    """Create or upgrade the schema; safe to run on every start."""
    with transaction(conn):
        conn.execute(owner.stamp_sql())  # an index made before the application id
        for _ in conn.execute(schema.schema_sql()):
            pass
        for _ in conn.execute(chunk_state_sql.schema_sql()):
            pass
        if conn.execute(chunk_state_sql.has_row_sql()).fetchone() is None:
            # A new index, or one made before the stamp: its chunks counted once, here.
            conn.execute(chunk_state_sql.start_sql())
        if ("depends",) not in conn.execute(state.columns_sql()).fetchall():
            conn.execute(state.add_depends_sql())  # an index made before siblings were read
        people.ensure_tables(conn)  # an index made before mentions: its files read again
        version = get_meta(conn, "schema_version")
        if version is None:
            set_meta(conn, "schema_version", str(SCHEMA_VERSION))
        elif int(version) > SCHEMA_VERSION:
            raise IndexError_(
                f"the index was written by a newer Memex (schema {version} > {SCHEMA_VERSION})"
            )


@dataclass(frozen=True)
class ChunkState:
    """The writer's stamp of the chunks' state (engine/store/sql/chunk_state.py)."""

    origin: int  # drawn when the index was made: another index never shares it
    stamp: int  # moves with every change of a chunk's id, type, date or vector
    count: int  # how many chunks


def chunk_state(conn: apsw.Connection) -> ChunkState | None:
    """The chunks' state in the caller's snapshot; None for an index a writer of this
    version has not opened yet (it has no such row)."""
    try:
        row = conn.execute(chunk_state_sql.select_sql()).fetchone()
    except apsw.SQLError:  # no such table
        return None
    return None if row is None else ChunkState(int(row[0]), int(row[1]), int(row[2]))


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
    embedded: int  # chunks that have their vectors in `chunks.embedding`
    vectors: int  # chunks that have their vectors in the active vec0 table
    parts: int = 0  # rows of the active vec0 table: one per part
    part_vectors: int = 0  # part vectors held in `chunks.embedding`: must equal `parts`

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
        result["parts"] = conn.execute(vec.count_sql(table)).fetchone()[0]
        result["vectors"] = conn.execute(
            vec.count_chunks_sql(table), (parts.MAX_PARTS,)
        ).fetchone()[0]
    width = 4 * int(get_meta(conn, "dimension") or 0)
    if width:
        result["part_vectors"] = conn.execute(chunks.part_vectors_sql(), (width,)).fetchone()[0]
    return Counts(**result)


def known_files(path: Path) -> dict[str, tuple[float, int]]:
    """mtime and size of every indexed file, or {} when there is no index yet."""
    if not path.exists():
        return {}
    try:
        conn = connect(path, create=False)
    except NotMemexIndex:
        raise
    except NoIndexYet:  # a 0-byte file
        return {}
    try:
        if not has_schema(conn):
            return {}
        return {r[0]: (r[1], r[2]) for r in conn.execute(state.files_with_stat_sql())}
    finally:
        conn.close()
