"""One indexing path: which files a run visits, and what a run records.

`index_paths` (some files or folders: the watcher's batches, `memex reindex PATH…`) and
`reconcile` (every root: `memex reindex`, the watcher's scans, the tray's "Reindex now") decide
which files to index and which to delete; `run_index` runs either on one write connection,
embeds what is missing, and records the run (meta `last_run`, the run log). The one-shot
`reindex` opens that connection under the writer lock; the desktop's and the watcher's
`Writer` runs the same `run_index` on its own long-lived connection.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import apsw
from filelock import FileLock

from engine.embedders import Embedder, EmbedderError, create_embedder
from engine.index import runlog
from engine.index.embedding import pending_vectors
from engine.index.indexer import Action, FileOutcome, Indexer, NullReporter, Reporter, RunCounts
from engine.index.routes import Discovery, Found, UnlistedRoot, classify, scan, unlisted_roots_at
from engine.records import IndexStats
from engine.settings import Settings
from engine.store import db, vectors
from engine.store.sql import state as state_sql

ShouldStop = Callable[[], bool]
MakeEmbedder = Callable[[Settings], Embedder]


def _never() -> bool:
    return False


@dataclass(frozen=True)
class RunResult:
    """A run's statistics and what it did to each file it visited."""

    kind: str
    stats: IndexStats
    outcomes: tuple[FileOutcome, ...] = field(default=())
    vectors_left: int = 0  # chunks still to embed when the run ended (0: none, or no model)

    @property
    def changes(self) -> tuple[FileOutcome, ...]:
        """The outcomes of files that were read or deleted (not the unchanged ones)."""
        return tuple(o for o in self.outcomes if o.action is not Action.UNCHANGED)


def writer_lock(settings: Settings) -> FileLock:
    """The one-writer lock beside the index file."""
    path = settings.db_path
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path) + ".lock")


def open_writer(settings: Settings) -> apsw.Connection:
    conn = db.connect(settings.db_path)
    db.migrate(conn)
    return conn


def load_embedder(
    settings: Settings,
    conn: apsw.Connection,
    reporter: Reporter,
    make: MakeEmbedder = create_embedder,
) -> Embedder | None:
    """The configured embedder with its vec0 table active, or None (keyword-only indexing)."""
    try:
        embedder = make(settings)
        vectors.ensure_vec_table(conn, embedder)
    except EmbedderError as exc:
        reporter.on_error("<embedder>", f"no embedder, indexing without vectors: {exc}")
        return None
    return embedder


def prepare_embedder(
    conn: apsw.Connection,
    settings: Settings,
    reporter: Reporter,
    embedder: Embedder | None,
    *,
    load: bool,
    make: MakeEmbedder = create_embedder,
) -> tuple[Embedder | None, str]:
    """The run's embedder with its vec0 table ready, and why missing vectors get embedded:
    "embedder_change" when this made another embedder active, else "missing_vector"."""
    before = db.get_meta(conn, "embedder")
    if embedder is not None:
        vectors.ensure_vec_table(conn, embedder)  # another process may have switched
    elif load:
        embedder = load_embedder(settings, conn, reporter, make)
    changed = bool(before) and before != db.get_meta(conn, "embedder")
    return embedder, "embedder_change" if changed else "missing_vector"


def known_under(conn: apsw.Connection, path: Path) -> list[str]:
    """Indexed files at `path`, or under it if it is (or was) a folder."""
    target = str(path.resolve() if path.parent.exists() else path.absolute())
    prefix = target.rstrip(os.sep) + os.sep
    rows = conn.execute(state_sql.known_under_sql(), (target, len(prefix), prefix)).fetchall()
    return [r[0] for r in rows]


def _visit(
    indexer: Indexer,
    targets: Sequence[Found],
    gone: Iterable[str],
    *,
    force: bool,
    should_stop: ShouldStop,
) -> list[FileOutcome]:
    """Index the targets, then delete the files that are gone; stop between two files."""
    outcomes: list[FileOutcome] = []
    for done, found in enumerate(targets, start=1):
        if should_stop():
            return outcomes
        outcomes.append(indexer.index_file(found, force=force))
        indexer.reporter.on_progress(done, len(targets), str(found.path))
    for path in dict.fromkeys(gone):
        if should_stop():
            return outcomes
        outcomes.append(indexer.delete_file(path))
    return outcomes


def index_paths(
    indexer: Indexer,
    paths: Iterable[str | Path],
    *,
    force: bool = False,
    should_stop: ShouldStop = _never,
) -> list[FileOutcome]:
    """Index these files and folders; delete what is gone at or under them.

    Not what could not be seen: files under a folder the walk could not list, or under a
    root gone missing (a deleted path whose root is gone), are kept and reported.
    """
    settings, conn = indexer.settings, indexer.conn
    started = time.perf_counter()
    targets: list[Found] = []
    missing: list[str] = []
    walked: Discovery | None = None
    absent_roots: tuple[UnlistedRoot, ...] = ()
    given = [Path(raw).absolute() for raw in paths]
    for path in given:
        if path.is_dir():
            walked = walked or scan(settings)  # one walk for all the folders of a batch
            folder = path.resolve()
            found = [f for f in walked.found if folder in f.path.parents]
            on_disk = {str(f.path) for f in found}
            targets += found
            missing += [k for k in known_under(conn, path) if k not in on_disk]
        elif path.exists():
            item = classify(path, settings)
            if item is not None and item.size >= 0:
                targets.append(item)
        else:
            absent_roots += unlisted_roots_at(path, settings)
            missing += known_under(conn, path)
    seen = walked or Discovery((), unlisted_roots=tuple(dict.fromkeys(absent_roots)))
    gone, errors = seen.unseen(missing, keep_under_empty_roots=False, about=given)
    _report_errors(indexer, errors)
    indexer.run.add_time("discover", started)
    return _visit(indexer, targets, gone, force=force, should_stop=should_stop)


