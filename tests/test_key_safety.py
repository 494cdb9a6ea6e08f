"""The OpenAI API key never shows in a message, and is only sent where it is needed.

Against a real HTTP server on 127.0.0.1 (tests/fake_openai.py) whose error bodies repeat the
Authorization header, as some servers and proxies do.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from engine.embedders import EmbedderError, create_embedder
from engine.embedders.apikeys import mask
from engine.embedders.openai_embedder import OpenAIEmbedder
from engine.search.outcome import Missed
from engine.search.retrieve.query_embedder import QueryEmbedder
from engine.settings import Settings
from engine.store import db
from tests.fake_openai import FakeOpenAI

SECRET = "sk-proj-Zx81kQmv0cT4bYw2LpE9sNf7HdRj"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    srv = FakeOpenAI().start()
    srv.echo_auth = True
    yield srv
    srv.stop()


def make(server: FakeOpenAI, **kw: Any) -> OpenAIEmbedder:
    kw.setdefault("api_key", SECRET)
    return OpenAIEmbedder(
        "text-embedding-3-small",
        base_url=server.base_url,
        dimensions=8,
        sleep=lambda _: None,
        **kw,
    )


@pytest.mark.parametrize(
    "answers",
    [[500], [503, 503], [400], [404], [429, 500]],
    ids=["500", "503-twice", "400", "404", "429-then-500"],
)
def test_an_error_body_that_echoes_the_key_is_masked(
    server: FakeOpenAI, answers: list[int]
) -> None:
    server.script(*answers)
    with pytest.raises(EmbedderError) as info:
        make(server, max_retries=len(answers) - 1).embed(["x"])
    message = str(info.value)
    assert server.auth[-1] == f"Bearer {SECRET}"  # the server did see (and echo) the key
    assert "scripted" not in message  # with a key sent, nothing the server wrote is shown
    assert SECRET not in message and SECRET[3:20] not in message


def test_a_long_wait_message_is_masked(server: FakeOpenAI) -> None:
    server.script((429, {"retry-after": "600"}))
    with pytest.raises(EmbedderError, match="giving up") as info:
        make(server).embed(["x"])
    assert SECRET[3:20] not in str(info.value)


def test_the_search_warning_of_a_failing_server_is_masked(
    server: FakeOpenAI, settings_factory: Callable[..., Settings]
) -> None:
    settings = settings_factory(embedder__name="hashing")
    conn = db.connect(settings.db_path)
    db.migrate(conn)
    server.script(500, 500)
    misses: list[Missed] = []
    try:
        query = QueryEmbedder(settings, conn, embedder=make(server))
        assert query.vector("where did we eat", misses) is None
    finally:
        conn.close()
    warnings = [said for _, said in misses]
    assert len(warnings) == 1 and "HTTP 500" in warnings[0]
    assert SECRET[3:20] not in warnings[0]


@pytest.mark.parametrize(
    "text",
    [
        f"Incorrect API key provided: {SECRET}.",
        f"Bearer {SECRET[:12]}",
        "Incorrect API key provided: sk-proj-Zx81************sNf7HdRj.",
    ],
)
def test_mask_hides_whole_and_partial_keys(text: str) -> None:
    masked = mask(text, SECRET)
    assert "Zx81" not in masked and "HdRj" not in masked and "***" in masked


def test_a_local_server_gets_a_placeholder_not_the_key(
    server: FakeOpenAI,
    settings_factory: Callable[..., Settings],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    settings = settings_factory(
        embedder__name="openai", embedder__base_url=server.base_url, embedder__dimensions=8
    )
    embedder = create_embedder(settings)
    assert embedder.embed(["hello"]).shape == (1, 8)
    assert server.auth and all(SECRET not in (a or "") for a in server.auth)


class Redirect(BaseHTTPRequestHandler):
    """Answers every request with a 307 to `target` (set on the server)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(307)
        self.send_header("Location", getattr(self.server, "target", ""))
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_a_redirect_to_another_server_is_not_followed(server: FakeOpenAI) -> None:
    """The key and the text go to the configured base_url only: a redirect is an error."""
    redirecting = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    redirecting.target = server.base_url + "/embeddings"  # type: ignore[attr-defined]
    threading.Thread(target=redirecting.serve_forever, args=(0.05,), daemon=True).start()
    try:
        port = redirecting.server_address[1]
        embedder = OpenAIEmbedder(
            "text-embedding-3-small",
            base_url=f"http://localhost:{port}/v1",
            api_key=SECRET,
            dimensions=8,
            max_retries=0,
        )
        with pytest.raises(EmbedderError, match="HTTP 307: redirects are not followed"):
            embedder.embed(["hello"])
    finally:
        redirecting.shutdown()
        redirecting.server_close()
    assert server.auth == [] and server.requests == []
