"""The Compute an engine owns: BLAS held to one thread, the scan's helper thread, closed."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from types import TracebackType

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from engine.core import Engine
from engine.embedders import close_embedder
from engine.search.retrieve import quantized as qz
from engine.search.retrieve.blas import OneBlasThread
from engine.search.retrieve.compute import Compute
from engine.settings import Settings
from tests.test_engine import small_layer


@pytest.fixture
def small(settings_factory: Callable[..., Settings]) -> Settings:
    settings = settings_factory(embedder__name="hashing")
    small_layer(settings)
    return settings


def scan_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("memex-scan")]


def blas_threads() -> list[int]:
    return [int(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"]


class Recording:
    """A limiter that notes the BLAS thread counts each time it is entered."""

    def __init__(self, inner: OneBlasThread) -> None:
        self.inner, self.seen = inner, list[list[int]]()

    def __enter__(self) -> Recording:
        self.inner.__enter__()
        self.seen.append(blas_threads())
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.inner.__exit__(kind, error, tb)


def test_the_helper_is_made_once_and_stopped_by_close() -> None:
    compute = Compute()
    helper = compute.helper()
    assert helper is not None and compute.helper() is helper
    assert helper.submit(lambda: 7).result() == 7
    assert scan_threads()
    compute.close()
    assert compute.closed and compute.helper() is None
    assert not scan_threads()
    compute.close()  # idempotent


def test_a_large_scan_on_a_closed_helper_runs_on_one_thread_with_the_same_distances(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((3000, 64)).astype(np.float32)
    query = rng.standard_normal(64).astype(np.float32)
    codes = qz.BinaryCodes.of(matrix)
    whole = codes.distances(query)
    compute = Compute()
    helper = compute.helper()
    compute.close()
    monkeypatch.setattr(qz, "SCAN_BLOCK", 512)
    monkeypatch.setattr(qz, "SPLIT_PARTS", 1024)
    assert np.array_equal(codes.distances(query, helper), whole)


def test_the_engine_owns_its_compute_and_stops_it_on_close(small: Settings) -> None:
    engine = Engine(small)
    engine.reindex()
    compute = engine.compute()
    assert engine.compute() is compute
    searcher = engine.searcher()
    assert searcher.compute is compute
    assert searcher.vector_cache is not None and searcher.vector_cache.compute is compute
    assert engine.search("ferry", mode="vector").results
    assert compute.helper() is not None
    engine.close()
    assert compute.closed and not scan_threads()


def test_a_successor_takes_over_the_compute_its_vector_cache_scans_on(small: Settings) -> None:
    old = Engine(small)
    old.reindex()
    old.search("ferry", mode="vector")
    compute = old.compute()
    new = old.successor(small.with_values(search__limit=3))
    old.close()
    try:
        assert not compute.closed and new.compute() is compute
        assert new.search("ferry", mode="vector").results
    finally:
        new.close()
    assert compute.closed


def test_a_search_runs_with_blas_on_one_thread_and_restores_it(small: Settings) -> None:
    before = blas_threads()
    with Engine(small) as engine:
        engine.reindex()
        compute = engine.compute()
        recording = Recording(compute.blas)
        compute.blas = recording  # type: ignore[assignment]
        assert engine.search("ferry").results
        entered = len(recording.seen)
        assert engine.search("ferry", mode="bm25").results
        assert len(recording.seen) == entered  # no vector side: no products, no limit
    assert recording.seen and all(seen == [1] * len(before) for seen in recording.seen)
    assert blas_threads() == before


def test_two_engines_hold_two_computes_and_a_searcher_alone_its_own(small: Settings) -> None:
    with Engine(small) as one, Engine(small) as two:
        one.reindex()
        assert one.compute() is not two.compute()
        from engine.search import Searcher

        alone = Searcher(small, vector_cache=True)
        assert alone.compute is not one.compute()
        assert alone.vector_cache is not None and alone.vector_cache.compute is alone.compute
        alone.search("ferry")
        alone.close()
        assert alone.compute.closed and not one.compute().closed


def embed_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("memex-embed")]


def test_the_local_models_run_threads_stop_when_its_engine_closes(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="local")
    engine = Engine(settings)
    model = engine.embedders.get(settings)
    texts = [f"message {i}" for i in range(40)]  # more than one batch: the pool runs them
    before = model.embed(texts)
    assert len(embed_threads()) >= 1 or (os.cpu_count() or 1) == 1
    engine.close()
    assert not embed_threads() and len(engine.embedders) == 0
    again = model.embed(texts)
    assert np.allclose(again, before)  # a closed model embeds again on a fresh pool
    close_embedder(model)
    assert not embed_threads()
