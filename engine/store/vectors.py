"""The vec0 tables: the active one that search uses, and the one being built beside it.

Vectors of two models never mix. `meta` names the active embedder (`embedder`,
`embedder_name`, `model_id`, `dimension`, `vec_table`, `embedder_config`) and
`chunks.embedding` always holds the active model's vectors. When the configured embedder
differs, `ensure_vec_table` starts a build aside: a new vec0 table of the new dimension,
named in `pending_*` meta keys. The indexer fills it (new vectors go only there), search
keeps using the old table and the old model, and `swap` makes it active in one
transaction: `chunks.embedding` is refreshed from it and the old table is dropped.
A crash during the build leaves the old index as it was; the next reindex resumes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import apsw
import numpy as np

from engine import parts
from engine.embedders import Embedder, Vectors
from engine.store import db
from engine.store.sql import chunks, vec

ACTIVE_KEYS = (
    "embedder",
    "embedder_name",
    "model_id",
    "dimension",
    "vec_table",
    "embedder_config",
    "parts",
)
PENDING_PREFIX = "pending_"
BUILD_BATCH = 256
Embed = Callable[[Sequence[str]], Vectors | None]


def embedder_key(embedder: Embedder) -> str:
    """The identity of a set of vectors: the model and the rule that cut chunks into parts."""
    return f"{embedder.name}|{embedder.model_id}|{embedder.dim}|{parts.PARTS_KEY}"


def table_name(embedder: Embedder) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", f"{embedder.name}_{embedder.model_id}".lower()).strip("_")
    return f"chunks_vec_{slug}_{embedder.dim}_{parts.PARTS_KEY}"


def embedder_config(embedder: Embedder) -> dict[str, Any]:
    """The settings that recreate this embedder (for query embedding with the index's model)."""
    extra = getattr(embedder, "config", None)
    return {"embedder.name": embedder.name, **(extra if isinstance(extra, dict) else {})}


def _meta_values(embedder: Embedder) -> dict[str, str]:
    return {
        "embedder": embedder_key(embedder),
        "embedder_name": embedder.name,
        "model_id": embedder.model_id,
        "dimension": str(embedder.dim),
        "vec_table": table_name(embedder),
        "embedder_config": json.dumps(embedder_config(embedder), sort_keys=True),
        "parts": parts.PARTS_KEY,
    }


def pending_table(conn: apsw.Connection) -> str | None:
    """The vec0 table being built for a new embedder, or None."""
    return db.get_meta(conn, PENDING_PREFIX + "vec_table")


def _drop_pending(conn: apsw.Connection, keep: str | None = None) -> None:
    table = pending_table(conn)
    if table and table != keep and db.table_exists(conn, table):
        conn.execute(vec.drop_table_sql(table))
    for key in ACTIVE_KEYS:
        db.delete_meta(conn, PENDING_PREFIX + key)


def _activate(conn: apsw.Connection, embedder: Embedder) -> None:
    """Make the embedder active at once (there are no vectors worth keeping)."""
    old = db.active_vec_table(conn)
    values = _meta_values(embedder)
    conn.execute(vec.create_table_sql(values["vec_table"], embedder.dim))
    conn.execute(chunks.clear_embeddings_sql())
    if old and old != values["vec_table"] and db.table_exists(conn, old):
        conn.execute(vec.drop_table_sql(old))
    _drop_pending(conn, keep=values["vec_table"])
    for key, value in values.items():
        db.set_meta(conn, key, value)


def ensure_vec_table(conn: apsw.Connection, embedder: Embedder) -> bool:
    """Prepare the vectors for `embedder`; True if vectors must be (re)built.

    Same embedder as the active one: nothing to do (a stale build aside is dropped).
    No active vectors yet: the embedder becomes active at once. Otherwise a build aside
    starts, or resumes if one for this embedder exists.
    """
    key = embedder_key(embedder)
    with db.transaction(conn):
        active = db.active_vec_table(conn)
        if db.get_meta(conn, "embedder") == key and active and db.table_exists(conn, active):
            if pending_table(conn):
                _drop_pending(conn)
            return False
        # Vectors of an index made before parts (one per chunk) are not kept: their rowids
        # mean something else, so they cannot serve search while a build runs aside.
        has_vectors = bool(
            active
            and db.table_exists(conn, active)
            and db.get_meta(conn, "parts") == parts.PARTS_KEY
            and conn.execute(chunks.any_embedded_sql()).fetchone()
        )
        if not has_vectors:
            _activate(conn, embedder)
            return True
        if db.get_meta(conn, PENDING_PREFIX + "embedder") == key and db.table_exists(
            conn, table_name(embedder)
        ):
            return True
        _drop_pending(conn)
        values = _meta_values(embedder)
        conn.execute(vec.create_table_sql(values["vec_table"], embedder.dim))
        for name, value in values.items():
            db.set_meta(conn, PENDING_PREFIX + name, value)
    return True


def missing_in(conn: apsw.Connection, table: str) -> list[int]:
    """Chunk seqs that have no row in `table`, in order."""
    have = {parts.seq_of(row[0]) for row in conn.execute(vec.rowids_sql(table))}
    return [seq for (seq,) in conn.execute(chunks.seqs_sql()) if seq not in have]


def embed_chunks(texts: Sequence[str], embed: Embed) -> list[bytes] | None:
    """Each text's part vectors, concatenated in order (the `chunks.embedding` blob); one
    embedder call for the whole batch. None when the embedder failed."""
    cut = [parts.part_texts(text) or [text] for text in texts]
    embedded = embed([piece for pieces in cut for piece in pieces])
    if embedded is None:
        return None
    matrix = np.asarray(embedded, dtype=np.float32)
    blobs, start = [], 0
    for pieces in cut:
        blobs.append(matrix[start : start + len(pieces)].tobytes())
        start += len(pieces)
    return blobs


def fill_pending(
    conn: apsw.Connection, table: str, embed: Embed, on_batch: Callable[[int], None] | None = None
) -> bool:
    """Embed every chunk missing from the table being built; True when it is complete.

    `embed` returns None when the embedder failed: the build stops and resumes next time.
    """
    todo = missing_in(conn, table)
    for start in range(0, len(todo), BUILD_BATCH):
        batch = todo[start : start + BUILD_BATCH]
        rows = conn.execute(chunks.to_embed_by_seq_sql(len(batch)), batch).fetchall()
        if not rows:
            continue
        blobs = embed_chunks([r[1] for r in rows], embed)
        if blobs is None:
            return False
        with db.transaction(conn):
            for (seq, _, source_type, date), blob in zip(rows, blobs, strict=True):
                insert_vector(conn, table, seq, blob, source_type, date)
        if on_batch is not None:
            on_batch(len(rows))
    return True


def swap(conn: apsw.Connection) -> bool:
    """Make the completed build active in one transaction; False if it is not complete."""
    with db.transaction(conn):
        table = pending_table(conn)
        if not table or not db.table_exists(conn, table) or missing_in(conn, table):
            return False
        old = db.active_vec_table(conn)
        cursor = conn.cursor()
        conn.executemany(
            chunks.update_embedding_sql(), _chunk_blobs(cursor.execute(vec.vectors_sql(table)))
        )
        for key in ACTIVE_KEYS:
            value = db.get_meta(conn, PENDING_PREFIX + key)
            if value is not None:
                db.set_meta(conn, key, value)
            db.delete_meta(conn, PENDING_PREFIX + key)
        if old and old != table and db.table_exists(conn, old):
            conn.execute(vec.drop_table_sql(old))
    return True


def _chunk_blobs(rows: Iterable[tuple[int, bytes]]) -> Iterator[tuple[bytes, int]]:
    """(blob, seq) per chunk from (rowid, vector) rows in rowid order: a chunk's parts are
    consecutive rowids, concatenated in ordinal order."""
    seq, pieces = -1, list[bytes]()
    for part_rowid, blob in rows:
        if parts.seq_of(part_rowid) != seq:
            if pieces:
                yield b"".join(pieces), seq
            seq, pieces = parts.seq_of(part_rowid), []
        pieces.append(blob)
    if pieces:
        yield b"".join(pieces), seq


@dataclass(frozen=True)
class BuildProgress:
    """A re-embedding in progress: from which embedder to which, and how far."""

    active: str | None
    target: str
    done: int
    total: int

    def as_json(self) -> dict[str, Any]:
        return {"from": self.active, "to": self.target, "done": self.done, "total": self.total}


def build_progress(conn: apsw.Connection) -> BuildProgress | None:
    table = pending_table(conn)
    target = db.get_meta(conn, PENDING_PREFIX + "embedder")
    if not table or not target or not db.table_exists(conn, table):
        return None
    done = conn.execute(vec.count_chunks_sql(table), (parts.MAX_PARTS,)).fetchone()[0]
    total = conn.execute(chunks.count_sql()).fetchone()[0]
    return BuildProgress(db.get_meta(conn, "embedder"), target, done, total)


def active_config(conn: apsw.Connection) -> dict[str, Any] | None:
    """The settings that recreate the active embedder, if the index recorded them."""
    raw = db.get_meta(conn, "embedder_config")
    try:
        value = json.loads(raw) if raw else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def insert_vector(
    conn: apsw.Connection,
    table: str,
    seq: int,
    vectors: bytes,
    source_type: str,
    content_date: str | None,
) -> int:
    """Store a chunk's part vectors (`vectors`: the concatenated blob), one row each; how
    many. vec0 has no upsert: DELETE then INSERT, inside the caller's transaction."""
    dim = _dimension(conn, table)
    width = 4 * dim
    count = len(vectors) // width if dim else 1
    day = db.day_number(content_date)
    for ordinal in range(count):
        rowid = parts.rowid(seq, ordinal)
        conn.execute(vec.delete_sql(table), (rowid,))
        blob = vectors[ordinal * width : (ordinal + 1) * width] if dim else vectors
        conn.execute(vec.insert_sql(table), (rowid, blob, source_type, day))
    return count


def _dimension(conn: apsw.Connection, table: str) -> int:
    """The vector width of a vec0 table, from its name (`…_<dim>_<parts key>`)."""
    match = re.search(r"_(\d+)_" + parts.PARTS_KEY + "$", table)
    return int(match[1]) if match else 0


def delete_vector(conn: apsw.Connection, table: str | None, seq: int) -> None:
    """Remove a chunk's part vectors from `table` and from every vec table the index knows.

    Call it while the chunk's row still exists: its text says how many parts it has."""
    row = conn.execute(chunks.content_by_seq_sql(), (seq,)).fetchone()
    count = max(1, len(parts.split_parts(row[0]))) if row else parts.MAX_PARTS
    tables = {table, db.active_vec_table(conn), pending_table(conn)}
    for name in sorted(t for t in tables if t):
        if db.table_exists(conn, name):
            for ordinal in range(count):
                conn.execute(vec.delete_sql(name), (parts.rowid(seq, ordinal),))
