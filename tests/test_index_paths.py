"""One indexing path: `reindex(paths)`, the writer and `reconcile` agree on what a change did."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.index.indexer import Action, Indexer
from engine.index.routes import classify
from engine.index.runs import open_writer, reindex
from engine.index.writer import Writer
from engine.settings import Settings
from engine.store import db
from tests.conftest import assert_consistent


def two_notes(settings: Settings) -> Path:
    folder = settings.roots[0] / "notes" / "trip"
    folder.mkdir(parents=True)
    (folder / "a.md").write_text("# Ferry\nThe ferry to the island leaves at nine.\n")
    (folder / "b.md").write_text("# Hostel\nThe hostel by the harbour has bunk beds.\n")
    (settings.roots[0] / "notes" / "keep.md").write_text("# Keep\nA note outside the folder.\n")
    return folder


def indexed_files(settings: Settings) -> set[str]:
    conn = db.connect(settings.db_path, create=False)
    try:
        state = {r[0] for r in conn.execute("SELECT source_file FROM index_state")}
        chunks = {r[0] for r in conn.execute("SELECT DISTINCT source_file FROM chunks")}
    finally:
        conn.close()
    assert chunks <= state
    return {Path(p).name for p in state}


@pytest.fixture
def hashing(settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(embedder__name="hashing")


def test_reindexing_a_deleted_folder_removes_every_file_in_it(hashing: Settings) -> None:
    folder = two_notes(hashing)
    reindex(settings=hashing)
    assert indexed_files(hashing) == {"a.md", "b.md", "keep.md"}
    shutil.rmtree(folder)
    stats = reindex([folder], settings=hashing)
    assert stats.deleted_files == 2 and stats.deleted_chunks == 2
    assert indexed_files(hashing) == {"keep.md"}
    assert_consistent(hashing.db_path)


def test_the_writer_and_reindex_agree_on_a_deleted_folder(hashing: Settings) -> None:
    folder = two_notes(hashing)
    writer = Writer(hashing)
    try:
        writer.reconcile().result(timeout=60)
        shutil.rmtree(folder)
        batch = writer.index_paths([str(folder)]).result(timeout=60)
    finally:
        writer.close()
    assert sorted((Path(c.path).name, c.action) for c in batch.changes) == [
        ("a.md", Action.DELETED),
        ("b.md", Action.DELETED),
    ]
    assert batch.stats.deleted_files == 2
    assert indexed_files(hashing) == {"keep.md"}


def test_a_folder_path_indexes_new_files_and_drops_vanished_ones(hashing: Settings) -> None:
    folder = two_notes(hashing)
    reindex(settings=hashing)
    (folder / "a.md").unlink()
    (folder / "c.md").write_text("# Bikes\nRent bikes at the pier.\n")
    stats = reindex([folder], settings=hashing)
    assert (stats.files, stats.deleted_files) == (1, 1)
    assert indexed_files(hashing) == {"b.md", "c.md", "keep.md"}


def test_a_path_never_indexed_deletes_nothing(hashing: Settings) -> None:
    two_notes(hashing)
    reindex(settings=hashing)
    stats = reindex([hashing.roots[0] / "notes" / "never.md"], settings=hashing)
    assert (stats.deleted_files, stats.deleted_chunks) == (0, 0)
    assert indexed_files(hashing) == {"a.md", "b.md", "keep.md"}


def test_index_file_returns_what_it_did(hashing: Settings) -> None:
    folder = two_notes(hashing)
    note = folder / "a.md"
    conn = open_writer(hashing)
    try:
        indexer = Indexer(hashing, conn, None)
        found = classify(note, hashing)
        assert found is not None
        first = indexer.index_file(found)
        assert (first.action, first.new_chunks, first.unchanged_chunks) == (Action.INDEXED, 1, 0)
        assert indexer.index_file(found).action is Action.UNCHANGED
        note.write_bytes(b"\x00\x01\x02 not text")  # NUL bytes and no BOM: binary
        broken = indexer.index_file(classify(note, hashing) or found, force=True)
        assert broken.action is Action.ERROR and broken.message
        gone = indexer.delete_file(str(found.path))
        assert (gone.action, gone.deleted_chunks) == (Action.DELETED, 1)
    finally:
        conn.close()
