"""Reindex: discover routed files, extract, diff chunks by content, embed what is new.

Change detection is two-level: a file whose mtime and size match `index_state` is skipped;
otherwise its chunks are extracted and compared by their content-addressed ids, so only new
chunks are embedded and chunks gone from the file are deleted. Each file is committed in its
own transaction, so a kill at any moment loses at most the file in progress.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import apsw
import numpy as np
from filelock import FileLock

from engine import db, vectors
from engine.embedders import Embedder, EmbedderError, create_embedder
from engine.extractors import ExtractError, get_extractor
from engine.extractors.chunking import chunk_id, content_hash
from engine.records import Chunk, ChunkId, IndexStats
from engine.routes import Found, classify, discover
from engine.settings import Settings

EMBED_SUB_BATCH = 256  # chunks embedded and written per step: bounds memory on huge files


class Reporter(Protocol):
    """How the engine tells a front end about progress and problems."""

    def on_progress(self, done: int, total: int, path: str) -> None: ...

    def on_error(self, path: str, message: str) -> None: ...


class NullReporter:
    def on_progress(self, done: int, total: int, path: str) -> None:
        pass

    def on_error(self, path: str, message: str) -> None:
        pass


def writer_lock(settings: Settings) -> FileLock:
    """The one-writer lock beside the index file."""
    path = settings.db_path
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path) + ".lock")


@dataclass
class _Run:
    files: int = 0
    chunks: int = 0
    skipped: int = 0
    unchanged: int = 0
    deleted: int = 0
    embedded: int = 0
    deleted_files: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)


def open_writer(settings: Settings) -> apsw.Connection:
    conn = db.connect(settings.db_path)
    db.migrate(conn)
    return conn


def make_chunks(found: Found, data: bytes) -> tuple[list[Chunk], list[str]]:
    """Extract a file into chunks with content-addressed ids."""
    extraction = get_extractor(found.source_type)(data, found.path)
    source_file = str(found.path)
    seen: dict[str, int] = {}
    chunks = []
    for draft in extraction.drafts:
        if not draft.content.strip():
            continue
        occurrence = seen.get(draft.content, 0)
        seen[draft.content] = occurrence + 1
        chunks.append(Chunk(
            id=ChunkId(chunk_id(source_file, draft.content, occurrence)),
            source_file=source_file, source_type=found.source_type, content=draft.content,
            content_hash=content_hash(draft.content), title=draft.title,
            content_date=draft.content_date, location=draft.location,
            metadata=draft.metadata, people=draft.people))
    return chunks, extraction.problems


class Indexer:
    """One writer: owns the write connection and the embedder for a run."""

    def __init__(self, settings: Settings, conn: apsw.Connection,
                 embedder: Embedder | None, reporter: Reporter | None = None) -> None:
        self.settings = settings
        self.conn = conn
        self.embedder = embedder
        self.reporter = reporter or NullReporter()
        self.vec_table = db.active_vec_table(conn) if embedder else None
        self.run = _Run()

    def index_file(self, found: Found, *, force: bool = False) -> None:
        """Bring one file's chunks in line with the disk, in one transaction."""
        state = self.conn.execute(
            "SELECT mtime, size, error FROM index_state WHERE source_file = ?",
            (str(found.path),)).fetchone()
        if not force and state and state[0] == found.mtime and state[1] == found.size:
            self.run.skipped += 1
            return
        self.run.files += 1
        try:
            if found.size > self.settings["max_file_bytes"]:
                raise ExtractError(f"file is larger than {self.settings['max_file_bytes']} bytes")
            chunks, problems = make_chunks(found, found.path.read_bytes())
        except (ExtractError, OSError, ValueError, UnicodeError, KeyError, TypeError) as exc:
            self._record_failure(found, exc)
            return
        error = "; ".join(problems[:20]) if problems else None
        if problems:
            self._report(str(found.path), f"{len(problems)} problem(s): {error}")
        self._apply(found, chunks, error)

    def _record_failure(self, found: Found, exc: BaseException) -> None:
        message = str(exc) or type(exc).__name__
        self._report(str(found.path), message)
        with db.transaction(self.conn):
            self._write_state(found, message)

    def _report(self, path: str, message: str) -> None:
        self.run.errors.append((path, message))
        self.reporter.on_error(path, message)

    def _write_state(self, found: Found, error: str | None) -> None:
        self.conn.execute(
            "INSERT INTO index_state(source_file, source_type, mtime, size, indexed_at, error) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(source_file) DO UPDATE SET "
            "source_type = excluded.source_type, mtime = excluded.mtime, size = excluded.size, "
            "indexed_at = excluded.indexed_at, error = excluded.error",
            (str(found.path), found.source_type, found.mtime, found.size, time.time(), error))

    def _apply(self, found: Found, chunks: list[Chunk], error: str | None) -> None:
        existing = dict(self.conn.execute(
            "SELECT id, seq FROM chunks WHERE source_file = ?", (str(found.path),)).fetchall())
        wanted = {c.id for c in chunks}
        new = [c for c in chunks if c.id not in existing]
        gone = [seq for cid, seq in existing.items() if cid not in wanted]
        vectors_new = self._embed([c.content for c in new])
        with db.transaction(self.conn):
            for seq in gone:
                vectors.delete_vector(self.conn, self.vec_table, seq)
                self.conn.execute("DELETE FROM chunks WHERE seq = ?", (seq,))
            ordinal = {c.id: i for i, c in enumerate(chunks)}
            for i, chunk in enumerate(new):
                self._insert(chunk, None if vectors_new is None else vectors_new[i], ordinal[chunk.id])
            self._write_state(found, error)
        self.run.chunks += len(new)
        self.run.unchanged += len(chunks) - len(new)
        self.run.deleted += len(gone)

    def _embed(self, texts: Sequence[str]) -> np.ndarray | None:
        if self.embedder is None or not texts:
            return None
        try:
            out = np.concatenate([self.embedder.embed(texts[i:i + EMBED_SUB_BATCH])
                                  for i in range(0, len(texts), EMBED_SUB_BATCH)])
        except EmbedderError as exc:
            self._report("<embedder>", f"embedding failed, stored without vectors: {exc}")
            self.embedder = None
            return None
        self.run.embedded += len(texts)
        return out

    def _insert(self, chunk: Chunk, vector: np.ndarray | None, ordinal: int) -> None:
        blob = None if vector is None else vector.astype(np.float32).tobytes()
        self.conn.execute(
            "INSERT INTO chunks(id, source_file, source_type, content, metadata, embedding, "
            "indexed_at, content_hash, content_date, title, location, people, ordinal) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (chunk.id, chunk.source_file, chunk.source_type, chunk.content,
             json.dumps(chunk.metadata, ensure_ascii=False, default=str), blob, time.time(),
             chunk.content_hash, chunk.content_date, chunk.title, chunk.location,
             "\n".join(chunk.people), ordinal))
        if blob is not None and self.vec_table:
            seq = self.conn.last_insert_rowid()
            vectors.insert_vector(self.conn, self.vec_table, seq, blob, chunk.source_type,
                                  chunk.content_date)

    def delete_file(self, path: str) -> None:
        """Remove a file's chunks, FTS rows and vectors, and its state."""
        seqs = [r[0] for r in self.conn.execute(
            "SELECT seq FROM chunks WHERE source_file = ?", (path,))]
        with db.transaction(self.conn):
            for seq in seqs:
                vectors.delete_vector(self.conn, self.vec_table or db.active_vec_table(self.conn), seq)
            self.conn.execute("DELETE FROM chunks WHERE source_file = ?", (path,))
            self.conn.execute("DELETE FROM index_state WHERE source_file = ?", (path,))
        self.run.deleted += len(seqs)
        self.run.deleted_files += 1

    def embed_missing(self) -> None:
        """Give a vector to every chunk stored without one (embedder was down, or switched)."""
        if self.embedder is None or not self.vec_table:
            return
        while True:
            rows = self.conn.execute(
                "SELECT seq, content, source_type, content_date FROM chunks "
                "WHERE embedding IS NULL ORDER BY seq LIMIT ?", (EMBED_SUB_BATCH,)).fetchall()
            if not rows:
                return
            embedded = self._embed([r[1] for r in rows])
            if embedded is None:
                return
            with db.transaction(self.conn):
                for (seq, _, source_type, date), vector in zip(rows, embedded, strict=True):
                    blob = vector.astype(np.float32).tobytes()
                    self.conn.execute("UPDATE chunks SET embedding = ? WHERE seq = ?", (blob, seq))
                    vectors.insert_vector(self.conn, self.vec_table, seq, blob, source_type, date)

    def stats(self, seconds: float) -> IndexStats:
        r = self.run
        return IndexStats(files=r.files, chunks=r.chunks, skipped=r.skipped,
                          unchanged_chunks=r.unchanged, deleted_chunks=r.deleted,
                          errors=tuple(r.errors), seconds=seconds, embedded=r.embedded,
                          deleted_files=r.deleted_files)


