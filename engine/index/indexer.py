"""The indexer: brings one file at a time in line with the disk, on one write connection.

Change detection is two-level: a file whose mtime and size match `index_state` is unchanged,
unless the sibling files its reader reads (`engine.index.siblings`) hold something else than
when it was indexed (the `depends` key); otherwise its chunks are extracted and compared by
their content-addressed ids, so only new chunks are stored and chunks gone from the file are
deleted; the people it names (its mentions, merged) replace the ones kept for it. Each
file is committed in its own transaction, so a kill at any moment loses at most the file in
progress. New chunks are stored without a vector, searchable by keyword at once;
`embed_missing` (the vector phase, `engine.index.embedding`) embeds them afterwards, through
a `VectorTarget` the indexer hands it. Every file step returns a `FileOutcome`; which files
to visit is `engine.index.runs`' business.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

import apsw

from engine.embedders import Embedder
from engine.extractors import NO_SIBLINGS, ExtractError, Extraction, Siblings, get_extractor
from engine.extractors.chunking import chunk_id, content_hash
from engine.extractors.cleaning import clean_draft
from engine.extractors.mentions import merge_mentions
from engine.index import databases, keyword_format
from engine.index.archives import Archives
from engine.index.counts import RunCounts as RunCounts  # where runs and tests import it
from engine.index.discovery import Found
from engine.index.embedding import VectorPhase, VectorTables, VectorTarget
from engine.index.failures import failure_message
from engine.index.siblings import NONE, Resolved, SiblingFiles
from engine.records import Chunk, ChunkId, IndexStats, Mention
from engine.settings import Settings
from engine.store import db, people, vectors
from engine.store.sql import chunks as chunks_sql
from engine.store.sql import state as state_sql
from engine.text import clean_text, is_clean

NO_TEXT = "no text to index"  # a file read whole that holds no words: a note, not an error


def _never() -> bool:
    return False


class Reporter(Protocol):
    """How the engine tells a front end about progress and problems."""

    def on_progress(self, done: int, total: int, path: str) -> None: ...

    def on_embedding(self, done: int, total: int) -> None: ...

    def on_error(self, path: str, message: str) -> None: ...


class NullReporter:
    def on_progress(self, done: int, total: int, path: str) -> None:
        pass

    def on_embedding(self, done: int, total: int) -> None:
        pass

    def on_error(self, path: str, message: str) -> None:
        pass


class Action(StrEnum):
    """What indexing did to a file."""

    INDEXED = "indexed"  # chunks added, kept or deleted to match the file
    UNCHANGED = "unchanged"  # same mtime and size: not read
    DELETED = "deleted"  # the file is gone: its chunks and state removed
    ERROR = "error"  # the file could not be read or parsed: recorded, chunks kept


@dataclass(frozen=True)
class FileOutcome:
    """One file's outcome; `message` holds the error, or the problems of an indexed file."""

    path: str
    action: Action
    new_chunks: int = 0
    deleted_chunks: int = 0
    unchanged_chunks: int = 0
    message: str = ""


@dataclass(frozen=True)
class Extracted:
    """What one file gives the index: its chunks, problems, notes and merged mentions."""

    chunks: list[Chunk]
    problems: list[str]
    notes: list[str]
    mentions: list[Mention]


def make_chunks(
    found: Found, data: bytes, siblings: Siblings = NO_SIBLINGS
) -> tuple[list[Chunk], list[str], list[str]]:
    """Extract a file into chunks with content-addressed ids; (chunks, problems, notes)."""
    made = extract_file(found, data, siblings)
    return made.chunks, made.problems, made.notes


def extract_file(found: Found, data: bytes, siblings: Siblings = NO_SIBLINGS) -> Extracted:
    """Extract a file: chunks with content-addressed ids, and its mentions merged."""
    return extracted(found, get_extractor(found.source_type)(data, found.path, siblings))


