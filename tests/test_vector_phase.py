"""The vector phase works on a `VectorTarget`, not on the indexer: it is run here with no
Indexer at all, on a real index whose chunks were stored without vectors."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import apsw
import pytest

import engine.index.embedding as embedding
from engine.embedders import EmbedderError, Vectors
from engine.embedders.hashing import HashingEmbedder
from engine.index.counts import RunCounts
from engine.index.embedding import VectorPhase, VectorTables, VectorTarget, pending_vectors
from engine.index.indexer import Indexer
from engine.index.runs import index_paths, open_writer
from engine.settings import Settings
from engine.store import db, vectors
from tests.conftest import assert_consistent


class Failing(HashingEmbedder):
    """A model that is down: every batch fails."""

    def embed(self, texts: Sequence[str]) -> Vectors:
        raise EmbedderError("the server is down")


class Told:
    """What the phase told its run: progress and errors."""

    def __init__(self) -> None:
        self.progress: list[tuple[int, int]] = []
        self.errors: list[tuple[str, str]] = []

    def on_embedding(self, done: int, total: int) -> None:
        self.progress.append((done, total))

    def on_error(self, path: str, message: str) -> None:
        self.errors.append((path, message))


@pytest.fixture
def stored(settings_factory: Callable[..., Settings]) -> Iterator[apsw.Connection]:
    """An index of three notes whose chunks have no vectors yet, a vec0 table ready."""
    settings = settings_factory(embedder__name="hashing")
    notes = settings.roots[0] / "notes"
    notes.mkdir()
    for name in ("a", "b", "c"):
        (notes / f"{name}.md").write_text(f"# {name}\n\nThe {name} note, about {name}.\n")
    conn = open_writer(settings)
    index_paths(Indexer(settings, conn, None), [notes])  # keyword only: no vectors
    vectors.ensure_vec_table(conn, HashingEmbedder())
    yield conn
    conn.close()


def target(conn: apsw.Connection, embedder: HashingEmbedder, told: Told) -> VectorTarget:
    return VectorTarget(
        conn=conn,
        embedder=embedder,
        tables=VectorTables(db.active_vec_table(conn)),
        counts=RunCounts(),
        on_embedding=told.on_embedding,
        on_error=told.on_error,
        reason=lambda seq: "new",
    )


def test_the_phase_embeds_every_stored_chunk_through_its_target(stored: apsw.Connection) -> None:
    told = Told()
    aim = target(stored, HashingEmbedder(), told)
    assert pending_vectors(stored) == 3
    phase = VectorPhase(aim)
    assert phase.run() is True and not phase.failed
    assert pending_vectors(stored) == 0
    assert aim.counts.embedded == 3 and aim.counts.reasons == {"embedded.new": 3}
    assert told.progress[0] == (0, 3) and told.progress[-1] == (3, 3)
    assert not told.errors
    assert assert_consistent(Path(stored.filename)).vectors == 3


def test_a_failing_embedder_is_reported_and_left_for_the_caller(stored: apsw.Connection) -> None:
    told = Told()
    phase = VectorPhase(target(stored, Failing(), told))
    assert phase.run() is False
    assert phase.failed and phase.embedder is None
    assert told.errors == [
        ("<embedder>", "embedding failed, stored without vectors: " + "the server is down")
    ]
    assert pending_vectors(stored) == 3  # nothing lost: the next run embeds them


def test_the_indexer_takes_what_the_phase_changed(
    stored: apsw.Connection, settings_factory: Callable[..., Settings]
) -> None:
    indexer = Indexer(settings_factory(embedder__name="hashing"), stored, Failing())
    assert indexer.embed_missing() is False
    assert indexer.embedder is None  # the run goes on keyword only
    assert indexer.run.errors and indexer.run.errors[0][0] == "<embedder>"


def test_the_vector_phase_does_not_import_the_indexer() -> None:
    tree = ast.parse(Path(embedding.__file__).read_text(encoding="utf-8"))
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module is not None
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert "engine.index.indexer" not in imported
    assert not any(name.startswith("engine.index.runs") for name in imported)
