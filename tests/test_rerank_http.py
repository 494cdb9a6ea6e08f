"""The HTTP re-ranker against a real server on 127.0.0.1 (tests/fake_rerank.py), end to end
through `Searcher.search` on a small real index: each answer shape reorders the results,
a failing server leaves them as they were with one warning, the key comes from the keyring."""

from __future__ import annotations

import io
import json
import re
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from engine.cli import run
from engine.index.runs import reindex
from engine.schemas import json_schema
from engine.search import Searcher, SearchResponse
from engine.search.rerank.http import ENV_VAR, rerank_key
from engine.settings import Settings
from tests import memory_keyring
from tests.conftest import cli_args
from tests.fake_rerank import FakeRerank

QUERY = "heron lake"
QUOTES = [  # "count N": the fake server's score
    "The heron waits by the lake at dawn, count 3",
    "A heron stood in the lake reeds, count 9",
    "Herons and a heron on the lake shore, heron heron, count 1",
    "The grey heron flew over the lake, count 7",
]
COUNT = re.compile(r"count (\d+)")


@pytest.fixture(autouse=True)
def keyring_store() -> Iterator[dict[str, str]]:
    """An in-memory keyring for every test here: the real one is never read."""
    with memory_keyring.installed() as store:
        yield store


@pytest.fixture
def server() -> Iterator[FakeRerank]:
    fake = FakeRerank("llama").start()
    yield fake
    fake.stop()


@pytest.fixture
def lake(settings_factory: Callable[..., Settings]) -> Settings:
    """Four quotes about a heron by a lake, indexed (hashing embedder), re-ranker off."""
    settings = settings_factory(embedder__name="hashing")
    folder = settings.roots[0] / "data" / "identity"
    folder.mkdir(parents=True)
    lines = [
        json.dumps({"id": f"q-{i}", "text": t, "context": "Lake walk"})
        for i, t in enumerate(QUOTES)
    ]
    (folder / "quotes.jsonl").write_text("\n".join(lines) + "\n")
    assert not reindex(settings=settings).errors
    return settings


@pytest.fixture
def before(lake: Settings) -> list[int]:
    """The quotes' counts in the order of the search without the re-ranker."""
    order = counts(search(lake))
    assert sorted(order) == [1, 3, 7, 9] and order != [9, 7, 3, 1]  # re-ranking shows
    return order


def on(settings: Settings, server: FakeRerank | None = None, **values: Any) -> Settings:
    """The settings with the HTTP re-ranker on (no waiting between retries)."""
    url = "http://127.0.0.1:9/v1" if server is None else server.base_url
    fmt = "texts" if server is not None and server.shape == "tei" else "documents"
    defaults = {"rerank__backend": "http", "rerank__base_url": url, "rerank__request_format": fmt}
    return settings.with_values(**{**defaults, "rerank__retry_wait_seconds": 0, **values})


def search(settings: Settings, query: str = QUERY, **kwargs: Any) -> SearchResponse:
    searcher = Searcher(settings)
    try:
        return searcher.search(query, 10, explain=True, **kwargs)
    finally:
        searcher.close()


def counts(response: SearchResponse) -> list[int]:
    return [int(COUNT.findall(r.content)[0]) for r in response.results]


def refused_url() -> str:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_off_is_the_keyword_order_and_makes_no_backend(lake: Settings) -> None:
    searcher = Searcher(lake)
    try:
        assert searcher._reranker is None  # constructing a Searcher makes no stage
        response = searcher.search(QUERY, 10, explain=True)
        assert searcher._reranker.backend is None
    finally:
        searcher.close()
    assert sorted(counts(response)) == [1, 3, 7, 9] and response.warnings == []
    assert all("rerank_score" not in (r.explain or {}) for r in response.results)


