"""Maintenance: rebuild the vec0 table, VACUUM, check and repair the index.

sqlite-vec stores vectors in fixed-size chunks (1,024 slots each). A deleted vector leaves a
dead slot; holes in the newest chunk are reused by later inserts, holes in older chunks are
not, and a chunk is freed only when all of its slots are dead. `dead_slots` measures that
from the shadow tables (`<table>_chunks.size` against live rows), and `rebuild_vectors`
writes a dense table again from `chunks.embedding`, in one transaction.

The functions taking a connection expect the caller to hold the writer lock; `maintain` and
`check_index` open their own connection (`maintain` takes the lock). The backup is in
engine/index/backup.py.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import apsw

from engine import parts
from engine.index import recovery, runlog
from engine.index.backup import BackupError as BackupError  # where callers import them
from engine.index.backup import BackupRefused as BackupRefused
from engine.index.backup import backup as backup
from engine.index.locks import writer_lock_now
from engine.index.reports import (
    CheckReport,
    FileSizes,
    MaintenanceReport,
    MaintenanceResult,
    RepairReport,
    VectorSlots,
    WalCheckpoint,
)
from engine.settings import Settings
from engine.store import db, vectors
from engine.store.sql import chunks as chunks_sql
from engine.store.sql import database as database_sql
from engine.store.sql import fts as fts_sql
from engine.store.sql import people as people_sql
from engine.store.sql import schema as schema_sql
from engine.store.sql import vec as vec_sql

VEC_SLOT_BYTES = 4  # float32 per dimension


class MaintenanceBusy(RuntimeError):
    """Another writer (watcher, reindex, desktop app) holds the index."""


# -- measurements ---------------------------------------------------------------------------


def _rows(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    # Always drain: VACUUM fails while any statement of the connection is still open.
    return list(conn.execute(sql, params).fetchall())


def _scalar(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> Any:
    rows = _rows(conn, sql, params)
    return rows[0][0] if rows else None


def vec_dimension(conn: apsw.Connection, table: str) -> int:
    sql = _scalar(conn, schema_sql.create_statement_sql(), (table,)) or ""
    match = re.search(r"\[(\d+)\]", sql)
    return int(match.group(1)) if match else int(db.get_meta(conn, "dimension") or 0)


def dead_slots(conn: apsw.Connection) -> VectorSlots:
    """Allocated, live and dead vec0 slots of the active table, and the dead fraction."""
    table = db.active_vec_table(conn)
    empty = VectorSlots(table)
    if not table or not db.table_exists(conn, vec_sql.chunks_table(table)):
        return empty
    chunks = _rows(conn, vec_sql.slot_chunks_sql(table))
    if not chunks:
        return empty
    live_per_chunk = [int.from_bytes(v, "little").bit_count() for _, _, v in chunks]
    allocated = sum(size for _, size, _ in chunks)
    # Free slots of the newest chunk are reused by the next inserts: they are not dead.
    dead = sum(
        size - live for (_, size, _), live in zip(chunks[:-1], live_per_chunk[:-1], strict=True)
    )
    dim = vec_dimension(conn, table)
    return VectorSlots(
        table=table,
        allocated=allocated,
        live=sum(live_per_chunk),
        dead=dead,
        fraction=round(dead / allocated, 4),
        dead_bytes=dead * dim * VEC_SLOT_BYTES,
    )


def bytes_on_disk(path: Path) -> int:
    """The size of a file, 0 when it does not exist (no WAL yet, say)."""
    return path.stat().st_size if path.exists() else 0


def file_size(path: Path) -> FileSizes:
    wal = path.with_name(path.name + "-wal")
    return FileSizes(db=bytes_on_disk(path), db_wal=bytes_on_disk(wal))


def stale_vec_tables(conn: apsw.Connection) -> list[str]:
    """vec0 tables neither active nor being built for a new embedder (left by a crash)."""
    known = {db.active_vec_table(conn), vectors.pending_table(conn)}
    names = _rows(conn, schema_sql.vec_tables_sql())
    return [n for (n,) in names if n not in known]


# -- check and repair -----------------------------------------------------------------------


def check(conn: apsw.Connection) -> CheckReport:
    """Integrity checks on one consistent state; `ok` is False when any problem is listed.

    The FTS5 integrity-check is an INSERT, so it needs the write lock anyway: the checks run
    inside BEGIN IMMEDIATE (a writer waits, within its busy timeout) and are rolled back.
    """
    if not db.has_schema(conn):
        return CheckReport(ok=True, problems=(), note="no schema yet (empty index)")
    conn.execute(database_sql.begin_immediate_sql())
    try:
        return _check_in_transaction(conn)
    except db.DAMAGE as exc:  # too damaged for the check itself to run to its end
        return recovery.damage_report(exc)
    finally:
        conn.execute(database_sql.rollback_sql())


def _check_in_transaction(conn: apsw.Connection) -> CheckReport:
    integrity = db.check_lines(_rows(conn, database_sql.integrity_check_sql()))
    problems = recovery.integrity_problems(integrity)  # damage first, and what to do
    fts_ok = db.fts_integrity_ok(conn)
    if not fts_ok:
        problems.append("the FTS5 index is out of sync with chunks (run --repair)")
    counts = db.counts(conn)
    if counts.chunks != counts.fts:
        problems.append(f"{counts.chunks} chunks but {counts.fts} FTS rows (run --repair)")
    orphans = _orphans(conn)
    if (
        (counts.embedded, counts.part_vectors) != (counts.vectors, counts.parts)
        or orphans["orphan_vectors"]
        or orphans["missing_vectors"]
    ):
        problems.append(
            f"{counts.embedded} embedded chunks ({counts.part_vectors} parts) but "
            f"{counts.vectors} with vectors ({counts.parts} parts) "
            f"({orphans['orphan_vectors']} without chunk, "
            f"{orphans['missing_vectors']} missing; run --repair)"
        )
    if orphans["orphan_chunk_files"]:
        problems.append(
            f"{orphans['orphan_chunk_files']} file(s) have chunks but no index state (run --repair)"
        )
    stale = stale_vec_tables(conn)
    if stale:
        problems.append(f"stale vector table(s) {', '.join(stale)} (run --repair)")
    return CheckReport(
        ok=not problems,
        problems=tuple(problems),
        integrity=tuple(integrity[:20]),
        fts_ok=fts_ok,
        counts=counts,
        orphan_vectors=orphans["orphan_vectors"],
        missing_vectors=orphans["missing_vectors"],
        orphan_chunk_files=orphans["orphan_chunk_files"],
        stale_vec_tables=tuple(stale),
        dead_slots=dead_slots(conn),
    )


def _orphans(conn: apsw.Connection) -> dict[str, int]:
    table = db.active_vec_table(conn)
    result = {"orphan_vectors": 0, "missing_vectors": 0}
    if table and db.table_exists(conn, vec_sql.rowids_table(table)):
        bound = (parts.MAX_PARTS,)
        result["orphan_vectors"] = _scalar(conn, vec_sql.count_orphans_sql(table), bound)
        result["missing_vectors"] = _scalar(conn, vec_sql.count_missing_sql(table), bound)
    result["orphan_chunk_files"] = _scalar(conn, chunks_sql.count_orphan_files_sql())
    return result


def rebuild_vectors(conn: apsw.Connection) -> int:
    """Drop and refill the active vec0 table from `chunks.embedding`, in one transaction.

    The table keeps its name (the embedder's), so nothing else changes; a kill midway
    rolls back to the old table.
    """
    table = db.active_vec_table(conn)
    if not table:
        return 0
    create = _scalar(conn, schema_sql.create_statement_sql(), (table,))
    with db.transaction(conn):
        if create is None:
            create = vec_sql.create_table_sql(table, int(db.get_meta(conn, "dimension") or 0))
        else:
            conn.execute(vec_sql.drop_table_sql(table))
        conn.execute(create)
        rows = 0
        cursor = conn.cursor().execute(chunks_sql.embedded_vectors_sql())
        for seq, blob, source_type, content_date in cursor:
            rows += vectors.insert_vector(conn, table, seq, blob, source_type, content_date)
    return rows


def repair(conn: apsw.Connection) -> RepairReport:
    """Rebuild FTS and vectors from `chunks`; drop orphan chunks and stale vector tables."""
    started = time.perf_counter()
    with db.transaction(conn):
        dropped = _scalar(conn, chunks_sql.count_orphans_sql())
        # The next reindex re-reads these files if they still exist (they have no state).
        conn.execute(chunks_sql.delete_orphans_sql())
        if db.table_exists(conn, "mentions"):  # an index not yet migrated has none
            conn.execute(people_sql.delete_orphan_mentions_sql())
        conn.execute(fts_sql.rebuild_sql())
        stale = stale_vec_tables(conn)
        for table in stale:
            conn.execute(vec_sql.drop_table_sql(table))
    rebuilt = rebuild_vectors(conn)
    return RepairReport(
        orphan_chunks_dropped=dropped,
        stale_tables_dropped=tuple(stale),
        vectors_rebuilt=rebuilt,
        seconds=round(time.perf_counter() - started, 3),
    )


# -- maintenance ----------------------------------------------------------------------------


def checkpoint(conn: apsw.Connection) -> WalCheckpoint:
    busy, log, done = _rows(conn, database_sql.checkpoint_truncate_sql())[0]
    return WalCheckpoint(busy=busy, log_frames=log, checkpointed=done)


def run_maintenance(
    conn: apsw.Connection, db_path: Path, *, vacuum: bool = True
) -> MaintenanceReport:
    """Rebuild vectors, VACUUM, checkpoint; the caller holds the writer lock."""
    timings: dict[str, float] = {}

    def timed(stage: str, started: float) -> None:
        timings[stage] = round(time.perf_counter() - started, 3)

    before = file_size(db_path)
    counts_before = db.counts(conn)
    slots_before = dead_slots(conn)
    started = time.perf_counter()
    rows = rebuild_vectors(conn)
    timed("rebuild_vectors", started)
    if vacuum:
        started = time.perf_counter()
        conn.execute(database_sql.vacuum_sql())
        timed("vacuum", started)
    started = time.perf_counter()
    wal = checkpoint(conn)
    timed("checkpoint", started)
    return MaintenanceReport(
        size_before=before,
        size_after=file_size(db_path),
        vectors_rebuilt=rows,
        counts_before=counts_before,
        counts_after=db.counts(conn),
        dead_slots_before=slots_before,
        dead_slots_after=dead_slots(conn),
        vacuum=vacuum,
        wal_checkpoint=wal,
        timings=timings,
    )


def _open_existing(settings: Settings, *, trust_marker: bool = True) -> apsw.Connection:
    if not settings.db_path.exists():
        raise db.IndexError_(f"no index at {settings.db_path}; run 'memex reindex' first")
    return db.connect(settings.db_path, create=False, trust_marker=trust_marker)


def maintain(
    settings: Settings, *, vacuum: bool = True, do_check: bool = False, do_repair: bool = False
) -> MaintenanceResult:
    """Run maintenance (or only check / repair) as the one writer; logs one run-log line.

    Raises MaintenanceBusy at once when another writer holds the lock, IndexDamaged
    (the integrity gate) before anything is rewritten in a damaged file.
    """
    with writer_lock_now(settings, MaintenanceBusy, "stop it or try again when it has finished"):
        conn = _open_existing(settings)  # refused at once when found damaged before
        try:
            db.verify(conn, settings.db_path)  # the integrity gate, before anything is rewritten
            return maintain_locked(
                conn, settings, vacuum=vacuum, do_check=do_check, do_repair=do_repair
            )
        finally:
            conn.close()


def maintain_locked(
    conn: apsw.Connection,
    settings: Settings,
    *,
    vacuum: bool = True,
    do_check: bool = False,
    do_repair: bool = False,
) -> MaintenanceResult:
    """`maintain` for a caller that already holds the writer lock (the writer thread)."""
    if not db.has_schema(conn):
        return MaintenanceResult(check=check(conn))
    repaired = repair(conn) if do_repair else None
    maintained = (
        None if do_check or do_repair else run_maintenance(conn, settings.db_path, vacuum=vacuum)
    )
    checked = check(conn) if do_check or do_repair else None
    if checked is not None:
        recovery.remember_check(settings.db_path, checked)
    result = MaintenanceResult(maintenance=maintained, repair=repaired, check=checked)
    kind = "repair" if do_repair else ("check" if do_check else "maintenance")
    runlog.append(settings, runlog.make_record(kind, **result.log_fields()))
    return result


def check_index(settings: Settings) -> CheckReport:
    """Check without the writer lock (safe while the watcher runs); logs one run-log line.
    The file itself is read, whatever damage was remembered for it: damage found is
    remembered, a file found sound forgets it (engine/store/damage_marker.py)."""
    started = time.perf_counter()
    try:
        conn = _open_existing(settings, trust_marker=False)
    except db.IndexDamaged as exc:  # cut short, not a database: SQLite cannot even open it
        result = recovery.damage_report(exc)
    else:
        try:
            result = check(conn)
        finally:
            conn.close()
    recovery.remember_check(settings.db_path, result)
    runlog.append(
        settings,
        runlog.make_record(
            "check",
            seconds=round(time.perf_counter() - started, 3),
            **MaintenanceResult(check=result).log_fields(),
        ),
    )
    return result
