"""The JSON Schemas of Memex's machine-readable output, shipped inside the package.

`memex-v1.schema.json` describes `memex --search --json` (its root) and every MCP tool's
result (its `$defs`). Tests validate real output against it; the MCP server hands each
tool's part to clients as the tool's output schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA_FILE = Path(__file__).resolve().parent / "memex-v1.schema.json"


def json_schema() -> dict[str, Any]:
    """The whole schema document (a fresh copy: callers may change it)."""
    document: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return document


def definition_schema(name: str) -> dict[str, Any]:
    """One `$defs` entry as a self-contained schema: the entry at the root (so its root is
    `"type": "object"`, as MCP output schemas must be) and every definition beside it, for
    the `#/$defs/...` references inside it. KeyError for an unknown name."""
    document = json_schema()
    definitions: dict[str, Any] = document["$defs"]
    return {
        "$schema": document["$schema"],
        **definitions[name],
        "$defs": definitions,
    }