@pytest.mark.parametrize("shape", ["llama", "tei", "cohere"])
def test_each_answer_shape_reorders_the_results_by_the_servers_scores(
    lake: Settings, shape: str, before: list[int]
) -> None:
    fake = FakeRerank(shape).start()
    try:
        model = "" if shape == "tei" else "bge-reranker-v2-m3"
        response = search(on(lake, fake, rerank__model=model))
    finally:
        fake.stop()
    assert response.warnings == []
    assert counts(response) == [9, 7, 3, 1]
    notes = [r.explain or {} for r in response.results]
    assert [n["rerank_score"] for n in notes] == [9.0, 7.0, 3.0, 1.0]
    assert [n["rerank_rank"] for n in notes] == [1, 2, 3, 4]
    assert [n["rank_before_rerank"] for n in notes] == [before.index(c) + 1 for c in (9, 7, 3, 1)]
    (body,) = fake.requests
    sent = body["texts"] if shape == "tei" else body["documents"]
    assert body["query"] == QUERY and len(sent) == 4
    assert ("model" in body) == (shape != "tei") and fake.auth == [None]
    # The title, then the text ("Quote: …" is the quote's own text, not a generated header).
    assert sent[before.index(1)] == (
        "Quote: Herons and a heron on the lake shore,…\n"
        "Quote: Herons and a heron on the lake shore, heron heron, count 1\nContext: Lake walk"
    )


def test_the_text_sent_is_cut_at_max_chars_and_only_the_head_is_sent(
    lake: Settings, server: FakeRerank, before: list[int]
) -> None:
    response = search(on(lake, server, rerank__max_chars=12, rerank__depth=2))
    (body,) = server.requests
    assert [len(d) for d in body["documents"]] == [12, 12]
    # Both cut texts hold no number: equal scores keep the head's order; the tail stays.
    assert counts(response) == before
    assert "rerank_rank" in (response.results[1].explain or {})
    assert "rank_before_rerank" not in (response.results[2].explain or {})


def test_a_server_that_is_down_leaves_the_results_as_they_were(
    lake: Settings, before: list[int]
) -> None:
    response = search(on(lake, rerank__base_url=refused_url(), rerank__max_retries=1))
    assert counts(response) == before
    (warning,) = response.warnings
    assert warning.startswith("cannot reach the re-rank server at http://127.0.0.1:")
    assert "(ConnectionRefusedError) (after 2 attempts); results are not re-ranked." in warning
    assert "Traceback" not in warning and "\n" not in warning
    assert all("rerank_score" not in (r.explain or {}) for r in response.results)


def test_a_failing_server_is_retried_then_rested(
    lake: Settings, server: FakeRerank, before: list[int]
) -> None:
    server.script(503, 503)
    searcher = Searcher(on(lake, server, rerank__max_retries=1))
    try:
        first = searcher.search(QUERY, 10)
        second = searcher.search(QUERY, 10)  # within the cooldown: no request
    finally:
        searcher.close()
    assert len(server.requests) == 2 and counts(first) == counts(second) == before
    assert first.warnings == [
        f"the re-rank server at {server.base_url}/rerank answered HTTP 503 (scripted 503) "
        "(after 2 attempts); results are not re-ranked."
    ]
    assert "next try in" in second.warnings[0]


def test_one_failure_then_an_answer_is_reranked(lake: Settings, server: FakeRerank) -> None:
    server.script(502)
    response = search(on(lake, server, rerank__max_retries=1))
    assert len(server.requests) == 2 and response.warnings == []
    assert counts(response) == [9, 7, 3, 1]


def test_a_wait_longer_than_the_timeout_is_not_waited(lake: Settings, server: FakeRerank) -> None:
    server.script((429, {"retry-after": "120"}))
    response = search(on(lake, server, rerank__max_retries=3, rerank__timeout_seconds=5))
    assert len(server.requests) == 1 and "HTTP 429" in response.warnings[0]


def test_a_hanging_server_times_out(lake: Settings, server: FakeRerank, before: list[int]) -> None:
    server.script("hang")
    response = search(on(lake, server, rerank__max_retries=0, rerank__timeout_seconds=0.3))
    assert counts(response) == before
    assert response.warnings[0].endswith(
        "(no complete answer within 0.3 s); results are not re-ranked."
    )


