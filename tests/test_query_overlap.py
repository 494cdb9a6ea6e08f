"""The query is embedded on a thread of its own while the keyword side runs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from engine.embedders import Embedder, create_embedder
from engine.index.runs import reindex
from engine.search import Searcher
from engine.search.retrieve.query_embedder import _Pending
from engine.settings import Settings


class Watched:
    """The hashing embedder, noting the thread each query is embedded on."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.threads = inner, []  # type: ignore[var-annotated]
        self.name, self.model_id, self.dim = inner.name, inner.model_id, inner.dim

    def embed(self, texts: Any) -> Any:
        return self.inner.embed(texts)

    def embed_query(self, text: str) -> Any:
        self.threads.append(threading.current_thread())
        return self.inner.embed_query(text)


def test_a_hybrid_search_embeds_off_the_calling_thread(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    notes = settings.roots[0] / "notes"
    notes.mkdir()
    (notes / "ferry.md").write_text("# Ferry\nThe night ferry to Moskenes, with the bikes.\n")
    reindex(settings=settings)
    watched = Watched(create_embedder(settings))
    searcher = Searcher(settings, embedder=watched)  # type: ignore[arg-type]
    try:
        hybrid = searcher.search("night ferry bikes")
        assert hybrid.mode == "hybrid" and hybrid.results
        assert watched.threads[-1] is not threading.current_thread()
        vector = searcher.search("night ferry", mode="vector")
        assert vector.mode == "vector" and vector.results
        assert len(watched.threads) == 2
        assert searcher.search("night ferry", mode="bm25").mode == "bm25"
        assert len(watched.threads) == 2  # keyword only: nothing embedded
    finally:
        searcher.close()


def test_a_pending_call_hands_back_its_value_or_its_error() -> None:
    assert np.array_equal(_Pending(lambda t: np.ones(2), "x", True).result(), np.ones(2))

    def broken(_: str) -> Any:
        raise KeyError("no such model")

    for background in (True, False):
        with pytest.raises(KeyError):
            _Pending(broken, "x", background).result()
