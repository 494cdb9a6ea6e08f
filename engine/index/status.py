"""What `memex status` reports: counts per type, sizes, embedder, errors, last run."""

from __future__ import annotations

import json
import os

from engine.index import runlog
from engine.index.maintenance import bytes_on_disk, dead_slots
from engine.index.reports import DiskUsage, IndexStatus
from engine.settings import Settings
from engine.store import db, vectors
from engine.store.sql import chunks, database, state


def file_sizes(settings: Settings) -> DiskUsage:
    path = settings.db_path
    db_file, wal, shm = (
        bytes_on_disk(path.with_name(path.name + suffix)) for suffix in ("", "-wal", "-shm")
    )
    return DiskUsage(db=db_file, db_wal=wal, db_shm=shm)


def collect_status(settings: Settings) -> IndexStatus:
    conn = db.connect(settings.db_path, create=False)
    try:
        if not db.has_schema(conn):  # an empty file, another program's database
            raise db.NoIndexYet(
                f"{settings.db_path} holds no Memex index yet; run 'memex reindex' first"
            )
        per_type = dict(conn.execute(chunks.count_per_type_sql()))
        files = conn.execute(state.count_sql()).fetchone()[0]
        errors = conn.execute(state.errors_sql()).fetchall()
        indexed = frozenset(str(f) for (f,) in conn.execute(state.indexed_with_errors_sql()))
        page_count = conn.execute(database.page_count_sql()).fetchone()[0]
        free_pages = conn.execute(database.freelist_count_sql()).fetchone()[0]
        last_run = db.get_meta(conn, "last_run")
        slots = dead_slots(conn)
        return IndexStatus(
            db=str(settings.db_path),
            roots=tuple(str(r) for r in settings.roots),
            files=files,
            per_type=per_type,
            counts=db.counts(conn),
            embedder=db.get_meta(conn, "embedder"),
            vec_table=db.active_vec_table(conn),
            reembed=vectors.build_progress(conn),
            sizes=file_sizes(settings),
            free_page_fraction=round(free_pages / page_count, 4) if page_count else 0.0,
            errors=tuple((f, e) for f, e in errors),
            last_run=runlog.last_run(settings) or (json.loads(last_run) if last_run else None),
            vector_slots=slots,
            maintenance_suggested=max(slots.fraction, free_pages / max(page_count, 1))
            >= settings.maintenance.bloat_threshold,
            schema_version=db.get_meta(conn, "schema_version"),
            log=str(settings.log_path) if os.path.exists(settings.log_path) else None,
            indexed_with_errors=indexed,
        )
    except db.DAMAGE as exc:
        raise db.damaged(settings.db_path, exc) from None
    finally:
        conn.close()