def test_a_redirect_is_not_followed(lake: Settings, server: FakeRerank) -> None:
    server.script((307, {"Location": server.origin + "/elsewhere/rerank"}))
    response = search(on(lake, server))
    assert server.paths == ["/v1/rerank"] and "HTTP 307" in response.warnings[0]


def test_an_answer_of_another_shape_is_a_warning(
    lake: Settings, server: FakeRerank, before: list[int]
) -> None:
    response = search(on(lake, server, rerank__request_format="texts"))  # llama wants documents
    assert response.warnings == [
        f"the re-rank server at {server.base_url}/rerank answered HTTP 422 (query and documents "
        "are required); results are not re-ranked."
    ]
    assert counts(response) == before


def test_the_key_comes_from_the_keyring_and_is_never_shown(
    lake: Settings, server: FakeRerank, keyring_store: dict[str, str]
) -> None:
    keyring_store["memex/rerank"] = "rk-secret-0123456789"
    assert rerank_key(env={}) is not None and rerank_key(env={}).source == "keyring"  # type: ignore[union-attr]
    assert rerank_key(env={ENV_VAR: "from-env"}).value == "from-env"  # type: ignore[union-attr]
    response = search(on(lake, server))
    assert server.auth == ["Bearer rk-secret-0123456789"] and response.warnings == []
    server.echo_auth = True
    server.script(400)
    failed = search(on(lake, server))
    # With a key sent, nothing the server wrote is shown: it may echo the key in any form.
    assert failed.warnings == [
        f"the re-rank server at {server.base_url}/rerank answered HTTP 400; "
        "results are not re-ranked."
    ]
    assert repr(rerank_key(env={})) == "ApiKey(source='keyring')"


def test_no_key_sends_no_authorization(keyring_store: dict[str, str]) -> None:
    assert keyring_store == {} and rerank_key(env={}) is None


def test_a_base_url_that_is_not_http_is_a_warning(lake: Settings) -> None:
    response = search(on(lake, rerank__base_url="localhost:8080"))
    assert response.warnings == [
        "rerank.base_url 'localhost:8080' is not an http(s) URL; results are not re-ranked."
    ]


def test_json_and_explain_follow_the_schema_and_profiles_keep_their_place(
    demo_index: Settings, server: FakeRerank, tmp_path: Path
) -> None:
    validator = Draft202012Validator(json_schema())
    server.scorer = lambda query, document: float(len(document))  # the longest first
    payloads = []
    rerank = f'[rerank]\nbackend = "http"\nbase_url = "{server.base_url}"\ndepth = 10\n'
    for extra in ("", rerank):
        out, err = io.StringIO(), io.StringIO()
        argv = [*cli_args(demo_index, extra), "--search", "Priya", "--json", "--explain"]
        assert run(argv, out, err) == 0, err.getvalue()
        payloads.append(json.loads(out.getvalue()))
        validator.validate(payloads[-1])
    before, after = ([r["id"] for r in p["results"]] for p in payloads)
    assert payloads[1]["warnings"] == [] and len(server.requests) == 1
    assert after.index("profile:priya-raman") == before.index("profile:priya-raman")
    assert sorted(after) == sorted(before) and after != before  # depth 10: the same hits
    reranked = [r for r in payloads[1]["results"] if "rerank_score" in r["explain"]]
    scores = [r["explain"]["rerank_score"] for r in reranked]
    assert reranked and scores == sorted(scores, reverse=True)


def test_a_refused_key_is_said_and_not_retried(
    lake: Settings, server: FakeRerank, keyring_store: dict[str, str]
) -> None:
    server.script(401)
    (missing,) = search(on(lake, server, rerank__max_retries=3)).warnings
    assert "asks for an API key (HTTP 401): set MEMEX_RERANK_API_KEY" in missing
    keyring_store["memex/rerank"] = "rk-wrong"
    server.script(403)
    (wrong,) = search(on(lake, server, rerank__max_retries=3)).warnings
    assert "rejected the API key (HTTP 403); results are not re-ranked." in wrong
    assert len(server.requests) == 2 and "rk-wrong" not in wrong
