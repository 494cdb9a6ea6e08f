"""Every pass over an answer from outside is linear and bounded (engine/jsonscan.py,
engine/net.py): the depth scan agrees with a byte-by-byte reference on any bytes and any
chunking, its work is counted in steps of at most one chunk, a deadline ends it between
steps, and a search against a server sending adversarial bodies (an escaped quote repeated
for a megabyte, no closing quote) comes back with its fallback and one warning. Then two
edges: a warm request line nested 100,000 deep is a bad request, and an MCP request before
`initialize` is told to initialize first.

Work is counted, never timed: a step is one chunk of `chunk_bytes`, and no step reads
beyond its chunk, so the steps bound the work whatever the bytes hold.
"""

from __future__ import annotations

import io
import json
import math
import re
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from engine import jsonscan, net
from engine.cli import run
from engine.extractors import (
    documents,
    filenames,
    markdown,
    slack,
    subtitles,
    web_pages,
    whatsapp,
)
from engine.language import syncope
from engine.people import normalise
from engine.settings import Settings
from engine.warm import protocol
from tests.fake_openai import FakeOpenAI
from tests.fake_rerank import FakeRerank
from tests.test_mcp_fuzz import INITIALIZE, INVALID_REQUEST, RawServer, call_line, line_of

METHOD_NOT_FOUND = -32601

