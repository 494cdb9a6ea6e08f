"""The `unknown_files` table: files a walk read and no recogniser claimed (no migration).

Made by the writer side when it first stores a verdict (`CREATE TABLE IF NOT EXISTS`); a
verdict counts only under the `signature` of the recognisers that gave it, so a Memex that
knows more formats reads such files again.
"""

from __future__ import annotations


def create_table_sql() -> str:
    """The table: path, mtime and size as read, the folders the recognisers consulted
    (JSON `[[folder, mtime], …]`) and the signature of the recognisers."""
    return (
        "CREATE TABLE IF NOT EXISTS unknown_files(path TEXT PRIMARY KEY, mtime REAL NOT NULL, "
        "size INTEGER NOT NULL, folders TEXT NOT NULL DEFAULT '[]', signature TEXT NOT NULL)"
    )


def exists_sql() -> str:
    return "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'unknown_files'"


def select_sql() -> str:
    """The verdicts of one signature (bound: signature)."""
    return "SELECT path, mtime, size, folders FROM unknown_files WHERE signature = ?"


def upsert_sql() -> str:
    """One verdict (bound: path, mtime, size, folders, signature)."""
    return "INSERT OR REPLACE INTO unknown_files(path, mtime, size, folders, signature) VALUES(?, ?, ?, ?, ?)"


def delete_sql() -> str:
    """One verdict (bound: path)."""
    return "DELETE FROM unknown_files WHERE path = ?"


def delete_other_signatures_sql() -> str:
    """Verdicts given by other recognisers (bound: the current signature)."""
    return "DELETE FROM unknown_files WHERE signature != ?"
