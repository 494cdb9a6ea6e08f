"""The Engine owns its connections, vector cache, people and models; the module functions
go through one default instance."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import apsw
import pytest

import engine
from engine.core import Engine, EngineClosed
from engine.search import NoIndexError
from engine.settings import Settings


def small_layer(settings: Settings) -> None:
    root = settings.roots[0]
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "ferry.md").write_text("# Ferry\nThe ferry to the island leaves at nine.\n")
    (root / "profile").mkdir()
    (root / "profile" / "relationships.json").write_text(
        json.dumps(
            {"people": [{"name": "Dana Okafor", "aliases": ["Dana"], "relationship": "friend"}]}
        )
    )


@pytest.fixture
def small(settings_factory: Callable[..., Settings]) -> Settings:
    settings = settings_factory(embedder__name="hashing")
    small_layer(settings)
    return settings


def test_readers_share_one_model_and_one_cache_and_close_with_the_engine(small: Settings) -> None:
    eng = Engine(small)
    stats = eng.reindex()
    assert stats.chunks == 1
    mine = eng.searcher()
    assert eng.searcher() is mine
    with ThreadPoolExecutor(1) as pool:
        theirs = pool.submit(eng.searcher).result()
        hits = pool.submit(eng.search, "ferry island").result().results
    assert hits and hits[0].title.casefold() == "ferry"  # "# Ferry" in ferry.md: said once
    assert theirs is not mine and theirs.vector_cache is mine.vector_cache
    assert eng.search("ferry island", mode="vector").mode == "vector"
    assert len(eng.embedders) == 1  # the writer's run and both readers: one model
    eng.close()
    eng.close()  # idempotent
    with pytest.raises(apsw.ConnectionClosedError):
        mine.conn.execute("SELECT 1")
    with pytest.raises(EngineClosed):
        eng.search("ferry")
    assert len(eng.embedders) == 0


def test_refresh_rereads_the_people_and_gives_fresh_searchers(small: Settings) -> None:
    with Engine(small) as eng:
        eng.reindex()
        before = eng.searcher()
        assert [p.name for p in eng.people()] == ["Dana Okafor"]
        people = small.roots[0] / "profile" / "relationships.json"
        people.write_text(json.dumps({"people": [{"name": "Rajesh Kumar"}]}))
        assert [p.name for p in eng.people()] == ["Dana Okafor"]  # cached until refresh
        eng.refresh()
        assert [p.name for p in eng.people()] == ["Rajesh Kumar"]
        after = eng.searcher()
        assert after is not before and after.matcher.find("ask Rajesh Kumar") is not None
        with pytest.raises(apsw.ConnectionClosedError):
            before.conn.execute("SELECT 1")


def test_no_index_yet_is_a_clear_error(settings_factory: Callable[..., Settings]) -> None:
    with (
        Engine(settings_factory(embedder__name="hashing")) as eng,
        pytest.raises(NoIndexError, match="memex reindex"),
    ):
        eng.search("anything")


def test_module_functions_keep_one_default_engine(
    small: Settings, settings_factory: Callable[..., Settings], tmp_path: Path
) -> None:
    try:
        engine.reindex(settings=small)
        hits = engine.search("ferry", settings=small)
        assert hits and hits[0].title.casefold() == "ferry"  # "# Ferry" in ferry.md: said once
        first = engine._default.get(small)
        assert engine._default.get(small) is first
        other = settings_factory(tmp_path / "other", embedder__name="hashing")
        small_layer(other)
        engine.reindex(settings=other)
        assert engine._default.get(other) is not first and first.closed
    finally:
        engine.close()


def test_a_successor_keeps_the_model_and_the_vector_matrix(small: Settings) -> None:
    old = Engine(small)
    old.reindex()
    old.search("ferry", mode="vector")
    cache, models = old.searcher().vector_cache, old.embedders
    assert cache is not None and cache.loads == 1 and len(models) == 1
    new = old.successor(small.with_values(search__limit=3))
    old.close()
    try:
        response = new.search("ferry island", mode="vector")
        assert response.results and new.searcher().vector_cache is cache
        assert cache.loads == 1 and new.embedders is models and len(models) == 1
    finally:
        new.close()


def test_engine_search_stays_the_function_once_the_subpackage_loads() -> None:
    """A plain module, no class swap: the subpackage loads first, the function is bound
    after it, and later imports of its modules set attributes on the subpackage only."""
    script = (
        "import sys, types, engine; "
        "assert type(sys.modules['engine']) is types.ModuleType; "
        "assert 'numpy' not in sys.modules, 'numpy loaded with engine'; "
        "import engine.search.pipeline, engine.core; "
        "from engine import search; from engine.search import Searcher; "
        "assert callable(search) and search is engine.search and search.__module__ == 'engine'; "
        "assert sys.modules['engine.search'].Searcher is Searcher; "
        "print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
