"""`memex --search --json` against engine/schemas/memex-v1.schema.json, and the schema's
place in the wheel and the bundle. (The MCP tools' results: tests/test_mcp.py.)"""

from __future__ import annotations

import io
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, ValidationError

from engine.cli import run
from engine.schemas import SCHEMA_FILE, json_schema
from engine.settings import Settings
from tests.conftest import cli_args
from tests.test_packaging import by_kind, run_spec

ROOT = Path(__file__).resolve().parent.parent
QUERIES = [
    ["--search", "standup moved"],
    ["--search", "Priya"],  # a known name: the injected profile result
    ["--search", "bike", "--source", "journal", "--since", "2025-06-01", "--mode", "bm25"],
    ["--search", "zzzqqq", "--mode", "bm25"],  # no results
    ["--search", "standup", "--person", "Ingrid", "--explain"],
    ["--search", "steps on 12 June 2026"],  # dates read from the query
    ["--search", "standup", "--since", "2026-06", "--mode", "bm25"],  # an open-ended range
]


def search_json(settings: Settings, argv: list[str]) -> Any:
    out, err = io.StringIO(), io.StringIO()
    assert run([*cli_args(settings), *argv, "--json"], out, err) == 0, err.getvalue()
    return json.loads(out.getvalue())


def test_search_json_follows_the_schema(demo_index: Settings) -> None:
    validator = Draft202012Validator(json_schema())
    payloads = [search_json(demo_index, argv) for argv in QUERIES]
    for argv, payload in zip(QUERIES, payloads, strict=True):
        validator.validate(payload)
        assert bool(payload["results"]) == (argv[1] != "zzzqqq"), argv
    profiles = [r for r in payloads[1]["results"] if r["profile"] is not None]
    assert [r["id"] for r in profiles] == ["profile:priya-raman"]
    assert all(r["explain"] for r in payloads[4]["results"])
    assert payloads[0]["dates"] is None
    assert payloads[5]["dates"]["from_query"] == "on 12 June 2026"
    assert payloads[6]["dates"] == {"since": "2026-06-01", "until": None, "from_query": None}


def test_the_schema_rejects_what_it_does_not_describe(demo_index: Settings) -> None:
    validator = Draft202012Validator(json_schema())
    payload = search_json(demo_index, ["--search", "standup"])
    for broken in (
        {**payload, "surprise": 1},
        {key: value for key, value in payload.items() if key != "warnings"},
        {key: value for key, value in payload.items() if key != "outcome"},
        {**payload, "outcome": {**payload["outcome"], "vector_miss": "tired"}},
        {**payload, "results": [{**payload["results"][0], "score": "high"}]},
        {**payload, "mode": "fuzzy"},
        {**payload, "dates": {"since": "2026-06-01"}},
        {**payload, "dates": "last week"},
    ):
        with pytest.raises(ValidationError):
            validator.validate(broken)


def test_the_schema_ships_in_the_wheel_and_the_bundle(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_data = project["tool"]["setuptools"]["package-data"]
    assert SCHEMA_FILE.match(f"engine/schemas/{package_data['engine.schemas'][0]}")
    ((_, analysis),) = by_kind(run_spec(monkeypatch, tmp_path, "linux"), "Analysis")
    assert (str(SCHEMA_FILE), "engine/schemas") in analysis["datas"]
