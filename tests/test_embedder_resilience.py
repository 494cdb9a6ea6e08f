"""Surviving without an embedder: chunks kept without vectors and embedded later; queries fall
back to BM25 with a warning. Real HTTP against a scripted OpenAI-compatible server."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.cli import run
from engine.index import embedding
from engine.index.runs import reindex
from engine.search import Searcher
from engine.search.outcome import VectorMiss
from engine.settings import Settings
from engine.store import db
from tests.conftest import assert_consistent
from tests.fake_openai import FakeOpenAI

SECRET = "sk-test-secret-never-stored"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    srv = FakeOpenAI().start()
    srv.retry_after = "0.01"  # 503 answers ask for a 10 ms wait: retries stay fast
    yield srv
    srv.stop()


def write_notes(root: Path, count: int, start: int = 0) -> None:
    (root / "notes").mkdir(parents=True, exist_ok=True)
    for i in range(start, start + count):
        (root / "notes" / f"note{i:02}.md").write_text(
            f"# Trip {i}\nWe hiked ridge number {i} with Priya.\n"
            f"# Food {i}\nDumplings at stall {i} in the night market.\n"
        )


def openai_settings(
    factory: Callable[..., Settings], server: FakeOpenAI, **extra: object
) -> Settings:
    values: dict[str, object] = {"embedder__max_retries": 1, **extra}
    return factory(embedder__name="openai", embedder__base_url=server.base_url, **values)


def vectorless(settings: Settings) -> int:
    conn = db.connect(settings.db_path, create=False)
    try:
        return int(
            conn.execute("SELECT count(*) FROM chunks WHERE embedding IS NULL").fetchone()[0]
        )
    finally:
        conn.close()


def test_index_time_failure_keeps_the_queue(
    settings_factory: Callable[..., Settings], server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    settings = openai_settings(settings_factory, server)
    write_notes(settings.roots[0], 6)
    # Keyword first: all 12 chunks are stored, then embedded in batches (of 4 here); one
    # batch goes through, then the server goes down.
    monkeypatch.setattr(embedding, "BATCH", 4)
    server.fail_after = 1
    first = reindex(settings=settings)
    assert first.chunks == 12 and first.embedded == 4
    assert any(path == "<embedder>" for path, _ in first.errors)
    assert vectorless(settings) == 8
    counts = assert_consistent(settings.db_path)
    assert (counts.chunks, counts.vectors) == (12, 4)

    server.fail_after = None
    sent_before = sum(r["n"] for r in server.requests if r.get("ok"))
    second = reindex(settings=settings)
    assert second.files == 0 and second.embedded == 8  # exactly the queue, nothing else
    assert sum(r["n"] for r in server.requests if r.get("ok")) - sent_before == 8
    assert vectorless(settings) == 0
    assert assert_consistent(settings.db_path).vectors == 12
    # A server on this machine gets a placeholder: the key never leaves for it.
    assert all(a == "Bearer local-server-needs-no-key" for a in server.auth)
    for path in settings.db_path.parent.rglob("*"):  # index, WAL, run log: never the key
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_embedder_down_from_the_start(
    settings_factory: Callable[..., Settings], server: FakeOpenAI
) -> None:
    settings = openai_settings(settings_factory, server)
    write_notes(settings.roots[0], 3)
    server.down = True
    stats = reindex(settings=settings)
    assert stats.chunks == 6 and stats.embedded == 0
    assert assert_consistent(settings.db_path).vectors == 0
    server.down = False
    assert reindex(settings=settings).embedded == 6
    assert assert_consistent(settings.db_path).vectors == 6


def _config(tmp: Path, settings: Settings, base_url: str) -> Path:
    config = tmp / "config.toml"
    config.write_text(
        f"roots = [{json.dumps(str(settings.roots[0]))}]\n"
        f"db = {json.dumps(str(settings.db_path))}\n"
        f'[embedder]\nname = "openai"\nbase_url = "{base_url}"\nmax_retries = 0\n'
        "timeout_seconds = 2.0\n"
    )
    return config


def test_query_falls_back_to_bm25_against_a_dead_server(
    settings_factory: Callable[..., Settings], server: FakeOpenAI, tmp_path: Path
) -> None:
    settings = openai_settings(settings_factory, server)
    write_notes(settings.roots[0], 4)
    reindex(settings=settings)
    base_url = server.base_url
    server.stop()  # a dead server: connection refused
    config = _config(tmp_path, settings, base_url)

    out, err = io.StringIO(), io.StringIO()
    assert (
        run(["--config", str(config), "--search", "dumplings night market", "--json"], out, err)
        == 0
    )
    payload = json.loads(out.getvalue())
    assert payload["mode"] == "bm25"
    assert (
        payload["outcome"]["fell_back"] and payload["outcome"]["vector_miss"] == "embedder_failed"
    )
    assert payload["results"] and "Dumplings" in payload["results"][0]["content"]
    assert any("keyword results only" in w for w in payload["warnings"])

    out = io.StringIO()
    assert run(["--config", str(config), "--search", "dumplings"], out, err) == 0
    text = out.getvalue()
    assert text.startswith("warning: embedder failed")
    assert text.rstrip().endswith("bm25 (fell back: embedder failed)")  # the outcome's field


def test_searcher_rests_a_failed_embedder(
    settings_factory: Callable[..., Settings], server: FakeOpenAI
) -> None:
    settings = openai_settings(settings_factory, server, embedder__max_retries=0)
    write_notes(settings.roots[0], 2)
    reindex(settings=settings)
    searcher = Searcher(settings)
    try:
        assert searcher.search("ridge").mode == "hybrid"
        server.down = True
        before = len(server.requests)
        first = searcher.search("ridge")
        second = searcher.search("ridge hiked")
        assert (first.mode, second.mode) == ("bm25", "bm25")
        assert "failed recently" in second.warnings[0]
        misses = (first.outcome.vector_miss, second.outcome.vector_miss)
        assert misses == (VectorMiss.EMBEDDER_FAILED, VectorMiss.EMBEDDER_RESTING)
        assert len(server.requests) == before + 1  # no second wait on a dead server
    finally:
        searcher.close()
