"""Note-level results (engine/search/rank/sections.py): one result per note or meeting."""

from __future__ import annotations

import io
import json
from collections import Counter

import pytest
from jsonschema import Draft202012Validator

from engine.cli import run
from engine.schemas import json_schema
from engine.search import Searcher
from engine.search.hits import Hit
from engine.search.rank.sections import group_sections, section_lift
from engine.settings import Settings
from tests.conftest import cli_args

TYPES = frozenset({"note", "meeting"})


def cand(key: str, score: float, kind: str, file: str) -> Hit:
    if key.startswith("profile:"):
        return Hit.profile(key.removeprefix("profile:"), score)
    return Hit.chunk(int(key), score, source_type=kind, source_file=file)


def keys(hits: list[Hit]) -> list[str]:
    return [f"profile:{h.person}" if h.seq is None else str(h.seq) for h in hits]


def test_a_note_becomes_its_best_section_with_a_bounded_lift() -> None:
    cands = [
        cand("1", 0.50, "note", "a.md"),
        cand("2", 0.45, "slack", "general.jsonl"),
        cand("3", 0.44, "slack", "general.jsonl"),  # chat windows are never grouped
        cand("4", 0.40, "note", "a.md"),
        cand("5", 0.30, "note", "a.md"),
        cand("6", 0.20, "meeting", "m.md"),
        cand("profile:x", 0.25, "profile", ""),
    ]
    out = group_sections(cands, TYPES, lift=0.1)
    assert keys(out) == ["1", "2", "3", "profile:x", "6"]
    best = out[0]
    assert best.sections == 3 and best.notes["sections"] == 3
    assert best.score == pytest.approx(0.50 * (1 + 0.1 * 2 / 5))
    assert out[-1].sections == 1 and "sections" not in out[-1].notes
    assert out[1].score == 0.45  # other types unchanged


def test_the_lift_is_bounded_and_lift_zero_only_groups() -> None:
    assert section_lift(0, 0.1) == 1.0
    assert section_lift(1, 0.1) == pytest.approx(1.025)
    assert section_lift(10_000, 0.1) < 1.1
    many = [cand(str(i), 0.1, "note", "big.md") for i in range(60)]
    alone = cand("99", 0.105, "note", "small.md")
    out = group_sections([alone, *many], TYPES, lift=0.0)
    assert keys(out) == ["99", "0"] and out[1].sections == 60


def test_the_best_section_need_not_come_first() -> None:
    out = group_sections(
        [cand("1", 0.2, "note", "a.md"), cand("2", 0.6, "note", "a.md")], TYPES, 0.1
    )
    assert keys(out) == ["2"] and out[0].sections == 2


def files(settings: Settings, query: str, limit: int = 10) -> tuple[Counter[str], list]:
    searcher = Searcher(settings)
    try:
        hits = searcher.search(query, limit, explain=True).results
    finally:
        searcher.close()
    return Counter(h.source_file for h in hits), hits


def test_on_the_demo_index_a_note_is_one_result(demo_index: Settings) -> None:
    plain, _ = files(demo_index, "pricing model")
    note = next(f for f in plain if f.endswith("pricing-model.md"))
    assert plain[note] >= 3  # without grouping, several sections of the one note
    grouped_settings = demo_index.with_values(search__group_sections=True)
    grouped, hits = files(grouped_settings, "pricing model")
    assert grouped[note] == 1
    hit = next(h for h in hits if h.source_file == note)
    assert hit.sections >= 3 and hit.explain["sections"] == hit.sections
    assert hits[0].source_file == note  # still the best result
    doubled = [f for f, n in grouped.items() if n > 1]
    assert all(not f.endswith(".md") for f in doubled), doubled  # only chats may repeat


def test_the_json_says_how_many_sections_matched(demo_index: Settings) -> None:
    config = "[search]\ngroup_sections = true\n"
    out, err = io.StringIO(), io.StringIO()
    argv = [*cli_args(demo_index, config), "--search", "pricing model", "--json", "--explain"]
    assert run(argv, out, err) == 0, err.getvalue()
    payload = json.loads(out.getvalue())
    Draft202012Validator(json_schema()).validate(payload)
    grouped = [r for r in payload["results"] if "sections" in r]
    assert grouped and all(r["sections"] == r["explain"]["sections"] >= 2 for r in grouped)
    out = io.StringIO()
    assert run([*cli_args(demo_index, config), "--search", "pricing model"], out, err) == 0
    assert "sections match)" in out.getvalue()
