"""A one-shot `memex --search` loads what a search needs and nothing of the indexer, the
readers or the people build (engine/cli/__init__.py resolves commands on dispatch)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.cli import COMMANDS
from engine.settings import Settings
from tests.conftest import cli_args
from tests.test_cli import cli

ROOT = Path(__file__).resolve().parents[1]
# Runs the console entry point as `memex` does, then prints the engine's loaded modules.
MODULES_AFTER_MAIN = (
    "import contextlib, io, json, sys\n"
    "from engine.entry import main\n"
    "out = io.StringIO()\n"
    "with contextlib.redirect_stdout(out):\n"
    "    code = main(sys.argv[1:])\n"
    "print(json.dumps({'code': code, 'out': out.getvalue(),\n"
    "    'modules': sorted(m for m in sys.modules if m.startswith('engine'))}))\n"
)
PEOPLE_BUILD = (
    "engine.people.directory",
    "engine.people.resolve",
    "engine.people.profile",
    "engine.people.orgs",
    "engine.people.shared",
)
PEOPLE_FILE = {"people": [{"name": "Maya Lund", "relationship": "sister"}]}


def slack_line(n: int, sender: str, text: str) -> str:
    record = {"ts": f"{1710000000 + n * 60}.000100", "channel": "family", "user": f"U{n % 2}",
              "user_name": sender, "text": text}  # fmt: skip
    return json.dumps(record)


@pytest.fixture
def layer(settings_factory: Callable[..., Settings]) -> list[str]:
    """`--root/--db/--config` of a small indexed layer (hashing embedder) with a people file."""
    settings = settings_factory()
    root = settings.roots[0]
    (root / "data" / "slack").mkdir(parents=True)
    lines = [slack_line(n, ("Maya Lund", "Ola Berg")[n % 2], f"ferry to Oslo, trip {n}") for n in range(40)]  # fmt: skip
    (root / "data" / "slack" / "family.jsonl").write_text("\n".join(lines) + "\n")
    (root / "profile").mkdir()
    (root / "profile" / "relationships.json").write_text(json.dumps(PEOPLE_FILE))
    args = cli_args(settings)
    code, _, err = cli(*args, "reindex")
    assert code == 0, err
    return args


def search_process(*args: str) -> dict[str, object]:
    """`memex ARGS` in a child process (the one-shot path): exit code, output, modules."""
    env = {**os.environ, "MEMEX_NO_WARM": "1"}
    done = subprocess.run(
        [sys.executable, "-c", MODULES_AFTER_MAIN, *args],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return found


def heavy(modules: object) -> list[str]:
    assert isinstance(modules, list)
    return [
        m
        for m in modules
        if m.startswith(("engine.index", "engine.extractors", "engine.core")) or m in PEOPLE_BUILD
    ]


def test_a_search_imports_no_indexer_reader_or_people_build(layer: list[str]) -> None:
    found = search_process(*layer, "--search", "Maya Lund")
    assert found["code"] == 0
    assert "sister" in str(found["out"])  # the card of the people file's Maya, read
    assert "engine.search.pipeline" in found["modules"]  # type: ignore[operator]
    assert heavy(found["modules"]) == []
    # nor the HTTP client of the openai embedder and the re-ranker, both unused here
    assert not {"engine.net", "engine.embedders.openai_embedder"} & set(found["modules"])  # type: ignore[arg-type]
    # nor the warm process's in-memory copies of the index (a one-shot reads neither)
    warm_copies = {
        "engine.search.retrieve.keyword_index",
        "engine.search.retrieve.vector_cache",
        "engine.search.retrieve.mirror",
    }
    assert not warm_copies & set(found["modules"])  # type: ignore[arg-type]


def test_a_command_still_loads_what_it_needs(layer: list[str]) -> None:
    found = search_process(*layer, "status")
    assert found["code"] == 0
    assert "engine.index.status" in found["modules"]  # type: ignore[operator]


def test_without_roots_the_kept_directory_stands(layer: list[str]) -> None:
    """`--db` alone finds no people file to compare: the directory as the run built it
    (with the people file's corrections), not a rebuild from every mention per search."""
    without_root = layer[2:]
    found = search_process(*without_root, "--search", "Maya Lund")
    assert found["code"] == 0
    assert "sister" in str(found["out"])
    assert heavy(found["modules"]) == []


def test_an_edited_people_file_shows_before_the_next_run(layer: list[str]) -> None:
    people_file = Path(layer[1]) / "profile" / "relationships.json"
    people_file.write_text(json.dumps({"people": [{"name": "Maya Lund", "relationship": "aunt"}]}))
    found = search_process(*layer, "--search", "Maya Lund")
    assert "aunt" in str(found["out"]) and "sister" not in str(found["out"])
    assert "engine.people.directory" in found["modules"]  # type: ignore[operator]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_resolves_to_a_function(name: str) -> None:
    module, function = COMMANDS[name].split(":")
    assert callable(getattr(importlib.import_module(module), function))
