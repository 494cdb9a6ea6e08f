"""Memex as an AI assistant's memory: an MCP server over stdio (`memex mcp`).

`tools` (search, get, person, status over one warm `Engine`) and `params` (their arguments)
need only the engine; `server` puts them on the official MCP SDK, the `memex[mcp]` extra.
Importing this package imports neither, so the CLI can say how to install the extra.
"""
