"""Hostile servers on 127.0.0.1 against every outbound HTTP call (engine/net.py): an endless
chunked body, a trickle of bytes or of headers, JSON nested 100,000 deep, a 50 MB body, NaN
and overflowing numbers, vectors of the wrong length, redirects to a second host, error
bodies echoing the key in four encodings. Each one ends as a clean one-line warning (the
re-ranker: results un-reranked; the embedder: keyword results) or EmbedderError, never a
traceback, and the key shows nowhere. Timings and memory are measured by bench/hostile_http.py.
"""

from __future__ import annotations

import base64
import io
import json
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import apsw
import pytest

from engine import net
from engine.cli import run
from engine.embedders import EmbedderError, openai_embedder
from engine.embedders.apikeys import mask
from engine.embedders.openai_embedder import OpenAIEmbedder
from engine.index.runs import reindex
from engine.search import Searcher
from engine.search.outcome import Missed, VectorMiss
from engine.search.rerank.base import RerankError
from engine.search.rerank.http import HttpReranker, parse_scores
from engine.search.retrieve.query_embedder import QueryEmbedder
from engine.settings import Settings
from engine.store import db
from tests import memory_keyring
from tests.fake_http import HOSTILE
from tests.fake_openai import FakeOpenAI
from tests.fake_rerank import FakeRerank

KEY = "gsk_SECRETa81kQmv0cT4bYw2LpE9sNf7HdRjcdef"  # not an OpenAI shape: no `sk-` to spot
QUOTES = ["The heron waits by the lake, count 3", "A heron stood in the lake, count 9"]


def traces(key: str) -> list[str]:
    """Every form of the key a message must not hold: whole, cut, encoded."""
    raw, bearer = key.encode(), f"Bearer {key}".encode()
    forms = [key, key[:12], key[-12:], raw.hex(), bearer.hex(), urllib.parse.quote(key)]
    forms += [base64.b64encode(raw).decode()[:16], base64.b64encode(bearer).decode()[8:24]]
    return forms + [base64.urlsafe_b64encode(bearer).decode()[8:24], key[8:16]]


def assert_clean(message: str, key: str = KEY) -> None:
    assert message and "\n" not in message and "Traceback" not in message, message
    assert not [form for form in traces(key) if form in message], message


@pytest.fixture(autouse=True)
def keyring_store() -> Iterator[dict[str, str]]:
    with memory_keyring.installed() as store:
        yield store


@pytest.fixture
def rerank() -> Iterator[FakeRerank]:
    fake = FakeRerank("llama").start()
    yield fake
    fake.stop()


@pytest.fixture
def openai() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI().start()
    yield fake
    fake.stop()


@pytest.fixture
def lake(settings_factory: Callable[..., Settings]) -> Settings:
    """Two quotes, indexed with the hashing embedder."""
    settings = settings_factory(embedder__name="hashing")
    folder = settings.roots[0] / "data" / "identity"
    folder.mkdir(parents=True)
    lines = [json.dumps({"id": f"q-{i}", "text": t}) for i, t in enumerate(QUOTES)]
    (folder / "quotes.jsonl").write_text("\n".join(lines) + "\n")
    assert not reindex(settings=settings).errors
    return settings


def reranked_search(settings: Settings, server: FakeRerank, **values: Any) -> list[str]:
    """The warnings of one search with the HTTP re-ranker on `server`; the hits must be
    those of the search without it, in its order."""
    plain = Searcher(settings)
    on = settings.with_values(
        rerank__backend="http",
        rerank__base_url=server.base_url,
        rerank__retry_wait_seconds=0,
        **{"rerank__timeout_seconds": 1.0, "rerank__max_retries": 0, **values},
    )
    searcher = Searcher(on)
    try:
        before = [r.id for r in plain.search("heron lake", 10).results]
        response = searcher.search("heron lake", 10)
    finally:
        plain.close()
        searcher.close()
    assert [r.id for r in response.results] == before and before
    return response.warnings


