"""The `opens` table: the results the user opened, for frecency (not content; no migration).

Made by the writer side when it first records an open (`CREATE TABLE IF NOT EXISTS`), so an
index written before it, or never opened from, has no such table: readers check first.
"""

from __future__ import annotations

from engine.store.sql.base import placeholders


def create_table_sql() -> list[str]:
    """The table and its index on the opened result's id."""
    return [
        "CREATE TABLE IF NOT EXISTS opens(result_id TEXT NOT NULL, "
        "source_file TEXT NOT NULL DEFAULT '', opened_at TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS opens_result ON opens(result_id)",
    ]


def insert_sql() -> str:
    """One open (bound: result_id, source_file, opened_at as ISO datetime)."""
    return "INSERT INTO opens(result_id, source_file, opened_at) VALUES(?, ?, ?)"


def clear_sql() -> str:
    """Forget every open."""
    return "DELETE FROM opens"


def by_ids_sql(count: int) -> str:
    """When each of `count` results was opened (bound: the result ids)."""
    return f"SELECT result_id, opened_at FROM opens WHERE result_id IN ({placeholders(count)})"


def summary_sql() -> str:
    """Each opened result: its file, how often and when last (newest first)."""
    return (
        "SELECT result_id, source_file, count(*), max(opened_at) FROM opens "
        "GROUP BY result_id ORDER BY max(opened_at) DESC"
    )
