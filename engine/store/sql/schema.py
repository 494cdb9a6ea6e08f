"""The schema (chunks, chunks_fts and its triggers, index_state, meta) and `sqlite_master`.

FTS5 indexes each chunk's *search text* (engine/language/analyze.py): `chunks.search_text`
and `search_title` when the writer stored one (stems of a language other than English, Han,
Kana and Hangul as characters and pairs), else the chunk's own content and title. The view
`chunks_keywords` is the FTS5 table's external content, so 'rebuild', the rank=1
integrity-check and highlight() read the same text the triggers indexed.
"""

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
    ordinal INTEGER NOT NULL DEFAULT 0,
    search_text TEXT,
    search_title TEXT
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(source_file);
CREATE INDEX IF NOT EXISTS chunks_type_date ON chunks(source_type, content_date);
CREATE INDEX IF NOT EXISTS chunks_unembedded ON chunks(seq) WHERE embedding IS NULL;
CREATE INDEX IF NOT EXISTS chunks_unembedded_newest
    ON chunks(content_date DESC, seq) WHERE embedding IS NULL;

{KEYWORD_TABLES}
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
"""

# The keyword side: the view FTS5 reads, the FTS5 table, its triggers. Made by SCHEMA for a
# new index, and again by engine/index/keyword_format.py when an older index's keyword side
# is rebuilt (after its triggers and table are dropped).
KEYWORD_VIEW = """
CREATE VIEW IF NOT EXISTS chunks_keywords AS
    SELECT seq, coalesce(search_text, content) AS content,
        coalesce(search_title, title) AS title, source_type FROM chunks;
"""
KEYWORD_TABLE = """
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    content, title, source_type UNINDEXED,
    content='chunks_keywords', content_rowid='seq',
    tokenize='{TOKENIZE}'
);
""".replace("{TOKENIZE}", TOKENIZE)
KEYWORD_TRIGGERS = """
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, content, title, source_type)
    VALUES (new.seq, coalesce(new.search_text, new.content),
        coalesce(new.search_title, new.title), new.source_type);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, content, title, source_type)
    VALUES ('delete', old.seq, coalesce(old.search_text, old.content),
        coalesce(old.search_title, old.title), old.source_type);
END;
CREATE TRIGGER IF NOT EXISTS chunks_au AFTER UPDATE OF
    content, title, source_type, search_text, search_title ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, content, title, source_type)
    VALUES ('delete', old.seq, coalesce(old.search_text, old.content),
        coalesce(old.search_title, old.title), old.source_type);
    INSERT INTO chunks_fts(rowid, content, title, source_type)
    VALUES (new.seq, coalesce(new.search_text, new.content),
        coalesce(new.search_title, new.title), new.source_type);
END;
"""
KEYWORD_SCHEMA = KEYWORD_VIEW + KEYWORD_TABLE + KEYWORD_TRIGGERS
SCHEMA = SCHEMA.replace("{KEYWORD_TABLES}", KEYWORD_SCHEMA)
# What marks an index whose keyword side is this one: its FTS5 table reads the view.
KEYWORD_CONTENT = "content='chunks_keywords'"


def schema_sql() -> str:
    """Every table, index and trigger but the vec0 tables; safe to run on every start."""
    return SCHEMA


def keyword_schema_sql() -> str:
    """The keyword side alone (view, FTS5 table, triggers), each made if missing."""
    return KEYWORD_SCHEMA


def drop_keyword_side_sql() -> str:
    """The keyword side of an index made before search texts: triggers, table, view."""
    return (
        "DROP TRIGGER IF EXISTS chunks_ai; DROP TRIGGER IF EXISTS chunks_ad; "
        "DROP TRIGGER IF EXISTS chunks_au; DROP TABLE IF EXISTS chunks_fts; "
        "DROP VIEW IF EXISTS chunks_keywords;"
    )


def chunk_columns_sql() -> str:
    """The chunks table's columns (name in the second field)."""
    return "PRAGMA table_info(chunks)"


def add_search_columns_sql() -> str:
    """The search-text columns, added to an index made before them."""
    return "ALTER TABLE chunks ADD COLUMN search_text TEXT; ALTER TABLE chunks ADD COLUMN search_title TEXT;"


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