def embedder(server: FakeOpenAI, **kw: Any) -> OpenAIEmbedder:
    kw = {"api_key": KEY, "dimensions": 8, "max_retries": 0, "timeout": 1.0, **kw}
    return OpenAIEmbedder("text-embedding-3-small", base_url=server.base_url, **kw)


# -- the bounded call itself ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        ("endless", net.TooLarge),
        ("huge", net.TooLarge),
        ("huge-chunked", net.TooLarge),
        ("trickle", net.TimedOut),
        ("trickle-headers", net.TimedOut),
        ("hang", net.TimedOut),
    ],
)
def test_each_hostile_answer_ends_the_call(
    rerank: FakeRerank, kind: str, error: type[Exception]
) -> None:
    rerank.script(kind)
    with pytest.raises(error):
        net.post_json(rerank.base_url + "/rerank", {}, headers={}, deadline=0.5, max_bytes=1 << 20)


class Proxy(BaseHTTPRequestHandler):
    """Records the request target it was asked for; answers an empty result list."""

    seen: list[str] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Proxy.seen.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"[]")


def test_a_remote_host_goes_through_the_environments_proxy_a_local_one_never(
    rerank: FakeRerank, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=proxy.serve_forever, args=(0.05,), daemon=True).start()
    try:
        monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{proxy.server_address[1]}")
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        remote = net.post_json(
            "http://rerank.example/v1/rerank", {}, headers={}, deadline=5, max_bytes=100
        )
        assert (remote.status, remote.body) == (200, b"[]")
        assert HttpReranker(rerank.base_url + "/rerank").scores("q", ["a"]) == {0: 0.0}
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert Proxy.seen == ["http://rerank.example/v1/rerank"] and len(rerank.requests) == 1


def test_json_is_read_with_a_depth_limit_and_no_nan() -> None:
    with pytest.raises(net.BadAnswer, match="nested deeper than 32"):
        net.parse_json(b"[" * 100_000 + b"]" * 100_000)
    nested = b"[" * 32 + b"]" * 32
    assert net.parse_json(b'{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\"[[["}')["a"].startswith(
        "["
    )
    assert net.parse_json(nested) is not None
    for literal in (b"[NaN]", b"[Infinity]", b"[-Infinity]", b"[1" + b"0" * 5000 + b"]"):
        with pytest.raises(net.BadAnswer):
            net.parse_json(literal)
    assert [net.finite_number(v) for v in (1, 2.5, True, "3", 1e308 * 10, 10**400)] == [
        1.0,
        2.5,
        None,
        None,
        None,
        None,
    ]


# -- the re-ranker ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [*HOSTILE, "hang"])
def test_a_hostile_rerank_server_leaves_the_results_unreranked(
    lake: Settings, rerank: FakeRerank, kind: str
) -> None:
    rerank.script(kind)
    (warning,) = reranked_search(lake, rerank)
    assert warning.startswith(("cannot reach the re-rank server", "the re-rank server"))
    assert warning.endswith("; results are not re-ranked.")
    assert_clean(warning)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b'{"results": [{"index": 0, "relevance_score": NaN}]}', "not JSON"),
        (b'{"results": [{"index": 0, "relevance_score": 1e999}]}', "not a finite number"),
        (b'[{"index": 0, "score": 1' + b"0" * 400 + b"}]", "not a finite number"),
        (b'[{"index": 0, "score": 1}, {"index": 0, "score": 2}]', "twice"),
        (b'[{"index": 7, "score": 1}]', "without index or score"),
    ],
)
def test_scores_that_are_not_finite_numbers_are_refused(
    lake: Settings, rerank: FakeRerank, body: bytes, said: str
) -> None:
    rerank.script(("raw", 200, body))
    (warning,) = reranked_search(lake, rerank)
    assert said in warning
    with pytest.raises(RerankError, match="finite"):
        parse_scores({"results": [{"index": 0, "relevance_score": float("inf")}]}, 1)


