"""The openai embedder against a real local HTTP server: limits, retries, give-up, keys."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from engine.embedders import EmbedderError, apikeys
from engine.embedders.openai_embedder import Limits, OpenAIEmbedder, plan_batches, truncate_utf8
from tests.fake_openai import FakeOpenAI
from tests.memory_keyring import installed


@pytest.fixture
def memory_keyring() -> Iterator[dict[str, str]]:
    with installed() as store:
        yield store


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    srv = FakeOpenAI().start()
    yield srv
    srv.stop()


def make(server: FakeOpenAI, model: str = "text-embedding-3-small", **kw: Any) -> OpenAIEmbedder:
    sleeps: list[float] = kw.pop("sleeps", [])
    kw.setdefault("api_key", "sk-test")
    return OpenAIEmbedder(model, base_url=server.base_url, sleep=sleeps.append, **kw)


# -- limits -------------------------------------------------------------------------------------


def test_truncation_keeps_whole_characters() -> None:
    text = "é" * 10  # 2 bytes each
    assert truncate_utf8(text, 5) == "éé"
    assert truncate_utf8("abc", 10) == "abc"


def test_batches_respect_input_count_and_token_budget() -> None:
    limits = Limits(max_inputs=3, max_request_tokens=10)
    assert [list(r) for r in plan_batches([4, 4, 4, 1, 1, 1, 1], limits)] == [
        [0, 1],
        [2, 3, 4],
        [5, 6],
    ]
    assert [list(r) for r in plan_batches([50], limits)] == [[0]]  # one oversized input alone


def test_requests_stay_within_api_limits(server: FakeOpenAI) -> None:
    emb = make(server, dimensions=8)
    short = emb.embed([f"m{i}" for i in range(5000)])  # > 2,048 inputs
    assert short.shape == (5000, 8)
    assert [r["n"] for r in server.requests] == [2048, 2048, 904]
    long = emb.embed(["word " * 4000] * 100)  # 100 × 8,192 bytes after truncation > 300k
    assert long.shape == (100, 8)
    assert all(r.get("ok") for r in server.requests)  # the server rejects anything over limits
    assert len(server.requests) == 3 + 3


def test_empty_texts_are_never_sent(server: FakeOpenAI) -> None:
    vectors = make(server, dimensions=64).embed(["", "hello", "   "])
    assert [r["body"]["input"] for r in server.requests] == [["hello"]]
    assert np.linalg.norm(vectors, axis=1).round(4).tolist() == [0.0, 1.0, 0.0]


def test_dimensions_only_sent_to_text_embedding_3(server: FakeOpenAI) -> None:
    assert make(server, dimensions=512).embed(["a"]).shape == (1, 512)
    assert server.requests[-1]["body"]["dimensions"] == 512
    other = make(server, model="nomic-embed-text", dimensions=1536)
    assert other.dim == 768  # taken from the first answer (the server's own size)
    assert "dimensions" not in server.requests[-1]["body"]


@pytest.mark.parametrize("encoding", ["float", "base64"])
def test_both_encodings(server: FakeOpenAI, encoding: str) -> None:
    emb = make(server, dimensions=32)
    emb._encoding = encoding
    vector = emb.embed(["same words"])[0]
    assert server.requests[-1]["body"]["encoding_format"] == encoding
    expected = np.asarray(
        server.answer({"input": ["same words"], "model": emb.model_id, "dimensions": 32})[1][
            "data"
        ][0]["embedding"]
    )
    assert np.allclose(vector, expected, atol=1e-6)


# -- retries and giving up ----------------------------------------------------------------------


def test_retries_honour_retry_after_then_succeed(server: FakeOpenAI) -> None:
    sleeps: list[float] = []
    server.script((429, {"retry-after": "2"}), (429, {"retry-after-ms": "250"}), 500, 503)
    vectors = make(server, sleeps=sleeps, max_retries=5).embed(["x"])
    assert vectors.shape[0] == 1
    assert len(server.requests) == 5
    assert sleeps[:2] == [2.0, 0.25]
    assert 1.5 <= sleeps[2] <= 2.0 and 3.0 <= sleeps[3] <= 4.0  # 0.5 s × 2^attempt, 25 % jitter


def test_long_rate_limit_gives_up_at_once(server: FakeOpenAI) -> None:
    sleeps: list[float] = []
    server.script((429, {"retry-after": "3600"}))
    with pytest.raises(EmbedderError, match="giving up"):
        make(server, sleeps=sleeps).embed(["x"])
    assert sleeps == [] and len(server.requests) == 1


def test_retries_run_out(server: FakeOpenAI) -> None:
    server.down = True
    with pytest.raises(EmbedderError, match=r"HTTP 503.*after 3 attempts"):
        make(server, max_retries=2).embed(["x"])
    assert len(server.requests) == 3


def test_bad_request_is_not_retried(server: FakeOpenAI) -> None:
    server.script(400)
    with pytest.raises(EmbedderError, match="HTTP 400"):
        make(server).embed(["x"])
    assert len(server.requests) == 1


def test_hanging_server_times_out(server: FakeOpenAI) -> None:
    server.script("hang", "hang")
    with pytest.raises(EmbedderError, match="cannot reach"):
        make(server, timeout=0.3, max_retries=1).embed(["x"])
    assert len(server.requests) == 2


def test_rejected_key_is_not_echoed(server: FakeOpenAI) -> None:
    server.script(401)
    with pytest.raises(EmbedderError) as info:
        make(server, api_key="sk-very-secret").embed(["x"])
    assert "rejected the API key" in str(info.value)
    assert "sk-very-secret" not in str(info.value)
    assert server.auth[-1] == "Bearer sk-very-secret"


# -- where the key comes from -------------------------------------------------------------------


def test_key_from_env_then_keyring(memory_keyring: dict[str, str]) -> None:
    assert apikeys.get_api_key({}) is None
    memory_keyring["memex/openai"] = "sk-from-keyring"
    key = apikeys.get_api_key({})
    assert key is not None and (key.value, key.source) == ("sk-from-keyring", "keyring")
    key = apikeys.get_api_key({"OPENAI_API_KEY": "sk-env"})
    assert key is not None and (key.value, key.source) == ("sk-env", "env")
    assert "sk-env" not in repr(key)


def test_local_server_needs_no_key() -> None:
    assert apikeys.is_local_url("http://localhost:11434/v1")
    assert apikeys.is_local_url("http://127.0.0.1:1234/v1")
    assert not apikeys.is_local_url("https://api.openai.com/v1")


def test_queries_fail_fast(server: FakeOpenAI) -> None:
    server.down = True
    with pytest.raises(EmbedderError, match="after 2 attempts"):
        make(server, max_retries=5).embed_query("where did we eat")
    assert len(server.requests) == 2  # one retry only: search falls back to keywords


def test_input_type_tells_a_query_from_a_chunk(server: FakeOpenAI) -> None:
    typed = make(server, model="multilingual-e5-small", api_key=None, input_type=True)
    typed.embed(["the chunk's text"])
    typed.embed_query("a search")
    bodies = [r["body"] for r in server.requests]
    assert [b["input_type"] for b in bodies] == ["passage", "query"]
    assert {b["model"] for b in bodies} == {"multilingual-e5-small"}  # the server's own name
    assert typed.model_id == "multilingual-e5-small (query/passage)"  # other vectors
    assert typed.config["embedder.input_type"] is True

    plain = make(server, model="multilingual-e5-small", api_key=None)
    plain.embed_query("a search")
    assert "input_type" not in server.requests[-1]["body"]
    assert plain.model_id == "multilingual-e5-small"
