"""Switching embedders: local (384-d) → a 1536-d OpenAI-compatible model → local again.

The new vectors are built aside while search keeps the old table and the old model; a crash
or an outage in the middle leaves the old index usable, and the next reindex resumes.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest

from engine.cli import run
from engine.embedders import Embedder, Vectors, create_embedder
from engine.index.runs import reindex
from engine.search import Searcher
from engine.settings import Settings
from engine.store import db, vectors
from tests.conftest import assert_consistent
from tests.fake_openai import FakeOpenAI
from tests.test_embedder_resilience import write_notes

QUERY = "dumplings at the night market"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    srv = FakeOpenAI().start()
    srv.retry_after = "0.01"
    yield srv
    srv.stop()


@pytest.fixture
def local_index(settings_factory: Callable[..., Settings]) -> Settings:
    """A small layer (80 chunks, five build batches) indexed with the real local model."""
    settings = settings_factory()
    write_notes(settings.roots[0], 40)
    assert reindex(settings=settings).embedded == 80
    return settings


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "BUILD_BATCH", 16)  # many batches, so a build can stop midway


def meta(settings: Settings) -> dict[str, Any]:
    conn = db.connect(settings.db_path, create=False)
    try:
        progress = vectors.build_progress(conn)
        return {
            "embedder": db.get_meta(conn, "embedder"),
            "dimension": int(db.get_meta(conn, "dimension") or 0),
            "table": db.active_vec_table(conn),
            "progress": progress,
            "tables": [
                r[0]
                for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE name LIKE 'chunks_vec_%' AND sql "
                    "LIKE 'CREATE VIRTUAL%'"
                )
            ],
        }
    finally:
        conn.close()


def search(settings: Settings, mode: str = "hybrid") -> tuple[list[str], str, list[str]]:
    searcher = Searcher(settings)
    try:
        response = searcher.search(QUERY, mode=mode)
    finally:
        searcher.close()
    return [r.id for r in response.results], response.mode, response.warnings


def test_switch_to_1536_and_back(local_index: Settings, server: FakeOpenAI) -> None:
    local = local_index
    remote = local.with_values(
        embedder__name="openai", embedder__base_url=server.base_url, embedder__max_retries=0
    )
    baseline, mode, warnings = search(local)
    assert mode == "hybrid" and not warnings and baseline
    total = assert_consistent(local.db_path).chunks

    # An outage after two batches: the old index is untouched and search still uses it.
    server.fail_after = 2
    stats = reindex(settings=remote)
    assert any(path == "<embedder>" for path, _ in stats.errors)
    state = meta(remote)
    assert state["dimension"] == 384 and state["embedder"].startswith("local|")
    assert state["progress"].done == 32 and state["progress"].total == total
    assert assert_consistent(remote.db_path).vectors == total
    asked = len(server.requests)
    assert search(remote) == (baseline, "hybrid", [])  # the old model embeds the query
    assert len(server.requests) == asked
    out = io.StringIO()
    assert run(["status", "--db", str(remote.db_path), "--json"], out) == 0
    assert json.loads(out.getvalue())["reembed"]["done"] == 32
    out = io.StringIO()
    run(["status", "--db", str(remote.db_path)], out)
    assert f"re-embed   to openai|text-embedding-3-small|1536|p300: 32/{total}" in out.getvalue()

    # The next reindex resumes: only the rest is embedded, then the swap.
    server.fail_after = None
    stats = reindex(settings=remote)
    assert stats.embedded == total - 32
    state = meta(remote)
    assert state["dimension"] == 1536 and state["progress"] is None
    assert state["tables"] == [state["table"]]  # the old table is gone
    assert assert_consistent(remote.db_path).vectors == total
    ids, mode, warnings = search(remote, mode="vector")
    assert mode == "vector" and not warnings and ids
    assert server.requests[-1]["body"]["input"] == [QUERY]

    # And back to the local model: same vectors, same results as before.
    stats = reindex(settings=local)
    assert stats.embedded == total
    state = meta(local)
    assert state["dimension"] == 384 and state["tables"] == [state["table"]]
    assert assert_consistent(local.db_path).embedded == total
    assert search(local) == (baseline, "hybrid", [])


def test_turning_input_type_on_re_embeds(local_index: Settings, server: FakeOpenAI) -> None:
    plain = local_index.with_values(
        embedder__name="openai", embedder__base_url=server.base_url, embedder__model="e5"
    )
    total = reindex(settings=plain).embedded
    typed = plain.with_values(embedder__input_type=True)
    ids, mode, warnings = search(typed, mode="vector")  # until the swap: the index's model
    assert ids and mode == "vector" and not warnings
    assert "input_type" not in server.requests[-1]["body"]
    assert reindex(settings=typed).embedded == total  # other vectors: every chunk again
    assert meta(typed)["embedder"].startswith("openai|e5 (query/passage)|768|")
    ids, mode, warnings = search(typed, mode="vector")
    assert ids and mode == "vector" and not warnings
    assert server.requests[-1]["body"]["input_type"] == "query"
    assert {r["body"].get("input_type") for r in server.requests[:-1]} >= {None, "passage"}


class CrashingEmbedder:
    """The local model, but the process 'dies' (an uncaught error) after `batches` calls."""

    def __init__(self, inner: Embedder, batches: int) -> None:
        self.inner, self.left = inner, batches
        self.name, self.model_id = "crashy", "crashy-384"
        self.calls = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        if self.left == 0:
            raise KeyboardInterrupt("killed mid-switch")
        self.left -= 1
        return self.inner.embed(texts)

    def embed_query(self, text: str) -> Vectors:
        return self.inner.embed_query(text)


def test_crash_mid_switch_leaves_old_index_usable(local_index: Settings) -> None:
    baseline, _, _ = search(local_index)
    total = assert_consistent(local_index.db_path).chunks
    crashy = CrashingEmbedder(create_embedder(local_index), batches=3)
    with pytest.raises(KeyboardInterrupt):
        reindex(settings=local_index, embedder=crashy)
    assert meta(local_index)["progress"].done == 48
    assert assert_consistent(local_index.db_path).vectors == total
    assert search(local_index) == (baseline, "hybrid", [])

    crashy.left = 10_000
    stats = reindex(settings=local_index, embedder=crashy)
    assert stats.embedded == total - 48  # resumed, nothing embedded twice
    state = meta(local_index)
    assert state["embedder"] == "crashy|crashy-384|384|p300" and state["progress"] is None
    conn = db.connect(local_index.db_path, create=False)
    stored = np.frombuffer(
        conn.execute("SELECT embedding FROM chunks ORDER BY seq LIMIT 1").fetchone()[0],
        dtype=np.float32,
    )
    conn.close()
    assert stored.shape == (384,) and abs(float(np.linalg.norm(stored)) - 1) < 1e-4


def test_switching_back_before_the_swap_drops_the_build(
    local_index: Settings, server: FakeOpenAI
) -> None:
    remote = local_index.with_values(
        embedder__name="openai", embedder__base_url=server.base_url, embedder__max_retries=0
    )
    server.fail_after = 1
    reindex(settings=remote)
    assert meta(remote)["progress"] is not None
    stats = reindex(settings=local_index)  # the user changed their mind
    state = meta(local_index)
    assert stats.embedded == 0 and state["progress"] is None and len(state["tables"]) == 1
    assert assert_consistent(local_index.db_path).vectors == 80
