"""The `index_state` table: one row per indexed file (mtime, size, siblings' key, last error)."""

from __future__ import annotations


def select_sql() -> str:
    """One file's state (bound: source_file); `depends` is the key of the sibling files
    its reader read (`SourceType.siblings`), NULL when it read none."""
    return "SELECT mtime, size, error, depends FROM index_state WHERE source_file = ?"


def upsert_sql() -> str:
    """Insert or replace one file's state.

    Bound: source_file, source_type, mtime, size, indexed_at, error, depends.
    """
    return (
        "INSERT INTO index_state(source_file, source_type, mtime, size, indexed_at, error, "
        "depends) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(source_file) DO UPDATE SET "
        "source_type = excluded.source_type, mtime = excluded.mtime, size = excluded.size, "
        "indexed_at = excluded.indexed_at, error = excluded.error, depends = excluded.depends"
    )


def columns_sql() -> str:
    """The names of the table's columns (an index made before `depends` lacks it)."""
    return "SELECT name FROM pragma_table_info('index_state')"


def add_depends_sql() -> str:
    """Add the `depends` column to an index made without it (run once, by migrate)."""
    return "ALTER TABLE index_state ADD COLUMN depends TEXT"


def delete_sql() -> str:
    """Forget one file (bound: source_file)."""
    return "DELETE FROM index_state WHERE source_file = ?"


def states_sql() -> str:
    """Every indexed file's state, as `select_sql` gives one: a reconcile reads them all in
    one query rather than one query per file."""
    return "SELECT source_file, mtime, size, error, depends FROM index_state"


def files_with_stat_sql() -> str:
    """Every indexed file with the mtime and size it had when indexed, and its type."""
    return "SELECT source_file, mtime, size, source_type FROM index_state"


def known_under_sql() -> str:
    """Indexed files at a path or under it as a folder.

    Bound: path, len(prefix), prefix, where prefix is the path with a trailing separator.
    """
    return (
        "SELECT source_file FROM index_state WHERE source_file = ? OR substr(source_file, 1, ?) = ?"
    )


def count_sql() -> str:
    """How many files are indexed."""
    return "SELECT count(*) FROM index_state"


def errors_sql() -> str:
    """Files whose last indexing failed, with the error, by path."""
    return "SELECT source_file, error FROM index_state WHERE error IS NOT NULL ORDER BY source_file"


def indexed_with_errors_sql() -> str:
    """Of the files with an error, those whose text is in the index all the same (a note
    whose front matter is broken, a chat with one unreadable line): problems, not failures."""
    return (
        "SELECT s.source_file FROM index_state s WHERE s.error IS NOT NULL "
        "AND EXISTS (SELECT 1 FROM chunks c WHERE c.source_file = s.source_file)"
    )
