"""Related context (engine/search/rank/related.py): one hop from the top hits, after them."""

from __future__ import annotations

import io
import json

from jsonschema import Draft202012Validator

from engine.cli import run
from engine.records import SearchResult
from engine.schemas import json_schema
from engine.search import Searcher
from engine.search.hits import Hit
from engine.search.rank.related import pick_related
from engine.settings import Settings
from tests.conftest import cli_args


def test_pick_related_skips_what_is_shown_and_stops_at_the_limit() -> None:
    direct = [Hit.chunk(1, 0.5), Hit.chunk(2, 0.4)]
    links = [
        ("id-1", 2, "conversation"),  # already a direct hit
        ("id-1", 3, "wikilink"),
        ("id-2", 3, "record"),  # twice: once
        ("id-2", 4, "conversation"),
        ("id-2", 5, "conversation"),
    ]
    out = pick_related(direct, links, limit=2)
    assert [c.seq for c in out] == [3, 4]
    assert all(c.related and c.score == 0.0 for c in out)
    assert out[0].explain() == {"related_to": "id-1", "link": "wikilink"}
    assert pick_related(direct, [], 3) == []


def search(settings: Settings, query: str, limit: int, **kwargs: object) -> list[SearchResult]:
    searcher = Searcher(settings)
    try:
        return searcher.search(query, limit, explain=True, **kwargs).results  # type: ignore[arg-type]
    finally:
        searcher.close()


def related_on(settings: Settings) -> Settings:
    return settings.with_values(search__related=True)


def test_related_results_come_after_every_direct_hit(demo_index: Settings) -> None:
    query = "systems thinking reading list related books"
    plain = search(demo_index, query, 3)
    hits = search(related_on(demo_index), query, 3)
    assert [h.id for h in hits[:3]] == [h.id for h in plain]  # nothing displaced
    assert not any(h.related for h in hits[:3])
    extra = hits[3:]
    assert extra and len(extra) <= 3 and all(h.related and h.score == 0.0 for h in extra)
    linked = [h for h in extra if h.explain and h.explain["link"] == "wikilink"]
    assert {h.source_file.rsplit("/", 1)[1] for h in linked} >= {"the-mom-test.md"}
    assert not {h.id for h in extra} & {h.id for h in plain}


def test_an_interview_answer_brings_its_interview_record(demo_index: Settings) -> None:
    hits = search(related_on(demo_index), "Modbus register map", 3)
    records = [h for h in hits[3:] if h.explain and h.explain["link"] == "record"]
    assert records and records[0].source_type == "interview_meta"
    assert records[0].source_file.endswith("int-2026-05-13-vestby.json")
    assert "Follow ups: Prototype Elhub consent flow" in records[0].content


def test_a_chat_window_brings_the_windows_of_the_same_conversation(demo_index: Settings) -> None:
    hits = search(related_on(demo_index), "aFRR re-plans every 5 minutes", 3)
    direct = {h.id: h for h in hits[:3]}
    around = [h for h in hits[3:] if h.explain and h.explain["link"] == "conversation"]
    assert around
    for h in around:
        origin = direct[h.explain["related_to"]]  # type: ignore[index]
        assert (
            h.source_file == origin.source_file
            and h.title.split(" · ")[0] == (origin.title.split(" · ")[0])
        )


def test_no_related_results_when_off_or_filtered(demo_index: Settings) -> None:
    query = "Modbus register map"
    assert not any(h.related for h in search(demo_index, query, 3))
    filtered = search(related_on(demo_index), query, 3, source_types=["interview"])
    assert not any(h.related for h in filtered)


def test_the_json_marks_related_results(demo_index: Settings) -> None:
    config = "[search]\nrelated = true\nrelated_limit = 2\n"
    out, err = io.StringIO(), io.StringIO()
    argv = [*cli_args(demo_index, config), "--search", "Modbus register map", "--limit", "2"]
    assert run([*argv, "--json", "--explain"], out, err) == 0, err.getvalue()
    payload = json.loads(out.getvalue())
    Draft202012Validator(json_schema()).validate(payload)
    flags = [r.get("related", False) for r in payload["results"]]
    assert flags == [False, False, True, True]
    assert all(r["explain"]["related_to"] for r in payload["results"][2:])
    out = io.StringIO()
    assert run(argv, out, err) == 0
    assert " 3. related · [" in out.getvalue()