MB = 1 << 20
UNCLOSED = b'{"results": [{"index": 0, "relevance_score": "' + b'\\"' * (MB // 2)
ADVERSARIAL = {
    "escaped quotes, never closed": UNCLOSED,
    "backslashes then a quote": b'["' + b"\\" * MB + b'"]',
    "quotes and backslashes": b'["' + b'\\\\"\\"' * (MB // 5),
    "brackets inside a string": b'["' + b"[{" * (MB // 2) + b'"]',
    "deep nesting": b"[" * MB + b"]" * MB,
    "a flat array": b"[" + b"0," * (MB // 2) + b"0]",
}


def reference(raw: bytes) -> tuple[int, bool]:
    """(deepest, closed) by the plain byte-by-byte state machine the scan must agree with."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if escaped:
            escaped = False
        elif byte == ord("\\"):
            escaped = True
        elif byte == ord('"'):
            in_string = not in_string
        elif not in_string and byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif not in_string and byte in b"]}":
            depth -= 1
    return deepest, not (in_string or escaped)


def depth_of(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    return 0


TEXT = st.text(alphabet=st.sampled_from('a"\\[]{}/\n\t é\u2028'), max_size=8)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)
HOSTILE_BYTES = st.lists(
    st.sampled_from([b'"', b"\\", b'\\"', b"[", b"]", b"{", b"}", b"a", b" ", b"\xff"]),
    max_size=200,
).map(b"".join)


@hsettings(max_examples=300)
@given(JSON_VALUES, st.booleans(), st.integers(1, 40))
def test_on_json_the_depth_is_exact_in_any_chunking(value: Any, ascii: bool, size: int) -> None:
    raw = json.dumps(value, ensure_ascii=ascii).encode("utf-8")
    found = jsonscan.scan(raw, chunk_bytes=size)
    assert (found.deepest, found.closed, found.depth) == (depth_of(value), True, 0)
    assert net.parse_json(raw) == value


@hsettings(max_examples=300)
@given(HOSTILE_BYTES, st.integers(1, 16))
def test_on_any_bytes_the_scan_is_the_reference_in_one_step_per_chunk(
    raw: bytes, size: int
) -> None:
    found = jsonscan.scan(raw, chunk_bytes=size)
    assert (found.deepest, found.closed) == reference(raw)
    assert found.steps == math.ceil(len(raw) / size)


@pytest.mark.parametrize("name", ADVERSARIAL)
def test_adversarial_bodies_take_one_step_per_chunk_at_any_size(name: str) -> None:
    """Eight times the bytes is eight times the steps, and a step reads one chunk only."""
    body = ADVERSARIAL[name]
    small, large = body[: len(body) // 8], body * 8
    for raw in (small, body, large):
        found = jsonscan.scan(raw)
        assert found.steps == math.ceil(len(raw) / jsonscan.CHUNK_BYTES)
    assert (jsonscan.scan(body).deepest, jsonscan.scan(body).closed) == reference(body)


@pytest.mark.parametrize("name", ADVERSARIAL)
def test_adversarial_bodies_are_refused_or_read(name: str) -> None:
    body = ADVERSARIAL[name]
    if name in ("backslashes then a quote", "brackets inside a string", "a flat array"):
        assert len(net.parse_json(body)) in (1, MB // 2 + 1)  # valid JSON: read
        return
    with pytest.raises(net.BadAnswer, match="not JSON|nested deeper"):
        net.parse_json(body)


def test_a_body_nested_past_the_limit_stops_the_scan_in_its_first_step() -> None:
    at_limit = b"[" * net.MAX_DEPTH + b"]" * net.MAX_DEPTH
    assert net.parse_json(at_limit) == json.loads(at_limit)
    past = b"[" + at_limit + b"]"
    with pytest.raises(net.BadAnswer, match=f"nested deeper than {net.MAX_DEPTH}"):
        net.parse_json(past)
    assert jsonscan.scan(ADVERSARIAL["deep nesting"], limit=net.MAX_DEPTH).steps == 1


def test_the_deadline_ends_a_scan_between_two_steps() -> None:
    ticks = iter(range(1000))
    with pytest.raises(jsonscan.DeadlinePassed):
        jsonscan.scan(UNCLOSED, ends=3, clock=lambda: next(ticks))
    assert next(ticks) == 5  # read after each of the first five steps, the fifth past 3
    with pytest.raises(net.TimedOut, match="within the deadline"):
        net.parse_json(b"[1, 2]", ends=0.0)  # the monotonic clock is far past 0


# -- a search against a server sending them ------------------------------------------------


@pytest.fixture
def lake(settings_factory: Callable[..., Settings]) -> Settings:
    settings = settings_factory(embedder__name="hashing")
    (settings.roots[0] / "note.md").write_text("# Lunch\nDumplings at the night market.\n")
    return settings


@pytest.fixture
def openai() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI().start()
    yield fake
    fake.stop()


@pytest.fixture
def rerank() -> Iterator[FakeRerank]:
    fake = FakeRerank("llama").start()
    yield fake
    fake.stop()


def memex(settings: Settings, config: str, *argv: str) -> tuple[int, str, str]:
    """`memex --config FILE ARGV` in-process, FILE holding `config` and these settings."""
    path = settings.db_path.parent / "config.toml"
    roots, db_file = json.dumps(str(settings.roots[0])), json.dumps(str(settings.db_path))
    logs = json.dumps(str(settings.log_path.parent))
    path.write_text(f"roots = [{roots}]\ndb = {db_file}\nlog_dir = {logs}\n{config}")
    out, err = io.StringIO(), io.StringIO()
    code = run(["--config", str(path), *argv], out, err)
    return code, out.getvalue(), err.getvalue()


def test_a_megabyte_of_unclosed_escapes_from_the_embedder_gives_keyword_results(
    lake: Settings, openai: FakeOpenAI
) -> None:
    config = f'[embedder]\nname = "openai"\nbase_url = "{openai.base_url}"\ndimensions = 8\n'
    assert memex(lake, config, "reindex")[0] == 0
    openai.script(("raw", 200, UNCLOSED), ("raw", 200, UNCLOSED))
    code, out, err = memex(lake, config, "--search", "dumplings", "--json")
    answer = json.loads(out)
    assert code == 0 and answer["mode"] == "bm25" and answer["results"]
    (warning,) = answer["warnings"]
    assert warning.startswith("embedder failed, keyword results only: the embedding server")
    assert "not JSON (a string never closed)" in warning and "Traceback" not in err


def test_a_megabyte_of_unclosed_escapes_from_the_reranker_leaves_results_unreranked(
    lake: Settings, rerank: FakeRerank
) -> None:
    config = f'[embedder]\nname = "hashing"\n[rerank]\nbackend = "http"\nbase_url = "{rerank.base_url}"\n'
    assert memex(lake, config, "reindex")[0] == 0
    rerank.script(("raw", 200, UNCLOSED), ("raw", 200, UNCLOSED))
    code, out, err = memex(lake, config, "--search", "dumplings", "--json")
    answer = json.loads(out)
    assert code == 0 and answer["results"] and len(rerank.requests) == 1
    (warning,) = answer["warnings"]
    assert "sent an answer that is not JSON (a string never closed)" in warning
    assert warning.endswith("; results are not re-ranked.") and "Traceback" not in err


# -- the small edges: a warm request nested too deep, MCP before initialize -----------------


def test_a_warm_request_line_nested_100k_deep_is_a_bad_request() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(protocol.ProtocolError, match="nested too deeply"):
        protocol.parse(deep)
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(b'{"op": ' + deep + b"}\n")
        with pytest.raises(protocol.ProtocolError, match="nested too deeply"):
            protocol.receive(ours, protocol.MAX_REQUEST_BYTES)


def test_mcp_asked_before_initialize_says_to_initialize_first(
    settings_factory: Callable[..., Settings], tmp_path: Path
) -> None:
    server = RawServer(settings_factory(), tmp_path / "server.log")
    try:
        early = server.ask(call_line(1, "search", {"query": "lunch"}))
        assert early["id"] == 1 and early["error"]["code"] == INVALID_REQUEST
        assert "send 'initialize'" in early["error"]["message"]
        listed = server.ask(line_of({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        assert "send 'initialize'" in listed["error"]["message"]
        unknown = server.ask(line_of({"jsonrpc": "2.0", "id": 3, "method": "no/such"}))
        assert unknown["error"]["code"] == METHOD_NOT_FOUND  # as before initialize too
        ping = server.ask(line_of({"jsonrpc": "2.0", "id": 4, "method": "ping"}))
        assert ping == {"jsonrpc": "2.0", "id": 4, "result": {}}
        opened = {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": INITIALIZE}
        assert "result" in server.ask(line_of(opened))
        server.send(line_of({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        assert "result" in server.ask(line_of({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}))
        assert server.close() == 0
    finally:
        server.release()
    assert "Traceback" not in (tmp_path / "server.log").read_text(encoding="utf-8")


# -- regexes over the user's files: the same answers, linear on adversarial text ----------

OLD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
OLD_SENTENCE_END = re.compile(r"[^\W\d_A-Z]{3,}[.!?](\s|$)")
OLD_REMARK = re.compile(r"\s*\([^()]*\)")
_V = syncope._V
OLD_SYNCOPE_BASE = re.compile(rf"(?P<head>\w*[{_V}]\w*[^{_V}\W])e(?P<end>[lnr])")
OLD_SYNCOPE_INFLECTED = re.compile(rf"(?P<head>\w*[{_V}]\w*[^{_V}\W])(?P<end>[lnr])")
HEADING_LINES = st.text(alphabet=st.sampled_from("# \t\raZ\u3000"), max_size=14)


@hsettings(max_examples=500)
@given(HEADING_LINES)
def test_a_heading_is_read_as_the_old_pattern_read_it(line: str) -> None:
    old, new = OLD_HEADING.match(line), markdown._HEADING.fullmatch(line)
    assert (old is None) == (new is None)
    if old and new:
        assert (old[1], old[2].strip()) == (new[1], markdown.heading_title(new[2]))


@hsettings(max_examples=500)
@given(st.text(alphabet=st.sampled_from("aéZ1_.! \n"), max_size=16))
def test_a_sentence_end_is_found_as_the_old_pattern_found_it(text: str) -> None:
    assert bool(documents._SENTENCE_END.search(text)) == bool(OLD_SENTENCE_END.search(text))


@hsettings(max_examples=500)
@given(st.text(alphabet=st.sampled_from("a ()\t\n"), max_size=16))
def test_a_remark_is_dropped_as_the_old_pattern_dropped_it(name: str) -> None:
    assert normalise._REMARK.sub("", name) == OLD_REMARK.sub("", name)


@hsettings(max_examples=500)
@given(st.text(alphabet=st.sampled_from("aeøknrl1_ -"), max_size=12))
def test_a_nordic_stem_is_split_as_the_old_patterns_split_it(word: str) -> None:
    for old, new in (
        (OLD_SYNCOPE_BASE, syncope._BASE),
        (OLD_SYNCOPE_INFLECTED, syncope._INFLECTED),
    ):
        before, after = old.fullmatch(word), new.fullmatch(word)
        assert (before and before.groupdict()) == (after and after.groupdict())


def test_the_shapes_each_pattern_reads_are_read_still() -> None:
    page = "<!-- saved from url=(0014)about:internet -->\n<!----><html><head><title>Trip</title>"
    assert web_pages.is_saved_page(page) and not web_pages.is_saved_page("<!---->" * 3 + "<p>")
    assert web_pages._SAVED.search('<link rel="icon"><link href="x" rel="canonical">')
    names = {"U1": "Ana"}
    slack_text = "<@U1> see <https://a.example|the plan> in <#C9|general>, <!here|here>"
    assert (
        slack.render_text(slack_text, names)
        == "@Ana see the plan (https://a.example) in #general, @here"
    )
    body = "  IMG-20220327-WA0003.jpg (file attached)\nLook at this"
    assert whatsapp._text(body) == "Look at this"  # an automatic name: the file is not named
    assert whatsapp._text("plan.pdf (file attached)") == "[file: plan.pdf]"
    assert whatsapp._text("<attached: 00000015-plan.pdf>") == "[file: plan.pdf]"
    assert markdown.heading_title(" Plan ## ") == "Plan" and markdown.heading_title("##") == "#"
    voice = subtitles._VOICE.search("<v.loud Ann Lee>Hi</v>")
    assert voice is not None and voice[1] == "Ann Lee"
    assert subtitles._TAG.sub("", "<i>so</i> <c.yellow>far</c>") == "so far"


ADVERSARIAL_TEXT = 200_000


N = ADVERSARIAL_TEXT
ADVERSARIAL_RUNS: dict[str, tuple[Callable[[], object], object]] = {
    "40 empty comments, no <html>": (lambda: web_pages._HTML.match("<!---->" * 40), None),
    "<link without >": (lambda: web_pages._SAVED.search("<link" * N), None),
    "<title without >": (lambda: web_pages._TITLE.search("<title" * N), None),
    "a heading of spaces": (
        lambda: markdown.heading_title(markdown._HEADING.fullmatch("# a" + " " * N + "x")[2]),
        "a" + " " * N + "x",
    ),
    "one long word": (lambda: documents._SENTENCE_END.search("a" * N), None),
    "a line with no mark": (lambda: len(whatsapp._ATTACHED.sub("", "a" * N)), N),
    "<attached: without >": (lambda: whatsapp._ATTACHED.search("<attached: " * N), None),
    "slack mentions, no >": (lambda: len(slack.render_text("<@U1|" * N, {})), 5 * N),
    "slack links, no >": (lambda: len(slack.render_text("<http:" * N, {})), 6 * N),
    "spaces before no remark": (lambda: normalise._REMARK.sub("", " " * N + "x"), " " * N + "x"),
    "a zip member's long name": (lambda: filenames.whatsapp_chat_name(" a" * N), None),
    "a cue's voice tag, no >": (lambda: subtitles._VOICE.search("<v " + "a <" * N), None),
    "a cue's tags, no >": (lambda: len(subtitles._TAG.sub("", "<i" * N)), 2 * N),
    "a Nordic query word of vowels": (lambda: syncope.variants("a" * N, "a" * N, "sv"), []),
    "a Nordic stem of vowels": (lambda: syncope._INFLECTED.fullmatch("ae" * N), None),
}


@pytest.mark.parametrize("name", ADVERSARIAL_RUNS)
def test_adversarial_text_is_read_in_one_pass(name: str) -> None:
    """Each input took quadratic (or worse) time before; now one pass: the test finishes."""
    run, expected = ADVERSARIAL_RUNS[name]
    assert run() == expected