def test_a_rerank_redirect_reaches_no_second_host(lake: Settings, rerank: FakeRerank) -> None:
    second = FakeRerank("llama").start()
    try:
        rerank.script((307, {"Location": second.base_url + "/rerank"}))
        (warning,) = reranked_search(lake, rerank)
    finally:
        second.stop()
    assert "HTTP 307 (redirects are not followed)" in warning
    assert second.requests == [] and len(rerank.requests) == 1


@pytest.mark.parametrize("status", [400, 404, 422, 429, 500, 503])
def test_a_rerank_error_echoing_the_key_shows_none_of_it(rerank: FakeRerank, status: int) -> None:
    rerank.echo_auth = True
    rerank.script(status)
    client = HttpReranker(rerank.base_url + "/rerank", api_key=KEY, max_retries=0)
    with pytest.raises(RerankError) as info:
        client.scores("q", ["a", "b"])
    assert rerank.auth == [f"Bearer {KEY}"] and f"HTTP {status}" in str(info.value)
    assert "scripted" not in str(info.value)
    assert_clean(str(info.value))


def test_without_a_key_the_servers_words_are_told(rerank: FakeRerank) -> None:
    rerank.script(("raw", 400, b'{"error": "input too large \\u001b[31mfor batch\\n"}'))
    with pytest.raises(RerankError, match=r"HTTP 400 \(input too large \[31mfor batch\)$"):
        HttpReranker(rerank.base_url + "/rerank").scores("q", ["a"])


# -- the OpenAI-compatible embedder --------------------------------------------------------


@pytest.mark.parametrize("kind", [*HOSTILE, "hang"])
def test_a_hostile_embedding_server_is_a_clean_error(openai: FakeOpenAI, kind: str) -> None:
    openai.script(kind, kind)
    with pytest.raises(EmbedderError) as query:
        embedder(openai).embed_query("where did we eat")
    assert_clean(str(query.value))
    with pytest.raises(EmbedderError) as batch:
        embedder(openai, dimensions=None, max_retries=0).embed(["a", "b"])
    assert_clean(str(batch.value))


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ([[0.1] * 7 + [float("inf")], [0.1] * 8], "not finite"),
        ([[1e39] * 8, [0.1] * 8], "not finite"),
        ([[0.1] * 7, [0.1] * 7], "7-d vectors, expected 8-d"),
        ([[0.1] * 8, [0.1] * 9], "different lengths"),
        ([[0.1] * 8] * 3, "3 vectors for 2 texts"),
        ([[0.1] * 8, ["x"] * 8], "not a list of numbers"),
        (["!!not base64!!", [0.1] * 8], "not base64"),
        (["AAAA" * 3 + "AA==", [0.1] * 8], "partial numbers"),
    ],
)
def test_vectors_are_checked(openai: FakeOpenAI, data: list[Any], said: str) -> None:
    items = [{"index": i % 2, "embedding": e} for i, e in enumerate(data)]
    raw = json.dumps({"data": items}).replace("Infinity", "1e999").encode()
    openai.script(("raw", 200, raw))
    with pytest.raises(EmbedderError, match=said):
        embedder(openai).embed(["a", "b"])


def test_a_vector_index_given_twice_is_refused(openai: FakeOpenAI) -> None:
    items = [{"index": 0, "embedding": [0.1] * 8}] * 2
    openai.script(("raw", 200, json.dumps({"data": items}).encode()))
    with pytest.raises(EmbedderError, match="without its index"):
        embedder(openai).embed(["a", "b"])


def test_an_embedding_redirect_reaches_no_second_host(openai: FakeOpenAI) -> None:
    """Neither the query nor the reindex's dimension probe follows a redirect elsewhere."""
    second = FakeOpenAI().start()
    try:
        target = {"Location": second.base_url + "/embeddings"}
        openai.script((307, target), (308, target))
        with pytest.raises(EmbedderError, match="HTTP 307: redirects are not followed"):
            embedder(openai).embed_query("the user's words")
        with pytest.raises(EmbedderError, match="HTTP 308: redirects are not followed"):
            assert embedder(openai, dimensions=None).dim  # the probe
    finally:
        second.stop()
    assert second.requests == [] and second.auth == []


