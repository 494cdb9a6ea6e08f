"""The schema (chunks, chunks_fts and its triggers, index_state, meta) and `sqlite_master`."""

from __future__ import annotations

# The FTS5 tokenizer and its arguments. The in-memory keyword index (engine/search/
# keyword_index.py) tokenizes new rows with the same one, through apsw, so its terms are
# the index's own.
TOKENIZER = ("porter", ("unicode61", "remove_diacritics", "2"))
TOKENIZE = " ".join((TOKENIZER[0], *TOKENIZER[1]))

SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks(
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    source_file TEXT NOT NULL,
    source_type TEXT NOT NULL,
    content TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    embedding BLOB,
    indexed_at REAL NOT NULL,
    content_hash TEXT NOT NULL,
    content_date TEXT,
    title TEXT NOT NULL DEFAULT '',
    location TEXT NOT NULL DEFAULT '',
    people TEXT NOT NULL DEFAULT '',
    ordinal INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(source_file);
CREATE INDEX IF NOT EXISTS chunks_type_date ON chunks(source_type, content_date);
CREATE INDEX IF NOT EXISTS chunks_unembedded ON chunks(seq) WHERE embedding IS NULL;
CREATE INDEX IF NOT EXISTS chunks_unembedded_newest
    ON chunks(content_date DESC, seq) WHERE embedding IS NULL;

CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    content, title, source_type UNINDEXED,
    content='chunks', content_rowid='seq',
    tokenize='{TOKENIZE}'
);
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, content, title, source_type)
    VALUES (new.seq, new.content, new.title, new.source_type);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, content, title, source_type)
    VALUES ('delete', old.seq, old.content, old.title, old.source_type);
END;
CREATE TRIGGER IF NOT EXISTS chunks_au AFTER UPDATE OF content, title, source_type ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, content, title, source_type)
    VALUES ('delete', old.seq, old.content, old.title, old.source_type);
    INSERT INTO chunks_fts(rowid, content, title, source_type)
    VALUES (new.seq, new.content, new.title, new.source_type);
END;

CREATE TABLE IF NOT EXISTS index_state(
    source_file TEXT PRIMARY KEY,
    source_type TEXT NOT NULL DEFAULT '',
    mtime REAL NOT NULL,
    size INTEGER NOT NULL,
    indexed_at REAL NOT NULL,
    error TEXT,
    depends TEXT
);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
""".replace("{TOKENIZE}", TOKENIZE)


def schema_sql() -> str:
    """Every table, index and trigger but the vec0 tables; safe to run on every start."""
    return SCHEMA


def has_chunks_table_sql() -> str:
    """One row if the file holds a Memex schema."""
    return "SELECT 1 FROM sqlite_master WHERE type='table' AND name='chunks'"


def table_exists_sql() -> str:
    """One row if a table (or index, trigger) of that name exists (bound: name)."""
    return "SELECT 1 FROM sqlite_master WHERE name = ?"


def create_statement_sql() -> str:
    """The CREATE statement a table was made with (bound: name)."""
    return "SELECT sql FROM sqlite_master WHERE name = ?"


def vec_tables_sql() -> str:
    """The names of every vec0 table."""
    return (
        "SELECT name FROM sqlite_master WHERE type = 'table' "
        "AND sql LIKE 'CREATE VIRTUAL TABLE%vec0%'"
    )
