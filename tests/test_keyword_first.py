"""Keyword first: a file's chunks are searchable by keyword before any vector exists; the
vector phase embeds newest first, in slices a long-lived writer interleaves with other jobs."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from engine.embedders import Vectors
from engine.embedders.hashing import HashingEmbedder
from engine.index import embedding, writer
from engine.index.embedding import pending_vectors
from engine.index.indexer import Indexer, NullReporter
from engine.index.runs import index_paths, open_writer, prepare_embedder, reindex
from engine.index.status import collect_status
from engine.index.writer import Writer
from engine.search import Searcher
from engine.settings import Settings
from engine.store import db
from tests.conftest import assert_consistent


def dated_notes(settings: Settings, days: Sequence[str]) -> Path:
    folder = settings.roots[0] / "data" / "journal"
    folder.mkdir(parents=True)
    for day in days:
        (folder / f"{day}.md").write_text(f"# {day}\nWalked the heron trail on {day}.\n")
    return folder


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder that records what it embedded and can hold a batch back."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []
        self.gate: threading.Event | None = None
        self.waiting = threading.Event()

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self.gate is not None:
            self.waiting.set()
            self.gate.wait(timeout=30)
        self.batches.append(list(texts))
        return super().embed(texts)


def vectors_left(settings: Settings) -> int:
    conn = db.connect(settings.db_path, create=False)
    try:
        return pending_vectors(conn)
    finally:
        conn.close()


@pytest.fixture
def hashing(settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(embedder__name="hashing")


def test_chunks_are_keyword_searchable_before_any_vector(hashing: Settings) -> None:
    folder = dated_notes(hashing, ["2026-03-01", "2026-03-02"])
    conn = open_writer(hashing)
    try:
        model, reason = prepare_embedder(conn, hashing, NullReporter(), None, load=True)
        outcomes = index_paths(Indexer(hashing, conn, model, missing_reason=reason), [folder])
        assert len(outcomes) == 2 and pending_vectors(conn) == 2
    finally:
        conn.close()
    searcher = Searcher(hashing, vector_cache=False)
    try:
        keyword = searcher.search("heron trail", mode="bm25")
        assert len(keyword.results) == 2 and not keyword.warnings
        hybrid = searcher.search("heron trail")
        assert len(hybrid.results) == 2
        assert any("vectors cover 0%" in w for w in hybrid.warnings), hybrid.warnings
    finally:
        searcher.close()
    status = collect_status(hashing)
    assert status.vector_coverage == 0.0 and status.as_json()["vector_coverage"] == 0.0
    stats = reindex(settings=hashing)  # the vector phase picks up the queue
    assert (stats.files, stats.embedded) == (0, 2)
    assert collect_status(hashing).vector_coverage == 1.0
    assert_consistent(hashing.db_path)


def test_the_vector_phase_embeds_the_newest_content_first(
    hashing: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    days = ["2025-01-05", "2026-06-20", "2024-11-30", "2026-06-21", "2025-08-14"]
    dated_notes(hashing, days)
    (hashing.roots[0] / "notes").mkdir()
    (hashing.roots[0] / "notes" / "undated.md").write_text("# Someday\nA heron, no date.\n")
    model = CountingEmbedder()
    monkeypatch.setattr(embedding, "BATCH", 2)
    reindex(settings=hashing, embedder=model)
    order = [text for batch in model.batches for text in batch]
    dates = [next((d for d in days if d in t), "undated") for t in order]
    assert dates == sorted(days, reverse=True) + ["undated"]
    assert [len(b) for b in model.batches] == [2, 2, 2]


def test_a_watcher_batch_runs_between_two_slices_of_a_long_embedding(
    hashing: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    dated_notes(hashing, [f"2026-05-{d:02}" for d in range(1, 9)])
    model = CountingEmbedder()
    monkeypatch.setattr(embedding, "BATCH", 2)
    monkeypatch.setattr(writer, "VECTOR_SLICE_SECONDS", 0.0)  # one batch per slice
    model.gate = threading.Event()
    job = Writer(hashing, embedder=model)
    try:
        scan = job.reconcile()
        assert model.waiting.wait(timeout=30)  # the scan's first vector batch is under way
        note = hashing.roots[0] / "notes" / "new.md"
        note.parent.mkdir()
        note.write_text("# Egret\nAn egret by the weir.\n")
        batch = job.index_paths([str(note)])
        # Runs on the writer thread the moment the batch ends, before the next job starts.
        left_then: list[int] = []
        counted = threading.Event()

        def count(_future: object) -> None:
            left_then.append(vectors_left(hashing))
            counted.set()

        batch.add_done_callback(count)
        model.gate.set()
        assert len(scan.result(timeout=30).stats.errors) == 0
        changes = batch.result(timeout=30).changes
        assert [Path(c.path).name for c in changes] == ["new.md"]
        assert counted.wait(timeout=30)
        # 9 chunks; the scan's first slice and the batch's own embedded 2 each: 5 were left
        # for the slices queued behind the batch.
        assert left_then == [5]
        while job.busy:
            job.submit(lambda: None).result(timeout=30)
    finally:
        job.close()
    assert collect_status(hashing).vector_coverage == 1.0
    assert_consistent(hashing.db_path)
    runs = [json.loads(line) for line in hashing.log_path.read_text().splitlines()]
    assert runs[0]["kind"] == "reconcile"
