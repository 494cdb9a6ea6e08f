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
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import apsw

from engine.embedders import Embedder, EmbedderError, create_embedder
from engine.index import archives, people, runlog, siblings
from engine.index.embedding import pending_vectors
from engine.index.files import is_under
from engine.index.indexer import Action, FileOutcome, Indexer, NullReporter, Reporter, RunCounts
from engine.index.locks import WAITING_FOR_LOCK, Notify, holding_writer_lock
from engine.index.locks import writer_lock as writer_lock  # where callers have imported it
from engine.index.recognise import known_types, load_verdicts, save_verdicts
from engine.index.routes import (
    Discovery,
    Found,
    UnlistedRoot,
    classify_path,
    scan,
    scan_archive,
    unlisted_roots_at,
)
from engine.records import IndexStats
from engine.settings import Settings, load_settings
from engine.store import db, sound_marker, vectors
from engine.store.sql import state as state_sql
from engine.text import is_clean

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


def open_writer(settings: Settings, on_wait: Notify | None = None) -> apsw.Connection:
    """The write connection, schema ready; `on_wait` is told when another program's
    write lock makes it wait (past the busy timeout: BusyError). The integrity gate runs
    first, once per connection: nothing is written to a damaged file (IndexDamaged); it
    is skipped when the file is as the last one-shot reindex left it (`sound_marker`)."""
    on_busy = None if on_wait is None else (lambda: on_wait(WAITING_FOR_LOCK))
    verify = not sound_marker.known_sound(settings.db_path)
    conn = db.connect(settings.db_path, on_busy=on_busy, verify_first=verify)
    try:
        db.migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


@dataclass
class HeldErrors:
    """A reporter that holds back the errors told before a run's Indexer exists (loading
    the embedder: a rejected key, a server down), so that the run reports them through
    `Indexer.report`: told once, counted in its summary and in its run-log line."""

    reporter: Reporter
    errors: list[tuple[str, str]] = field(default_factory=list)

    def on_progress(self, done: int, total: int, path: str) -> None:
        self.reporter.on_progress(done, total, path)

    def on_embedding(self, done: int, total: int) -> None:
        self.reporter.on_embedding(done, total)

    def on_error(self, path: str, message: str) -> None:
        self.errors.append((path, message))


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
    if not is_clean(target):  # a name that is not UTF-8 was never indexed (no row holds one)
        return []
    rows = []
    # Under it as a folder, or as an archive (`<archive>!/<member>`).
    for prefix in (target.rstrip(os.sep) + os.sep, target + archives.SEPARATOR + os.sep):
        rows += conn.execute(state_sql.known_under_sql(), (target, len(prefix), prefix))
    return list(dict.fromkeys(r[0] for r in rows))


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
            if walked is None:  # one walk for a batch
                before = load_verdicts(conn, settings)
                walked = scan(settings, known_types(conn), before)
                save_verdicts(conn, settings, before, walked.verdicts)
            folder = path.resolve()
            found = [f for f in walked.found if folder in f.path.parents]
            # Archives refused and files a recogniser's check failed on, under this folder.
            _report_errors(indexer, [(p, m) for p, m in walked.problems if is_under(p, folder)])
            on_disk = {str(f.path) for f in found}
            targets += found
            missing += [k for k in known_under(conn, path) if k not in on_disk]
        elif archives.is_archive(path) and path.is_file() and settings.discovery.read_archives:
            inside = scan_archive(path, settings)
            targets += inside.found
            _report_errors(indexer, inside.problems)
            if str(path) not in {str(a) for a in inside.unreadable_archives}:
                on_disk = {str(f.path) for f in inside.found}
                missing += [k for k in known_under(conn, path) if k not in on_disk]
        elif path.exists():
            one = classify_path(path, settings)
            targets += [item for item in one.found if item.size >= 0]
            _report_errors(indexer, one.problems)  # a recogniser's check failed on it
        else:
            absent_roots += unlisted_roots_at(path, settings)
            missing += known_under(conn, path)
        if not path.is_dir():  # a changed users.json: the files that read it as a sibling
            listed = {f.path for f in targets}
            targets += [
                f for f in siblings.dependents(conn, settings, path) if f.path not in listed
            ]
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
    settings, conn = indexer.settings, indexer.conn
    before = load_verdicts(conn, settings)
    stored = known_types(conn)
    # No unchanged file is read again (`--full`: every file no route claims is).
    discovery = scan(settings, stored, {} if force else before)
    _report_errors(indexer, discovery.problems)
    unknown = {v.path for v in discovery.verdicts}
    stale = [p for p in before if p not in unknown and discovery.may_delete(p)]
    save_verdicts(conn, settings, before, discovery.verdicts, stale)
    indexer.run.add_time("discover", started)
    on_disk = {str(f.path) for f in discovery.found}
    missing = [k for k in stored if k not in on_disk]
    gone, errors = discovery.unseen(missing, keep_under_empty_roots=True)
    _report_errors(indexer, errors)
    if not force:
        indexer.load_states()
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
        notes=[{"file": f, "note": n} for f, n in run.notes[:50]],  # harmless, not errors
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
    errors_before: Sequence[tuple[str, str]] = (),
) -> RunResult:
    """Index `paths` (or reconcile every root), then embed what lacks a vector, record the run.

    Files first (keyword-searchable once committed), then vectors, newest first: all, or for
    `vector_seconds` (a writer embeds the rest in slices; `RunResult.vectors_left` says how
    many). `kind` names the run in the log ("watch": logged only when it changed something,
    no `last_run`); `errors_before` (`HeldErrors`) are errors of this run."""
    started = time.perf_counter() if started is None else started
    kind = kind or ("reindex-paths" if paths is not None else "reindex-full" if full else "reindex")
    indexer = Indexer(settings, conn, embedder, reporter, missing_reason=missing_reason)
    for path, message in errors_before:
        indexer.report(path, message)
    try:
        if paths is None:
            outcomes = reconcile(indexer, force=full, should_stop=should_stop)
        else:
            outcomes = index_paths(indexer, paths, force=full, should_stop=should_stop)
    finally:
        indexer.archives.close()
    if not should_stop():  # the directory before the vectors: names are known at once
        people.refresh_after_run(indexer, throttle=kind == "watch")
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


