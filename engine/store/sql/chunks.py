"""The `chunks` table: one row per chunk, keyed by `seq`, with its text and active vector."""

from __future__ import annotations

from engine.store.sql.base import placeholders

_TO_EMBED = "SELECT seq, content, source_type, content_date FROM chunks"
_EMBEDDED_ROWS = (
    "SELECT seq, id, embedding, source_type, content_date FROM chunks WHERE embedding IS NOT NULL"
)
_NO_STATE = "(SELECT 1 FROM index_state s WHERE s.source_file = c.source_file)"


# -- writing --------------------------------------------------------------------------------


def insert_sql() -> str:
    """One new chunk; its seq is `last_insert_rowid()`.

    Bound: id, source_file, source_type, content, metadata, embedding, indexed_at,
    content_hash, content_date, title, location, people, ordinal, search_text,
    search_title (the last two NULL when FTS5 indexes the content and title themselves).
    """
    return (
        "INSERT INTO chunks(id, source_file, source_type, content, metadata, embedding, "
        "indexed_at, content_hash, content_date, title, location, people, ordinal, "
        "search_text, search_title) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )


def delete_by_seq_sql() -> str:
    """One chunk (bound: seq)."""
    return "DELETE FROM chunks WHERE seq = ?"


def delete_by_file_sql() -> str:
    """Every chunk of one file (bound: source_file)."""
    return "DELETE FROM chunks WHERE source_file = ?"


def update_embedding_sql() -> str:
    """Store a chunk's vector of the active model (bound: embedding, seq)."""
    return "UPDATE chunks SET embedding = ? WHERE seq = ?"


def clear_embeddings_sql() -> str:
    """Forget every stored vector (the active model changed)."""
    return "UPDATE chunks SET embedding = NULL WHERE embedding IS NOT NULL"


def delete_orphans_sql() -> str:
    """Chunks of files that have no index_state row."""
    return (
        "DELETE FROM chunks WHERE NOT EXISTS "
        "(SELECT 1 FROM index_state s WHERE s.source_file = chunks.source_file)"
    )


# -- by file and position -------------------------------------------------------------------


def ids_by_file_sql() -> str:
    """(id, seq) of one file's chunks (bound: source_file)."""
    return "SELECT id, seq FROM chunks WHERE source_file = ?"


def seqs_by_file_sql() -> str:
    """The seqs of one file's chunks (bound: source_file)."""
    return "SELECT seq FROM chunks WHERE source_file = ?"


def position_by_id_sql() -> str:
    """The file and ordinal of one chunk (bound: id)."""
    return "SELECT source_file, ordinal FROM chunks WHERE id = ?"


def row_by_id_sql() -> str:
    """One chunk in full, as the MCP `get` tool shows it (bound: id)."""
    return (
        "SELECT id, source_file, source_type, content, content_date, title, location, people, "
        "metadata FROM chunks WHERE id = ?"
    )


def neighbours_sql() -> str:
    """Chunks of one file in an ordinal range, in file order (bound: source_file, low, high)."""
    return (
        "SELECT id, content, title, location, content_date, ordinal FROM chunks "
        "WHERE source_file = ? AND ordinal BETWEEN ? AND ? ORDER BY ordinal, seq"
    )


def around_seq_sql() -> str:
    """The chunks just after and just before one chunk in its file, the next first, with
    their metadata (bound: seq)."""
    return (
        "SELECT n.seq, n.metadata FROM chunks h JOIN chunks n "
        "ON n.source_file = h.source_file AND n.ordinal BETWEEN h.ordinal - 1 AND h.ordinal + 1 "
        "WHERE h.seq = ? AND n.seq != h.seq ORDER BY n.ordinal < h.ordinal, n.ordinal, n.seq"
    )


def note_named_sql() -> str:
    """The first chunk of the note a [[wikilink]] names: by the note's title (a section's
    title starts "<title> › ") or by file name, as Obsidian resolves it (case-insensitive;
    bound: the link target, '/<target>.md')."""
    return (
        "WITH link(name, file) AS (SELECT ?, ?) SELECT c.seq FROM chunks c, link "
        "WHERE c.title = link.name COLLATE NOCASE "
        "OR substr(c.title, 1, length(link.name) + 3) = link.name || ' › ' COLLATE NOCASE "
        "OR substr(c.source_file, -length(link.file)) = link.file COLLATE NOCASE "
        "ORDER BY c.ordinal, c.seq LIMIT 1"
    )


def record_by_id_sql(type_count: int) -> str:
    """The chunk of the record with this id among `type_count` source types (bound: the
    types, the record id)."""
    return (
        f"SELECT seq FROM chunks WHERE source_type IN ({placeholders(type_count)}) "
        "AND json_extract(metadata, '$.record_id') = ? LIMIT 1"
    )


# -- by seq ---------------------------------------------------------------------------------


def rows_by_seq_sql(count: int) -> str:
    """What a search result shows, for `count` seqs (bound: the seqs)."""
    return (
        "SELECT seq, id, source_file, source_type, content, content_date, title, location, "
        f"metadata FROM chunks WHERE seq IN ({placeholders(count)})"
    )


def to_embed_by_seq_sql(count: int) -> str:
    """Text and vec0 metadata of `count` chunks, by seq (bound: the seqs)."""
    return f"{_TO_EMBED} WHERE seq IN ({placeholders(count)}) ORDER BY seq"


def seqs_sql() -> str:
    """Every chunk's seq, in order."""
    return "SELECT seq FROM chunks ORDER BY seq"


def seq_ids_sql() -> str:
    """(seq, id) of every chunk: a scan of the covering index on `id`."""
    return "SELECT seq, id FROM chunks"


# -- vectors --------------------------------------------------------------------------------


def unembedded_batch_sql() -> str:
    """The next chunks without a vector, newest content first, undated last (bound: limit).

    Read in order from the partial index `chunks_unembedded_newest`: no sort of the queue.
    """
    return f"{_TO_EMBED} WHERE embedding IS NULL ORDER BY content_date DESC, seq LIMIT ?"


def count_unembedded_sql() -> str:
    """How many chunks have no vector yet (a count over the partial index)."""
    return "SELECT count(*) FROM chunks WHERE embedding IS NULL"


def unembedded_seqs_sql() -> str:
    """The seqs of chunks without a vector (the partial index chunks_unembedded)."""
    return "SELECT seq FROM chunks WHERE embedding IS NULL"


def any_embedded_sql() -> str:
    """One row if any chunk has a vector."""
    return "SELECT 1 FROM chunks WHERE embedding IS NOT NULL LIMIT 1"


def embedded_vectors_sql() -> str:
    """Every stored vector with its vec0 metadata, in seq order."""
    return (
        "SELECT seq, embedding, source_type, content_date FROM chunks "
        "WHERE embedding IS NOT NULL ORDER BY seq"
    )


def embedded_rows_sql() -> str:
    """Every embedded chunk's seq, id, vector, type and date, in seq order."""
    return f"{_EMBEDDED_ROWS} ORDER BY seq"


def embedded_bytes_sql() -> str:
    """The active vectors' total size in bytes (length() of a blob reads no blob)."""
    return "SELECT coalesce(sum(length(embedding)), 0) FROM chunks WHERE embedding IS NOT NULL"


def embedded_rows_by_seq_sql(count: int) -> str:
    """`embedded_rows_sql` for `count` seqs, unordered (bound: the seqs)."""
    return f"{_EMBEDDED_ROWS} AND seq IN ({placeholders(count)})"


def embedded_seqs_where_sql(filter_sql: str) -> str:
    """Embedded chunks (alias c) passing ` AND …` filters, in seq order (bound: filters)."""
    return f"SELECT c.seq FROM chunks c WHERE c.embedding IS NOT NULL{filter_sql} ORDER BY c.seq"


def embedded_where_sql(filter_sql: str) -> str:
    """(seq, part vectors) of embedded chunks (alias c) passing ` AND …` filters, for an
    exact scan in numpy (bound: the filters' parameters)."""
    return f"SELECT c.seq, c.embedding FROM chunks c WHERE c.embedding IS NOT NULL{filter_sql}"


def embedding_by_seq_sql(count: int) -> str:
    """(seq, part vectors) of `count` chunks, by seq (bound: the seqs)."""
    return (
        "SELECT seq, embedding FROM chunks WHERE embedding IS NOT NULL "
        f"AND seq IN ({placeholders(count)})"
    )


def content_by_seq_sql() -> str:
    """One chunk's text (bound: seq)."""
    return "SELECT content FROM chunks WHERE seq = ?"


def part_vectors_sql() -> str:
    """How many part vectors `chunks.embedding` holds in all (bound: bytes per vector)."""
    return "SELECT coalesce(sum(length(embedding) / ?), 0) FROM chunks WHERE embedding IS NOT NULL"


# -- counts ---------------------------------------------------------------------------------


def count_sql() -> str:
    """How many chunks."""
    return "SELECT count(*) FROM chunks"


def keyword_rows_sql() -> str:
    """Every chunk's seq, id, source type and date, in seq order (the in-memory keyword
    index's rows: engine/search/retrieve/keyword_index.py)."""
    return "SELECT seq, id, source_type, content_date FROM chunks ORDER BY seq"


def keyword_rows_by_seq_sql(count: int) -> str:
    """The same, with the text FTS5 indexes (the search text and title, or the content
    and title themselves), for `count` seqs."""
    return (
        "SELECT seq, id, source_type, content_date, coalesce(search_text, content), "
        "coalesce(search_title, title) FROM chunks "
        f"WHERE seq IN ({placeholders(count)}) ORDER BY seq"
    )


def search_texts_sql() -> str:
    """Every chunk's file, text and title from one seq on, in seq order (bound: the first
    seq, how many): what the keyword side is rebuilt from."""
    return "SELECT seq, source_file, content, title FROM chunks WHERE seq >= ? ORDER BY seq LIMIT ?"


def set_search_text_sql() -> str:
    """A chunk's language (in its metadata) and search text and title (bound: language,
    search text, search title, seq)."""
    return (
        "UPDATE chunks SET metadata = json_set(CASE WHEN json_valid(metadata) "
        "THEN metadata ELSE '{}' END, '$.language', ?), search_text = ?, search_title = ? "
        "WHERE seq = ?"
    )


def seqs_where_sql(filter_sql: str) -> str:
    """The seqs of the chunks that pass the filters (alias c), in order."""
    return f"SELECT c.seq FROM chunks c WHERE 1{filter_sql} ORDER BY c.seq"


def max_seq_sql() -> str:
    """The highest seq: about how many chunks there are, read from the end of the rowid tree."""
    return "SELECT coalesce(max(seq), 0) FROM chunks"


def count_embedded_sql() -> str:
    """How many chunks have a vector."""
    return "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL"


def latest_title_sql() -> str:
    """The title of a file's newest chunk that has one (a chat's name, a channel, a mail's
    subject): what its people's cards call that conversation."""
    return (
        "SELECT title FROM chunks WHERE source_file = ? AND title != '' "
        "ORDER BY content_date DESC LIMIT 1"
    )


def count_per_type_sql() -> str:
    """(source_type, chunks), most first."""
    return "SELECT source_type, count(*) FROM chunks GROUP BY source_type ORDER BY 2 DESC"


def has_type_sql() -> str:
    """A row when the index holds a chunk of this source type (one index lookup)."""
    return "SELECT 1 FROM chunks WHERE source_type = ? LIMIT 1"


def count_orphans_sql() -> str:
    """How many chunks belong to files that have no index_state row."""
    return f"SELECT count(*) FROM chunks c WHERE NOT EXISTS {_NO_STATE}"


def count_orphan_files_sql() -> str:
    """How many files have chunks but no index_state row."""
    return f"SELECT count(DISTINCT source_file) FROM chunks c WHERE NOT EXISTS {_NO_STATE}"
