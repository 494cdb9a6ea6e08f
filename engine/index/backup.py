"""`memex backup`: a consistent online copy of the index, checked before it is kept.

The index passes the integrity gate first (SQLite's quick check, docs/security-integrity.md),
then VACUUM INTO writes the copy under a hidden partial name, the copy's chunks' stamp is
given an origin of its own (engine/store/sql/chunk_state.py), the copy is checked in turn,
and only then does it replace the target: a damaged index or a bad copy leaves the target
as it was.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import apsw

from engine.index.reports import BackupReport
from engine.settings import Settings
from engine.store import db
from engine.store.sql import chunk_state as chunk_state_sql
from engine.store.sql import database as database_sql


class BackupError(RuntimeError):
    """The backup cannot be written (disk full, a bad copy, …)."""


class BackupRefused(BackupError):
    """The target is not one to write: it exists (and no `force`), or it is the index."""


def backup(settings: Settings, target: Path, *, force: bool = False) -> BackupReport:
    """Copy the index to `target`; safe while a writer runs. IndexDamaged when the index
    is damaged, BackupError when the copy cannot be written or fails its check."""
    target = target.expanduser().absolute()
    if target.exists() and not force:
        raise BackupRefused(f"{target} exists; pass --force to overwrite it")
    if target.resolve() == settings.db_path.resolve():
        raise BackupRefused("the backup cannot overwrite the index itself")
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    started = time.perf_counter()
    try:
        write_copy(settings, partial, target)
        verify_copy(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, target)  # never a half-written or unchecked file under the final name
    return BackupReport(
        path=str(target),
        bytes=target.stat().st_size,
        seconds=round(time.perf_counter() - started, 3),
    )


def _open_index(settings: Settings) -> apsw.Connection:
    """The index, through the integrity gate (IndexDamaged when it is damaged)."""
    if not settings.db_path.exists():
        raise db.IndexError_(f"no index at {settings.db_path}; run 'memex reindex' first")
    return db.connect(settings.db_path, create=False, verify_first=True)


def write_copy(settings: Settings, partial: Path, target: Path) -> None:
    """VACUUM INTO `partial` from the index, once the gate has passed the index."""
    partial.unlink(missing_ok=True)
    conn = _open_index(settings)
    try:
        # Created 0600 before VACUUM INTO fills it (it takes an empty file): the copy of
        # everything indexed is never readable by others, not even while it is written.
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        conn.execute(database_sql.vacuum_into_sql(), (str(partial),))
    except db.DAMAGE as exc:  # a page the check passed was damaged meanwhile
        raise db.damaged(settings.db_path, exc) from None
    except (apsw.Error, OSError) as exc:
        raise BackupError(f"cannot write {target}: {exc}") from None
    finally:
        conn.close()
    new_origin(partial, target)


def new_origin(partial: Path, target: Path) -> None:
    """The copy's chunks stamped under an origin of its own (engine/store/sql/chunk_state.py):
    restored over the index one day, it never passes for a later state of the index that
    a warm process's matrix file was written at."""
    try:
        copy = apsw.Connection(str(partial))
        try:
            if db.chunk_state(copy) is not None:
                copy.execute(chunk_state_sql.new_origin_sql())
        finally:
            copy.close()
    except apsw.Error as exc:
        raise BackupError(f"cannot write {target}: {exc}") from None


def verify_copy(partial: Path, target: Path) -> None:
    """BackupError when SQLite's quick check finds the written copy damaged."""
    try:
        conn = db.connect(partial, readonly=True)  # read only: the copy stays as written
    except db.IndexDamaged as exc:
        reason: str | None = exc.reason
    else:
        try:
            reason = db.quick_check(conn)
        finally:
            conn.close()
    if reason is not None:
        raise BackupError(
            f"the copy for {target} failed SQLite's check ({reason}); {target} was left as it was"
        )
