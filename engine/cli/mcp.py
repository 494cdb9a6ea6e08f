"""`memex mcp`: serve the index to AI assistants over MCP (stdio) until stdin closes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from engine.cli.common import EXIT_OK, EXIT_UNUSABLE, CliError, Parser, add_common, settings_from

INSTALL_HINT = "the MCP server needs the 'mcp' extra: pip install 'memex[mcp]'"


def cmd_mcp(argv: Sequence[str], out: TextIO) -> int:
    p = Parser(
        prog="memex mcp",
        description="Serve the index to AI assistants over the Model Context Protocol (stdio): "
        "tools search, get, person and status, read-only. See docs/mcp.md.",
    )
    add_common(p)
    args = p.parse_args(argv)
    settings = settings_from(args)
    try:
        from engine.mcp.server import serve
    except ModuleNotFoundError as exc:
        if (exc.name or "engine").startswith("engine"):
            raise
        raise CliError(f"{INSTALL_HINT} ({exc.name} is missing)", EXIT_UNUSABLE) from None
    # stdout carries the protocol: nothing else may be written to `out`.
    serve(settings)
    return EXIT_OK