@contextmanager
def _index_errors(settings: Settings) -> Iterator[None]:
    """SQLite errors that are the file's or the disk's fault as one IndexError_ sentence."""
    try:
        yield
    except apsw.Error as exc:
        error = db.as_index_error(settings.db_path, exc)
        if error is None:
            raise
        raise error from None


def reindex(
    paths: Iterable[str | Path] | None = None,
    *,
    settings: Settings | None = None,
    reporter: Reporter | None = None,
    full: bool = False,
    embedder: Embedder | None = None,
    kind: str | None = None,
    make: MakeEmbedder = create_embedder,
    on_wait: Notify | None = None,
) -> IndexStats:
    """Index what changed under the roots (or only `paths`), as a one-shot writer: under the
    writer lock (`on_wait` is told when it must wait), on one write connection. `make` loads
    the embedder. Damage, a full disk, a lock held too long: an `IndexError_` sentence."""
    settings = settings or load_settings()
    reporter = reporter or NullReporter()
    started = time.perf_counter()
    with holding_writer_lock(settings, on_wait), _index_errors(settings):
        conn = open_writer(settings, on_wait)
        try:
            held = HeldErrors(reporter)
            embedder, reason = prepare_embedder(
                conn, settings, held, embedder, load=True, make=make
            )
            stats = run_index(
                conn,
                settings,
                embedder,
                reporter,
                paths=paths,
                full=full,
                kind=kind,
                missing_reason=reason,
                started=started,
                errors_before=held.errors,
            ).stats
        except BaseException:
            conn.close()
            raise
        conn.close()
        # A sound file written only by this run: the next one need not check it. Not after a
        # failed people build: its error (reported, not raised) may have been a damaged page.
        if all(path != people.ERROR_PATH for path, _ in stats.errors):
            sound_marker.remember(settings.db_path)
        return stats
