"""A one-shot search scans the matrix a warm process kept beside the index exactly while the
index still carries the writer's stamp it was written at, and asks vec0 otherwise
(engine/search/retrieve/saved_vectors.py, engine/store/sql/chunk_state.py)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import apsw
import numpy as np
import pytest

from engine.index.backup import backup
from engine.index.runs import reindex
from engine.search import Searcher
from engine.search.query.filters import Filters
from engine.search.retrieve.backends import Vec0Backend
from engine.search.retrieve.saved_vectors import OneShotVectors, SavedVectors
from engine.search.retrieve.vector_cache import SUFFIX, VectorCache
from engine.search.retrieve.vector_coverage import VectorCoverage
from engine.settings import Settings
from engine.store import db, mapped
from tests.test_keyword_index import notes_layer


@pytest.fixture
def small(settings_factory: Callable[..., Settings]) -> Settings:
    return notes_layer(settings_factory(embedder__name="hashing"))


def prime(settings: Settings, taken_up: bool = False) -> Path:
    """What a warm process leaves: its matrix kept in its file (read in full, or, with
    `taken_up`, the file there taken up and brought up to date)."""
    cache = VectorCache(settings.db_path, "exact")
    try:
        cache.refresh()
        assert (cache.mapped, cache.loads) == ((1, 0) if taken_up else (0, 1))
    finally:
        cache.close()
    saved = Path(str(settings.db_path) + SUFFIX)
    assert saved.exists()
    return saved


def vector_of(conn: apsw.Connection, name: str) -> tuple[int, np.ndarray]:
    seq, blob = conn.execute(
        "SELECT seq, embedding FROM chunks WHERE source_file LIKE ? ORDER BY seq", (f"%{name}",)
    ).fetchone()
    return seq, np.frombuffer(blob, dtype=np.float32)[:64].copy()


def test_the_saved_matrix_answers_as_vec0_while_the_stamp_holds(small: Settings) -> None:
    prime(small)
    conn = db.connect(small.db_path, create=False)
    one_shot = OneShotVectors(conn, small.db_path)
    assert isinstance(one_shot.backend(), SavedVectors)
    _, qvec = vector_of(conn, "ferry-2022.md")
    ranked = lambda hits: sorted((-round(c, 5), s) for s, c in hits)  # noqa: E731
    for filters in (Filters(), Filters(("note",)), Filters((), "2023-01-01"), Filters(("x",))):
        # every chunk that passes (the notes tie often: the order among ties is free)
        got, vec0 = one_shot.knn(qvec, 100, filters), Vec0Backend(conn).knn(qvec, 100, filters)
        assert ranked(got) == ranked(vec0), filters
        assert len(got) > 20 or filters.source_types == ("x",) or filters.since
    assert one_shot.knn(qvec, 1)[0][1] == pytest.approx(1.0, abs=1e-5)
    conn.close()


def test_any_change_of_the_chunks_sends_the_search_back_to_vec0(small: Settings) -> None:
    prime(small)
    note = small.roots[0] / "notes" / "tomatoes.md"
    note.write_text("# Tomatoes\nPlant after the last frost.\n")
    reindex(settings=small)
    conn = db.connect(small.db_path, create=False)
    one_shot = OneShotVectors(conn, small.db_path)
    assert isinstance(one_shot.backend(), Vec0Backend)  # the file predates the new chunk
    seq, qvec = vector_of(conn, "tomatoes.md")
    assert one_shot.knn(qvec, 1)[0][0] == seq
    prime(small, taken_up=True)  # a warm process caught up and wrote its file anew
    assert isinstance(one_shot.backend(), SavedVectors)
    assert one_shot.knn(qvec, 1)[0][0] == seq
    writer = db.connect(small.db_path)
    writer.execute("UPDATE chunks SET content_date = '2001-01-01' WHERE seq = ?", (seq,))
    assert isinstance(one_shot.backend(), Vec0Backend)  # a date the file does not hold
    writer.close()
    conn.close()


def test_an_index_built_anew_never_takes_up_the_old_indexs_file(small: Settings) -> None:
    saved = prime(small)
    kept = saved.with_name("kept.vectors")
    shutil.copy(saved, kept)
    for suffix in ("", "-wal", "-shm", SUFFIX, ".keyword", ".sound"):
        Path(str(small.db_path) + suffix).unlink(missing_ok=True)
    reindex(settings=small)  # the same files, the same count of chunk writes
    shutil.copy(kept, saved)
    conn = db.connect(small.db_path, create=False)
    one_shot = OneShotVectors(conn, small.db_path)
    assert isinstance(one_shot.backend(), Vec0Backend)
    prime(small, taken_up=True)  # the same chunks: taken up, and stamped anew
    assert isinstance(one_shot.backend(), SavedVectors)
    conn.close()


def test_a_file_kept_before_the_stamp_is_stamped_when_a_warm_process_takes_it_up(
    small: Settings,
) -> None:
    saved = prime(small)
    found = mapped.read(saved)
    assert found is not None and {"origin", "stamp"} <= set(found[0])
    fields = {k: v for k, v in found[0].items() if k not in ("origin", "stamp")}
    assert mapped.write(saved, fields, {k: np.array(v) for k, v in found[1].items()})
    conn = db.connect(small.db_path, create=False)
    one_shot = OneShotVectors(conn, small.db_path)
    assert isinstance(one_shot.backend(), Vec0Backend)
    prime(small, taken_up=True)
    assert isinstance(one_shot.backend(), SavedVectors)
    conn.close()


def test_the_writer_keeps_the_count_and_moves_the_stamp_with_what_the_file_holds(
    small: Settings,
) -> None:
    conn = db.connect(small.db_path)
    count = lambda: conn.execute("SELECT count(*) FROM chunks").fetchone()[0]  # noqa: E731
    state = db.chunk_state(conn)
    assert state is not None and state.count == count() > 0
    seq = conn.execute("SELECT min(seq) FROM chunks").fetchone()[0]
    conn.execute("UPDATE chunks SET search_text = 'other words' WHERE seq = ?", (seq,))
    conn.execute("UPDATE chunks SET metadata = '{}' WHERE seq = ?", (seq,))
    assert db.chunk_state(conn) == state  # nothing the vectors' file holds
    for column, value in (("source_type", "note"), ("content_date", None), ("embedding", None)):
        before = db.chunk_state(conn)
        conn.execute(f"UPDATE chunks SET {column} = ? WHERE seq = ?", (value, seq))
        after = db.chunk_state(conn)
        assert before is not None and after is not None and after.stamp > before.stamp, column
    conn.execute("DELETE FROM chunks WHERE seq = ?", (seq,))
    after_delete = db.chunk_state(conn)
    assert after_delete is not None and after_delete.count == count() == state.count - 1
    assert after_delete.origin == state.origin
    conn.close()


def test_an_index_from_before_the_stamp_gets_it_counted_once(small: Settings) -> None:
    conn = db.connect(small.db_path)
    conn.execute(
        "DROP TRIGGER chunk_state_ai; DROP TRIGGER chunk_state_ad; DROP TRIGGER chunk_state_au;"
        "DROP TABLE chunk_state"
    )
    assert db.chunk_state(conn) is None
    coverage = VectorCoverage(conn).counts()  # counted, as before the stamp
    db.migrate(conn)
    state = db.chunk_state(conn)
    total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert state is not None and state.count == total == coverage[1]
    assert VectorCoverage(conn).counts() == coverage
    conn.close()


def test_a_one_shot_search_with_the_file_answers_as_the_warm_process(small: Settings) -> None:
    """The same matrix, scanned the same way: the same hits in the same order, ties too
    (vec0 may order chunks of equal cosine otherwise: the notes here tie often)."""

    def answers(warm: bool) -> list[tuple[str, float]]:
        searcher = Searcher(small, vector_cache=warm, keyword_index=False)
        searcher.exact_vectors = True  # as the warm `memex --search` asks
        try:
            found = searcher.search("ferry bikes", limit=10).results
        finally:
            searcher.close()
        return [(r.id, r.score) for r in found]

    prime(small)
    conn = db.connect(small.db_path, create=False)
    assert isinstance(OneShotVectors(conn, small.db_path).backend(), SavedVectors)
    conn.close()
    one_shot = answers(warm=False)
    assert one_shot == answers(warm=True) and len(one_shot) >= 5


def test_a_backup_restored_over_the_index_never_takes_up_the_live_indexs_file(
    small: Settings, tmp_path: Path
) -> None:
    copy = tmp_path / "backup.db"
    backup(small, copy)
    live_conn, copy_conn = db.connect(small.db_path), db.connect(copy, readonly=True)
    live, kept = db.chunk_state(live_conn), db.chunk_state(copy_conn)
    live_conn.close()
    copy_conn.close()
    assert live is not None and kept is not None and kept.origin != live.origin
    assert (kept.stamp, kept.count) == (live.stamp, live.count)
    prime(small)  # written for the live index at the very stamp the backup carries
    for suffix in ("-wal", "-shm"):
        Path(str(small.db_path) + suffix).unlink(missing_ok=True)
    shutil.copy(copy, small.db_path)  # restored by hand, Memex stopped
    conn = db.connect(small.db_path, create=False)
    assert isinstance(OneShotVectors(conn, small.db_path).backend(), Vec0Backend)
    conn.close()
