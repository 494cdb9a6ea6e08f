"""`memex mcp`: the real server in a subprocess, driven over stdio by the MCP SDK's own client.

Every result is checked against engine/schemas/memex-v1.schema.json; every bad call must come
back as a tool error of one sentence; no tool may write the index or the run log.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import ClientSession, StdioServerParameters, stdio_client, types

from engine.cli import run
from engine.schemas import definition_schema, json_schema
from engine.search import MODES
from engine.settings import Settings
from tests.conftest import cli_args

ROOT = Path(__file__).resolve().parent.parent
BOOT = "import sys; from engine.cli import main; sys.exit(main())"
# Only a net under a hung server: every call answers in well under a second.
HANG_SECONDS = 120
OUTPUTS = {
    "search": "search_response",
    "get": "get_response",
    "person": "person_response",
    "status": "status_response",
}

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def validate(tool: str, payload: Any) -> None:
    """Raise if `payload` breaks the schema of `tool`'s result."""
    Draft202012Validator(definition_schema(OUTPUTS[tool])).validate(payload)


@asynccontextmanager
async def connect(
    settings: Settings, log: Path, extra_config: str = ""
) -> AsyncIterator[ClientSession]:
    """A client session with `memex mcp` for these settings; the server's stderr in `log`."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", BOOT, "mcp", *cli_args(settings, extra_config)],
        cwd=str(ROOT),
        env=dict(os.environ),  # the private XDG folders of tests/conftest.py, among others
    )
    with open(log, "w", encoding="utf-8") as errlog, anyio.fail_after(HANG_SECONDS):
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """A successful call's structured result, checked against the schema and the text."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    payload: dict[str, Any] = result.structured_content
    validate(tool, payload)
    (text,) = result.content
    assert isinstance(text, types.TextContent) and json.loads(text.text) == payload
    return payload


