"""One contract suite, run against every embedder: local ONNX, sentence-transformers (when
installed) and the openai embedder against a local OpenAI-compatible server (float and
base64 answers)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from engine.embedders import Embedder, create_embedder
from engine.embedders.openai_embedder import OpenAIEmbedder
from tests.conftest import make_settings
from tests.fake_openai import FakeOpenAI

UNICODE = [
    "Zürich café naïve",
    "東京で会いましょう",
    "مرحبا بالعالم",
    "🎉🚀 party time 🥳",
    "e\u0301\u0301 combining",
    "\u200b zero width",
]
SENTENCES = [
    "The standup moved to ten o'clock.",
    "Priya sent the quarterly report.",
    "We hiked the ridge trail on Saturday.",
    "Lunch with Marco at the noodle bar.",
]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    srv = FakeOpenAI().start()
    yield srv
    srv.stop()


def _settings(tmp: Path, **values: object):  # type: ignore[no-untyped-def]
    tmp.mkdir(parents=True, exist_ok=True)
    return make_settings(tmp, tmp / "memex.db", **values)


@pytest.fixture(
    scope="module", params=["local", "sentence-transformers", "openai-float", "openai-base64"]
)
def embedder(
    request: pytest.FixtureRequest, server: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory
) -> Embedder:
    tmp = tmp_path_factory.mktemp("embedder")
    if request.param == "local":
        return create_embedder(_settings(tmp))
    if request.param == "sentence-transformers":
        pytest.importorskip("sentence_transformers")
        return create_embedder(_settings(tmp, embedder__name="sentence-transformers"))
    emb = OpenAIEmbedder(
        "text-embedding-3-small", base_url=server.base_url, api_key="sk-test", dimensions=1536
    )
    emb._encoding = request.param.split("-")[1]
    return emb


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_protocol_and_dimension(embedder: Embedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.name and embedder.model_id
    vectors = embedder.embed(SENTENCES)
    assert vectors.shape == (len(SENTENCES), embedder.dim)
    assert vectors.dtype == np.float32
    assert embedder.embed_query("hello").shape == (embedder.dim,)


def test_vectors_are_unit_length(embedder: Embedder) -> None:
    norms = np.linalg.norm(embedder.embed(SENTENCES + UNICODE), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-4)


def test_deterministic_and_query_matches_document(embedder: Embedder) -> None:
    first, second = embedder.embed(SENTENCES), embedder.embed(SENTENCES)
    assert np.allclose(first, second, atol=1e-5)
    assert _cos(embedder.embed_query(SENTENCES[1]), first[1]) > 0.999


def test_batching_keeps_order(embedder: Embedder) -> None:
    texts = [f"message {i} on topic {i % 7}" for i in range(100)]  # > one batch everywhere
    texts[50] = "a much longer message " * 20  # uneven lengths exercise length-sorted batches
    vectors = embedder.embed(texts)
    assert vectors.shape == (100, embedder.dim)
    for i in (0, 49, 50, 99):
        assert _cos(vectors[i], embedder.embed([texts[i]])[0]) > 0.99


def test_callers_on_several_threads_get_their_own_vectors(tmp_path: Path) -> None:
    # The local session runs side by side without a lock (an indexer's batches and a
    # search's query at once): each caller still gets exactly what it gets alone.
    local = create_embedder(_settings(tmp_path))
    texts = [[f"thread {t} says {i} about topic {i % 5}" for i in range(40)] for t in range(3)]
    alone = [local.embed(batch) for batch in texts]
    with ThreadPoolExecutor(3) as pool:
        together = list(pool.map(local.embed, texts))
    for mine, theirs in zip(alone, together, strict=True):
        assert np.allclose(mine, theirs, atol=1e-6)


def test_short_texts_go_in_larger_batches_run_on_the_pool(tmp_path: Path) -> None:
    from engine.embedders.local import MAX_BATCH, LocalEmbedder

    local = create_embedder(_settings(tmp_path))
    assert isinstance(local, LocalEmbedder)
    lengths = [16] * 40 + [145] * 9 + [30] * 3  # messages, chat windows, in any order
    batches = local._batches(lengths)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert [len(b) for b in batches] == [MAX_BATCH, MAX_BATCH, 8, 4, 4, 4]  # by length
    texts = [f"short note {i}" for i in range(40)] + ["a long chat window " * 30] * 6
    vectors = local.embed(texts)
    for i in (0, 17, 39, 45):
        assert _cos(vectors[i], local.embed([texts[i]])[0]) > 0.9999
    assert local._pool is not None  # more than one batch: run side by side on the pool
    local.close()


def test_empty_inputs(embedder: Embedder) -> None:
    assert embedder.embed([]).shape[0] == 0
    vectors = embedder.embed(["", "   ", "word"])
    assert vectors.shape == (3, embedder.dim)
    assert np.isfinite(vectors).all()
    norms = np.linalg.norm(vectors, axis=1)
    assert all(abs(n) < 1e-6 or abs(n - 1) < 1e-4 for n in norms)  # zero or unit, documented
    assert abs(norms[2] - 1) < 1e-4


def test_very_long_text_is_truncated_not_rejected(embedder: Embedder) -> None:
    long_text = "Zürich 東京 memex " * 20_000  # ~400 kB of UTF-8
    vector = embedder.embed([long_text, "short"])
    assert np.isfinite(vector).all()
    assert np.allclose(np.linalg.norm(vector, axis=1), 1.0, atol=1e-4)


def test_unicode(embedder: Embedder) -> None:
    vectors = embedder.embed(UNICODE)
    assert np.isfinite(vectors).all()
    assert len({v.tobytes() for v in vectors}) == len(UNICODE)


def test_similar_texts_are_closer(embedder: Embedder) -> None:
    # Holds for the real models and, by shared words, for the hash-based fake server.
    a, b, c = embedder.embed(
        [
            "the standup meeting moved to ten",
            "standup meeting moved to ten thirty",
            "photosynthesis in tropical plants",
        ]
    )
    assert _cos(a, b) > _cos(a, c)


def test_sentence_transformers_missing_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.embedders import EmbedderError

    monkeypatch.setitem(__import__("sys").modules, "sentence_transformers", None)
    with pytest.raises(EmbedderError, match="sentence-transformers is not installed"):
        create_embedder(_settings(tmp_path, embedder__name="sentence-transformers"))
    with pytest.raises(EmbedderError, match="not a SentenceTransformer model folder"):
        create_embedder(
            _settings(
                tmp_path, embedder__name="sentence-transformers", embedder__model_path=str(tmp_path)
            )
        )
