"""Every MCP request is answered: the wire's pure functions, then the real `memex mcp`
driven with raw lines (hostile strings, lone surrogates, lines that are not JSON-RPC) and with
the SDK's own client (hypothesis-made tool calls).

The SDK client cannot send a lone surrogate (its writer encodes strictly), so surrogates are
fuzzed through raw lines, written as JSON's "\\ud800" escapes the way other clients send them.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from engine.mcp.wire import MAX_LINE_BYTES, Reply, decode_line, encode_payload
from engine.settings import Settings
from tests.conftest import cli_args
from tests.test_mcp import BOOT, HANG_SECONDS, ROOT, connect

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "fuzz", "version": "1"},
}
TOOL_NAMES = ("search", "get", "person", "status")
ARGUMENT_NAMES = ("query", "limit", "source_types", "since", "until", "person", "mode", "id")
METHODS = ("tools/call", "tools/list", "ping", "initialize", "resources/list", "prompts/get")

# -- strategies -----------------------------------------------------------------------------

SURROGATE = st.integers(0xD800, 0xDFFF).map(chr)
HOSTILE_TEXT = st.lists(st.one_of(st.characters(), SURROGATE), max_size=30).map("".join)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | HOSTILE_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(HOSTILE_TEXT, inner, max_size=4),
    max_leaves=12,
)
REQUEST_IDS = st.integers() | HOSTILE_TEXT
ARGUMENTS = st.dictionaries(st.sampled_from(ARGUMENT_NAMES) | HOSTILE_TEXT, JSON_VALUES, max_size=4)


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    """A JSON-RPC request whose method, params, arguments and `_meta` may hold anything."""
    method = draw(st.sampled_from(METHODS) | HOSTILE_TEXT)
    params: Any = {
        "name": draw(st.sampled_from(TOOL_NAMES) | HOSTILE_TEXT),
        "arguments": draw(ARGUMENTS | JSON_VALUES),
        "_meta": draw(JSON_VALUES),
    }
    request = {"jsonrpc": "2.0", "id": draw(REQUEST_IDS), "method": method}
    if draw(st.booleans()):
        request["params"] = draw(st.just(params) | JSON_VALUES)
    return request


def line_of(value: Any) -> bytes:
    # ensure_ascii writes a lone surrogate as JSON's "\ud800" escape, as other clients do.
    return json.dumps(value, ensure_ascii=True).encode("ascii")


# -- the wire, pure -------------------------------------------------------------------------


def error_code(inbound: object) -> tuple[Any, int]:
    assert isinstance(inbound, Reply), inbound
    return inbound.payload["id"], inbound.payload["error"]["code"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"not json", (None, PARSE_ERROR)),
        (b'{"jsonrpc": "2.0", "id": 1, "method"', (None, PARSE_ERROR)),
        (b"NaN", (None, PARSE_ERROR)),
        (b"[" * 100_000, (None, PARSE_ERROR)),
        (b"\xff\xfe\x00", (None, PARSE_ERROR)),
        (b"[1, 2]", (None, INVALID_REQUEST)),
        (b"7", (None, INVALID_REQUEST)),
        (b'{"id": 4, "method": "ping"}', (4, INVALID_REQUEST)),
        (b'{"jsonrpc": "2.0", "id": "x"}', ("x", INVALID_REQUEST)),
        (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', (None, INVALID_REQUEST)),
        (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', (None, INVALID_REQUEST)),
        (b'{"jsonrpc": "2.0", "id": 2.5, "method": "ping"}', (None, INVALID_REQUEST)),
        (b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": 3}', (5, INVALID_REQUEST)),
    ],
)
def test_a_line_that_is_not_a_request_gets_the_spec_error(
    raw: bytes, expected: tuple[Any, int]
) -> None:
    assert error_code(decode_line(raw)) == expected


def test_blank_lines_are_skipped() -> None:
    assert decode_line(b"\n") is None
    assert decode_line(b"  \r\n") is None


def test_a_request_keeps_its_id_and_loses_its_surrogates_everywhere_else() -> None:
    raw = (
        rb'{"jsonrpc": "2.0", "id": "a\ud800", "method": "tools/call\udfff", "params": '
        rb'{"name": "search", "arguments": {"query": "caf\udce9", "k\ud800": 1}, '
        rb'"_meta": {"progressToken": "\ud800"}}}'
    )
    message = decode_line(raw)
    assert not isinstance(message, Reply) and message is not None
    dumped = message.model_dump(by_alias=True, exclude_unset=True)
    assert dumped["id"] == "a\ud800"
    assert dumped["method"] == "tools/call\ufffd"
    assert dumped["params"] == {
        "name": "search",
        "arguments": {"query": "caf\ufffd", "k\ufffd": 1},
        "_meta": {"progressToken": "\ufffd"},
    }


def test_a_written_line_carries_a_lone_surrogate_as_an_escape() -> None:
    line = encode_payload({"jsonrpc": "2.0", "id": "a\ud800", "result": {"text": "é\udfff"}})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    text = line.decode("utf-8")  # strict: the line is real UTF-8
    assert "\\ud800" in text and "é" in text
    assert json.loads(text) == {"jsonrpc": "2.0", "id": "a\ud800", "result": {"text": "é\udfff"}}


@hsettings(max_examples=150, deadline=None)
@given(value=JSON_VALUES | requests())
def test_any_json_line_decodes_to_a_message_or_an_encodable_reply(value: Any) -> None:
    line = line_of(value)
    inbound = decode_line(line)
    assert inbound is not None
    if isinstance(inbound, Reply):
        json.loads(encode_payload(inbound.payload))
    elif isinstance(value, dict) and "id" in value and "method" in value:
        assert getattr(inbound, "id", None) == json.loads(line)["id"]  # as the wire has it


@hsettings(max_examples=300, deadline=None)
@given(raw=st.binary(max_size=200))
def test_any_bytes_decode_without_raising(raw: bytes) -> None:
    inbound = decode_line(raw)
    if isinstance(inbound, Reply):
        assert inbound.payload["id"] is None


# -- the real server, raw lines -------------------------------------------------------------


class RawServer:
    """`memex mcp` in a subprocess, spoken to one line at a time."""

    def __init__(self, settings: Settings, log: Path) -> None:
        self._errlog = open(log, "w", encoding="utf-8")  # noqa: SIM115 (closed in close())
        self.process = subprocess.Popen(
            [sys.executable, "-c", BOOT, "mcp", *cli_args(settings)],
            cwd=str(ROOT),
            env=dict(os.environ),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errlog,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def response(self) -> dict[str, Any]:
        line = self._lines.get(timeout=HANG_SECONDS)  # only a net under a hung server
        line.decode("utf-8")  # strict: the server writes real UTF-8
        payload: dict[str, Any] = json.loads(line)
        assert payload["jsonrpc"] == "2.0"
        assert ("result" in payload) != ("error" in payload), payload
        return payload

    def ask(self, line: bytes) -> dict[str, Any]:
        self.send(line)
        return self.response()

    def unread(self) -> int:
        return self._lines.qsize()

    def close(self) -> int:
        """Close stdin (the client leaves) and the server's exit code."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=HANG_SECONDS)

    def release(self) -> None:
        """Stop the process if it still runs and close every file of it."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=HANG_SECONDS)
        self._reader.join(timeout=HANG_SECONDS)
        for stream in (self.process.stdin, self.process.stdout, self._errlog):
            if stream is not None:
                stream.close()


@pytest.fixture
def raw_server(demo_index: Settings, tmp_path: Path) -> Any:
    server = RawServer(demo_index, tmp_path / "server.log")
    opened = server.ask(
        line_of({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE})
    )
    assert opened["id"] == 0 and "result" in opened
    server.send(line_of({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    yield server
    server.release()


def call_line(request_id: Any, tool: str, arguments: Any) -> bytes:
    params = {"name": tool, "arguments": arguments}
    return line_of({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def test_the_issue_lines_are_answered(raw_server: RawServer, tmp_path: Path) -> None:
    hit = raw_server.ask(call_line(1, "search", {"query": "\ud800"}))
    assert hit["id"] == 1 and "results" in hit["result"]["structuredContent"]
    mixed = raw_server.ask(call_line(2, "search", {"query": "standup \udce9 moved", "limit": 3}))
    assert mixed["result"]["structuredContent"]["results"]
    assert mixed["result"]["structuredContent"]["query"] == "standup \ufffd moved"
    bad_id = raw_server.ask(call_line("id\udfff", "status", {}))
    assert bad_id["id"] == "id\udfff" and "result" in bad_id
    assert raw_server.ask(b"this is not JSON-RPC")["error"]["code"] == PARSE_ERROR
    assert raw_server.ask(b"this is not JSON-RPC")["id"] is None
    too_long = raw_server.ask(b'"' + b"x" * (MAX_LINE_BYTES + 10) + b'"')
    assert (too_long["id"], too_long["error"]["code"]) == (None, INVALID_REQUEST)
    assert raw_server.ask(line_of({"jsonrpc": "2.0", "id": 3, "method": "ping"})) == {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {},
    }
    assert raw_server.unread() == 0
    assert raw_server.close() == 0
    assert "Traceback" not in (tmp_path / "server.log").read_text(encoding="utf-8")


@hsettings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_fuzzed_lines_each_get_one_answer_and_the_server_lives(
    raw_server: RawServer, tmp_path: Path, data: st.DataObject
) -> None:
    cases = data.draw(st.lists(requests() | st.binary(max_size=120), min_size=150, max_size=150))
    for n, case in enumerate(cases):
        if isinstance(case, bytes):
            line = case.replace(b"\n", b" ")
            if not line.decode("utf-8", errors="replace").strip():
                continue  # a blank line is skipped, as between messages
            assert raw_server.ask(line)["id"] is None, line
        else:
            line = line_of(case)
            answer = raw_server.ask(line)
            assert answer["id"] == json.loads(line)["id"], (n, case, answer)
    alive = raw_server.ask(line_of({"jsonrpc": "2.0", "id": "last", "method": "ping"}))
    assert alive == {"jsonrpc": "2.0", "id": "last", "result": {}}
    assert raw_server.unread() == 0  # nothing answered twice
    assert raw_server.close() == 0
    assert "Traceback" not in (tmp_path / "server.log").read_text(encoding="utf-8")


# -- the real server, the SDK's client ------------------------------------------------------

SDK_TEXT = st.text(max_size=30)  # no lone surrogates: the SDK client cannot write them
SDK_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | SDK_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(SDK_TEXT, inner, max_size=4),
    max_leaves=10,
)
SDK_CALLS = st.tuples(
    st.sampled_from(TOOL_NAMES) | SDK_TEXT,
    st.dictionaries(st.sampled_from(ARGUMENT_NAMES) | SDK_TEXT, SDK_VALUES, max_size=4),
)


async def answered(session: ClientSession, tool: str, arguments: dict[str, Any]) -> str:
    """How the call was answered: a result, a tool error or a JSON-RPC error."""
    try:
        result = await session.call_tool(tool, arguments)
    except MCPError:
        return "error"
    return "tool error" if result.is_error else "result"


@hsettings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(calls=st.lists(SDK_CALLS, min_size=40, max_size=40))
def test_fuzzed_tool_calls_through_the_sdk_client_are_all_answered(
    demo_index: Settings, tmp_path: Path, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    async def drive() -> list[str]:
        async with connect(demo_index, tmp_path / "server.log") as session:
            outcomes = [await answered(session, tool, args) for tool, args in calls]
            await session.send_ping()
            outcomes.append(await answered(session, "search", {"query": "standup"}))
        return outcomes

    outcomes = anyio.run(drive, backend="asyncio")
    assert len(outcomes) == len(calls) + 1 and outcomes[-1] == "result"
    assert "Traceback" not in (tmp_path / "server.log").read_text(encoding="utf-8")