def load_embedder(settings: Settings, conn: apsw.Connection,
                  reporter: Reporter) -> Embedder | None:
    """The configured embedder with its vec0 table active, or None (keyword-only indexing)."""
    try:
        embedder = create_embedder(settings)
        vectors.ensure_vec_table(conn, embedder)
    except EmbedderError as exc:
        reporter.on_error("<embedder>", f"no embedder, indexing without vectors: {exc}")
        return None
    return embedder


def _targets(settings: Settings, paths: Iterable[str | Path] | None) -> list[Found]:
    if paths is None:
        return list(discover(settings))
    found = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += [f for f in discover(settings) if path.resolve() in f.path.parents]
        elif (item := classify(path, settings)) is not None:
            found.append(item)
    return found


def reindex(paths: Iterable[str | Path] | None = None, *, settings: Settings | None = None,
            reporter: Reporter | None = None, full: bool = False,
            embedder: Embedder | None = None) -> IndexStats:
    """Index what changed under the roots (or only `paths`); returns what was done."""
    from engine.settings import load_settings

    settings = settings or load_settings()
    reporter = reporter or NullReporter()
    started = time.perf_counter()
    with writer_lock(settings):
        conn = open_writer(settings)
        try:
            if embedder is not None:
                vectors.ensure_vec_table(conn, embedder)
            else:
                embedder = load_embedder(settings, conn, reporter)
            indexer = Indexer(settings, conn, embedder, reporter)
            targets = _targets(settings, paths)
            for done, found in enumerate(targets, start=1):
                indexer.index_file(found, force=full)
                reporter.on_progress(done, len(targets), str(found.path))
            if paths is None:
                on_disk = {str(f.path) for f in targets}
                for (known,) in conn.execute("SELECT source_file FROM index_state").fetchall():
                    if known not in on_disk:
                        indexer.delete_file(known)
            else:
                for raw in paths:
                    path = Path(raw).absolute()
                    if not path.exists():
                        indexer.delete_file(str(path.resolve() if path.parent.exists() else path))
            indexer.embed_missing()
            stats = indexer.stats(time.perf_counter() - started)
            with db.transaction(conn):
                db.set_meta(conn, "last_run", json.dumps(
                    {"at": time.time(), "files": stats.files, "chunks": stats.chunks,
                     "deleted": stats.deleted_chunks, "errors": len(stats.errors),
                     "seconds": round(stats.seconds, 3)}))
            return stats
        finally:
            conn.close()
