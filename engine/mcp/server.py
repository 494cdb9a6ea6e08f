"""`memex mcp`: the MCP server over stdio, on the official SDK's low-level `Server`.

The low-level server rather than `MCPServer` (the SDK's decorator front end) because Memex
declares each tool's input schema from its `Param`s and its output schema from the JSON
schema file, and answers a bad argument with one sentence instead of a pydantic report.

One `Engine` lives as long as the server, and every tool runs on one thread of its own: the
engine keeps a read connection per thread, so a single long-lived thread holds one connection
(the worker threads of anyio's pool come and go, and each would open another). The engine's
writer is never started, nothing is reindexed and no run-log line is written.

Stdin and stdout go through engine/mcp/transport.py rather than the SDK's `stdio_server()`,
so that every line gets an answer (docs/mcp.md, "Every request is answered").
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import anyio
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError

from engine import __version__
from engine.core import Engine
from engine.mcp.tools import TOOLS, ToolSpec, failure_message
from engine.mcp.transport import stdio_transport
from engine.schemas import definition_schema
from engine.settings import Settings

log = logging.getLogger("memex.mcp")
T = TypeVar("T")

INSTRUCTIONS = (
    "Memex is the user's personal memory: their own chats, meetings, mail, notes, journal, "
    "health data and the people in them, searched on this machine. Search it whenever the "
    "user mentions a past event, person or decision; `get` reads a result in context, "
    "`person` gives someone's card and recent mentions, `status` says how fresh the index is."
)
NOT_INITIALIZED = (
    "Invalid Request: the session is not initialized; send 'initialize', then "
    "'notifications/initialized', before any other request"
)
_SDK_NOT_INITIALIZED = (types.INVALID_PARAMS, "Invalid request parameters")
READ_ONLY = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


class EngineThread:
    """The one thread that runs every tool call on the engine, in arrival order."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memex-mcp")

    def submit(self, function: Callable[[Engine], Any]) -> None:
        """Queue work whose result nobody waits for (the warm-up)."""
        self._pool.submit(function, self.engine)

    async def run(self, function: Callable[[Engine], T]) -> T:
        return await asyncio.wrap_future(self._pool.submit(function, self.engine))

    def close(self) -> None:
        """Finish the queued calls, then close the engine on its own thread."""
        self._pool.submit(self.engine.close)
        self._pool.shutdown(wait=True)


def warm_up(engine: Engine) -> None:
    """Load the model and the vectors before the first question rather than during it."""
    try:
        engine.search("memex", 1)
    except Exception:  # no index yet, an unusable embedder: the first call will say so
        log.debug("warm-up search failed", exc_info=True)


def tool_definition(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema(),
        output_schema=definition_schema(spec.output),
        annotations=READ_ONLY,
    )


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


def payload_result(payload: dict[str, Any]) -> types.CallToolResult:
    # The JSON text too, for clients that show `content` and ignore `structuredContent`.
    text = json.dumps(payload, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=payload
    )


async def call_tool(
    worker: EngineThread, name: str, arguments: Mapping[str, Any]
) -> types.CallToolResult:
    """Run one tool; every failure is an error result of one sentence, never a traceback."""
    spec = TOOLS.get(name)
    if spec is None:
        return error_result(f"unknown tool '{name}' (tools: {', '.join(TOOLS)})")
    try:
        payload = await worker.run(lambda engine: spec.call(engine, arguments))
    except Exception as exc:
        message = failure_message(exc)
        if message is None:
            log.exception("tool %s failed", name)  # to stderr, the server's log
            message = (
                f"{name} failed unexpectedly ({type(exc).__name__}); the server log has the details"
            )
        return error_result(message)
    return payload_result(payload)


def build_server(worker: EngineThread, version: str) -> Server[Any]:
    tools = [tool_definition(spec) for spec in TOOLS.values()]

    async def on_list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await call_tool(worker, params.name, params.arguments or {})

    server: Server[Any] = Server(
        "memex",
        version=version,
        title="Memex",
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
    server.middleware.append(initialize_first)
    return server


async def initialize_first(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """Middleware answering a request sent before `initialize` with what to do. The SDK's
    own answer, INVALID_PARAMS "Invalid request parameters", sends a client looking at its
    arguments; its gate raises that error only before the handshake, and only for methods
    the server serves (unknown ones keep "Method not found"), so that error is replaced."""
    try:
        return await call_next(ctx)
    except MCPError as exc:
        said = (exc.error.code, exc.error.message)
        if ctx.session.client_params is None and said == _SDK_NOT_INITIALIZED:
            raise MCPError(code=types.INVALID_REQUEST, message=NOT_INITIALIZED) from None
        raise


async def serve_stdio(settings: Settings) -> None:
    worker = EngineThread(Engine(settings))
    worker.submit(warm_up)
    server = build_server(worker, __version__)
    try:
        async with stdio_transport() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        worker.close()


def serve(settings: Settings) -> None:
    """Serve MCP on stdin/stdout until the client closes stdin."""
    anyio.run(serve_stdio, settings, backend="asyncio")
