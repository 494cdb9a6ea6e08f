"""`memex people`, Engine.people() and the MCP person tool over a directory built by the real
indexer (hashing embedder), on the demo layer without its people file, then with it."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from engine.cli import run
from engine.core import Engine, read_people
from engine.embedders.hashing import HashingEmbedder
from engine.index.runs import reindex
from engine.resources import demo_dir
from engine.schemas import definition_schema
from engine.settings import Settings
from tests.conftest import cli_args, make_settings
from tests.test_mcp import call, connect


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The demo layer with no people file, indexed once for this module."""
    base = tmp_path_factory.mktemp("people-layer")
    root = base / "demo"
    shutil.copytree(demo_dir(), root)
    (root / "profile" / "relationships.json").unlink()
    (base / "index").mkdir()
    settings = make_settings(root, base / "index" / "memex.db", **{"embedder.name": "hashing"})
    assert reindex(settings=settings, embedder=HashingEmbedder()).chunks > 0
    return settings


@pytest.fixture
def layer(indexed: Settings) -> Iterator[Settings]:
    """That layer; a people file a test writes is gone after it."""
    yield indexed
    (indexed.roots[0] / "profile" / "relationships.json").unlink(missing_ok=True)


def people_json(settings: Settings, *extra: str) -> dict[str, Any]:
    code, out, err = cli("people", "--json", *extra, *cli_args(settings))
    assert code == 0 and "Traceback" not in err, err
    payload: dict[str, Any] = json.loads(out)
    for person in payload["people"]:
        Draft202012Validator(definition_schema("person")).validate(
            {k: v for k, v in person.items() if k != "card"}
        )
    return payload


def test_people_come_from_the_data_without_a_people_file(layer: Settings) -> None:
    payload = people_json(layer)
    names = {p["name"]: p for p in payload["people"]}
    assert payload["with_card"] == len(payload["people"]) < payload["known"]
    priya = names["Priya Raman"]
    assert not priya["curated"] and priya["card"]
    assert priya["sources"]["slack"] > 0 and priya["messages"] >= 10
    assert priya["first"] < priya["last"] and priya["conversations"]
    assert all(s["slug"] != priya["slug"] for s in priya["seen_with"])
    everyone = people_json(layer, "--all")
    assert len(everyone["people"]) == everyone["known"] == payload["known"]
    assert any(not p["card"] for p in everyone["people"])


def test_people_as_text(layer: Settings) -> None:
    code, out, err = cli("people", *cli_args(layer))
    assert code == 0, err
    priya = next(line for line in out.splitlines() if line.startswith("Priya Raman"))
    assert "Slack" in priya and "messages" in priya
    assert out.splitlines()[-1].endswith("; --all lists everyone")


def test_the_people_file_adds_to_the_directory_before_the_next_run(layer: Settings) -> None:
    people_file = layer.roots[0] / "profile" / "relationships.json"
    people_file.write_text(
        json.dumps({"people": [{"name": "Priya Raman", "relationship": "coworker"}]}),
        encoding="utf-8",
    )
    priya = next(p for p in read_people(layer) if p.name == "Priya Raman")
    assert priya.curated and priya.relationship == "coworker" and priya.sources


def test_a_bad_people_file_is_one_line_and_the_directory_stays(
    layer: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    (layer.roots[0] / "profile" / "relationships.json").write_text("{oops", encoding="utf-8")
    code, out, _ = cli("people", "--json", *cli_args(layer))
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err
    assert "not a JSON people file" in err and len(err.strip().splitlines()) == 1
    assert any(p["name"] == "Priya Raman" for p in json.loads(out)["people"])


def test_without_an_index_the_people_file_alone(
    settings_factory: Callable[..., Settings], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    (root / "profile").mkdir(parents=True)
    (root / "profile" / "relationships.json").write_text('[{"name": "Ann Lee"}]')
    settings = settings_factory(root)
    code, out, _ = cli("people", "--json", *cli_args(settings))
    assert code == 0 and "no index at" in capsys.readouterr().err
    assert [p["name"] for p in json.loads(out)["people"]] == ["Ann Lee"]


def test_the_engine_people_are_the_directory_with_cards(layer: Settings) -> None:
    with Engine(layer, embedder=HashingEmbedder()) as engine:
        carded = engine.people()
        assert any(p.name == "Jakob Nygaard" and not p.curated for p in carded)
        assert len(engine.directory()) > len(carded)
        assert engine.searcher().matcher.find("what did Jakob Nygaard say") is not None


@pytest.mark.anyio
async def test_the_mcp_person_tool_finds_a_directory_person(
    layer: Settings, tmp_path: Path
) -> None:
    async with connect(layer, tmp_path / "server.log") as session:
        payload = await call(session, "person", name="jakob nygaard", limit=3)
        card = await call(session, "get", id=f"profile:{payload['person']['slug']}")
    person = payload["person"]
    assert person["name"] == "Jakob Nygaard" and not person["curated"]
    assert person["sources"] and person["messages"] and person["conversations"]
    assert 0 < len(payload["mentions"]) <= 3
    assert all("jakob" in m["content"].lower() for m in payload["mentions"])
    assert "Appears in: " in card["content"] and "Latest: " in card["content"]


def test_the_one_shot_search_shows_a_directory_card(layer: Settings) -> None:
    code, out, err = cli("--search", "Jakob Nygaard", "--json", "--limit", "3", *cli_args(layer))
    assert code == 0, err
    first = json.loads(out)["results"][0]
    assert first["source_type"] == "profile" and first["profile"]["name"] == "Jakob Nygaard"
    assert first["profile"]["sources"] and "Appears in: " in first["content"]
