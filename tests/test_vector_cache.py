"""The in-memory vector cache: it follows the index and ranks as vec0 inside whole searches
(its neighbours against vec0's: the vector contract, tests/test_backends.py)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from engine.core import Engine
from engine.embedders import create_embedder
from engine.index.runs import reindex
from engine.search import Searcher
from engine.search.query.filters import Filters
from engine.search.retrieve.vector_cache import VectorCache
from engine.settings import Settings
from engine.store import db

QUERIES = (
    "when is the standup",
    "espresso appliance at work is broken",
    "ferry with bikes",
    "blood sugar after dinner",
    "pricing model for the contract",
    "invoice overdue",
)
FILTERS = (
    Filters((), None, None, ()),
    Filters(("slack",), None, None, ()),
    Filters((), "2026-05-01", None, ()),
    Filters(("note", "journal"), None, "2025-12-31", ()),
    Filters(("no-such-type",), None, None, ()),
)


def slack(channel: str, texts: list[str], start: int = 0) -> str:
    import json

    return (
        "\n".join(
            json.dumps(
                {
                    "ts": f"{1_780_000_000 + (start + i) * 60}.000100",
                    "channel": channel,
                    "user": "U1",
                    "user_name": "Priya",
                    "text": t,
                }
            )
            for i, t in enumerate(texts)
        )
        + "\n"
    )


@pytest.fixture
def small(settings_factory: Callable[..., Settings]) -> Settings:
    settings = settings_factory(embedder__name="hashing")
    root = settings.roots[0]
    (root / "data" / "slack").mkdir(parents=True)
    (root / "data" / "slack" / "eng.jsonl").write_text(
        slack("eng", [f"the scheduler run {i} finished" for i in range(12)])
    )
    (root / "notes").mkdir()
    (root / "notes" / "garden.md").write_text("# Tomatoes\nPlant after the last frost.\n")
    reindex(settings=settings)
    return settings


def vectors_by_seq(path: Path) -> dict[int, np.ndarray]:
    conn = db.connect(path, create=False)
    rows = conn.execute("SELECT seq, embedding FROM chunks WHERE embedding IS NOT NULL")
    out = {seq: np.frombuffer(blob, dtype=np.float32) for seq, blob in rows}
    conn.close()
    return out


def test_cache_follows_additions_edits_and_deletions_incrementally(small: Settings) -> None:
    cache = VectorCache(small.db_path)
    assert cache.refresh() and cache.loads == 1 and len(cache) == len(vectors_by_seq(small.db_path))
    assert not cache.refresh()  # nothing committed since: the data_version check stops it

    notes = small.roots[0] / "notes"
    (notes / "bikes.md").write_text("# Ferry\nBodø to Moskenes with the bikes.\n")
    reindex(settings=small)
    assert cache.refresh() and (cache.loads, cache.updates) == (1, 1)
    stored = vectors_by_seq(small.db_path)
    assert sorted(cache.seqs[cache.starts].tolist()) == sorted(stored)

    # Editing the file indexed last deletes its chunk and inserts a new one, which SQLite
    # gives the same seq (max rowid + 1): the cache must notice by the chunk id.
    last_seq = max(stored)
    (notes / "bikes.md").write_text("# Ferry\nThe night ferry from Bodø was cancelled.\n")
    reindex(settings=small)
    stored = vectors_by_seq(small.db_path)
    assert last_seq in stored, "the test relies on the reused seq"
    assert cache.refresh() and cache.loads == 1
    row = int(np.flatnonzero(cache.seqs == last_seq)[0])
    first_part = stored[last_seq][: cache.matrix.shape[1]]
    assert np.array_equal(cache.matrix[row], first_part)
    assert [seq for seq, _ in cache.knn(first_part, 1)] == [last_seq]

    (notes / "garden.md").unlink()
    reindex(settings=small)
    assert cache.refresh()
    assert sorted(cache.seqs[cache.starts].tolist()) == sorted(vectors_by_seq(small.db_path))
    assert cache.seqs.shape[0] == cache.matrix.shape[0] == len(cache.types) >= len(cache)
    assert len(cache) == len(vectors_by_seq(small.db_path))  # chunks, each of 1+ parts
    conn = db.connect(small.db_path, create=False)
    assert cache.mirror.held == dict(conn.execute("SELECT seq, id FROM chunks"))
    conn.close()
    cache.close()


def test_one_cache_per_engine_serves_every_reader_thread(small: Settings) -> None:
    with Engine(small) as engine:
        first = engine.searcher()
        with ThreadPoolExecutor(1) as pool:
            second = pool.submit(engine.searcher).result()
        assert first is not second and first.conn is not second.conn
        assert first.vector_cache is second.vector_cache is not None
        hits = first.search("scheduler run finished", mode="vector").results
        assert hits and first.vector_cache.loads == 1
        assert second.search("scheduler run finished", mode="vector").results[0].id == hits[0].id
        assert first.vector_cache.loads == 1
    alone = Searcher(small)
    assert alone.vector_cache is not None and alone.vector_cache is not first.vector_cache
    alone.close()


def test_a_new_embedder_reloads_the_whole_matrix(small: Settings) -> None:
    cache = VectorCache(small.db_path)
    cache.refresh()
    dim = cache.matrix.shape[1]
    switched = small.with_values(embedder__name="local")
    reindex(settings=switched)  # builds the local model's vectors aside, then swaps
    conn = db.connect(small.db_path, create=False)
    assert db.get_meta(conn, "embedder_name") == "local"
    conn.close()
    assert cache.refresh() and cache.loads == 2
    assert (dim, cache.matrix.shape[1]) == (64, 384)
    assert sorted(cache.seqs[cache.starts].tolist()) == sorted(vectors_by_seq(small.db_path))
    cache.close()


def test_person_filter_through_the_cache_matches_the_sql_path(demo_index: Settings) -> None:
    embedder = create_embedder(demo_index)
    plain = Searcher(demo_index, embedder=embedder, vector_cache=False)
    cached = Searcher(demo_index, embedder=embedder, vector_cache=True)
    for name in ("Priya", "Sofie Lindqvist", "Nobody Atall"):
        people = cached._people((name,))
        filters = Filters((), None, None, people)
        for query in QUERIES[:3]:
            qvec = embedder.embed_query(query)
            expected = [seq for seq, _ in plain.vector(qvec, 15, filters)]
            got = [seq for seq, _ in cached.vector(qvec, 15, filters)]
            assert len(got) == len(expected)
            assert len(set(got) & set(expected)) >= len(expected) - 1
        if name == "Nobody Atall":
            assert got == []
    # The set of a person's chunks is remembered until the index changes.
    people = cached._people(("Priya",))
    cache = cached.vector_cache
    assert cache is not None
    first = cache.people_seqs(people)
    assert len(first) > 0 and cache.people_seqs(people) is first
    writer = db.connect(demo_index.db_path)
    with db.transaction(writer):
        seq = int(first[0])
        writer.execute(
            "UPDATE chunks SET people = '' , content = 'moved away' WHERE seq = ?", (seq,)
        )
    writer.close()
    again = cache.people_seqs(people)
    assert again is not first and seq not in set(again.tolist())
    plain.close(), cached.close()


def test_warm_path_ranks_as_the_one_shot_path(demo_index: Settings) -> None:
    """Whole searches through the in-memory matrix rank as through vec0."""
    embedder = create_embedder(demo_index)
    plain = Searcher(demo_index, embedder=embedder, vector_cache=False)
    cached = Searcher(demo_index, embedder=embedder, vector_cache=True)
    for query in QUERIES:
        for kwargs in (
            {},
            {"source_types": ["slack"]},
            {"people": ["Priya"]},
            {"since": "2026-01-01", "mode": "vector"},
        ):
            a = plain.search(query, 10, explain=True, **kwargs)  # type: ignore[arg-type]
            b = cached.search(query, 10, explain=True, **kwargs)  # type: ignore[arg-type]
            assert (a.mode, a.warnings) == (b.mode, b.warnings)
            ids_a, ids_b = [r.id for r in a.results], [r.id for r in b.results]
            assert ids_a[:3] == ids_b[:3], (query, kwargs)
            assert len(set(ids_a) & set(ids_b)) >= len(ids_a) - 1
    empty_a, empty_b = plain.search("   "), cached.search("   ")
    assert (empty_a.mode, [r.id for r in empty_a.results]) == (
        empty_b.mode,
        [r.id for r in empty_b.results],
    )
    plain.close(), cached.close()
