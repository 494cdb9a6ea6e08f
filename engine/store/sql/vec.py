"""The vec0 tables (one per embedder, one row per part of a chunk) and their shadow tables.

A row's rowid is `seq × MAX_PARTS + ordinal` (engine/parts.py).

Every builder here takes the vec0 table's name, which comes from `meta` or
`sqlite_master`: it goes through `identifier` first.
"""

from __future__ import annotations

from engine.store.sql.base import identifier


def create_table_sql(table: str, dim: int) -> str:
    """The vec0 table: cosine KNN with source type and day as metadata filtered in the scan."""
    return (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {identifier(table)} USING vec0("
        f"embedding float[{int(dim)}] distance_metric=cosine, source_type text, day integer)"
    )


def drop_table_sql(table: str) -> str:
    """Drop a vec0 table (and with it its shadow tables)."""
    return f"DROP TABLE {identifier(table)}"


def insert_sql(table: str) -> str:
    """One vector (bound: rowid, embedding, source_type, day); vec0 has no upsert."""
    return (
        f"INSERT INTO {identifier(table)}(rowid, embedding, source_type, day) VALUES (?, ?, ?, ?)"
    )


def delete_sql(table: str) -> str:
    """One vector (bound: rowid)."""
    return f"DELETE FROM {identifier(table)} WHERE rowid = ?"


def knn_sql(table: str, filter_sql: str) -> str:
    """(rowid, distance) of the top-k parts by cosine distance, metadata filters applied
    during the scan.

    Bound: the query vector, k (≤ 4096), the filters' parameters.
    """
    return (
        f"SELECT rowid, distance FROM {identifier(table)} WHERE embedding MATCH ? AND k = ?"
        f"{filter_sql} ORDER BY distance"
    )


def rowids_sql(table: str) -> str:
    """Every rowid that has a vector."""
    return f"SELECT rowid FROM {identifier(table)}"


def vectors_sql(table: str) -> str:
    """Every (rowid, embedding) in rowid order: a chunk's parts together, in ordinal order
    (vec0's own scan order is its storage order)."""
    return f"SELECT rowid, embedding FROM {identifier(table)} ORDER BY rowid"


def count_sql(table: str) -> str:
    """How many vectors (parts)."""
    return f"SELECT count(*) FROM {identifier(table)}"


def count_chunks_sql(table: str) -> str:
    """How many chunks have vectors: rows of ordinal 0 (bound: MAX_PARTS)."""
    return f"SELECT count(*) FROM {rowids_table(table)} WHERE rowid % ? = 0"


# -- shadow tables --------------------------------------------------------------------------


def chunks_table(table: str) -> str:
    """The shadow table of vec0's fixed-size slot chunks."""
    return identifier(table) + "_chunks"


def rowids_table(table: str) -> str:
    """The shadow table mapping rowids to slots."""
    return identifier(table) + "_rowids"


def slot_chunks_sql(table: str) -> str:
    """Size and validity bitmap of every slot chunk, in order."""
    return f"SELECT chunk_id, size, validity FROM {chunks_table(table)} ORDER BY chunk_id"


def count_orphans_sql(table: str) -> str:
    """How many vectors have no chunk (bound: MAX_PARTS)."""
    return (
        f"SELECT count(*) FROM {rowids_table(table)} r "
        "WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.seq = r.rowid / ?1)"
    )


def count_missing_sql(table: str) -> str:
    """How many embedded chunks have no vector for their first part (bound: MAX_PARTS)."""
    return (
        "SELECT count(*) FROM chunks c WHERE c.embedding IS NOT NULL "
        f"AND NOT EXISTS (SELECT 1 FROM {rowids_table(table)} r WHERE r.rowid = c.seq * ?1)"
    )
