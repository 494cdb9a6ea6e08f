"""Maintenance: rebuild the vec0 table, VACUUM, check and repair the index, back it up.

sqlite-vec stores vectors in fixed-size chunks (1,024 slots each). A deleted vector leaves a
dead slot; holes in the newest chunk are reused by later inserts, holes in older chunks are
not, and a chunk is freed only when all of its slots are dead. `dead_slots` measures that
from the shadow tables (`<table>_chunks.size` against live rows), and `rebuild_vectors`
writes a dense table again from `chunks.embedding`, in one transaction.

The functions taking a connection expect the caller to hold the writer lock; `maintain`,
`check_index` and `backup` open their own connection (and take the lock where they write).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

import apsw
import filelock

from engine.index import runlog
from engine.index.runs import writer_lock
from engine.settings import Settings
from engine.store import db, vectors

VEC_SLOT_BYTES = 4  # float32 per dimension


class MaintenanceBusy(RuntimeError):
    """Another writer (watcher, reindex, desktop app) holds the index."""


class BackupError(RuntimeError):
    """The backup cannot be written (target exists, disk full, …)."""


# -- measurements ---------------------------------------------------------------------------

def _rows(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    # Always drain: VACUUM fails while any statement of the connection is still open.
    return list(conn.execute(sql, params).fetchall())


def _scalar(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> Any:
    rows = _rows(conn, sql, params)
    return rows[0][0] if rows else None


def vec_dimension(conn: apsw.Connection, table: str) -> int:
    sql = _scalar(conn, "SELECT sql FROM sqlite_master WHERE name = ?", (table,)) or ""
    match = re.search(r"\[(\d+)\]", sql)
    return int(match.group(1)) if match else int(db.get_meta(conn, "dimension") or 0)


def dead_slots(conn: apsw.Connection) -> dict[str, Any]:
    """Allocated, live and dead vec0 slots of the active table, and the dead fraction."""
    table = db.active_vec_table(conn)
    empty = {"table": table, "allocated": 0, "live": 0, "dead": 0, "fraction": 0.0,
             "dead_bytes": 0}
    if not table or not db.table_exists(conn, f"{table}_chunks"):
        return empty
    chunks = _rows(conn, f"SELECT chunk_id, size, validity FROM {table}_chunks ORDER BY chunk_id")
    if not chunks:
        return empty
    live_per_chunk = [int.from_bytes(v, "little").bit_count() for _, _, v in chunks]
    allocated = sum(size for _, size, _ in chunks)
    # Free slots of the newest chunk are reused by the next inserts: they are not dead.
    dead = sum(size - live for (_, size, _), live in zip(chunks[:-1], live_per_chunk[:-1],
                                                          strict=True))
    dim = vec_dimension(conn, table)
    return {"table": table, "allocated": allocated, "live": sum(live_per_chunk), "dead": dead,
            "fraction": round(dead / allocated, 4), "dead_bytes": dead * dim * VEC_SLOT_BYTES}


def file_size(path: Path) -> dict[str, int]:
    sizes = {}
    for suffix in ("", "-wal"):
        p = path.with_name(path.name + suffix)
        sizes["db" + suffix.replace("-", "_")] = p.stat().st_size if p.exists() else 0
    sizes["total"] = sizes["db"] + sizes["db_wal"]
    return sizes


def stale_vec_tables(conn: apsw.Connection) -> list[str]:
    """vec0 tables neither active nor being built for a new embedder (left by a crash)."""
    known = {db.active_vec_table(conn), vectors.pending_table(conn)}
    names = _rows(conn, "SELECT name FROM sqlite_master WHERE type = 'table' "
                        "AND sql LIKE 'CREATE VIRTUAL TABLE%vec0%'")
    return [n for (n,) in names if n not in known]


# -- check and repair -----------------------------------------------------------------------

def check(conn: apsw.Connection) -> dict[str, Any]:
    """Integrity checks on one consistent state; `ok` is False when any problem is listed.

    The FTS5 integrity-check is an INSERT, so it needs the write lock anyway: the checks run
    inside BEGIN IMMEDIATE (a writer waits, within its busy timeout) and are rolled back.
    """
    if not db.has_schema(conn):
        return {"ok": True, "problems": [], "note": "no schema yet (empty index)"}
    conn.execute("BEGIN IMMEDIATE")
    try:
        return _check_in_transaction(conn)
    finally:
        conn.execute("ROLLBACK")


def _check_in_transaction(conn: apsw.Connection) -> dict[str, Any]:
    problems: list[str] = []
    integrity = [r[0] for r in _rows(conn, "PRAGMA integrity_check")]
    if integrity != ["ok"]:
        problems += [f"integrity_check: {line}" for line in integrity[:20]]
    fts_ok = db.fts_integrity_ok(conn)
    if not fts_ok:
        problems.append("the FTS5 index is out of sync with chunks (run --repair)")
    counts = db.counts(conn)
    if counts["chunks"] != counts["fts"]:
        problems.append(f"{counts['chunks']} chunks but {counts['fts']} FTS rows (run --repair)")
    orphans = _orphans(conn)
    if counts["embedded"] != counts["vectors"] or orphans["orphan_vectors"] or orphans[
            "missing_vectors"]:
        problems.append(f"{counts['embedded']} embedded chunks but {counts['vectors']} vectors "
                        f"({orphans['orphan_vectors']} without chunk, "
                        f"{orphans['missing_vectors']} missing; run --repair)")
    if orphans["orphan_chunk_files"]:
        problems.append(f"{orphans['orphan_chunk_files']} file(s) have chunks but no index "
                        "state (run --repair)")
    stale = stale_vec_tables(conn)
    if stale:
        problems.append(f"stale vector table(s) {', '.join(stale)} (run --repair)")
    return {"ok": not problems, "problems": problems, "integrity": integrity[:20],
            "fts_ok": fts_ok, "counts": counts, **orphans, "stale_vec_tables": stale,
            "dead_slots": dead_slots(conn)}


def _orphans(conn: apsw.Connection) -> dict[str, int]:
    table = db.active_vec_table(conn)
    result = {"orphan_vectors": 0, "missing_vectors": 0}
    if table and db.table_exists(conn, f"{table}_rowids"):
        result["orphan_vectors"] = _scalar(
            conn, f"SELECT count(*) FROM {table}_rowids r "
                  "WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.seq = r.rowid)")
        result["missing_vectors"] = _scalar(
            conn, f"SELECT count(*) FROM chunks c WHERE c.embedding IS NOT NULL "
                  f"AND NOT EXISTS (SELECT 1 FROM {table}_rowids r WHERE r.rowid = c.seq)")
    result["orphan_chunk_files"] = _scalar(
        conn, "SELECT count(DISTINCT source_file) FROM chunks c WHERE NOT EXISTS "
              "(SELECT 1 FROM index_state s WHERE s.source_file = c.source_file)")
    return result


def rebuild_vectors(conn: apsw.Connection) -> int:
    """Drop and refill the active vec0 table from `chunks.embedding`, in one transaction.

    The table keeps its name (the embedder's), so nothing else changes; a kill midway
    rolls back to the old table.
    """
    table = db.active_vec_table(conn)
    if not table:
        return 0
    create = _scalar(conn, "SELECT sql FROM sqlite_master WHERE name = ?", (table,))
    with db.transaction(conn):
        if create is None:
            create = db.vec_table_sql(table, int(db.get_meta(conn, "dimension") or 0))
        else:
            conn.execute(f"DROP TABLE {table}")
        conn.execute(create)
        rows = 0
        cursor = conn.cursor().execute(
            "SELECT seq, embedding, source_type, content_date FROM chunks "
            "WHERE embedding IS NOT NULL ORDER BY seq")
        for seq, blob, source_type, content_date in cursor:
            vectors.insert_vector(conn, table, seq, blob, source_type, content_date)
            rows += 1
    return rows


def repair(conn: apsw.Connection) -> dict[str, Any]:
    """Rebuild FTS and vectors from `chunks`; drop orphan chunks and stale vector tables."""
    started = time.perf_counter()
    with db.transaction(conn):
        dropped = _scalar(conn, "SELECT count(*) FROM chunks c WHERE NOT EXISTS "
                                "(SELECT 1 FROM index_state s WHERE s.source_file = c.source_file)")
        # The next reindex re-reads these files if they still exist (they have no state).
        conn.execute("DELETE FROM chunks WHERE NOT EXISTS "
                     "(SELECT 1 FROM index_state s WHERE s.source_file = chunks.source_file)")
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('rebuild')")
        stale = stale_vec_tables(conn)
        for table in stale:
            conn.execute(f"DROP TABLE {table}")
    rebuilt = rebuild_vectors(conn)
    return {"orphan_chunks_dropped": dropped, "stale_tables_dropped": stale,
            "vectors_rebuilt": rebuilt, "seconds": round(time.perf_counter() - started, 3)}


# -- maintenance ----------------------------------------------------------------------------

def checkpoint(conn: apsw.Connection) -> dict[str, int]:
    busy, log, done = _rows(conn, "PRAGMA wal_checkpoint(TRUNCATE)")[0]
    return {"busy": busy, "log_frames": log, "checkpointed": done}


def run_maintenance(conn: apsw.Connection, db_path: Path, *, vacuum: bool = True) -> dict[str, Any]:
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
        conn.execute("VACUUM")
        timed("vacuum", started)
    started = time.perf_counter()
    wal = checkpoint(conn)
    timed("checkpoint", started)
    after = file_size(db_path)
    return {"size_before": before, "size_after": after,
            "bytes_reclaimed": before["total"] - after["total"], "vectors_rebuilt": rows,
            "counts_before": counts_before, "counts_after": db.counts(conn),
            "dead_slots_before": slots_before, "dead_slots_after": dead_slots(conn),
            "vacuum": vacuum, "wal_checkpoint": wal, "timings": timings,
            "seconds": round(sum(timings.values()), 3)}


def _open_existing(settings: Settings) -> apsw.Connection:
    if not settings.db_path.exists():
        raise db.IndexError_(f"no index at {settings.db_path}; run 'memex reindex' first")
    return db.connect(settings.db_path, create=False)


def maintain(settings: Settings, *, vacuum: bool = True, do_check: bool = False,
             do_repair: bool = False) -> dict[str, Any]:
    """Run maintenance (or only check / repair) as the one writer; logs one run-log line.

    Raises MaintenanceBusy at once when another writer holds the lock.
    """
    lock = writer_lock(settings)
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        raise MaintenanceBusy(
            "another writer (memex watch, a reindex or the desktop app) is using the index; "
            "stop it or try again when it has finished") from None
    try:
        conn = _open_existing(settings)
        try:
            result = maintain_locked(conn, settings, vacuum=vacuum, do_check=do_check,
                                     do_repair=do_repair)
        finally:
            conn.close()
    finally:
        lock.release()
    return result


def maintain_locked(conn: apsw.Connection, settings: Settings, *, vacuum: bool = True,
                    do_check: bool = False, do_repair: bool = False) -> dict[str, Any]:
    """`maintain` for a caller that already holds the writer lock (the writer thread)."""
    if not db.has_schema(conn):
        return {"check": check(conn)}
    result: dict[str, Any] = {}
    if do_repair:
        result["repair"] = repair(conn)
    if not do_check and not do_repair:
        result["maintenance"] = run_maintenance(conn, settings.db_path, vacuum=vacuum)
    if do_check or do_repair:
        result["check"] = check(conn)
    kind = "repair" if do_repair else ("check" if do_check else "maintenance")
    runlog.append(settings, runlog.make_record(kind, **_log_fields(result)))
    return result


def _log_fields(result: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if "maintenance" in result:
        m = result["maintenance"]
        fields.update(seconds=m["seconds"], timings=m["timings"],
                      bytes_reclaimed=m["bytes_reclaimed"], size_before=m["size_before"]["total"],
                      size_after=m["size_after"]["total"], vectors_rebuilt=m["vectors_rebuilt"],
                      dead_slots_before=m["dead_slots_before"]["dead"])
    if "repair" in result:
        fields["repair"] = result["repair"]
    if "check" in result:
        fields.update(ok=result["check"]["ok"], problems=result["check"]["problems"])
    return fields


def check_index(settings: Settings) -> dict[str, Any]:
    """Check without the writer lock (safe while the watcher runs); logs one run-log line."""
    conn = _open_existing(settings)
    started = time.perf_counter()
    try:
        result = check(conn)
    finally:
        conn.close()
    runlog.append(settings, runlog.make_record(
        "check", seconds=round(time.perf_counter() - started, 3), **_log_fields(
            {"check": result})))
    return result


def backup(settings: Settings, target: Path, *, force: bool = False) -> dict[str, Any]:
    """A consistent online copy with VACUUM INTO; safe while a writer runs."""
    target = target.expanduser().absolute()
    if target.exists() and not force:
        raise BackupError(f"{target} exists; pass --force to overwrite it")
    if target.resolve() == settings.db_path.resolve():
        raise BackupError("the backup cannot overwrite the index itself")
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    partial.unlink(missing_ok=True)
    conn = _open_existing(settings)
    started = time.perf_counter()
    try:
        conn.execute("VACUUM INTO ?", (str(partial),))
    except apsw.Error as exc:
        partial.unlink(missing_ok=True)
        raise BackupError(f"cannot write {target}: {exc}") from None
    finally:
        conn.close()
    os.chmod(partial, 0o600)
    os.replace(partial, target)  # never a half-written file under the final name
    return {"path": str(target), "bytes": target.stat().st_size,
            "seconds": round(time.perf_counter() - started, 3)}
