"""The vec0 table of the active embedder: which one, creating it, writing rows."""

from __future__ import annotations

import re

import apsw

from engine import db
from engine.embedders import Embedder


def embedder_key(embedder: Embedder) -> str:
    return f"{embedder.name}|{embedder.model_id}|{embedder.dim}"


def table_name(embedder: Embedder) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", f"{embedder.name}_{embedder.model_id}".lower()).strip("_")
    return f"chunks_vec_{slug}_{embedder.dim}"


def ensure_vec_table(conn: apsw.Connection, embedder: Embedder) -> bool:
    """Make the embedder's vec0 table the active one; True if vectors must be (re)built.

    Vectors of two models never mix: a different embedder gets its own table, and every
    stored embedding is cleared so the indexer embeds all chunks again.
    """
    key = embedder_key(embedder)
    table = table_name(embedder)
    with db.transaction(conn):
        current = db.get_meta(conn, "embedder")
        if current == key and db.table_exists(conn, table):
            return False
        old = db.active_vec_table(conn)
        conn.execute(db.vec_table_sql(table, embedder.dim))
        conn.execute("UPDATE chunks SET embedding = NULL WHERE embedding IS NOT NULL")
        if old and old != table and db.table_exists(conn, old):
            conn.execute(f"DROP TABLE {old}")
        db.set_meta(conn, "embedder", key)
        db.set_meta(conn, "embedder_name", embedder.name)
        db.set_meta(conn, "model_id", embedder.model_id)
        db.set_meta(conn, "dimension", str(embedder.dim))
        db.set_meta(conn, "vec_table", table)
    return True


def insert_vector(conn: apsw.Connection, table: str, seq: int, vector: bytes,
                  source_type: str, content_date: str | None) -> None:
    # vec0 has no upsert: DELETE then INSERT, inside the caller's transaction.
    conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (seq,))
    conn.execute(f"INSERT INTO {table}(rowid, embedding, source_type, day) VALUES (?, ?, ?, ?)",
                 (seq, vector, source_type, db.day_number(content_date)))


def delete_vector(conn: apsw.Connection, table: str | None, seq: int) -> None:
    if table:
        conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (seq,))
