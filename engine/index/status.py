"""What `memex status` reports: counts per type, sizes, embedder, errors, last run."""

from __future__ import annotations

import json
import os
from typing import Any

from engine.index import runlog
from engine.index.maintenance import dead_slots
from engine.settings import Settings
from engine.store import db, vectors


def file_sizes(settings: Settings) -> dict[str, int]:
    path = settings.db_path
    sizes = {}
    for suffix in ("", "-wal", "-shm"):
        p = path.with_name(path.name + suffix)
        sizes["db" + suffix.replace("-", "_")] = p.stat().st_size if p.exists() else 0
    return sizes


def _reembed(conn: Any) -> dict[str, Any] | None:
    """A switch of embedder in progress: {"from", "to", "done", "total"}, else None."""
    progress = vectors.build_progress(conn)
    return None if progress is None else progress.as_json()


def collect_status(settings: Settings) -> dict[str, Any]:
    conn = db.connect(settings.db_path, create=False)
    try:
        per_type = dict(conn.execute(
            "SELECT source_type, count(*) FROM chunks GROUP BY source_type ORDER BY 2 DESC"))
        files = conn.execute("SELECT count(*) FROM index_state").fetchone()[0]
        errors = conn.execute(
            "SELECT source_file, error FROM index_state WHERE error IS NOT NULL "
            "ORDER BY source_file").fetchall()
        page_count = conn.execute("PRAGMA page_count").fetchone()[0]
        free_pages = conn.execute("PRAGMA freelist_count").fetchone()[0]
        last_run = db.get_meta(conn, "last_run")
        slots = dead_slots(conn)
        status = {
            "db": str(settings.db_path),
            "roots": [str(r) for r in settings.roots],
            "files": files,
            "chunks": sum(per_type.values()),
            "per_type": per_type,
            "counts": db.counts(conn),
            "embedder": db.get_meta(conn, "embedder"),
            "vec_table": db.active_vec_table(conn),
            "reembed": _reembed(conn),
            "sizes": file_sizes(settings),
            "free_page_fraction": round(free_pages / page_count, 4) if page_count else 0.0,
            "errors": [{"file": f, "error": e} for f, e in errors],
            "last_run": runlog.last_run(settings) or (json.loads(last_run) if last_run else None),
            "vector_slots": slots,
            "maintenance_suggested": max(slots["fraction"], free_pages / max(page_count, 1))
            >= settings.maintenance.bloat_threshold,
            "schema_version": db.get_meta(conn, "schema_version"),
        }
    finally:
        conn.close()
    status["size_bytes"] = sum(status["sizes"].values())
    status["log"] = str(settings.log_path) if os.path.exists(settings.log_path) else None
    return status
