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


# The keyword side's keys (engine/index/keyword_format.py writes them): the format its
# search texts were made by, the `languages` setting they were made under, when it was
# last rebuilt (the in-memory keyword index reads everything anew when this moves), and
# the languages the chunks are in (a query is stemmed for each).
KEYWORD_FORMAT_KEY = "keyword_format"
KEYWORD_SETTING_KEY = "keyword_languages"
KEYWORD_BUILT_KEY = "keyword_built"
LANGUAGES_KEY = "languages"