def extracted(found: Found, extraction: Extraction) -> Extracted:
    """What a reader made of a file, as chunks with content-addressed ids and merged
    mentions."""
    mentions = merge_mentions(extraction.mentions)
    source_file = str(found.path)
    seen: dict[str, int] = {}
    chunks = []
    for draft in map(clean_draft, extraction.drafts):  # lone surrogates: U+FFFD
        if not draft.content.strip():
            continue
        occurrence = seen.get(draft.content, 0)
        seen[draft.content] = occurrence + 1
        chunks.append(
            Chunk(
                id=ChunkId(chunk_id(source_file, draft.content, occurrence)),
                source_file=source_file,
                source_type=found.source_type,
                content=draft.content,
                content_hash=content_hash(draft.content),
                title=draft.title,
                content_date=draft.content_date,
                location=draft.location,
                metadata=draft.metadata,
                people=draft.people,
            )
        )
    return Extracted(chunks, extraction.problems, extraction.notes, mentions)


def _joined(problems: list[str], shown: int = 20) -> str:
    """The first problems of a file, each whole, and how many more there were."""
    more = f"; … and {len(problems) - shown} more" if len(problems) > shown else ""
    return "; ".join(problems[:shown]) + more


class Indexer:
    """One writer: owns the write connection and the embedder for a run."""

    def __init__(
        self,
        settings: Settings,
        conn: apsw.Connection,
        embedder: Embedder | None,
        reporter: Reporter | None = None,
        *,
        missing_reason: str = "missing_vector",
    ) -> None:
        self.settings = settings
        self.conn = conn
        self.embedder = embedder
        self.reporter = reporter or NullReporter()
        self.vec_table = db.active_vec_table(conn) if embedder else None
        # A new embedder's table being built aside: new vectors go only there until the swap.
        self.build_table = vectors.pending_table(conn) if embedder else None
        self.run = RunCounts()
        self.missing_reason = missing_reason  # why embed_missing embeds, for the run log
        self.stored_reason: dict[int, str] = {}  # seq -> "new" | "changed", this run
        self.archives = Archives()  # the archives whose members this run reads
        self.siblings = SiblingFiles(settings, self.archives)  # what readers read beside
        # An index made by an earlier Memex has its keyword side rebuilt first (no re-embedding).
        keyword_format.ensure_current(conn, settings, self.reporter)
        self.keywords = keyword_format.KeywordTexts(settings, conn)
        self.searchable: dict[str, keyword_format.SearchText] = {}  # id -> this file's
        self.stored: dict[str, tuple[float, int, str | None, str | None]] = {}  # load_states

    def load_states(self) -> None:
        """Every file's stored state in one query, for a run about to visit them all: each
        is compared with the disk once, then asked of the table as usual."""
        rows = self.conn.execute(state_sql.states_sql())
        self.stored = {
            path: (mtime, size, error, depends) for path, mtime, size, error, depends in rows
        }

    def index_file(self, found: Found, *, force: bool = False) -> FileOutcome:
        """Bring one file's chunks in line with the disk, in one transaction."""
        path = str(found.path)
        if not is_clean(path):  # bytes that are not UTF-8 in its name: no row can hold it
            return self._unnamable(path)
        try:
            beside = databases.with_wal(found, self.siblings.of(found))
        except Exception as exc:  # the files beside it are read within its boundary too
            self.run.files += 1
            return self._record_failure(found, NONE, exc)
        if not force and self._unchanged(found, beside):
            self.run.skipped += 1
            return FileOutcome(path, Action.UNCHANGED)
        self.run.files += 1
        try:
            made = self._extract(found, beside)
        except Exception as exc:  # whatever a read or a parser raises is this file's error only
            return self._record_failure(found, beside, exc)
        return self._store(found, beside, made)

    def _store(self, found: Found, beside: Resolved, made: Extracted) -> FileOutcome:
        """Store what a file gave and tell its problems; a value of it that cannot be stored
        is its error (rolled back), as a read or a parser's would be."""
        path, chunks, problems = str(found.path), made.chunks, made.problems
        error = _joined(problems) if problems else None
        try:
            new, gone = self._apply(found, beside, made, error)
        except apsw.Error:  # the index's own trouble (a full disk, damage): the run's
            raise
        except Exception as exc:  # within the file's boundary: its error, the run goes on
            return self._record_failure(found, beside, exc)
        notes = made.notes if chunks or problems else [*made.notes, NO_TEXT]  # a heading alone
        self.run.notes += [(path, note) for note in notes]
        message = f"{len(problems)} problem(s): {error}" if problems else ""
        if message:
            self.report(path, message)
        message = message or (NO_TEXT if not chunks else "")  # told, not an error
        return FileOutcome(path, Action.INDEXED, new, gone, len(chunks) - new, message)

    def _unchanged(self, found: Found, beside: Resolved) -> bool:
        """The same mtime and size as when it was indexed, and the same siblings' key."""
        path = str(found.path)
        state = (
            self.stored.pop(path, None)
            or self.conn.execute(state_sql.select_sql(), (path,)).fetchone()
        )
        now = (found.mtime, found.size, beside.key)
        return state is not None and (state[0], state[1], state[3]) == now

    def _extract(self, found: Found, beside: Resolved) -> Extracted:
        """Read the file and make its chunks; raises whatever the read or the reader raises."""
        if databases.reads_from_copy(found):  # streamed from a copy: max_file_bytes is moot
            started = time.perf_counter()
            made = extracted(found, databases.read_database(found, self.settings))
            self.run.add_time("extract", started)
            return made
        limit = self.settings.max_file_bytes
        if found.size > limit:
            raise ExtractError(f"file is larger than {limit} bytes")
        started = time.perf_counter()
        data = self.archives.read_file(found.path, limit)
        made = extract_file(found, data, beside.siblings)
        self.run.add_time("extract", started)
        return made

    def _record_failure(self, found: Found, beside: Resolved, exc: Exception) -> FileOutcome:
        """Record why a file could not be indexed; its earlier chunks are kept.

        A read that failed (OSError: permissions, a vanished file, I/O) is recorded without
        the file's mtime and size, so the next run reads it again: fixing permissions changes
        neither, and the file would count as unchanged forever. A file that was read and
        refused keeps them: the same bytes (and siblings) give the same verdict until the
        file (or a sibling) changes.
        """
        message = failure_message(found, exc)
        self.report(str(found.path), message)
        if isinstance(exc, OSError):  # size -1 matches no file: retried on the next run
            found = Found(found.path, found.root, found.relative, found.source_type, -1.0, -1)
        with db.transaction(self.conn):
            self._write_state(found, beside, message)
        return FileOutcome(str(found.path), Action.ERROR, message=message)

    def report(self, path: str, message: str) -> None:
        """An error of this run: kept for the summary and the run log, told to the front end."""
        path, message = clean_text(path), clean_text(message)
        self.run.errors.append((path, message))
        self.reporter.on_error(path, message)

    def _unnamable(self, path: str) -> FileOutcome:
        """A file whose name is not valid UTF-8: an error of every run (shown with U+FFFD
        for the bytes) until it is renamed; nothing is stored for it."""
        self.run.files += 1
        message = "the file name is not valid UTF-8, so it cannot be indexed; rename it"
        self.report(path, message)
        return FileOutcome(clean_text(path), Action.ERROR, message=message)

    def _write_state(self, found: Found, beside: Resolved, error: str | None) -> None:
        path, now = str(found.path), time.time()
        self.conn.execute(
            state_sql.upsert_sql(),
            (path, found.source_type, found.mtime, found.size, now, error, beside.key),
        )

    def _apply(
        self, found: Found, beside: Resolved, made: Extracted, error: str | None
    ) -> tuple[int, int]:
        """Store the file's new chunks (no vectors yet), drop its vanished ones and replace
        its mentions; (new, deleted) counts."""
        chunks = made.chunks
        existing = dict(
            self.conn.execute(chunks_sql.ids_by_file_sql(), (str(found.path),)).fetchall()
        )
        wanted = {c.id for c in chunks}
        new = [c for c in chunks if c.id not in existing]
        gone = [seq for cid, seq in existing.items() if cid not in wanted]
        reason = "changed" if existing else "new"
        started = time.perf_counter()
        with db.transaction(self.conn):
            for seq in gone:
                vectors.delete_vector(self.conn, self.vec_table, seq)
                self.conn.execute(chunks_sql.delete_by_seq_sql(), (seq,))
            ordinal = {c.id: i for i, c in enumerate(chunks)}
            texts = self.keywords.chunks(new)  # languages told over the whole file
            self.searchable = {c.id: t for c, t in zip(new, texts, strict=True)}
            for chunk in new:
                self.stored_reason[self._insert(chunk, ordinal[chunk.id])] = reason
            path = str(found.path)
            people.replace_mentions(self.conn, path, found.source_type, made.mentions)
            self._write_state(found, beside, error)
        self.run.add_time("write", started)
        self.run.count("deleted.changed", len(gone))
        self.run.chunks += len(new)
        self.run.unchanged += len(chunks) - len(new)
        self.run.deleted += len(gone)
        return len(new), len(gone)

    def _insert(self, chunk: Chunk, ordinal: int) -> int:
        """Store one chunk without a vector, with its language and search text; its seq."""
        text = self.searchable.get(chunk.id) or self.keywords.chunks([chunk])[0]
        metadata = {**chunk.metadata, "language": text.language}
        self.conn.execute(
            chunks_sql.insert_sql(),
            (
                chunk.id,
                chunk.source_file,
                chunk.source_type,
                chunk.content,
                json.dumps(metadata, ensure_ascii=False, default=str),
                None,
                time.time(),
                chunk.content_hash,
                chunk.content_date,
                chunk.title,
                chunk.location,
                "\n".join(chunk.people),
                ordinal,
                text.text,
                text.title,
            ),
        )
        return int(self.conn.last_insert_rowid())

    def delete_file(self, path: str) -> FileOutcome:
        """Remove a file's chunks, FTS rows and vectors, and its state."""
        seqs = [r[0] for r in self.conn.execute(chunks_sql.seqs_by_file_sql(), (path,))]
        with db.transaction(self.conn):
            for seq in seqs:
                vectors.delete_vector(
                    self.conn, self.vec_table or db.active_vec_table(self.conn), seq
                )
            self.conn.execute(chunks_sql.delete_by_file_sql(), (path,))
            people.delete_mentions(self.conn, path)
            self.conn.execute(state_sql.delete_sql(), (path,))
        self.run.deleted += len(seqs)
        self.run.deleted_files += 1
        self.run.count("deleted.file_gone", len(seqs))
        return FileOutcome(path, Action.DELETED, deleted_chunks=len(seqs))

    def embed_missing(
        self, *, should_stop: Callable[[], bool] = _never, budget_seconds: float | None = None
    ) -> bool:
        """The vector phase: give a vector to every chunk stored without one (new chunks,
        an embedder that was down, a switch of embedder), newest first. True when none is
        left; False when it paused (a stop, the time budget, a failing embedder)."""
        phase = VectorPhase(
            self.vector_target(), should_stop=should_stop, budget_seconds=budget_seconds
        )
        try:
            return phase.run()
        finally:  # what the phase changed: a failed embedder, a build swapped in
            if phase.failed:
                self.embedder = None
            self.vec_table, self.build_table = phase.tables.active, phase.tables.building

    def vector_target(self) -> VectorTarget:
        """What the vector phase of this run works on."""
        return VectorTarget(
            conn=self.conn,
            embedder=self.embedder,
            tables=VectorTables(self.vec_table, self.build_table),
            counts=self.run,
            on_embedding=self.reporter.on_embedding,
            on_error=self.report,
            reason=lambda seq: self.stored_reason.get(seq, self.missing_reason),
        )

    def stats(self, seconds: float) -> IndexStats:
        r = self.run
        return IndexStats(
            files=r.files,
            chunks=r.chunks,
            skipped=r.skipped,
            unchanged_chunks=r.unchanged,
            deleted_chunks=r.deleted,
            errors=tuple(r.errors),
            seconds=seconds,
            embedded=r.embedded,
            deleted_files=r.deleted_files,
            empty_files=tuple(path for path, note in r.notes if note == NO_TEXT),
        )
