"""The `meta` table: one text value per key (schema version, active embedder, vec table)."""

from __future__ import annotations


def select_value_sql() -> str:
    """The value of one key (bound: key)."""
    return "SELECT value FROM meta WHERE key = ?"


def upsert_sql() -> str:
    """Set one key (bound: key, value)."""
    return (
        "INSERT INTO meta(key, value) VALUES(?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
    )


def delete_sql() -> str:
    """Remove one key (bound: key)."""
    return "DELETE FROM meta WHERE key = ?"