@pytest.mark.parametrize("status", [400, 404, 429, 500, 503])
def test_an_embedding_error_echoing_the_key_shows_none_of_it(
    openai: FakeOpenAI, status: int
) -> None:
    openai.echo_auth = True
    openai.script(status)
    with pytest.raises(EmbedderError) as info:
        embedder(openai).embed(["x"])
    assert openai.auth == [f"Bearer {KEY}"] and "scripted" not in str(info.value)
    assert_clean(str(info.value))


def test_a_hostile_embedder_at_search_time_gives_keyword_results(
    openai: FakeOpenAI, settings_factory: Callable[..., Settings]
) -> None:
    settings = settings_factory(embedder__name="hashing")
    conn: apsw.Connection = db.connect(settings.db_path)
    db.migrate(conn)
    misses: list[Missed] = []
    try:
        openai.script("trickle", "trickle")
        query = QueryEmbedder(settings, conn, embedder=embedder(openai, timeout=0.5))
        assert query.vector("where did we eat", misses) is None
    finally:
        conn.close()
    ((reason, warning),) = misses
    assert reason is VectorMiss.EMBEDDER_FAILED
    assert warning.startswith("embedder failed, keyword results only: cannot reach")
    assert "no complete answer within 0.5 s" in warning
    assert_clean(warning)


def test_the_key_is_in_no_output_and_no_run_log(
    openai: FakeOpenAI,
    settings_factory: Callable[..., Settings],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reindex and a search through the CLI against a server that echoes the key in
    four encodings on every error: stdout, stderr, the run log and the index hold none."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr(openai_embedder, "is_local_url", lambda url: False)  # the key is sent
    openai.echo_auth, openai.down = True, True
    settings = settings_factory(embedder__name="hashing")
    (settings.roots[0] / "note.md").write_text("# Lunch\nDumplings at the night market.\n")
    config = settings.db_path.parent / "config.toml"
    config.write_text(
        f"roots = [{json.dumps(str(settings.roots[0]))}]\ndb = {json.dumps(str(settings.db_path))}\n"
        f"log_dir = {json.dumps(str(settings.log_path.parent))}\n"
        f'[embedder]\nname = "openai"\nbase_url = "{openai.base_url}"\nmax_retries = 0\n'
        "dimensions = 8\n"
    )
    outputs = []
    for argv in (["reindex"], ["--search", "dumplings"], ["--search", "dumplings", "--json"]):
        out, err = io.StringIO(), io.StringIO()
        run(["--config", str(config), *argv], out, err)
        outputs += [out.getvalue(), err.getvalue()]
    assert openai.auth and all(a == f"Bearer {KEY}" for a in openai.auth)
    assert "HTTP 503" in "".join(outputs)
    files = [p for p in settings.db_path.parent.rglob("*") if p.is_file()]
    files += [p for p in settings.log_path.parent.rglob("*") if p.is_file()]
    assert settings.log_path in files
    texts = outputs + [p.read_bytes().decode("utf-8", errors="replace") for p in files]
    for text in texts:
        assert not [form for form in traces(KEY) if form in text]


def test_mask_hides_every_form_of_a_key_of_any_shape() -> None:
    raw, bearer = KEY.encode(), f"Bearer {KEY}".encode()
    echoes = [
        f"Incorrect API key provided: {KEY[:8]}****{KEY[-4:]}",
        f"auth={base64.b64encode(bearer).decode()}",
        f"auth={base64.urlsafe_b64encode(b'x' + raw).decode()}",
        f"hex {bearer.hex()} / {raw.hex().upper()}",
        f"url {urllib.parse.quote(f'Bearer {KEY}')} {urllib.parse.quote_plus(KEY)}",
        f"cut {KEY[5:25]}",
    ]
    for echo in echoes:
        masked = mask(echo, KEY)
        assert "***" in masked
        assert not [form for form in traces(KEY) if form in masked], masked
    assert mask("nothing secret here", KEY) == "nothing secret here"
    assert mask("a short key: abc", "abc") == "a short key: ***"
