"""The `mentions` table (who each file names) and the `people` table (the directory)."""

from __future__ import annotations

_MENTION_COLUMNS = (
    "source_file, source_type, name, aliases, emails, phones, handles, org, role, count, "
    "first_date, last_date"
)


def create_tables_sql() -> list[str]:
    """Both tables and the mentions' index by file; safe to run on every start."""
    return [
        "CREATE TABLE IF NOT EXISTS mentions("
        "source_file TEXT NOT NULL, source_type TEXT NOT NULL, name TEXT NOT NULL DEFAULT '', "
        "aliases TEXT NOT NULL DEFAULT '[]', emails TEXT NOT NULL DEFAULT '[]', "
        "phones TEXT NOT NULL DEFAULT '[]', handles TEXT NOT NULL DEFAULT '[]', "
        "org TEXT NOT NULL DEFAULT '', role TEXT NOT NULL DEFAULT 'author', "
        "count INTEGER NOT NULL DEFAULT 1, first_date TEXT, last_date TEXT)",
        "CREATE INDEX IF NOT EXISTS mentions_file ON mentions(source_file)",
        "CREATE TABLE IF NOT EXISTS people("
        "slug TEXT PRIMARY KEY, name TEXT NOT NULL, record TEXT NOT NULL)",
        WORDS_TABLE,
    ]


# Each word (or mark) of each person's names and aliases, as the reader folds them: who a
# search's words can name, found through this table's key instead of a scan of the records.
WORDS_TABLE = (
    "CREATE TABLE IF NOT EXISTS people_words(word TEXT NOT NULL, person INTEGER NOT NULL, "
    "PRIMARY KEY (word, person)) WITHOUT ROWID"
)


def words_table_sql() -> str:
    """The names' words table alone (an index made before it), made if missing."""
    return WORDS_TABLE


def mark_files_for_mentions_sql() -> str:
    """Make every indexed file read again by the next run (its `depends` key no longer
    matches): an index made before mentions were kept gets them. Chunks are
    content-addressed, so the same text keeps its rows and vectors."""
    return "UPDATE index_state SET depends = 'mentions-pending'"


def insert_mention_sql() -> str:
    """One mention of one file.

    Bound: source_file, source_type, name, aliases, emails, phones, handles (JSON lists),
    org, role, count, first_date, last_date.
    """
    return f"INSERT INTO mentions({_MENTION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def mentions_by_file_sql() -> str:
    """One file's mentions in the order they were stored (bound: source_file)."""
    return f"SELECT {_MENTION_COLUMNS} FROM mentions WHERE source_file = ? ORDER BY rowid"


def delete_mentions_sql() -> str:
    """Every mention of one file (bound: source_file)."""
    return "DELETE FROM mentions WHERE source_file = ?"


def all_mentions_sql() -> str:
    """Every mention, file by file."""
    return f"SELECT {_MENTION_COLUMNS} FROM mentions ORDER BY source_file, rowid"


def delete_orphan_mentions_sql() -> str:
    """Mentions of files that have no index_state row."""
    return (
        "DELETE FROM mentions WHERE NOT EXISTS "
        "(SELECT 1 FROM index_state s WHERE s.source_file = mentions.source_file)"
    )


def clear_people_sql() -> str:
    """Empty the directory (it is always written whole)."""
    return "DELETE FROM people"


def clear_words_sql() -> str:
    """Empty the names' words (written whole with the directory)."""
    return "DELETE FROM people_words"


def person_rowids_sql() -> str:
    """(rowid, slug) of every person of the directory."""
    return "SELECT rowid, slug FROM people"


def insert_word_sql() -> str:
    """One word of one person's names (bound: word, the person's rowid)."""
    return "INSERT OR IGNORE INTO people_words(word, person) VALUES (?, ?)"


def people_with_words_sql(words: int) -> str:
    """The rowids of the people whose names hold one of `words` words (bound: each word,
    folded as the directory's words were), in the directory's order."""
    marks = ", ".join(["?"] * words)
    return f"SELECT DISTINCT person FROM people_words WHERE word IN ({marks}) ORDER BY person"


def insert_person_sql() -> str:
    """One person of the directory; a slug seen before keeps the first (bound: slug,
    name, record as JSON)."""
    return "INSERT INTO people(slug, name, record) VALUES (?, ?, ?) ON CONFLICT(slug) DO NOTHING"


def people_sql() -> str:
    """The directory's records, in the order they were written."""
    return "SELECT record FROM people ORDER BY rowid"


def people_naming_sql(words: int) -> str:
    """Each person whose name or aliases may hold one of `words` words (bound: each word
    in lower case, folded): (rowid, name, aliases as JSON), in the directory's order. A
    superset: SQLite's lower() folds ASCII only, so a person whose names hold any other
    character is always returned; the caller tells the words apart exactly. Most people
    have no alias: their record's `"aliases": []` (as json.dumps writes it) spares the
    JSON parse."""
    aliases = "coalesce(json_extract(record, '$.aliases'), '[]')"
    names = f"(name || ' ' || iif(instr(record, '\"aliases\": []'), '', {aliases}))"
    held = " OR ".join([f"instr(lower({names}), ?) > 0"] * words) or "0"
    return (
        f"SELECT rowid, name, {aliases} FROM people "
        f"WHERE {names} GLOB '*[^ -~]*' OR {held} ORDER BY rowid"
    )


def people_at_sql(count: int) -> str:
    """The records of `count` people by rowid (bound: the rowids), in the directory's order."""
    return f"SELECT record FROM people WHERE rowid IN ({', '.join(['?'] * count)}) ORDER BY rowid"
