"""Statements on the database file as a whole: pragmas, transactions, checks, VACUUM."""

from __future__ import annotations

# A negative cache_size is KiB: 64 MiB of page cache; mmap 256 MiB.
_SETTINGS = (
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA cache_size=-65536",
    "PRAGMA mmap_size=268435456",
)


def connection_pragmas(readonly: bool) -> list[str]:
    """The pragmas every connection runs, in order (WAL is set by writers only)."""
    return ([] if readonly else ["PRAGMA journal_mode=WAL"]) + list(_SETTINGS)


def shrink_memory_sql() -> str:
    """Free the connection's page cache (after a read of the whole index that no query
    will read again: up to `cache_size`, 64 MB, a connection)."""
    return "PRAGMA shrink_memory"


def begin_immediate_sql() -> str:
    """A write transaction that takes the write lock at once."""
    return "BEGIN IMMEDIATE"


def begin_sql() -> str:
    """A deferred transaction (a read snapshot)."""
    return "BEGIN"


def commit_sql() -> str:
    return "COMMIT"


def rollback_sql() -> str:
    return "ROLLBACK"


def integrity_check_sql() -> str:
    """SQLite's own check of the whole file: one 'ok' row when sound."""
    return "PRAGMA integrity_check"


def quick_check_sql() -> str:
    """SQLite's check of every page's structure, without comparing indexes to their tables
    (the integrity gate's check; its cost grows with the file: docs/benchmarks.md); one 'ok' row when sound."""
    return "PRAGMA quick_check"


def data_version_sql() -> str:
    """A number that changes when another connection commits."""
    return "PRAGMA data_version"


def page_count_sql() -> str:
    return "PRAGMA page_count"


def freelist_count_sql() -> str:
    return "PRAGMA freelist_count"


def checkpoint_truncate_sql() -> str:
    """Copy the WAL into the file and truncate it: (busy, log frames, checkpointed)."""
    return "PRAGMA wal_checkpoint(TRUNCATE)"


def vacuum_sql() -> str:
    return "VACUUM"


def vacuum_into_sql() -> str:
    """A consistent copy of the database (bound: the target path)."""
    return "VACUUM INTO ?"
