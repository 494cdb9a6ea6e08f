"""A damaged index: found by SQLite's own check, moved aside, rebuilt from the files.

The index holds nothing the files do not (chunks, FTS rows and vectors are all made from
them), so a file with damaged pages or cut short is not repaired in place: `rebuild` moves
it aside — `memex.db` becomes `memex.db.corrupt-<time>`, kept for a post-mortem — and
indexes every root again into a new file. Its WAL goes with it; nothing is deleted. The
damage marker (`memex.db.damaged`, engine/store/damage_marker.py) that made every open
refuse the damaged file is removed once it is moved aside.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from engine.index import runlog
from engine.index.indexer import Reporter
from engine.index.locks import writer_lock_now
from engine.index.reports import CheckReport
from engine.index.runs import reindex
from engine.records import IndexStats
from engine.settings import Settings
from engine.store import damage_marker, db
from engine.store.sql import database as database_sql

MAX_LISTED = 20  # integrity-check lines kept in a report


class RebuildRefused(RuntimeError):
    """The damaged index cannot be rebuilt now: no roots to rebuild from, another writer."""


@dataclass(frozen=True)
class RebuildReport:
    """Why the index was rebuilt, where the damaged file went, and the new index's run."""

    reason: str
    moved_to: str
    stats: IndexStats

    def as_json(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "moved_to": self.moved_to,
            "files": self.stats.files,
            "chunks": self.stats.chunks,
            "errors": len(self.stats.errors),
            "seconds": round(self.stats.seconds, 3),
        }


def integrity_problems(lines: list[str]) -> list[str]:
    """The problems of an integrity check's answer (["ok"] when sound): the damage and
    the way forward first, then SQLite's own lines."""
    if lines == ["ok"]:
        return []
    head = f"the index file is damaged: SQLite's integrity check failed; {db.REPAIR_HINT}"
    return [head] + [f"integrity_check: {line}" for line in lines[:MAX_LISTED]]


def damage_report(exc: BaseException) -> CheckReport:
    """The check of a file too damaged to be checked (SQLite gave up on it)."""
    reason = exc.reason if isinstance(exc, db.IndexDamaged) else str(exc)
    problem = f"the index file is damaged ({reason}); {db.REPAIR_HINT}"
    return CheckReport(ok=False, problems=(problem,), integrity=(reason,), note="damaged")


def find_damage(path: Path) -> str | None:
    """Why the index file is damaged, or None when SQLite's integrity check finds it sound
    (or there is no index yet). Reads the whole file once, whatever damage was remembered
    for it: damage found is remembered, a file found sound forgets it."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    try:
        conn = db.connect(path, create=False, trust_marker=False)
    except db.IndexDamaged as exc:  # remembered by db.damaged
        return exc.reason
    try:
        lines = db.check_lines(conn.execute(database_sql.integrity_check_sql()).fetchall())
    except db.DAMAGE as exc:
        lines = [str(exc)]
    except apsw.Error:
        return None  # busy, say: not damage
    finally:
        conn.close()
    remember_lines(path, lines)
    return None if lines == ["ok"] else "; ".join(lines[:3])


def remember_check(path: Path, report: CheckReport) -> None:
    """Remember what `memex maintenance --check` found in the file itself."""
    if report.integrity:  # empty when there is no schema yet: nothing to say of the file
        remember_lines(path, list(report.integrity))


def remember_lines(path: Path, lines: list[str]) -> None:
    """An integrity check's answer, remembered beside the file (engine/store/damage_marker.py):
    damage, or a sound file (["ok"]) that forgets any damage remembered for it."""
    if lines == ["ok"]:
        damage_marker.forget(path)
    else:
        more = f"; {len(lines) - 2} more" if len(lines) > 2 else ""
        damage_marker.remember(path, "; ".join(lines[:2]) + more)


def damage_behind(path: Path, exc: apsw.Error) -> str | None:
    """Whether an SQLite error came from a damaged file: a damaged page can surface as any
    error (sqlite-vec's "blob read error", "SQL logic error"), so ask the file itself."""
    return str(exc) if isinstance(exc, db.DAMAGE) else find_damage(path)


def move_aside(path: Path) -> Path:
    """Rename the index (and its WAL) to `<name>.corrupt-<time>`; drop its -shm (a cache
    of the WAL's index, rebuilt by SQLite). The new name, never one that exists."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        os.replace(wal, target.with_name(target.name + "-wal"))
    os.replace(path, target)
    path.with_name(path.name + "-shm").unlink(missing_ok=True)
    return target


def rebuild(settings: Settings, reason: str, reporter: Reporter | None = None) -> RebuildReport:
    """Move the damaged index aside and index every root into a new one; logs a "repair"
    line. RebuildRefused, with nothing moved, when there is no root or another writer."""
    if not settings.roots:
        raise RebuildRefused(
            f"the index {settings.db_path} is damaged ({reason}); give the data roots "
            "(--root DIR, MEMEX_ROOT or 'roots' in the config file) to rebuild it from them"
        )
    advice = "stop it and run 'memex maintenance --repair' again"
    with writer_lock_now(settings, RebuildRefused, advice):
        moved = move_aside(settings.db_path)
        damage_marker.forget(settings.db_path)  # it told of the file moved aside
    stats = reindex(settings=settings, reporter=reporter, full=True)
    report = RebuildReport(reason, str(moved), stats)
    runlog.append(settings, runlog.make_record("repair", rebuilt=report.as_json()))
    return report