async def error(session: ClientSession, tool: str, **arguments: Any) -> str:
    """A failed call's one sentence."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    (text,) = result.content
    assert isinstance(text, types.TextContent)
    assert "\n" not in text.text and "Traceback" not in text.text, text.text
    return text.text


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def test_lists_four_read_only_tools_with_typed_schemas(
    demo_index: Settings, tmp_path: Path
) -> None:
    async with connect(demo_index, tmp_path / "server.log") as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == set(OUTPUTS)
    for name, tool in tools.items():
        assert tool.description and len(tool.description) > 60, name
        assert tool.input_schema["type"] == "object", name
        assert tool.input_schema["additionalProperties"] is False, name
        Draft202012Validator.check_schema(tool.input_schema)
        assert tool.output_schema == definition_schema(OUTPUTS[name])
        assert tool.output_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
    search = tools["search"].input_schema
    assert search["required"] == ["query"]
    assert set(search["properties"]) == {
        "query",
        "limit",
        "source_types",
        "since",
        "until",
        "person",
        "mode",
    }
    assert search["properties"]["mode"]["enum"] == list(MODES)
    assert search["properties"]["limit"]["minimum"] == 1
    assert search["properties"]["source_types"]["type"] == "array"
    assert tools["get"].input_schema["required"] == ["id"]
    assert tools["person"].input_schema["required"] == ["name"]
    assert tools["status"].input_schema["properties"] == {}


async def test_every_tool_answers_on_the_demo_index(demo_index: Settings, tmp_path: Path) -> None:
    async with connect(demo_index, tmp_path / "server.log") as session:
        found = await call(session, "search", query="standup moved", limit=5)
        filtered = await call(
            session, "search", query="standup", source_types=["slack"], since="2025-08-01"
        )
        hit = found["results"][0]
        chunk = await call(session, "get", id=hit["id"], context=1)
        card = await call(session, "get", id="profile:priya-raman")
        person = await call(session, "person", name="priya", limit=4)
        status = await call(session, "status")
    assert found["query"] == "standup moved" and found["mode"] == "hybrid"
    assert 0 < len(found["results"]) <= 5
    assert filtered["results"]
    assert all(r["source_type"] == "slack" for r in filtered["results"])
    assert all(r["content_date"] >= "2025-08-01" for r in filtered["results"])

    assert (chunk["id"], chunk["content"]) == (hit["id"], hit["content"])
    assert (chunk["source_file"], chunk["location"]) == (hit["source_file"], hit["location"])
    ordinals = [n["ordinal"] for n in chunk["neighbours"]]
    assert ordinals == sorted(ordinals) and len(ordinals) > 1
    assert [n["id"] for n in chunk["neighbours"] if n["is_hit"]] == [hit["id"]]
    assert card["source_type"] == "profile" and card["profile"]["name"] == "Priya Raman"

    assert person["person"]["name"] == "Priya Raman"
    dates = [m["content_date"] for m in person["mentions"]]
    assert 0 < len(dates) <= 4 and dates == sorted(dates, reverse=True)
    assert all("priya" in m["content"].lower() for m in person["mentions"])

    assert status["chunks"] == status["counts"]["chunks"] > 0
    assert status["vector_coverage"] == 1.0  # the demo index is fully embedded
    assert status["per_type"]["slack"] > 0


async def test_search_returns_the_records_of_the_cli_json(
    demo_index: Settings, tmp_path: Path
) -> None:
    # Recency off: each process would read its own clock, and scores keep six decimals.
    config = "[search]\nrecency = false\n"
    options = {"query": "bikes on the ferry", "limit": 6, "mode": "bm25", "since": "2025-01-01"}
    async with connect(demo_index, tmp_path / "server.log", config) as session:
        served = await call(session, "search", **options)
    out, err = io.StringIO(), io.StringIO()
    argv = ["--search", options["query"], "--limit", "6", "--mode", "bm25", "--since", "2025-01-01"]
    code = run([*cli_args(demo_index, config), *argv, "--json"], out, err)
    assert code == 0, err.getvalue()
    printed = json.loads(out.getvalue())
    assert served["results"], "the query must find something for the comparison to mean much"
    for payload in (served, printed):
        payload.pop("took_ms")
    assert served == printed


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("search", {"query": "standup", "mode": "fuzzy"}, "mode must be one of hybrid, vector, bm25"),
    ("search", {"query": "standup", "since": "last May"}, "since must be a date like"),
    ("search", {"query": "standup", "until": "2026-13-45"}, "until must be a date like"),
    ("search", {"query": "standup", "limit": 0}, "limit must be an integer from 1 to 50"),
    ("search", {"query": "standup", "limit": "ten"}, "limit must be an integer"),
    ("search", {"query": "standup", "limit": True}, "limit must be an integer"),
    ("search", {"query": "standup", "source_types": [3]}, "source_types must be a list"),
    ("search", {}, "query is required"),
    ("search", {"query": "standup", "colour": "red"}, "search has no argument 'colour'"),
    ("get", {"id": "no-such-chunk"}, "no chunk with id 'no-such-chunk'"),
    ("get", {"id": "profile:nobody"}, "no known person with id 'profile:nobody'"),
    ("get", {"id": "x", "context": 11}, "context must be an integer from 0 to 10"),
    ("person", {"name": "Zebedee"}, "no known person named 'Zebedee'; known people: "),
    ("nonesuch", {}, "unknown tool 'nonesuch'"),
]


async def test_bad_arguments_are_tool_errors_of_one_sentence(
    demo_index: Settings, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    async with connect(demo_index, log) as session:
        messages = [await error(session, tool, **args) for tool, args, _ in BAD_CALLS]
        still_serves = await call(session, "search", query="standup", limit=1)
    for (tool, args, expected), message in zip(BAD_CALLS, messages, strict=True):
        assert expected in message, (tool, args, message)
    assert still_serves["results"]
    assert "Traceback" not in log.read_text(encoding="utf-8")


async def test_a_missing_index_says_how_to_make_one(
    settings_factory: Callable[..., Settings], tmp_path: Path
) -> None:
    settings = settings_factory()
    async with connect(settings, tmp_path / "server.log") as session:
        messages = [
            await error(session, "search", query="standup"),
            await error(session, "get", id="abc"),
            await error(session, "person", name="Priya"),
            await error(session, "status"),
        ]
    for message in messages:
        assert f"no index at {settings.db_path}" in message, message
        assert "run 'memex reindex' or 'memex demo'" in message, message
    assert not settings.db_path.exists()  # asking created nothing


async def test_no_tool_writes_the_index_or_the_run_log(
    demo_index: Settings, tmp_path: Path
) -> None:
    before = sha256(demo_index.db_path)
    assert not demo_index.log_path.exists()
    async with connect(demo_index, tmp_path / "server.log") as session:
        found = await call(session, "search", query="Priya standup", limit=3)
        await call(session, "get", id=found["results"][0]["id"])
        await call(session, "person", name="Priya Raman")
        await call(session, "status")
    assert sha256(demo_index.db_path) == before
    assert not demo_index.log_path.exists()
    wal = demo_index.db_path.with_name(demo_index.db_path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0


def inet_sockets_of_children() -> list[str]:
    """Socket inodes of this process's children that are TCP or UDP endpoints (Linux)."""
    table = "".join(
        Path(f"/proc/net/{name}").read_text() for name in ("tcp", "tcp6", "udp", "udp6")
    )
    inet = {line.split()[9] for line in table.splitlines()[1:] if len(line.split()) > 9}
    found = []
    for child in Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split():
        for fd in Path(f"/proc/{child}/fd").iterdir():
            target = os.readlink(fd)
            if target.startswith("socket:[") and target[8:-1] in inet:
                found.append(f"{child}: {target}")
    return found


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux's /proc")
async def test_the_server_opens_no_network_socket(demo_index: Settings, tmp_path: Path) -> None:
    async with connect(demo_index, tmp_path / "server.log") as session:
        await call(session, "search", query="standup", limit=3)
        await call(session, "person", name="Priya")
        await call(session, "status")
        assert Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()
        assert inet_sockets_of_children() == []


def test_without_the_extra_the_command_says_how_to_install(
    demo_index: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` now fails as if not installed
    monkeypatch.delitem(sys.modules, "engine.mcp.server", raising=False)
    out, err = io.StringIO(), io.StringIO()
    assert run(["mcp", *cli_args(demo_index)], out, err) == 4
    assert out.getvalue() == ""
    assert err.getvalue().count("\n") == 1 and "pip install 'memex[mcp]'" in err.getvalue()


def test_the_schema_file_is_a_valid_json_schema() -> None:
    document = json_schema()
    Draft202012Validator.check_schema(document)
    for name in OUTPUTS.values():
        Draft202012Validator.check_schema(definition_schema(name))
    assert document["$ref"] == "#/$defs/search_response"
