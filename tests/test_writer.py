"""The one writer: readers in other threads never block and never see half a file."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import filelock
import pytest

from engine.embedders import Vectors
from engine.embedders.hashing import HashingEmbedder
from engine.index.maintenance import MaintenanceBusy, maintain
from engine.index.runs import writer_lock
from engine.index.writer import Writer
from engine.search import Searcher
from engine.settings import Settings
from engine.store import db
from tests.conftest import assert_consistent

SECTIONS = 12


def write_generation(path: Path, generation: int) -> None:
    """A note whose every chunk carries the generation marker `genN`."""
    body = [f"# Generation file\n\nintro gen{generation} walrus\n"]
    body += [
        f"## Part {i}\n\nsection {i} of gen{generation} walrus tusk {i * 7}\n"
        for i in range(SECTIONS)
    ]
    path.write_text("\n".join(body))


def generations(texts: list[str]) -> set[str]:
    return {m for text in texts for m in re.findall(r"\bgen\d+\b", text)}


def test_searches_in_threads_see_one_generation_while_the_writer_indexes(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    note = settings.roots[0] / "notes" / "gen.md"
    note.parent.mkdir()
    write_generation(note, 0)
    writer = Writer(settings)
    writer.reconcile().result(timeout=60)
    stop = threading.Event()
    failures: list[str] = []
    seen = {"searches": 0, "snapshots": 0}
    lock = threading.Lock()

    def search_loop(mode: str) -> None:
        searcher = Searcher(settings)
        try:
            while not stop.is_set():
                response = searcher.search("walrus tusk", limit=40, mode=mode)
                gens = generations([r.content for r in response.results])
                if len(gens) > 1:
                    failures.append(f"{mode} search mixed {sorted(gens)}")
                with lock:
                    seen["searches"] += 1
        except Exception as exc:  # any error in a reader fails the test
            failures.append(f"{mode}: {type(exc).__name__}: {exc}")
        finally:
            searcher.close()

    def snapshot_loop() -> None:
        # One statement = one snapshot: the file is either wholly old or wholly new.
        conn = db.connect(settings.db_path, create=False)
        try:
            while not stop.is_set():
                rows = conn.execute(
                    "SELECT content FROM chunks WHERE source_file = ?", (str(note),)
                ).fetchall()
                gens = generations([r[0] for r in rows])
                if len(gens) != 1 or len(rows) != SECTIONS + 1:
                    failures.append(f"half a file: {len(rows)} chunks of {sorted(gens)}")
                with lock:
                    seen["snapshots"] += 1
        finally:
            conn.close()

    readers = [threading.Thread(target=search_loop, args=(m,)) for m in ("hybrid", "bm25")]
    readers.append(threading.Thread(target=snapshot_loop))
    for thread in readers:
        thread.start()
    try:
        for generation in range(1, 25):
            write_generation(note, generation)
            batch = writer.index_paths([str(note)]).result(timeout=60)
            assert [c.action for c in batch.changes] == ["indexed"]
    finally:
        stop.set()
        for thread in readers:
            thread.join(timeout=60)
        writer.close()
    assert not failures, failures[:5]
    assert seen["searches"] > 0 and seen["snapshots"] > 0
    assert_consistent(settings.db_path)


class GatedEmbedder(HashingEmbedder):
    """Blocks inside `embed` until released: the writer is then mid-job, holding the lock."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.entered.set()
        assert self.release.wait(timeout=30)
        return super().embed(texts)


def test_the_writer_holds_the_lock_while_it_writes(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    note = settings.roots[0] / "notes" / "a.md"
    note.parent.mkdir()
    note.write_text("# A\n\nplum\n")
    embedder = GatedEmbedder()
    writer = Writer(settings, embedder=embedder)
    try:
        job = writer.index_paths([str(note)])
        assert embedder.entered.wait(timeout=30)
        with pytest.raises(MaintenanceBusy):
            maintain(settings)
        other = writer_lock(settings)
        with pytest.raises(filelock.Timeout):
            other.acquire(timeout=0)
        embedder.release.set()
        assert job.result(timeout=30).stats.files == 1
        other.acquire(timeout=0)  # free again once the job is done
        other.release()
    finally:
        embedder.release.set()
        writer.close()