def reconcile(
    indexer: Indexer, *, force: bool = False, should_stop: ShouldStop = _never
) -> list[FileOutcome]:
    """Index every routed file under every root; delete the indexed files no longer there.

    Only where the walk looked: what is indexed under a root or folder it could not list is
    kept, and that root or folder is reported as an error (`routes.Discovery.unseen`).
    """
    started = time.perf_counter()
    discovery = scan(indexer.settings)
    indexer.run.add_time("discover", started)
    on_disk = {str(f.path) for f in discovery.found}
    known = [r[0] for r in indexer.conn.execute(state_sql.files_sql())]
    missing = [k for k in known if k not in on_disk]
    gone, errors = discovery.unseen(missing, keep_under_empty_roots=True)
    _report_errors(indexer, errors)
    return _visit(indexer, list(discovery.found), gone, force=force, should_stop=should_stop)


def _report_errors(indexer: Indexer, errors: Iterable[tuple[str, str]]) -> None:
    """Roots and folders the walk could not see: errors of the run, like a file's."""
    for path, message in errors:
        indexer.report(path, message)


def run_record(run: RunCounts, stats: IndexStats, kind: str) -> dict[str, object]:
    """The run-log line of one run: counts, reasons, per-stage timings and errors."""
    return runlog.make_record(
        kind,
        seconds=round(stats.seconds, 3),
        files=stats.files,
        skipped=stats.skipped,
        deleted_files=stats.deleted_files,
        chunks_new=stats.chunks,
        chunks_unchanged=stats.unchanged_chunks,
        chunks_deleted=stats.deleted_chunks,
        embedded=stats.embedded,
        reasons=dict(sorted(run.reasons.items())),
        timings={k: round(v, 3) for k, v in run.timings.items()},
        errors=[{"file": f, "error": e} for f, e in stats.errors[:50]],
        error_count=len(stats.errors),
    )


def run_index(
    conn: apsw.Connection,
    settings: Settings,
    embedder: Embedder | None,
    reporter: Reporter,
    *,
    paths: Iterable[str | Path] | None = None,
    full: bool = False,
    kind: str | None = None,
    missing_reason: str = "missing_vector",
    should_stop: ShouldStop = _never,
    started: float | None = None,
    vector_seconds: float | None = None,
) -> RunResult:
    """Index `paths` (or reconcile every root), then embed what lacks a vector, record the run.

    Two phases: every file first (its chunks keyword-searchable as soon as it is committed),
    then the vectors, newest first — all of them, or for `vector_seconds` (a long-lived writer
    embeds the rest in slices between other jobs; `RunResult.vectors_left` says how many).
    `kind` names the run in the log: "watch" (a watcher batch: logged only when it changed
    something, no `last_run`), else reindex / reindex-full / reindex-paths by default.
    """
    started = time.perf_counter() if started is None else started
    kind = kind or ("reindex-paths" if paths is not None else "reindex-full" if full else "reindex")
    indexer = Indexer(settings, conn, embedder, reporter, missing_reason=missing_reason)
    if paths is None:
        outcomes = reconcile(indexer, force=full, should_stop=should_stop)
    else:
        outcomes = index_paths(indexer, paths, force=full, should_stop=should_stop)
    if not should_stop():
        indexer.embed_missing(should_stop=should_stop, budget_seconds=vector_seconds)
    stats = indexer.stats(time.perf_counter() - started)
    left = pending_vectors(conn) if indexer.embedder is not None else 0
    result = RunResult(kind, stats, tuple(outcomes), vectors_left=left)
    if kind != "watch":
        _record_last_run(conn, stats)
    if kind != "watch" or result.changes or stats.errors:
        runlog.append(settings, run_record(indexer.run, stats, kind))
    return result


def _record_last_run(conn: apsw.Connection, stats: IndexStats) -> None:
    with db.transaction(conn):
        db.set_meta(
            conn,
            "last_run",
            json.dumps(
                {
                    "at": time.time(),
                    "files": stats.files,
                    "chunks": stats.chunks,
                    "deleted": stats.deleted_chunks,
                    "errors": len(stats.errors),
                    "seconds": round(stats.seconds, 3),
                }
            ),
        )


def reindex(
    paths: Iterable[str | Path] | None = None,
    *,
    settings: Settings | None = None,
    reporter: Reporter | None = None,
    full: bool = False,
    embedder: Embedder | None = None,
    kind: str | None = None,
    make: MakeEmbedder = create_embedder,
) -> IndexStats:
    """Index what changed under the roots (or only `paths`), as a one-shot writer.

    Takes the writer lock, opens the one write connection, runs `run_index`, closes it.
    `make` loads the configured embedder (an engine passes its pool's, to load it once).
    """
    from engine.settings import load_settings

    settings = settings or load_settings()
    reporter = reporter or NullReporter()
    started = time.perf_counter()
    with writer_lock(settings):
        conn = open_writer(settings)
        try:
            embedder, reason = prepare_embedder(
                conn, settings, reporter, embedder, load=True, make=make
            )
            return run_index(
                conn,
                settings,
                embedder,
                reporter,
                paths=paths,
                full=full,
                kind=kind,
                missing_reason=reason,
                started=started,
            ).stats
        finally:
            conn.close()
